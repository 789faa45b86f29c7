"""Tensors a large explorer page does not carry: the ones its script derives, bit for bit, from
tensors it carries (a residual sum, the centred rows of a LayerNorm, the scaled and masked scores,
the heads' outputs side by side).

Each derivation is tried in Python exactly as the page computes it — in float64, rounded once to
the record's dtype (``Math.fround`` for float32) — and used only when every bit of the result
equals the recorded tensor; a record that computed a field another way carries it. Float32
addition, subtraction and division rounded from float64 are the correctly rounded float32
operations (53 ≥ 2 · 24 + 2 bits), so the derived numbers are the ones the block wrote whenever it
computed them as one such operation (``blockviz.block``).
"""

from __future__ import annotations

import math

import numpy as np

DERIVATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "scaled_scores": (("divide", "scores"),),
    "masked_scores": (("add", "scaled_scores", "mask"),),
    "concat": (("concat", "head_outputs"),),
    "resid_mid": (("add", "resid_pre", "attn_out"),),
    "resid_post": (("add", "resid_mid", "ffn_out"), ("add", "resid_mid_norm", "ffn_out")),
    "ln1_centred": (("centre", "resid_pre", "ln1_mean"), ("centre", "resid_mid", "ln1_mean")),
    "ln2_centred": (("centre", "resid_mid", "ln2_mean"), ("centre", "resid_post", "ln2_mean")),
}
"""For each field, the ways the page may derive it, first tried first: ``(op, operand, …)``.
``add``: a + b, b broadcast over a's leading axes; ``centre``: a − b[..., None] (a row minus its
mean); ``divide``: a / √d_head, √d_head rounded to the record's dtype (Vaswani et al. 2017, §3.2.1); ``concat``: heads ``(H, n, d_head)``
side by side, ``(n, H · d_head)``."""


def apply(op: str, operands: list[np.ndarray], dtype: str, d_head: int) -> np.ndarray:
    """What the page computes for ``op`` on ``operands`` (arrays of the record's values): float64
    arithmetic, the result rounded to ``dtype`` ("float32" or "float64").

    >>> a = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    >>> apply("centre", [a, np.array([1.5, 4.0], np.float32)], "float32", 1).tolist()
    [[-0.5, 0.5], [-1.0, 1.0]]
    """
    first = operands[0].astype(np.float64)
    if op == "add" and operands[1].shape != first.shape[first.ndim - operands[1].ndim :]:
        raise ValueError("the second operand is not the first's trailing axes")
    if op == "centre" and operands[1].shape != first.shape[:-1]:
        raise ValueError("the mean is not one number a row")
    if op == "add":
        result = first + operands[1].astype(np.float64)
    elif op == "centre":
        result = first - operands[1].astype(np.float64)[..., None]
    elif op == "divide":  # torch divides by the Python float √d_head cast to the tensor's dtype
        result = first / float(_rounded(np.float64(math.sqrt(d_head)), dtype))
    elif op == "concat" and first.ndim == 3:
        result = first.transpose(1, 0, 2).reshape(first.shape[1], -1)
    else:
        raise ValueError(f"no derivation {op!r}")
    return _rounded(result, dtype)


def _rounded(values, dtype: str):
    return values.astype(np.float32 if dtype == "float32" else np.float64)


def derivation(name: str, value: np.ndarray, carried: dict[str, np.ndarray], dtype: str, d_head: int) -> dict | None:
    """How the page derives field ``name`` (its values ``value``, in the record's dtype) from the
    tensors placed before it (``carried``, by name): ``{"op", "of": [operands]}`` for the first
    way of :data:`DERIVATIONS` whose every bit equals ``value``, or None (the page carries it).

    >>> a, b = np.float32([0.1, 0.2]), np.float32([0.3, 0.7])
    >>> derivation("resid_mid", a + b, {"resid_pre": a, "attn_out": b}, "float32", 1)
    {'op': 'add', 'of': ['resid_pre', 'attn_out']}
    >>> derivation("resid_mid", a + b + np.float32(1e-6), {"resid_pre": a, "attn_out": b}, "float32", 1) is None
    True
    """
    for op, *names in DERIVATIONS.get(name, ()):
        if not all(operand in carried for operand in names):
            continue
        try:
            result = apply(op, [carried[operand] for operand in names], dtype, d_head)
        except ValueError:  # shapes that do not broadcast: another architecture's fields
            continue
        if result.shape == value.shape and result.tobytes() == value.tobytes():
            return {"op": op, "of": names}
    return None
