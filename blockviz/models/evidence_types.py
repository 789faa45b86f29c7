"""What :mod:`blockviz.models.evidence` finds in attention weights, as plain values: its results'
types and thresholds, importable without torch (:mod:`blockviz.array_evidence` makes them too)."""

from __future__ import annotations

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
    * ``"ordinary"`` — the other queries put about as much there (or none sees the key).
    """

    key: int
    weight: float
    baseline: float
    reading: str


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
