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


CLIPPED_SHARE = 0.05
"""The most of a grid's shown cells a scale chosen from them (:func:`shown_limit`) may clip."""
NICE_STEPS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
"""The mantissas a scale chosen from shown values ends at (:func:`nice_limit`): no step is more
than 4/3 of the one before, so the value rounded up reaches at least 75 % of its scale."""


def nice_limit(value: float) -> float:
    """The smallest of :data:`NICE_STEPS` × 10^k at or above ``value`` (> 0): a colour bar's end
    a viewer reads at a glance, and one several grids of like size share.

    >>> nice_limit(0.93), nice_limit(5.89), nice_limit(21.18), nice_limit(3.0)
    (1.0, 6.0, 25.0, 3.0)
    """
    exponent = np.floor(np.log10(value))
    mantissa = value / 10.0**exponent
    step = next(step for step in NICE_STEPS if step >= mantissa * (1 - 1e-9))
    return float(round(step * 10.0**exponent, 12))


@dataclass(frozen=True)
class ShownLimit:
    """The colour scale of one drawn grid: half-width ``limit``, the ``largest`` shown |value| and
    the |value| ``end`` the scale was rounded up from; ``clipped`` when some shown values lie beyond ``limit``."""

    limit: float
    largest: float
    end: float

    @property
    def clipped(self) -> bool:
        """Whether some shown values lie beyond the scale (drawn at its end colours)."""
        return self.largest > self.limit


def shown_limit(values: Iterable[float], family: ScaleLimit | float | None = None) -> ShownLimit:
    """The colour scale of a grid chosen from what it shows: ``values``, the numbers of its drawn,
    unblocked cells (−∞ and NaN ignored). The largest |value| rounded up (:func:`nice_limit`),
    unless it is more than :data:`OUTLIER_FACTOR` times the |value| that clips
    :data:`CLIPPED_SHARE` of the cells (the ``⌊0.05·n⌋``-th largest): then that |value| rounded
    up, so one outlier does not make every other cell pale and at most 5 % of the cells are
    clipped. The largest shown value reaches at least 75 % of the scale. A grid of zeros (or of
    no finite value) gets the scale 1 (``end`` 0): any scale draws zeros white.

    ``family`` is the scale of the values' whole colour-scale family (``record.scale_of(name)``,
    :func:`robust_limit`). When it is clipped, a value more than :data:`OUTLIER_FACTOR` times its
    ``limit`` is an outlier of the family, as :func:`robust_limit` calls its largest one, and is
    clipped in every grid that shows it: it is left out of ``end`` (drawn at the scale's end
    colour, its real number written) and the scale is chosen from the other values; a grid
    showing only outliers gets the family's limit. (Values just beyond a family's percentile, a
    trained model's large but common ones, are no outliers: a grid of them is read on its own
    scale.) A plain number is the limit of an unclipped family: no value is left out.

    >>> shown_limit([0.93, -0.2, float("-inf")])
    ShownLimit(limit=1.0, largest=0.93, end=0.93)
    >>> scale = shown_limit([0.5] * 39 + [-40.0])
    >>> scale.limit, scale.clipped
    (0.5, True)
    >>> shown_limit([22543.0, 3.1, -1.2, 0.4], family=ScaleLimit(12.0, 22543.0))
    ShownLimit(limit=4.0, largest=22543.0, end=3.1)
    """
    ranked = sorted((abs(value) for value in values if np.isfinite(value)), reverse=True)
    if not ranked or ranked[0] <= ZERO_LIMIT:
        return ShownLimit(1.0, ranked[0] if ranked else 0.0, 0.0)
    largest = ranked[0]
    if isinstance(family, ScaleLimit) and family.clipped:
        ranked = [value for value in ranked if value <= OUTLIER_FACTOR * family.limit]
        if not ranked:
            return ShownLimit(family.limit, largest, family.limit)
        if ranked[0] <= ZERO_LIMIT:
            return ShownLimit(1.0, largest, 0.0)
    kept = ranked[int(CLIPPED_SHARE * len(ranked))]
    end = kept if kept > ZERO_LIMIT and ranked[0] > OUTLIER_FACTOR * kept else ranked[0]
    return ShownLimit(nice_limit(end), largest, end)
