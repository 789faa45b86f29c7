"""What :mod:`blockviz.models.evidence` finds in attention weights, as plain values: its results'
types and thresholds, importable without torch (:mod:`blockviz.array_evidence` makes them too)."""

from __future__ import annotations

import math
from dataclasses import dataclass

PARKS_AT = 0.5
"""A head whose weight from the query on the first token and the special tokens together is at
least this is flagged as parking there (an attention sink)."""
LEARNED_MARGIN = 0.1
"""A row's largest weight is read as a link of its own (learned, in a trained block) only when it
is at least this much above the key's baseline (:func:`blockviz.models.evidence.baselines`)."""


@dataclass(frozen=True)
class LargestWeight:
    """What one head's largest weight from one query may be said to mean: ``key`` (0-based),
    ``weight``, ``baseline`` (NaN: no other query sees the key) and ``reading``:

    * ``"horizon"`` — a causal block's first query sees only itself: its weight 1 says nothing;
    * ``"sink"`` — the key is the first or a special token and the head parks there
      (:func:`blockviz.models.evidence.sink_share` ≥ :data:`PARKS_AT`): an attention sink, not a meaning;
    * ``"above"`` — at least :data:`LEARNED_MARGIN` above the baseline: a link of this row's own;
    * ``"unknown"`` — above the baseline, but the query or the key is a word outside a toy
      model's vocabulary, read as its unknown token: a link of that token, not of the word;
    * ``"ordinary"`` — the other queries put about as much there (or none sees the key).
    """

    key: int
    weight: float
    baseline: float
    reading: str


def reading_of(
    query: int,
    key: int,
    weight: float,
    baseline: float,
    key_is_special: bool,
    sink: float,
    causal: bool,
    unknown: bool = False,
) -> str:
    """The :class:`LargestWeight` reading of a row's largest ``weight`` on ``key``: its
    ``baseline`` (NaN: no other query sees the key), whether the key is a special token, the
    row's ``sink`` share (the weight on the first and special tokens together), and whether the
    query or the key was read as the unknown token (``unknown``).

    >>> reading_of(0, 0, 1.0, math.nan, False, 1.0, causal=True)
    'horizon'
    >>> reading_of(2, 0, 0.8, 0.9, False, 0.8, causal=True)
    'sink'
    >>> reading_of(1, 1, 0.7, 0.2, False, 0.3, causal=True)
    'above'
    >>> reading_of(1, 1, 0.7, 0.2, False, 0.3, causal=True, unknown=True)
    'unknown'
    """
    if causal and query == 0:
        return "horizon"
    if (key == 0 or key_is_special) and sink >= PARKS_AT:
        return "sink"
    if not math.isnan(baseline) and weight - baseline >= LEARNED_MARGIN:
        return "unknown" if unknown else "above"
    return "ordinary"


def best_margin(candidates):
    """The first of the largest ``(margin, …)`` tuples of ``candidates``, NaN margins left out
    (ties keep the candidates' order); ``None`` when none has a margin."""
    best = None
    for candidate in candidates:
        if not math.isnan(candidate[0]) and (best is None or candidate[0] > best[0]):
            best = candidate
    return best


@dataclass(frozen=True)
class AnsweringHead:
    """The head that answers for a query: ``layer``, ``head``, the ``key`` position it picks,
    its ``weight``, ``baseline`` and ``above`` = weight − baseline."""

    layer: int
    head: int
    key: int
    weight: float
    baseline: float
    above: float
