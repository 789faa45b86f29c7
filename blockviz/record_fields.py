"""The record's fields, declared once, in the order the data flows: name, shape in words, meaning
(per architecture where it differs), colour scale, and which architectures record it.

:data:`DECLARATION` is the one list. :func:`fields_for` filters it for one
:class:`~blockviz.architecture.Architecture` and describes each field for it; everything that lists a
record's tensors — :class:`~blockviz.block_record.BlockRecord`, its check, save and load,
``blockviz record``'s tables, the explorer, the figures and the scenes — reads what it gives.
A new field is one :class:`Declaration` here (``when``: the architectures that record it;
``explorer_step``: the explorer's step that shows it) plus the line of :mod:`blockviz.block` that
computes it (``tests/test_architecture.py`` records every architecture and fails where the two
disagree; ``tests/golden/fields.json``, rewritten by ``pytest --update-golden``, shows the change
for review: docs/record.md, "Adding a field"). A language model's final norm, logits and
next-token probabilities are declared after the block's output, ``when`` it has an unembedding
(blockviz's trained toy model).

Shapes are written in dimension words: ``n`` is the number of tokens (in ``(…, n, n)`` rows are
query positions and columns key positions), ``n_heads``, ``d_model``, ``d_head``, ``d_ff`` and
``n_vocab`` (the unembedding's words, ``vocab_size``) come from the :class:`~blockviz.block_config.BlockConfig`. No batch dimension; heads first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from blockviz.architecture import Architecture, supported_architectures
from blockviz.block_config import BlockConfig


def dimension_sizes(n: int, config: BlockConfig) -> dict[str, int]:
    """The size of each dimension a field's shape names, for ``n`` tokens and ``config``."""
    return {
        "n": n,
        "n_heads": config.n_heads,
        "d_model": config.d_model,
        "d_head": config.d_head,
        "d_ff": config.d_ff,
        "n_vocab": config.vocab_size,
    }


@dataclass(frozen=True)
class RecordField:
    """One recorded activation, as one architecture's record holds it.

    ``shape`` names each dimension (``("n_heads", "n", "n")``); ``what`` is one line on what it
    holds; ``scale`` names its colour-scale family — fields of one family share one colour scale
    per record (:meth:`BlockRecord.scale_limit`), so one number has one colour in every scene and
    figure: the residual stream (embeddings, residuals, LayerNorm outputs, head outputs, attention
    and FFN outputs), q/k/v, scores (raw, scaled, masked), FFN hidden, the parameters
    (:data:`PARAMETER_SCALE`) and the norms' γ, β (:data:`NORM_PARAMETER_SCALE`) each share one;
    ``neg_inf`` says whether −∞ may appear (blocked cells), otherwise every value must be finite;
    ``explorer_step`` names the explorer's step that shows it (:mod:`blockviz.explorer.steps`).
    """

    name: str
    shape: tuple[str, ...]
    what: str
    scale: str
    neg_inf: bool = False
    explorer_step: str = ""

    def sizes(self, n: int, config: BlockConfig, dimensions: dict[str, int] | None = None) -> tuple[int, ...]:
        """The shape in numbers for ``n`` tokens and ``config`` (``dimensions``: their
        :func:`dimension_sizes`, when the caller has them for many fields)."""
        dimensions = dimension_sizes(n, config) if dimensions is None else dimensions
        return tuple(dimensions[dimension] for dimension in self.shape)

    @property
    def shape_text(self) -> str:
        """The shape as written in the docs: ``"(n_heads, n, n)"``."""
        return "(" + ", ".join(self.shape) + ("," if len(self.shape) == 1 else "") + ")"


@dataclass(frozen=True)
class When:
    """Which architectures record a field: a test of an :class:`~blockviz.architecture.Architecture`
    with the words the docs show for it; ``a & b`` holds where both do.

    >>> (PRE_NORM & RMS_NORM).text, (PRE_NORM & RMS_NORM)(BlockConfig(norm="rmsnorm").architecture)
    ('pre-norm, RMSNorm', True)
    """

    text: str
    test: Callable[[Architecture], bool]

    def __call__(self, arch: Architecture) -> bool:
        return self.test(arch)

    def __and__(self, other: When) -> When:
        return When(f"{self.text}, {other.text}", lambda arch: self(arch) and other(arch))


