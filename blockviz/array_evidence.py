"""The readings a still takes from one block's attention weights, on numpy arrays, without torch.

:mod:`blockviz.models.evidence` reads a model's weights ``(n_layers, n_heads, n, n)`` as torch
tensors; a record read without torch (:class:`~blockviz.record_arrays.ArrayRecord`) holds numpy
arrays, and these are the same rules on them for one block ``(n_heads, n, n)``:
:func:`answering_head_of_arrays` (:func:`~blockviz.models.evidence.answering_head`) and
:func:`largest_weight_of` (:func:`~blockviz.models.evidence.largest_weight`). A key's baseline is the
mean weight on it from the other queries that see it, in float32 as torch's, whose last bit may
differ from torch's (another order of addition); the weights themselves are the record's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from blockviz.errors import BlockvizError


def baseline_of(weights: np.ndarray, head: int, query: int, key: int, causal: bool) -> float:
    """The mean weight ``head`` gives ``key`` from the queries other than ``query`` that see it
    (:func:`blockviz.models.evidence.baselines`), a float32; NaN when no other query sees it."""
    others = [q for q in range(weights.shape[-1]) if q != query and (not causal or q >= key)]
    return weights[head, others, key].mean(dtype=np.float32) if others else np.float32(math.nan)


def answering_head_of_arrays(weights: np.ndarray, query: int, key: int | None, causal: bool):
    """:func:`blockviz.models.evidence.answering_head` on one block's ``weights`` ``(n_heads, n, n)``:
    the head and key (``key`` if given) with the largest weight above its baseline from ``query``,
    ties in head, key order; an :class:`~blockviz.models.evidence.AnsweringHead` of layer 0.

    Raises :class:`BlockvizError` for a key the query cannot see or no other query sees.
    """
    from blockviz.models.evidence_types import AnsweringHead, best_margin

    n = weights.shape[-1]
    if key is not None and causal and key > query:
        raise BlockvizError(f"key position {key} comes after query position {query}: a causal model hides it")
    allowed = [key] if key is not None else [j for j in range(n) if not (causal and j > query)]
    best = best_margin(
        (float(weights[head, query, j] - baseline_of(weights, head, query, j, causal)), head, j)
        for head in range(weights.shape[0])
        for j in allowed
    )
    if best is None:
        raise BlockvizError(f"no other query sees key {key}: there is no baseline to stand above")
    above, head, j = best
    weight = float(weights[head, query, j])
    return AnsweringHead(0, head, j, weight, weight - above, above)


def largest_weight_of(
    weights, head: int, query: int, special: Sequence[bool], causal: bool, unknown: Sequence[bool] | None = None
):
    """:func:`blockviz.models.evidence.largest_weight` of one block's ``weights`` ``(n_heads, n, n)``
    (a torch tensor goes to it; numpy arrays are read here, without torch); ``unknown`` as there."""
    if not isinstance(weights, np.ndarray):
        from blockviz.models.evidence import largest_weight

        return largest_weight(weights[None], 0, head, query, special, causal, unknown)
    from blockviz.models.evidence_types import LargestWeight, reading_of

    row = weights[head, query]
    key = int(row.argmax())
    weight = float(row[key])
    baseline = float(baseline_of(weights, head, query, key, causal))
    sink = float(row[sorted({0} | {j for j, flag in enumerate(special) if flag})].sum())
    either_unknown = bool(unknown) and (unknown[query] or unknown[key])
    return LargestWeight(
        key, weight, baseline, reading_of(query, key, weight, baseline, special[key], sink, causal, either_unknown)
    )
