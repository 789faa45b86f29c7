"""The explorer's steps: the block's calculation for one token, in the order the data flows.

Each step names the record fields it shows; the page (``explorer.js``) recomputes the step's
result from its inputs and compares it with the record. The names are the ones the URL hash,
``--step`` and ``rec.explore(step=…)`` take. :data:`STEPS` are the steps of blockviz's own
pre-norm block; :func:`steps_for` gives those of any record's architecture (post-norm,
RMSNorm, rotary positions, grouped-query attention, gated FFN, no biases) and, for a record with
an unembedding (blockviz's trained toy model), the prediction after the block: ``ln_f``,
``logits``, ``prediction``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from blockviz.architecture import Architecture
from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class Step:
    """One step: its ``name`` (for links), a short ``title``, the ``formula`` it computes, and
    for the page the ``kind`` of calculation and its ``args`` (field and parameter names)."""

    name: str
    title: str
    formula: str
    kind: str = ""
    args: dict = field(default_factory=dict, compare=False)


def _norm_formula(centring: bool, output: str, source: str) -> str:
    if not centring:
        return f"{output} = γ ⊙ {source} / √(mean({source}²) + ε)"
    return f"{output} = γ ⊙ ({source} − mean) / √(var + ε) + β"


def steps_for(config, source=None) -> tuple[Step, ...]:
    """The explorer's steps for a record of ``config``'s architecture (``source``: where its
    weights came from, :class:`~blockviz.source.Source`), in data-flow order; what differs
    between blocks is read from their :class:`~blockviz.architecture.Architecture`.

    >>> from blockviz.block_config import BlockConfig
    >>> [s.name for s in steps_for(BlockConfig(d_model=8, norm_placement="post"))][:5]
    ['input', 'qkv', 'scores', 'scale', 'mask']
    >>> [s.name for s in steps_for(BlockConfig(d_model=8, ffn="gated", positional="rotary", bias=False))][11:18]
    ['add1', 'ln2', 'gate', 'activation', 'up', 'gate_up', 'narrow']
    """
    model = source is not None and source.is_model
    arch = Architecture.of(config, model_layer=model)
    post, rms, rotary, gated, bias = arch.post_norm, not arch.has_centring, arch.rotary, arch.gated, arch.bias
    kind = arch.norm_name
    b = lambda name: f" + b_{name}" if bias else ""  # noqa: E731
    attn_in, ffn_in = arch.attention_input, arch.ffn_input
    steps: list[Step] = []
    if model:
        formula = (
            f"x = layer {source.layer - 1}'s output"
            if source.layer
            else "x: the model's hidden state before this layer"
        )
        steps.append(Step("input", "The layer's input", formula, "input", {"model": True, "rotary": rotary}))
    elif rotary:
        steps.append(
            Step(
                "input",
                "Embedding",
                "x = embed   (positions come in later, by rotating q and k)",
                "input",
                {"rotary": True},
            )
        )
    else:
        steps.append(Step("input", "Embedding + position", "x = embed + position", "input", {}))
    if not post:
        steps.append(
            Step(
                "ln1",
                f"{kind} 1",
                _norm_formula(arch.has_centring, "ln1", "x"),
                "norm",
                {"n": 1, "source": "resid_pre", "output": "ln1", "rms": rms},
            )
        )
    grouped = arch.grouped
    kv = "g" if grouped else "h"
    steps.append(
        Step(
            "qkv",
            "Query, key, value",
            f"q = {attn_in} · W_Q[h]{b('Q')},  k = {attn_in} · W_K[{kv}]{b('K')},  v = {attn_in} · W_V[{kv}]{b('V')}"
            + (f",  g = ⌊h / {config.n_heads // config.kv_heads}⌋" if grouped else ""),
            "qkv",
            {"input": attn_in, "bias": bias},
        )
    )
    if rotary:
        steps.append(
            Step(
                "rotary",
                "Rotary positions",
                "q_rot = q ⊙ cos + rotate_half(q) ⊙ sin,  k_rot likewise   (rotate_half(x) = (−x₂, x₁))",
                "rotary",
                {},
            )
        )
    q, k = ("q_rot", "k_rot") if rotary else ("q", "k")
    steps += [
        Step("scores", "Dot products", f"score_j = {q} · {k}_j = Σ {q}_c {k}_jc", "scores", {"rotary": rotary}),
        Step("scale", "Scale by √(head width)", "scaled_j = score_j / √(each head's width)", "scale"),
        Step("mask", "Mask", "masked_j = scaled_j + M_j   (M_j = 0 allowed, −∞ blocked)", "mask"),
        Step("softmax", "Softmax", "w_j = exp(masked_j − max) / Σ exp(masked − max)", "softmax"),
        Step("mix", "Weighted sum of values", "head_out = Σ_j w_j v_j", "mix"),
        Step("concat", "Concatenate heads", "concat = [head_out_0, head_out_1, …]", "concat"),
        Step(
            "project",
            "Output projection",
            f"attn_out = concat · W_O{b('O')}",
            "linear",
            {
                "input": "concat",
                "weight": "attn.W_O",
                "bias": "attn.b_O" if bias else None,
                "output": "attn_out",
                "role": "output",
                "what": "the concatenated heads through W_O",
            },
        ),
        Step(
            "add1",
            "Residual add",
            "resid_mid = x + attn_out",
            "residual",
            {"a": "resid_pre", "b": "attn_out", "out": "resid_mid", "role": "output"},
        ),
    ]
    if post:
        steps.append(
            Step(
                "ln1",
                f"{kind} 1 (after the add)",
                _norm_formula(arch.has_centring, "resid_mid_norm", "resid_mid"),
                "norm",
                {"n": 1, "source": "resid_mid", "output": "resid_mid_norm", "rms": rms},
            )
        )
    else:
        steps.append(
            Step(
                "ln2",
                f"{kind} 2",
                _norm_formula(arch.has_centring, "ln2", "resid_mid"),
                "norm",
                {"n": 2, "source": "resid_mid", "output": "ln2", "rms": rms},
            )
        )
    act = config.activation_name
    if gated:
        steps += [
            Step(
                "gate",
                "FFN gate",
                f"ffn_gate = {ffn_in} · W_gate{b('gate')}",
                "linear",
                {
                    "input": ffn_in,
                    "weight": "ffn.W_gate",
                    "bias": "ffn.b_gate" if bias else None,
                    "output": "ffn_gate",
                    "role": "ffn",
                    "what": "widened from the width to the FFN's hidden width: the gate",
                },
            ),
            Step(
                "activation",
                "FFN gate activation",
                f"ffn_gate_act = {act}(ffn_gate)",
                "activation",
                {"input": "ffn_gate", "output": "ffn_gate_act"},
            ),
            Step(
                "up",
                "FFN up",
                f"ffn_up = {ffn_in} · W_up{b('up')}",
                "linear",
                {
                    "input": ffn_in,
                    "weight": "ffn.W_up",
                    "bias": "ffn.b_up" if bias else None,
                    "output": "ffn_up",
                    "role": "ffn",
                    "what": "widened from the width to the FFN's hidden width: the values the gate scales",
                },
            ),
            Step(
                "gate_up",
                "Gate ⊙ up",
                "ffn_post = ffn_gate_act ⊙ ffn_up",
                "product",
                {"a": "ffn_gate_act", "b": "ffn_up", "out": "ffn_post"},
            ),
        ]
    else:
        steps += [
            Step(
                "widen",
                "FFN widen",
                f"ffn_pre = {ffn_in} · W_in{b('in')}",
                "linear",
                {
                    "input": ffn_in,
                    "weight": "ffn.W_in",
                    "bias": "ffn.b_in" if bias else None,
                    "output": "ffn_pre",
                    "role": "ffn",
                    "what": "widened from the width to the FFN's hidden width",
                },
            ),
            Step(
                "activation",
                "FFN activation",
                f"ffn_post = {act}(ffn_pre)",
                "activation",
                {"input": "ffn_pre", "output": "ffn_post"},
            ),
        ]
    steps.append(
        Step(
            "narrow",
            "FFN down" if gated else "FFN narrow",
            f"ffn_out = ffn_post · W_out{b('out')}",
            "linear",
            {
                "input": "ffn_post",
                "weight": "ffn.W_out",
                "bias": "ffn.b_out" if bias else None,
                "output": "ffn_out",
                "role": "ffn",
                "what": "narrowed back from the FFN's hidden width to the width",
            },
        )
    )
    if post:
        steps += [
            Step(
                "add2",
                "Second residual add",
                "sum = resid_mid_norm + ffn_out",
                "residual",
                {"a": "resid_mid_norm", "b": "ffn_out", "out": "resid_post", "role": "ffn"},
            ),
            Step(
                "ln2",
                f"{kind} 2 (after the add)",
                _norm_formula(arch.has_centring, "resid_post_norm", "sum"),
                "norm",
                {"n": 2, "source": "resid_post", "output": "resid_post_norm", "rms": rms},
            ),
            Step(
                "output",
                "Output",
                "the block's output resid_post_norm: one row per token, the same shape as its input",
                "output",
                {"field": "resid_post_norm", "a": None},
            ),
        ]
    else:
        steps += [
            Step(
                "add2",
                "Second residual add",
                "y = resid_mid + ffn_out",
                "residual",
                {"a": "resid_mid", "b": "ffn_out", "out": "resid_post", "role": "ffn"},
            ),
            Step(
                "output",
                "Output",
                "the block's output: one row per token, the same shape as its input",
                "output",
                {"field": "resid_post"},
            ),
        ]
    if arch.unembedding:
        steps += _prediction_steps()
    return tuple(steps)


def _prediction_steps() -> list[Step]:
    """A language model's last step after its block (GPT-2's ``ln_f`` and unembedding, Radford et
    al. 2019, §2.3; :class:`blockviz.block.Prediction`): the final LayerNorm of the block's output,
    the logits ``ln_f · W_U`` (the toy model's own unembedding, not the embedding table, and no
    bias) and their softmax, the next-token probabilities."""
    return [
        Step(
            "ln_f",
            "Final LayerNorm",
            "ln_f = γ_f ⊙ (y − mean) / √(var + ε) + β_f",
            "norm",
            {"n": "f", "name": "ln_f", "source": "resid_post", "output": "ln_f", "rms": False},
        ),
        Step(
            "logits",
            "Unembedding: logits",
            "logit_w = ln_f · W_U[:, w]   (one score per vocabulary word w; no bias)",
            "unembed",
        ),
        Step(
            "prediction",
            "Softmax: the next word",
            "p_w = exp(logit_w − max) / Σ_v exp(logit_v − max)",
            "prediction",
        ),
    ]


def _toy_steps() -> tuple[Step, ...]:
    from blockviz.block_config import BlockConfig

    return steps_for(BlockConfig())


STEPS: tuple[Step, ...] = _toy_steps()
"""Every step of blockviz's own block, in data-flow order."""