EVERY_BLOCK = When("every block", lambda arch: True)
PRE_NORM = When("pre-norm", lambda arch: arch.pre_norm)
POST_NORM = When("post-norm", lambda arch: arch.post_norm)
LAYER_NORM = When("LayerNorm", lambda arch: arch.has_centring)
RMS_NORM = When("RMSNorm", lambda arch: not arch.has_centring)
ADDED_POSITIONS = When("added positions", lambda arch: arch.added_positions)
ROTARY = When("rotary positions", lambda arch: arch.rotary)
PLAIN_FFN = When("plain FFN", lambda arch: not arch.gated)
GATED_FFN = When("gated FFN", lambda arch: arch.gated)
MODEL_LAYER = When("a trained model's layer", lambda arch: arch.model_layer)
UNEMBEDDING = When("an unembedding", lambda arch: arch.unembedding)
LATER_TOY_BLOCK = When(
    "block 1 on of a toy model's stack", lambda arch: arch.unembedding and arch.pre_norm and not arch.rotary
)


@dataclass(frozen=True)
class Declaration:
    """One entry of :data:`DECLARATION`: a field, the architectures that record it (``when``) and
    its meaning — one line, or a function of the architecture where it differs between them.
    ``optional``: a record of such an architecture may lack it (:data:`OPTIONAL_FIELDS`).

    ``explorer_step`` (required, by keyword): the name of the explorer's step that shows the field
    (:func:`blockviz.explorer.steps.steps_for`), or a function of the architecture giving it; a
    step that does not draw the field itself shows the record's numbers of it in a plain table, so
    every field has a place on the page. ``not_recomputed_by_hand``: why the hand recompute of a
    trained model's layer from its weights (``tests/test_models_families.py``) does not make this
    field — it is the layer's input, say; empty: it does, and the test compares it.
    """

    name: str
    shape: tuple[str, ...]
    what: str | Callable[[Architecture], str]
    scale: str
    when: When = EVERY_BLOCK
    neg_inf: bool = False
    optional: bool = False
    explorer_step: str | Callable[[Architecture], str] = dataclasses.field(kw_only=True)
    not_recomputed_by_hand: str = ""

    def field(self, arch: Architecture) -> RecordField:
        """The field as ``arch``'s record holds it."""
        what = self.what(arch) if callable(self.what) else self.what
        step = self.explorer_step(arch) if callable(self.explorer_step) else self.explorer_step
        return RecordField(self.name, self.shape, what, self.scale, self.neg_inf, step)


def _plus(arch: Architecture, term: str) -> str:
    """`` + term`` where the block has biases."""
    return f" + {term}" if arch.bias else ""


def _norm(prefix: str, source: str, output: str, when: When, where: str, normalised: str) -> tuple[Declaration, ...]:
    """The fields of norm ``prefix`` (``ln1``, ``ln2``) of the rows of ``source``, giving
    ``output``, in ``when``'s blocks: LayerNorm's mean, centred rows and variance or RMSNorm's
    mean square, then the normalised rows (LayerNorm's described by ``normalised``) and γ ⊙ them
    (+ β). ``where`` says where the norm stands, ``{norm}`` its kind; the explorer's step of the
    norm is named ``prefix`` too."""
    number = prefix[-1]
    return (
        Declaration(
            f"{prefix}_mean",
            ("n",),
            f"mean of each {source} row (LayerNorm {number})",
            "residual",
            when & LAYER_NORM,
            explorer_step=prefix,
        ),
        Declaration(
            f"{prefix}_centred",
            ("n", "d_model"),
            f"{source} − mean: each row centred on 0 (LayerNorm {number})",
            "residual",
            when & LAYER_NORM,
            explorer_step=prefix,
        ),
        Declaration(
            f"{prefix}_var",
            ("n",),
            f"mean of the squared centred row: the variance, divided by d_model (LayerNorm {number})",
            "variance",
            when & LAYER_NORM,
            explorer_step=prefix,
        ),
        Declaration(
            f"{prefix}_mean_sq",
            ("n",),
            f"mean of the squared {source} row (RMSNorm {number})",
            "variance",
            when & RMS_NORM,
            explorer_step=prefix,
        ),
        Declaration(
            f"{prefix}_norm",
            ("n", "d_model"),
            lambda arch: (
                normalised if arch.has_centring else f"{source} / √(mean_sq + ε): the normalised rows, before γ"
            ),
            "residual",
            when,
            explorer_step=prefix,
        ),
        Declaration(
            output,
            ("n", "d_model"),
            lambda arch: f"γ ⊙ {prefix}_norm{' + β' if arch.has_centring else ''}: {where.format(norm=arch.norm_name)}",
            "residual",
            when,
            explorer_step=prefix,
        ),
    )


