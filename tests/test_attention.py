"""The attention arithmetic against hand-worked numbers and the textbook formula."""

import math

import pytest
import torch

from blockviz.attention import causal_mask, open_mask, scale_scores, softmax_and_mix
from blockviz.errors import BlockvizError


def test_worked_example_weights_and_mixture_are_exact():
    # The guide's mixture: scores 0 and ln 3 → weights 1/4, 3/4; (2, 0) and (0, 4) → (0.5, 3).
    scores = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
    values = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
    weights, mixture = softmax_and_mix(scores, values)
    assert weights.tolist() == [[0.25, 0.75]]
    assert mixture.tolist() == [[0.5, 3.0]]


def test_worked_example_in_float32_is_within_one_ulp():
    weights, mixture = softmax_and_mix(torch.tensor([[0.0, math.log(3.0)]]), torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
    torch.testing.assert_close(weights, torch.tensor([[0.25, 0.75]]), atol=1.2e-7, rtol=0)
    torch.testing.assert_close(mixture, torch.tensor([[0.5, 3.0]]), atol=4.8e-7, rtol=0)


def test_causal_mask_blocks_exactly_the_future():
    assert causal_mask(3).tolist() == [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf], [0.0, 0.0, 0.0]]
    assert open_mask(2).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_blocked_keys_get_weight_exactly_zero():
    scores = torch.tensor([[1.5, -math.inf, 0.5]])
    weights, _ = softmax_and_mix(scores, torch.ones(3, 2))
    assert weights[0, 1].item() == 0.0
    assert weights[0, 0].item() == pytest.approx(math.exp(1.5) / (math.exp(1.5) + math.exp(0.5)))


def test_scaling_divides_by_root_d_head():
    assert scale_scores(torch.tensor([4.0]), 4).item() == 2.0


def test_a_row_that_blocks_every_key_is_refused():
    with pytest.raises(BlockvizError, match="blocks every key"):
        softmax_and_mix(torch.full((1, 2), -math.inf), torch.ones(2, 2))
