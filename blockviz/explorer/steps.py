"""The explorer's steps: the block's calculation for one token, in the order the data flows.

Each step names the record fields it shows; the page (``explorer.js``) recomputes the step's
result from its inputs and compares it with the record. The names are the ones the URL hash,
``--step`` and ``rec.explore(step=…)`` take.
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class Step:
    """One step: its ``name`` (for links), a short ``title`` and the ``formula`` it computes."""

    name: str
    title: str
    formula: str


STEPS: tuple[Step, ...] = (
    Step("input", "Embedding + position", "x = embed + pos_embed"),
    Step("ln1", "LayerNorm 1", "ln1 = γ ⊙ (x − mean) / √(var + ε) + β"),
    Step("qkv", "Query, key, value", "q = ln1 · W_Q + b_Q,  k = ln1 · W_K + b_K,  v = ln1 · W_V + b_V"),
    Step("scores", "Dot products", "score_j = q · k_j = Σ q_c k_jc"),
    Step("scale", "Scale by √d_head", "scaled_j = score_j / √d_head"),
    Step("mask", "Mask", "masked_j = scaled_j + M_j   (M_j = 0 allowed, −∞ blocked)"),
    Step("softmax", "Softmax", "w_j = exp(masked_j − max) / Σ exp(masked − max)"),
    Step("mix", "Weighted sum of values", "head_out = Σ_j w_j v_j"),
    Step("concat", "Concatenate heads", "concat = [head_out_0, head_out_1, …]"),
    Step("project", "Output projection", "attn_out = concat · W_O + b_O"),
    Step("add1", "Residual add", "resid_mid = x + attn_out"),
    Step("ln2", "LayerNorm 2", "ln2 = γ ⊙ (resid_mid − mean) / √(var + ε) + β"),
    Step("widen", "FFN widen", "ffn_pre = ln2 · W_in + b_in"),
    Step("activation", "FFN activation", "ffn_post = activation(ffn_pre)"),
    Step("narrow", "FFN narrow", "ffn_out = ffn_post · W_out + b_out"),
    Step("add2", "Second residual add", "resid_post = resid_mid + ffn_out"),
    Step("output", "Output", "the block's output: one row per token, the same shape as its input"),
)
"""Every step of the explorer, in data-flow order."""

STEP_NAMES: tuple[str, ...] = tuple(step.name for step in STEPS)


def select_step(step: str | None) -> str:
    """``step`` if it names a step; ``None`` gives the first step.

    >>> select_step("softmax"), select_step(None)
    ('softmax', 'input')

    Raises
    ------
    BlockvizError
        If ``step`` is not a step name; the message lists the names.
    """
    if step is None:
        return STEP_NAMES[0]
    if step not in STEP_NAMES:
        raise BlockvizError(f"step {step!r} does not exist: choose one of {', '.join(STEP_NAMES)}")
    return step