def _embed(arch: Architecture) -> str:
    return (
        "the model's token embeddings (rows of its embedding table)"
        if arch.embedding == "table"
        else "token vectors (a seeded hash of each token)"
    )


def _pos_embed(arch: Architecture) -> str:
    return (
        "the model's position embeddings (rows of its position table)"
        if arch.learned_positions and arch.embedding == "table"
        else "positional encodings"
    )


def _resid_pre(arch: Architecture) -> str:
    if arch.model_layer:
        return "the layer's real input: the model's hidden state before this layer"
    return (
        "embed: the block's input (residual stream)"
        if arch.rotary
        else "embed + pos_embed: the block's input (residual stream)"
    )


def _projection(letter: str, shared: bool) -> Callable[[Architecture], str]:
    """``ln1 @ W_Q[h] + b_Q[h]``: head h's query (key, value) projection; with grouped-query
    attention a key or value is its key/value head g's."""

    def what(arch: Architecture) -> str:
        if shared and arch.grouped:
            return (
                f"{arch.attention_input} @ W_{letter}[g]{_plus(arch, f'b_{letter}[g]')}, g = this head's key/value head"
            )
        return f"{arch.attention_input} @ W_{letter}[h]{_plus(arch, f'b_{letter}[h]')}"

    return what


DECLARATION: tuple[Declaration, ...] = (
    Declaration(
        "embed",
        ("n", "d_model"),
        _embed,
        "residual",
        explorer_step="input",
        not_recomputed_by_hand="the block's input: rows of the model's embedding table, which no layer computes",
    ),
    Declaration(
        "pos_embed",
        ("n", "d_model"),
        _pos_embed,
        "residual",
        ADDED_POSITIONS,
        explorer_step="input",
        not_recomputed_by_hand="the block's input: rows of the model's position table, which no layer computes",
    ),
    Declaration(
        "prev_output",
        ("n", "d_model"),
        "the output of the model's layer before this one, as a forward hook on it saw it: resid_pre must equal it",
        "residual",
        MODEL_LAYER,
        optional=True,
        explorer_step="input",
        not_recomputed_by_hand="the layer before's output: the model's own tensor, which the record checks resid_pre against",
    ),
    Declaration(
        "resid_pre",
        ("n", "d_model"),
        _resid_pre,
        "residual",
        explorer_step="input",
        not_recomputed_by_hand="the layer's input: the hand recompute starts from it",
    ),
    *_norm(
        "ln1",
        "resid_pre",
        "ln1",
        PRE_NORM,
        "{norm} before attention",
        "ln1_centred / √(var + ε): the normalised rows, before γ and β",
    ),
    Declaration("query", ("n_heads", "n", "d_head"), _projection("Q", shared=False), "qkv", explorer_step="qkv"),
    Declaration("key", ("n_heads", "n", "d_head"), _projection("K", shared=True), "qkv", explorer_step="qkv"),
    Declaration("value", ("n_heads", "n", "d_head"), _projection("V", shared=True), "qkv", explorer_step="qkv"),
    Declaration(
        "rope_cos",
        ("n", "d_head"),
        "cos of each position's rotary angles (one angle per feature pair, halves repeated)",
        "rotary",
        ROTARY,
        explorer_step="rotary",
        not_recomputed_by_hand="the hand recompute turns q and k by complex numbers, e^(i·p·θ), not by cos and sin tables",
    ),
    Declaration(
        "rope_sin",
        ("n", "d_head"),
        "sin of each position's rotary angles",
        "rotary",
        ROTARY,
        explorer_step="rotary",
        not_recomputed_by_hand="the hand recompute turns q and k by complex numbers, e^(i·p·θ), not by cos and sin tables",
    ),
    Declaration(
        "query_rot",
        ("n_heads", "n", "d_head"),
        "query ⊙ cos + rotate_half(query) ⊙ sin: the query turned by its position",
        "qkv",
        ROTARY,
        explorer_step="rotary",
    ),
    Declaration(
        "key_rot",
        ("n_heads", "n", "d_head"),
        "key ⊙ cos + rotate_half(key) ⊙ sin: the key turned by its position",
        "qkv",
        ROTARY,
        explorer_step="rotary",
    ),
    Declaration(
        "scores",
        ("n_heads", "n", "n"),
        lambda arch: (
            "raw dot products q·k of the rotated query_rot and key_rot" if arch.rotary else "raw dot products q·k"
        ),
        "scores",
        explorer_step="scores",
    ),
    Declaration(
        "scores_from_embed",
        ("n_heads", "n", "n"),
        "the part of scores from key j's embeddings (embed + pos_embed through ln1 and W_K; blockviz.key_sources)",
        "scores",
        LATER_TOY_BLOCK,
        optional=True,
        explorer_step="scores",
        not_recomputed_by_hand="a toy model's field: no trained model's layer records it",
    ),
    Declaration(
        "scores_from_heads",
        ("n_heads", "n_heads", "n", "n"),
        "[h, g]: the part of head h's scores from key j's row as head g of the block before wrote it "
        "(through ln1 and W_K; blockviz.key_sources)",
        "scores",
        LATER_TOY_BLOCK,
        optional=True,
        explorer_step="scores",
        not_recomputed_by_hand="a toy model's field: no trained model's layer records it",
    ),
    Declaration("scaled_scores", ("n_heads", "n", "n"), "scores / √d_head", "scores", explorer_step="scale"),
    Declaration(
        "mask",
        ("n", "n"),
        "M: 0 where allowed, −∞ where blocked (all 0 when bidirectional)",
        "mask",
        neg_inf=True,
        explorer_step="mask",
    ),
    Declaration(
        "masked_scores", ("n_heads", "n", "n"), "scaled_scores + mask", "scores", neg_inf=True, explorer_step="mask"
    ),
    Declaration(
        "row_max",
        ("n_heads", "n"),
        "largest masked score of each row (subtracted before exp)",
        "scores",
        explorer_step="softmax",
    ),
    Declaration(
        "exp_scores",
        ("n_heads", "n", "n"),
        "exp(masked_scores − row_max): in (0, 1], exactly 0 where blocked",
        "exp_scores",
        explorer_step="softmax",
    ),
    Declaration("exp_sums", ("n_heads", "n"), "sum of each row of exp_scores", "exp_sums", explorer_step="softmax"),
    Declaration(
        "weights",
        ("n_heads", "n", "n"),
        "exp_scores / exp_sums: softmax of each row (the attention pattern)",
        "weights",
        explorer_step="softmax",
    ),
    Declaration("head_outputs", ("n_heads", "n", "d_head"), "weights @ value", "head_outputs", explorer_step="mix"),
    Declaration("concat", ("n", "d_model"), "the heads' outputs side by side", "head_outputs", explorer_step="concat"),
    Declaration(
        "attn_out",
        ("n", "d_model"),
        lambda arch: f"concat @ W_O{_plus(arch, 'b_O')}",
        "residual",
        explorer_step="project",
    ),
    Declaration("resid_mid", ("n", "d_model"), "resid_pre + attn_out", "residual", explorer_step="add1"),
    *_norm(
        "ln1",
        "resid_mid",
        "resid_mid_norm",
        POST_NORM,
        "{norm} 1 of resid_mid (post-norm), the FFN's input",
        "ln1_centred / √(var + ε): the normalised rows, before γ and β",
    ),
    *_norm("ln2", "resid_mid", "ln2", PRE_NORM, "{norm} before the FFN", "ln2_centred / √(var + ε), before γ and β"),
    Declaration(
        "ffn_pre",
        ("n", "d_ff"),
        lambda arch: f"{arch.ffn_input} @ W_in{_plus(arch, 'b_in')}: each row widened",
        "ffn_hidden",
        PLAIN_FFN,
        explorer_step="widen",
    ),
    Declaration(
        "ffn_gate",
        ("n", "d_ff"),
        lambda arch: f"{arch.ffn_input} @ W_gate{_plus(arch, 'b_gate')}",
        "ffn_hidden",
        GATED_FFN,
        explorer_step="gate",
    ),
    Declaration(
        "ffn_gate_act", ("n", "d_ff"), "activation(ffn_gate)", "ffn_hidden", GATED_FFN, explorer_step="activation"
    ),
    Declaration(
        "ffn_up",
        ("n", "d_ff"),
        lambda arch: f"{arch.ffn_input} @ W_up{_plus(arch, 'b_up')}: the values the gate scales",
        "ffn_hidden",
        GATED_FFN,
        explorer_step="up",
    ),
    Declaration(
        "ffn_post",
        ("n", "d_ff"),
        lambda arch: "ffn_gate_act ⊙ ffn_up" if arch.gated else "activation(ffn_pre)",
        "ffn_hidden",
        explorer_step=lambda arch: "gate_up" if arch.gated else "activation",
    ),
    Declaration(
        "ffn_out",
        ("n", "d_model"),
        lambda arch: f"ffn_post @ W_out{_plus(arch, 'b_out')}: narrowed back",
        "residual",
        explorer_step="narrow",
    ),
    Declaration(
        "resid_post",
        ("n", "d_model"),
        lambda arch: (
            "resid_mid + ffn_out: the block's output, same shape as its input"
            if arch.pre_norm
            else "resid_mid_norm + ffn_out"
        ),
        "residual",
        explorer_step="add2",
    ),
    *_norm(
        "ln2",
        "resid_post",
        "resid_post_norm",
        POST_NORM,
        "{norm} 2 of resid_post (post-norm), the block's output",
        "ln2_centred / √(var + ε), before γ and β",
    ),
    # A language model's last step (GPT-2's ln_f and unembedding, Radford et al. 2019, §2.3): blockviz's trained toy model.
    Declaration(
        "ln_f_mean",
        ("n",),
        "mean of each resid_post row (the final LayerNorm)",
        "residual",
        UNEMBEDDING,
        explorer_step="ln_f",
    ),
    Declaration(
        "ln_f_centred",
        ("n", "d_model"),
        "resid_post − mean: each row centred on 0 (the final LayerNorm)",
        "residual",
        UNEMBEDDING,
        explorer_step="ln_f",
    ),
    Declaration(
        "ln_f_var",
        ("n",),
        "mean of the squared centred row: the variance (the final LayerNorm)",
        "variance",
        UNEMBEDDING,
        explorer_step="ln_f",
    ),
    Declaration(
        "ln_f_norm",
        ("n", "d_model"),
        "ln_f_centred / √(var + ε), before γ and β",
        "residual",
        UNEMBEDDING,
        explorer_step="ln_f",
    ),
    Declaration(
        "ln_f",
        ("n", "d_model"),
        "γ ⊙ ln_f_norm + β: the final LayerNorm, before the unembedding",
        "residual",
        UNEMBEDDING,
        explorer_step="ln_f",
    ),
    Declaration(
        "logits",
        ("n", "n_vocab"),
        "ln_f @ W_U: one score per vocabulary word for the token after each row",
        "logits",
        UNEMBEDDING,
        explorer_step="logits",
    ),
    Declaration(
        "probs",
        ("n", "n_vocab"),
        "softmax of each logits row: the next-token probabilities",
        "weights",
        UNEMBEDDING,
        explorer_step="prediction",
    ),
)
"""Every field any architecture records, in the order the data flows through the block. A norm's
fields stand where the norm does: before attention and the FFN (pre-norm) or after each add
(post-norm), so they are declared at both places, each for its placement."""


