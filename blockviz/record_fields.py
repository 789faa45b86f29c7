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

from dataclasses import dataclass, replace

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
        sizes = {"n": n, "n_heads": config.n_heads, "d_model": config.d_model, "d_head": config.d_head, "d_ff": config.d_ff, "n_vocab": config.vocab_size}
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
"""Every recorded activation of blockviz's own block (the default config), in the order the data
flows through it. Other architectures (:func:`fields_for`) add, drop or re-describe some."""

FIELD_NAMES: tuple[str, ...] = tuple(spec.name for spec in FIELDS)

OTHER_FIELDS: tuple[RecordField, ...] = (
    RecordField("prev_output", ("n", "d_model"), "the output of the model's layer before this one, as a forward hook on it saw it: resid_pre must equal it", "residual"),
    RecordField("ln1_mean_sq", ("n",), "mean of the squared resid_pre row (RMSNorm 1)", "variance"),
    RecordField("ln2_mean_sq", ("n",), "mean of the squared resid_mid row (RMSNorm 2)", "variance"),
    RecordField("rope_cos", ("n", "d_head"), "cos of each position's rotary angles (one angle per feature pair, halves repeated)", "rotary"),
    RecordField("rope_sin", ("n", "d_head"), "sin of each position's rotary angles", "rotary"),
    RecordField("query_rot", ("n_heads", "n", "d_head"), "query ⊙ cos + rotate_half(query) ⊙ sin: the query turned by its position", "qkv"),
    RecordField("key_rot", ("n_heads", "n", "d_head"), "key ⊙ cos + rotate_half(key) ⊙ sin: the key turned by its position", "qkv"),
    RecordField("resid_mid_norm", ("n", "d_model"), "γ ⊙ ln1_norm + β: LayerNorm 1 of resid_mid (post-norm), the FFN's input", "residual"),
    RecordField("resid_post_norm", ("n", "d_model"), "γ ⊙ ln2_norm + β: LayerNorm 2 of resid_post (post-norm), the block's output", "residual"),
    RecordField("ffn_gate", ("n", "d_ff"), "ln2 @ W_gate: the gate", "ffn_hidden"),
    RecordField("ffn_gate_act", ("n", "d_ff"), "activation(ffn_gate)", "ffn_hidden"),
    RecordField("ffn_up", ("n", "d_ff"), "ln2 @ W_up: the values the gate scales", "ffn_hidden"),
)
"""Fields only other architectures have: the previous layer's output (a model's layer L > 0),
RMSNorm's statistic, rotary positions, post-norm's normalised sums, the gated FFN."""

PREDICTION_FIELDS: tuple[RecordField, ...] = (
    RecordField("ln_f_mean", ("n",), "mean of each resid_post row (the final LayerNorm)", "residual"),
    RecordField("ln_f_centred", ("n", "d_model"), "resid_post − mean: each row centred on 0 (the final LayerNorm)", "residual"),
    RecordField("ln_f_var", ("n",), "mean of the squared centred row: the variance (the final LayerNorm)", "variance"),
    RecordField("ln_f_norm", ("n", "d_model"), "ln_f_centred / √(var + ε), before γ and β", "residual"),
    RecordField("ln_f", ("n", "d_model"), "γ ⊙ ln_f_norm + β: the final LayerNorm, before the unembedding", "residual"),
    RecordField("logits", ("n", "n_vocab"), "ln_f @ W_U: one score per vocabulary word for the token after each row", "logits"),
    RecordField("probs", ("n", "n_vocab"), "softmax of each logits row: the next-token probabilities", "weights"),
)
"""The last step of a language model, after its block: the final LayerNorm, the logits and the
next-token probabilities (blockviz's trained toy model: configs with ``vocab_size``)."""

OPTIONAL_FIELDS = ("prev_output",)
"""Fields a record may lack (:func:`fields_for`'s ``optional``): ``prev_output`` exists for a
model's layer after the first, and records saved before it was recorded still load."""

BY_NAME: dict[str, RecordField] = {spec.name: spec for spec in FIELDS + OTHER_FIELDS + PREDICTION_FIELDS}
"""Every field any architecture records, by name (the toy block's descriptions)."""


