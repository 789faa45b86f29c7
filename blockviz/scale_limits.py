"""The half-width of a colour scale: the largest |value|, unless that one is an outlier.

A trained model's residual stream can hold a few huge numbers (SmolLM2-135M's layer 13 reaches
22,543 in one column of its first token, an "attention sink" row — Sun et al. 2024, "Massive
activations in large language models"); on a scale that wide every other cell is white. So when
the largest finite |value| is more than :data:`OUTLIER_FACTOR` times the
:data:`ROBUST_PERCENTILE`-th percentile of a family's finite |values|, the scale ends at that
percentile instead, and the cells beyond it are *clipped*: drawn in the colour of the scale's
end, their numbers still the real ones. Without such an outlier (blockviz's seeded block) the
scale is the largest |value|, exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

ROBUST_PERCENTILE = 99.0
"""The percentile of a family's finite |values| a clipped scale ends at."""
OUTLIER_FACTOR = 4.0
"""The largest |value| is an outlier when it exceeds this many times :data:`ROBUST_PERCENTILE`."""
ZERO_LIMIT = 1e-9
"""The smallest half-width: a scale of zeros still has a width."""
BOUNDED_FAMILIES = ("weights", "exp_scores", "mask", "rotary")
"""Colour-scale families bounded by construction (probabilities, the 0/−∞ mask, cos and sin):
their scale is always their largest |value|, never clipped (a long sentence's weights are
mostly near 0, and the weights' map is the fixed 0–1 one anyway)."""


@dataclass(frozen=True)
class ScaleLimit:
    """A signed colour scale's half-width ``limit`` (it spans ``[-limit, limit]``) and the
    ``largest`` finite |value| of its family; ``clipped`` when ``largest`` lies beyond ``limit``."""

    limit: float
    largest: float

    @property
    def clipped(self) -> bool:
        """Whether some values lie beyond the scale (drawn at its end colours)."""
        return self.largest > self.limit


def robust_limit(tensors: Iterable, robust: bool = True) -> ScaleLimit:
    """The colour scale of one family, ``tensors`` (torch tensors or numpy arrays) of any shapes (−∞ and NaN ignored): the
    largest finite |value|, or (``robust``) the :data:`ROBUST_PERCENTILE`-th percentile of them
    when the largest is an outlier (module docstring); at least :data:`ZERO_LIMIT`.

    >>> robust_limit([np.array([1.0, -2.0, float("-inf")], dtype=np.float32)])
    ScaleLimit(limit=2.0, largest=2.0)
    >>> scale = robust_limit([np.ones(1000, dtype=np.float32), np.array([500.0], dtype=np.float32)])
    >>> scale.limit, scale.largest, scale.clipped
    (1.0, 500.0, True)
    """
    finite = [np.abs(values[np.isfinite(values)]) for values in map(_as_array, tensors)]
    finite = [values for values in finite if values.size]
    largest = max([float(values.max()) for values in finite] + [ZERO_LIMIT])
    if not (robust and finite):
        return ScaleLimit(largest, largest)
    every = np.concatenate([values.ravel() for values in finite])
    percentile = float(np.percentile(every, ROBUST_PERCENTILE))
    if percentile > ZERO_LIMIT and largest > OUTLIER_FACTOR * percentile:
        return ScaleLimit(percentile, largest)
    return ScaleLimit(largest, largest)


def _as_array(values) -> np.ndarray:
    """``values`` as a numpy array: a torch tensor's own numbers (bfloat16, which numpy lacks,
    widened exactly to float32), an array as it is."""
    if isinstance(values, np.ndarray):
        return values
    values = values.detach().cpu()
    return values.float().numpy() if str(values.dtype) == "torch.bfloat16" else values.numpy()