@cache
def _fields(arch: Architecture, optional: frozenset[str]) -> tuple[RecordField, ...]:
    return tuple(
        entry.field(arch)
        for entry in DECLARATION
        if entry.when(arch) and (not entry.optional or entry.name in optional)
    )


def fields_for(
    block: BlockConfig | Architecture, model: bool = False, optional: tuple[str, ...] = ()
) -> tuple[RecordField, ...]:
    """The fields a record of ``block``'s architecture holds, in data-flow order, described for
    it: the entries of :data:`DECLARATION` whose ``when`` holds for it (:data:`FIELDS` for
    blockviz's own block). ``block`` is a config (``model``: it is a trained model's layer, whose
    ``resid_pre`` is the model's hidden state, not embed + pos_embed) or an
    :class:`~blockviz.architecture.Architecture` (which says so itself; ``model`` is then ignored);
    ``optional``: the :data:`OPTIONAL_FIELDS` the record holds too (a model's ``prev_output``).

    >>> [spec.name for spec in fields_for(BlockConfig(d_model=8, norm="rmsnorm"))][3:6]
    ['ln1_mean_sq', 'ln1_norm', 'ln1']
    """
    arch = Architecture.of(block, model_layer=model) if isinstance(block, BlockConfig) else block
    return _fields(arch, frozenset(optional))


