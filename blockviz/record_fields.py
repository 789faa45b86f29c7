"""The record's fields, each declared once: name, shape in words, meaning, axis labels, colour scale.

Everything that lists the record's tensors — :class:`~blockviz.block_record.BlockRecord`, its
validation, save and load, ``blockviz record``'s tables, the figures and the scenes — reads
:data:`FIELDS`. A new field is one :class:`RecordField` here plus its computation in
:mod:`blockviz.block`.

Shapes are written in dimension words: ``n`` is the number of tokens (in ``(…, n, n)`` rows are
query positions and columns key positions), ``n_heads``, ``d_model``, ``d_head`` and ``d_ff``
come from the :class:`~blockviz.config.BlockConfig`. No batch dimension; heads first.
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz.config import BlockConfig


@dataclass(frozen=True)
class RecordField:
    """One recorded activation.

    ``shape`` names each dimension (``("n_heads", "n", "n")``); ``what`` is one line on what it
    holds; ``scale`` names its colour-scale family — fields of one family share one colour scale
    per record (:meth:`BlockRecord.scale_limit`), so one number has one colour in every scene and
    figure: the residual stream (embeddings, residuals, LayerNorm outputs, head outputs, attention
    and FFN outputs), q/k/v, scores (raw, scaled, masked), FFN hidden, and the parameters
    (:data:`PARAMETER_SCALE`) each share one; ``neg_inf`` says whether −∞ may appear
    (blocked cells), otherwise every value must be finite.
    """

    name: str
    shape: tuple[str, ...]
    what: str
    scale: str
    neg_inf: bool = False

    def sizes(self, n: int, config: BlockConfig) -> tuple[int, ...]:
        """The shape in numbers for ``n`` tokens and ``config``."""
        sizes = {"n": n, "n_heads": config.n_heads, "d_model": config.d_model, "d_head": config.d_head, "d_ff": config.d_ff}
        return tuple(sizes[dimension] for dimension in self.shape)

    @property
    def shape_text(self) -> str:
        """The shape as written in the docs: ``"(n_heads, n, n)"``."""
        return "(" + ", ".join(self.shape) + ("," if len(self.shape) == 1 else "") + ")"


FIELDS: tuple[RecordField, ...] = (
    RecordField("embed", ("n", "d_model"), "token vectors (a seeded hash of each token)", "residual"),
    RecordField("pos_embed", ("n", "d_model"), "positional encodings", "residual"),
    RecordField("resid_pre", ("n", "d_model"), "embed + pos_embed: the block's input (residual stream)", "residual"),
    RecordField("ln1_mean", ("n",), "mean of each resid_pre row (LayerNorm 1)", "residual"),
    RecordField("ln1_centred", ("n", "d_model"), "resid_pre − mean: each row centred on 0 (LayerNorm 1)", "residual"),
    RecordField("ln1_var", ("n",), "mean of the squared centred row: the variance, divided by d_model (LayerNorm 1)", "variance"),
    RecordField("ln1_norm", ("n", "d_model"), "ln1_centred / √(var + ε): the normalised rows, before γ and β", "residual"),
    RecordField("ln1", ("n", "d_model"), "γ ⊙ ln1_norm + β: LayerNorm before attention", "residual"),
    RecordField("query", ("n_heads", "n", "d_head"), "ln1 @ W_Q[h] + b_Q[h]", "qkv"),
    RecordField("key", ("n_heads", "n", "d_head"), "ln1 @ W_K[h] + b_K[h]", "qkv"),
    RecordField("value", ("n_heads", "n", "d_head"), "ln1 @ W_V[h] + b_V[h]", "qkv"),
    RecordField("scores", ("n_heads", "n", "n"), "raw dot products q·k", "scores"),
    RecordField("scaled_scores", ("n_heads", "n", "n"), "scores / √d_head", "scores"),
    RecordField("mask", ("n", "n"), "M: 0 where allowed, −∞ where blocked (all 0 when bidirectional)", "mask", neg_inf=True),
    RecordField("masked_scores", ("n_heads", "n", "n"), "scaled_scores + mask", "scores", neg_inf=True),
    RecordField("row_max", ("n_heads", "n"), "largest masked score of each row (subtracted before exp)", "scores"),
    RecordField("exp_scores", ("n_heads", "n", "n"), "exp(masked_scores − row_max): in (0, 1], exactly 0 where blocked", "exp_scores"),
    RecordField("exp_sums", ("n_heads", "n"), "sum of each row of exp_scores", "exp_sums"),
    RecordField("weights", ("n_heads", "n", "n"), "exp_scores / exp_sums: softmax of each row (the attention pattern)", "weights"),
    RecordField("head_outputs", ("n_heads", "n", "d_head"), "weights @ value", "residual"),
    RecordField("concat", ("n", "d_model"), "the heads' outputs side by side", "residual"),
    RecordField("attn_out", ("n", "d_model"), "concat @ W_O + b_O", "residual"),
    RecordField("resid_mid", ("n", "d_model"), "resid_pre + attn_out", "residual"),
    RecordField("ln2_mean", ("n",), "mean of each resid_mid row (LayerNorm 2)", "residual"),
    RecordField("ln2_centred", ("n", "d_model"), "resid_mid − mean: each row centred on 0 (LayerNorm 2)", "residual"),
    RecordField("ln2_var", ("n",), "mean of the squared centred row: the variance, divided by d_model (LayerNorm 2)", "variance"),
    RecordField("ln2_norm", ("n", "d_model"), "ln2_centred / √(var + ε), before γ and β", "residual"),
    RecordField("ln2", ("n", "d_model"), "γ ⊙ ln2_norm + β: LayerNorm before the FFN", "residual"),
    RecordField("ffn_pre", ("n", "d_ff"), "ln2 @ W_in + b_in: each row widened", "ffn_hidden"),
    RecordField("ffn_post", ("n", "d_ff"), "activation(ffn_pre)", "ffn_hidden"),
    RecordField("ffn_out", ("n", "d_model"), "ffn_post @ W_out + b_out: narrowed back", "residual"),
    RecordField("resid_post", ("n", "d_model"), "resid_mid + ffn_out: the block's output, same shape as its input", "residual"),
)
"""Every recorded activation, in the order the data flows through the block."""

FIELD_NAMES: tuple[str, ...] = tuple(spec.name for spec in FIELDS)
BY_NAME: dict[str, RecordField] = {spec.name: spec for spec in FIELDS}

PARAMETER_SCALE = "parameters"
"""The colour-scale family of every parameter (W_Q … b_out, γ, β, W_pos)."""

COLUMN_PREFIXES = {"d_model": "d", "d_head": "d", "d_ff": "f"}
"""Column labels of a feature axis: ``d0, d1, …`` for d_model and d_head, ``f0, f1, …`` for d_ff."""


def field(name: str) -> RecordField:
    """The field called ``name`` (``KeyError`` if there is none)."""
    return BY_NAME[name]


def axis_labels(dimension: str, tokens: list[str], size: int) -> list[str]:
    """Labels along one axis: the tokens for ``n``, ``h0…`` for heads, ``d0…``/``f0…`` for features.

    >>> axis_labels("d_ff", ["the", "cat"], 3)
    ['f0', 'f1', 'f2']
    """
    if dimension == "n":
        return list(tokens)
    prefix = "h" if dimension == "n_heads" else COLUMN_PREFIXES[dimension]
    return [f"{prefix}{index}" for index in range(size)]


def markdown_table() -> str:
    """The fields as a Markdown table (name, shape, what): README.md holds exactly this."""
    rows = [f"| `{spec.name}` | {spec.shape_text} | {spec.what} |" for spec in FIELDS]
    return "\n".join(["| name | shape | what |", "|---|---|---|", *rows])


def docs_table() -> str:
    """The fields as an RST table (name, shape, what): the record's docstring and README hold it."""
    rows = [(f"``{spec.name}``", f"``{spec.shape_text}``", spec.what) for spec in FIELDS]
    widths = [max(len(row[column]) for row in rows + [("name", "shape", "what")]) for column in range(3)]
    rule = "  ".join("=" * width for width in widths)
    line = lambda cells: "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(("name", "shape", "what")), rule, *map(line, rows), rule])