STEP_NAMES: tuple[str, ...] = tuple(step.name for step in STEPS)

OVERVIEW = "overview"
"""The page's first view, before the steps: every layer's and head's weights row of the token."""

ALL_STEP_NAMES: tuple[str, ...] = (
    (OVERVIEW,)
    + STEP_NAMES[:3]
    + ("rotary",)
    + STEP_NAMES[3:12]
    + ("gate", "up", "gate_up")
    + STEP_NAMES[12:]
    + tuple(step.name for step in _prediction_steps())
)
"""Every step name of any architecture, after the page's :data:`OVERVIEW` (``--step`` takes these; a record has its own subset:
``ln_f``, ``logits`` and ``prediction`` only a record with an unembedding, blockviz's trained toy
model)."""


def select_step(step: str | None, names: tuple[str, ...] = STEP_NAMES) -> str:
    """``step`` if it names a step of ``names`` (the record's, :data:`STEP_NAMES` by default);
    ``None`` gives the first step.

    >>> select_step("softmax"), select_step(None)
    ('softmax', 'input')

    Raises
    ------
    BlockvizError
        If ``step`` is not a step name; the message lists the names.
    """
    if step is None:
        return names[0]
    if step not in names:
        raise BlockvizError(f"step {step!r} does not exist: choose one of {', '.join(names)}")
    return step