FIELDS: tuple[RecordField, ...] = fields_for(Architecture())
"""Every recorded activation of blockviz's own block (the default config), in the order the data
flows through it. Other architectures (:func:`fields_for`) add, drop or re-describe some."""

FIELD_NAMES: tuple[str, ...] = tuple(spec.name for spec in FIELDS)

OPTIONAL_FIELDS: tuple[str, ...] = tuple(entry.name for entry in DECLARATION if entry.optional)
"""Fields a record may lack (:func:`fields_for`'s ``optional``): ``prev_output`` exists for a
model's layer after the first, ``scores_from_embed`` and ``scores_from_heads`` for a toy model's
block after the first (:mod:`blockviz.key_sources`), and records saved before them still load."""


PREDICTION_FIELDS: tuple[str, ...] = tuple(entry.name for entry in DECLARATION if entry.when is UNEMBEDDING)
"""A language model's prediction from a block's output (``ln_f_*``, ``logits``, ``probs``). In a
record of several blocks the model's own is the last block's; each earlier block holds its own
logit lens under these names: its output through the same final LayerNorm and unembedding."""

STACK_FIELDS: tuple[str, ...] = ("embed", "pos_embed")
"""The fields a record of several blocks holds once, before its first block: every block's view
(:meth:`blockviz.block_record.BlockRecord.block`) shows the same."""

