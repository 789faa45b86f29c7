"""The guide's hand-worked example, computed by the same softmax and mixing as the block.

One query, two keys: scores (0, ln 3) → exp(s − max) (⅓, 1), sum 4/3 → weights (¼, ¾);
values (2, 0) and (0, 4) → ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Figures and scenes read these
tensors; they compute nothing themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from blockviz.attention import mix, softmax_steps


@dataclass(frozen=True)
class WorkedExample:
    """Every number of the example, float64.

    ``scores`` ``(2,)``, ``row_max`` (a 0-d tensor), ``exp_scores`` ``(2,)`` = exp(scores − row_max),
    ``exp_sum`` (0-d), ``weights`` ``(2,)``, ``values`` ``(2, 2)`` (one row per key),
    ``weighted_values`` ``(2, 2)`` (row j = weights[j] · values[j]) and ``mixture`` ``(2,)``.
    """

    scores: torch.Tensor
    row_max: torch.Tensor
    exp_scores: torch.Tensor
    exp_sum: torch.Tensor
    weights: torch.Tensor
    values: torch.Tensor
    weighted_values: torch.Tensor
    mixture: torch.Tensor


@lru_cache(maxsize=1)
def worked_example() -> WorkedExample:
    """The example's numbers (Vaswani et al. 2017, Eq. 1, for one query and two keys).

    >>> example = worked_example()
    >>> example.weights.tolist(), example.mixture.tolist()
    ([0.25, 0.75], [0.5, 3.0])
    """
    scores = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
    values = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
    steps = softmax_steps(scores)
    return WorkedExample(
        scores=scores[0],
        row_max=steps.row_max[0],
        exp_scores=steps.exp_scores[0],
        exp_sum=steps.exp_sums[0],
        weights=steps.weights[0],
        values=values,
        weighted_values=steps.weights[0][:, None] * values,
        mixture=mix(steps.weights, values)[0],
    )