def fields_for(config: BlockConfig, model: bool = False, optional: tuple[str, ...] = ()) -> tuple[RecordField, ...]:
    """The fields a record of ``config``'s architecture holds, in data-flow order, described for
    it; :data:`FIELDS` for blockviz's own block. ``model``: the record is a trained model's layer
    (its ``resid_pre`` is the model's hidden state, not embed + pos_embed); ``optional``: the
    :data:`OPTIONAL_FIELDS` it holds too (a model's ``prev_output``, before ``resid_pre``).

    >>> [spec.name for spec in fields_for(BlockConfig(d_model=8, norm="rmsnorm"))][3:6]
    ['ln1_mean_sq', 'ln1_norm', 'ln1']
    """
    prediction = PREDICTION_FIELDS if config.vocab_size else ()
    if config.is_toy and not model:
        return FIELDS + prediction
    post, rotary, gated, rms = config.norm_placement == "post", config.positional == "rotary", config.ffn == "gated", config.norm == "rmsnorm"
    bias = config.bias
    by = BY_NAME
    attn_in = "resid_pre" if post else "ln1"
    ffn_in = "resid_mid_norm" if post else "ln2"
    names: list = [by["embed"]]
    if not rotary:
        names.append(by["pos_embed"])
    names.append(replace(by["resid_pre"], what="embed + pos_embed: the block's input (residual stream)" if not rotary else "embed: the block's input (residual stream)"))

    def norm(prefix: str, source: str, output: str) -> list:
        kind = "RMSNorm" if rms else "LayerNorm"
        number = prefix[-1]
        if rms:
            return [replace(by[f"{prefix}_mean_sq"], what=f"mean of the squared {source} row ({kind} {number})"),
                    replace(by[f"{prefix}_norm"], what=f"{source} / √(mean_sq + ε): the normalised rows, before γ"),
                    replace(by[prefix], name=output, what=f"γ ⊙ {prefix}_norm: {kind} {number}")]
        return [replace(by[f"{prefix}_mean"], what=f"mean of each {source} row ({kind} {number})"),
                replace(by[f"{prefix}_centred"], what=f"{source} − mean: each row centred on 0 ({kind} {number})"),
                by[f"{prefix}_var"], by[f"{prefix}_norm"],
                replace(by[prefix], name=output, what=by[output].what if output in by and output != prefix else f"γ ⊙ {prefix}_norm + β: {kind} {number}")]

    if not post:
        names += norm("ln1", "resid_pre", "ln1")
    plus = lambda kind: f" + b_{kind}[h]" if bias else ""  # noqa: E731
    names += [replace(by["query"], what=f"{attn_in} @ W_Q[h]{plus('Q')}"),
              replace(by["key"], what=f"{attn_in} @ W_K[g]{plus('K')}, g = this head's key/value head" if config.kv_heads != config.n_heads else f"{attn_in} @ W_K[h]{plus('K')}"),
              replace(by["value"], what=f"{attn_in} @ W_V[g]{plus('V')}, g = this head's key/value head" if config.kv_heads != config.n_heads else f"{attn_in} @ W_V[h]{plus('V')}")]
    if rotary:
        names += [by["rope_cos"], by["rope_sin"], by["query_rot"], by["key_rot"]]
        names.append(replace(by["scores"], what="raw dot products q·k of the rotated query_rot and key_rot"))
    else:
        names.append(by["scores"])
    names += [by[name] for name in ("scaled_scores", "mask", "masked_scores", "row_max", "exp_scores", "exp_sums", "weights", "head_outputs", "concat")]
    names.append(replace(by["attn_out"], what="concat @ W_O + b_O" if bias else "concat @ W_O"))
    names.append(by["resid_mid"])
    if post:
        names += norm("ln1", "resid_mid", "resid_mid_norm")
    else:
        names += norm("ln2", "resid_mid", "ln2")
    if gated:
        names += [replace(by["ffn_gate"], what=f"{ffn_in} @ W_gate" + (" + b_gate" if bias else "")),
                  by["ffn_gate_act"],
                  replace(by["ffn_up"], what=f"{ffn_in} @ W_up" + (" + b_up" if bias else "") + ": the values the gate scales"),
                  replace(by["ffn_post"], what="ffn_gate_act ⊙ ffn_up")]
    else:
        names += [replace(by["ffn_pre"], what=f"{ffn_in} @ W_in" + (" + b_in: each row widened" if bias else ": each row widened")), by["ffn_post"]]
    names.append(replace(by["ffn_out"], what="ffn_post @ W_out + b_out: narrowed back" if bias else "ffn_post @ W_out: narrowed back"))
    if post:
        names.append(replace(by["resid_post"], what="resid_mid_norm + ffn_out"))
        names += norm("ln2", "resid_post", "resid_post_norm")
    else:
        names.append(by["resid_post"])
    if model:
        names[0] = replace(names[0], what="the model's token embeddings (rows of its embedding table)")
        if not rotary:
            names[1] = replace(names[1], what="the model's position embeddings (rows of its position table)")
        index = next(i for i, spec in enumerate(names) if spec.name == "resid_pre")
        names[index] = replace(names[index], what="the layer's real input: the model's hidden state before this layer")
        if "prev_output" in optional:
            names.insert(index, by["prev_output"])
    return tuple(names) + prediction

PARAMETER_SCALE = "parameters"
"""The colour-scale family of every parameter (W_Q … b_out, γ, β, W_pos)."""

COLUMN_PREFIXES = {"d_model": "d", "d_head": "d", "d_ff": "f", "n_vocab": "v"}
"""Column labels of a feature axis: ``d0, d1, …`` for d_model and d_head, ``f0, f1, …`` for d_ff, ``v0, v1, …`` for the vocabulary."""


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