STACK_PARAMETERS: tuple[str, ...] = ("W_E", "W_pos", "ln_f.weight", "ln_f.bias", "W_U")
"""The parameters a record of several blocks holds once (embeddings, final LayerNorm, unembedding)."""


def _every_field() -> dict[str, RecordField]:
    # fields_for(arch, optional=OPTIONAL_FIELDS) of each architecture in turn, each name kept as
    # first met, without describing the fields already kept (describing them all cost every start 0.05 s)
    every: dict[str, RecordField] = {}
    for arch in supported_architectures():
        for entry in DECLARATION:
            if entry.name not in every and entry.when(arch):
                every[entry.name] = entry.field(arch)
    return every


BY_NAME: dict[str, RecordField] = _every_field()
"""Every field any architecture records, by name, described for the first architecture of
:func:`~blockviz.architecture.supported_architectures` that records it (the toy block's first)."""

PARAMETER_SCALE = "parameters"
"""The colour-scale family of every parameter but the norms' (W_Q … b_out, W_pos, W_E, W_U)."""
NORM_PARAMETER_SCALE = "norm_parameters"
"""The colour-scale family of the norms' γ and β (``ln1.*``, ``ln2.*``, ``ln_f.*``): around 1
and 0, they would all sit at the clipped end of a trained model's small weight matrices' scale."""


