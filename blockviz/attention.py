"""The attention arithmetic, one named step at a time (Vaswani et al. 2017, Eq. 1).

Attention(Q, K, V) = softmax(QKᵀ / √d_k + M) V, split into the steps blockviz shows:
dot products, scaling, masking, softmax and value mixing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from blockviz.errors import BlockvizError


def causal_mask(n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The causal mask M, shape ``(n, n)``: 0 where query i may use key j (j ≤ i), −∞ where j > i."""
    return torch.full((n, n), -math.inf, dtype=dtype).triu(diagonal=1)


def open_mask(n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The mask of bidirectional attention, shape ``(n, n)``: all 0, every key allowed."""
    return torch.zeros(n, n, dtype=dtype)


def dot_product_scores(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """Raw dot products q·k, shape ``(n_heads, n, n)`` from query and key ``(n_heads, n, d_head)``.

    Row i, column j is query i's dot product with key j.
    """
    return query @ key.transpose(-2, -1)


def scale_scores(scores: torch.Tensor, d_head: int) -> torch.Tensor:
    """Scores divided by √d_head (Vaswani et al. 2017, §3.2.1), same shape as ``scores``."""
    return scores / math.sqrt(d_head)


@dataclass(frozen=True)
class SoftmaxSteps:
    """Softmax of each row, step by step, as blockviz shows it (shapes for scores ``(..., n, n)``).

    ``row_max`` ``(..., n)``: the row's largest score; ``exp_scores`` ``(..., n, n)``:
    exp(score − row_max), in (0, 1] and exactly 0 where the score is −∞; ``exp_sums`` ``(..., n)``:
    each row's sum; ``weights`` ``(..., n, n)``: exp_scores / exp_sums, rows sum to 1.
    Subtracting the max changes no weight (it cancels in the division) and keeps exp from
    overflowing: the usual stable softmax.
    """

    row_max: torch.Tensor
    exp_scores: torch.Tensor
    exp_sums: torch.Tensor
    weights: torch.Tensor


def softmax_steps(scores: torch.Tensor) -> SoftmaxSteps:
    """Softmax over the last axis of ``scores`` ``(..., n_queries, n_keys)``, every step kept.

    Raises
    ------
    BlockvizError
        If a row blocks every key (its softmax would be 0/0).

    >>> steps = softmax_steps(torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64))
    >>> steps.exp_scores.tolist(), steps.weights.tolist()
    ([[0.3333333333333333, 1.0]], [[0.25, 0.75]])
    """
    if bool(torch.isneginf(scores).all(dim=-1).any()):
        raise BlockvizError("a query row blocks every key: the mask must allow at least one key per row")
    row_max = scores.max(dim=-1).values
    exp_scores = torch.exp(scores - row_max[..., None])
    exp_sums = exp_scores.sum(dim=-1)
    return SoftmaxSteps(row_max, exp_scores, exp_sums, exp_scores / exp_sums[..., None])


def mix(weights: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """The weighted sum of value rows: ``weights`` ``(..., n_queries, n_keys)`` @ ``value``
    ``(..., n_keys, d_head)`` → ``(..., n_queries, d_head)``."""
    return weights @ value


def softmax_and_mix(scores: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax over each row of ``scores``, then the weighted sum of ``value`` rows.

    Parameters
    ----------
    scores
        Masked, scaled scores ``(..., n_queries, n_keys)``; −∞ marks a blocked key.
    value
        Value vectors ``(..., n_keys, d_head)``.

    Returns
    -------
    weights
        ``(..., n_queries, n_keys)``: each row sums to 1; blocked cells are exactly 0.
    mixture
        ``(..., n_queries, d_head)``: ``weights @ value``.

    Raises
    ------
    BlockvizError
        If a row blocks every key (its softmax would be 0/0).

    Example: scores (0, ln 3) give weights (1/4, 3/4); with values (2, 0) and (0, 4)
    the mixture is 1/4·(2, 0) + 3/4·(0, 4) = (0.5, 3).
    """
    weights = softmax_steps(scores).weights
    return weights, mix(weights, value)
