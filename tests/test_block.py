"""The block module itself: constant rows, and the parameter names a weights file uses."""

import pytest
import torch

from blockviz import BlockConfig
from blockviz.block import Block


@pytest.mark.parametrize("value", [0.0, 3.0])
def test_constant_rows_give_zero_not_nan_in_layer_norm(value):
    cache = {}
    Block(BlockConfig())(torch.full((2, 4), value), cache)
    assert torch.equal(cache["ln1"], torch.zeros(2, 4))
    assert bool(torch.isfinite(cache["resid_post"]).all())


def test_parameter_names_and_shapes():
    shapes = {name: tuple(t.shape) for name, t in Block(BlockConfig()).state_dict().items()}
    assert shapes == {
        "ln1.weight": (4,),
        "ln1.bias": (4,),
        "attn.W_Q": (2, 4, 2),
        "attn.W_K": (2, 4, 2),
        "attn.W_V": (2, 4, 2),
        "attn.b_Q": (2, 2),
        "attn.b_K": (2, 2),
        "attn.b_V": (2, 2),
        "attn.W_O": (4, 4),
        "attn.b_O": (4,),
        "ln2.weight": (4,),
        "ln2.bias": (4,),
        "ffn.W_in": (4, 8),
        "ffn.b_in": (8,),
        "ffn.W_out": (8, 4),
        "ffn.b_out": (4,),
    }


def test_same_seed_same_weights_other_seed_other_weights():
    a, b, c = Block(BlockConfig()), Block(BlockConfig()), Block(BlockConfig(seed=1))
    assert torch.equal(a.attn.W_Q, b.attn.W_Q)
    assert not torch.equal(a.attn.W_Q, c.attn.W_Q)