@dataclass(frozen=True)
class ScaleFamily:
    """How the colour bars name one colour-scale family: ``bar`` in a scene's corner
    (:mod:`blockviz.scenes.colour_bar`: short, a video frame's top right has little room) and
    ``label`` under a figure's panels (:func:`blockviz.figures.heatmap.record_scale`);
    ``never_negative`` for a quantity that cannot be below 0 (a variance, an exp and its sums):
    its legend runs from 0, not from −limit."""

    bar: str
    label: str
    never_negative: bool = False


SCALE_FAMILIES: dict[str, ScaleFamily] = {
    "residual": ScaleFamily("residual stream", "residual stream"),
    "variance": ScaleFamily("variance", "variance", never_negative=True),
    "qkv": ScaleFamily("q, k, v", "query, key, value"),
    "rotary": ScaleFamily("cos, sin", "rotary"),
    "scores": ScaleFamily("scores", "scores"),
    "mask": ScaleFamily("mask", "mask"),
    "exp_scores": ScaleFamily("exp(scores)", "exp_scores", never_negative=True),
    "exp_sums": ScaleFamily("sums of exp", "exp_sums", never_negative=True),
    "weights": ScaleFamily("weights", "weight"),
    "head_outputs": ScaleFamily("heads' outputs", "heads' outputs"),
    "ffn_hidden": ScaleFamily("FFN hidden", "FFN hidden layer"),
    "logits": ScaleFamily("logits", "logits"),
    PARAMETER_SCALE: ScaleFamily("parameters", "parameters"),
    NORM_PARAMETER_SCALE: ScaleFamily("\u03b3, \u03b2", "norm_parameters"),
}
"""Every colour-scale family (a :class:`Declaration`'s ``scale``, :data:`PARAMETER_SCALE`,
:data:`NORM_PARAMETER_SCALE`) → its names on the colour bars: the one table both the scenes' and
the figures' bars read. The weights' bars add the map's √ (:data:`blockviz.style.WEIGHTS_SCALE_NAME`)."""

OWN_BAR_NAMES: dict[str, ScaleFamily] = {"probs": ScaleFamily("probability", "probability")}
"""Fields a colour bar names by their own quantity, not by their family: the next-token
probabilities are coloured on the attention weights' 0–1 map (family ``"weights"``, one map for
every probability) but are no attention weights."""

GAMMA_BAR_NAME = "\u03b3"
"""The bar name of the norms' parameters in a record whose norms have no shift β (RMSNorm's)."""


def bar_name(family: str, beta: bool = True) -> str:
    """What a colour bar (a scene's, the explorer's legend) calls colour-scale ``family``: its
    ``bar`` name in :data:`SCALE_FAMILIES` (a family not there: its own name); the norms'
    parameters of a record without a shift β (``beta`` false): :data:`GAMMA_BAR_NAME`.

    >>> bar_name("residual"), bar_name(NORM_PARAMETER_SCALE), bar_name(NORM_PARAMETER_SCALE, beta=False)
    ('residual stream', 'γ, β', 'γ')
    """
    if family == NORM_PARAMETER_SCALE and not beta:
        return GAMMA_BAR_NAME
    return SCALE_FAMILIES[family].bar if family in SCALE_FAMILIES else family


NORM_PREFIXES = ("ln1", "ln2", "ln_f")
"""The parameter names of the norms begin with these (``ln1.weight`` = γ₁, ``ln1.bias`` = β₁)."""


def parameter_scale(name: str) -> str:
    """The colour-scale family of parameter ``name``: :data:`NORM_PARAMETER_SCALE` for a norm's
    γ or β (``"ln2.bias"``), else :data:`PARAMETER_SCALE` (``"attn.W_Q"``); the name of a family
    is its own family (``"parameters"`` → ``"parameters"``).

    >>> parameter_scale("ln1.weight"), parameter_scale("attn.W_O")
    ('norm_parameters', 'parameters')
    """
    if name == NORM_PARAMETER_SCALE or name.split(".")[0] in NORM_PREFIXES:
        return NORM_PARAMETER_SCALE
    return PARAMETER_SCALE


COLUMN_PREFIXES = {"d_model": "d", "d_head": "d", "d_ff": "f", "n_vocab": "v"}
"""Column labels of a feature axis: ``d0, d1, …`` for d_model and d_head, ``f0, f1, …`` for d_ff,
``v0, v1, …`` for the vocabulary (a record with its words labels them with those instead)."""


def field(name: str) -> RecordField:
    """The field called ``name`` (``KeyError`` if there is none)."""
    return BY_NAME[name]


def axis_labels(dimension: str, tokens: list[str], size: int, vocabulary: tuple[str, ...] | None = None) -> list[str]:
    """Labels along one axis: the tokens for ``n``, ``h0…`` for heads, ``d0…``/``f0…`` for
    features, the words of ``vocabulary`` (``rec.source.vocabulary``) for ``n_vocab``, else ``v0…``.

    >>> axis_labels("d_ff", ["the", "cat"], 3), axis_labels("n_vocab", [], 3, ("<unk>", "the", "cat"))
    (['f0', 'f1', 'f2'], ['<unk>', 'the', 'cat'])
    """
    if dimension == "n":
        return list(tokens)
    if dimension == "n_vocab" and vocabulary is not None and len(vocabulary) == size:
        return list(vocabulary)
    prefix = "h" if dimension == "n_heads" else COLUMN_PREFIXES[dimension]
    return [f"{prefix}{index}" for index in range(size)]


def docs_table() -> str:
    """The fields as an RST table (name, shape, what): the record's docstring holds it."""
    rows = [(f"``{spec.name}``", f"``{spec.shape_text}``", spec.what) for spec in FIELDS]
    widths = [max(len(row[column]) for row in rows + [("name", "shape", "what")]) for column in range(3)]
    rule = "  ".join("=" * width for width in widths)
    line = lambda cells: "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(("name", "shape", "what")), rule, *map(line, rows), rule])


FACTS = (
    PRE_NORM,
    POST_NORM,
    LAYER_NORM,
    RMS_NORM,
    ADDED_POSITIONS,
    ROTARY,
    PLAIN_FFN,
    GATED_FFN,
    MODEL_LAYER,
    UNEMBEDDING,
)
"""The facts :func:`declaration_table` names a field's blocks by."""


def declaration_table() -> str:
    """Every field any block records as a Markdown table (name, shape, the blocks that record
    it: the :data:`FACTS` true of every supported architecture whose record holds it), in
    data-flow order — the docs' reference of which architecture has which field.

    >>> rows = {line.split(" | ")[0][3:-1]: line.split(" | ")[2][:-2] for line in declaration_table().splitlines()[2:]}
    >>> rows["ln1_mean"], rows["ln1_mean_sq"], rows["resid_mid_norm"], rows["mask"], rows["prev_output"]
    ('LayerNorm', 'pre-norm, RMSNorm', 'post-norm, LayerNorm', 'every block', "a trained model's layer (if recorded)")
    """
    holders: dict[str, list[Architecture]] = {}
    for arch in supported_architectures():
        for spec in fields_for(arch, optional=OPTIONAL_FIELDS):
            holders.setdefault(spec.name, []).append(arch)
    rows = []
    for entry in DECLARATION:
        archs = holders.pop(entry.name, None)  # a name declared twice (a norm's) is one row, where first declared
        if archs is not None:
            facts = [fact.text for fact in FACTS if all(fact(arch) for arch in archs)]
            blocks = ", ".join(facts) or "every block"
            rows.append(
                f"| `{entry.name}` | {entry.field(Architecture()).shape_text} | {blocks}{' (if recorded)' if entry.optional else ''} |"
            )
    return "\n".join(["| name | shape | recorded by |", "|---|---|---|", *rows])
