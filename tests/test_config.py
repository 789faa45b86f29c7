"""Configurations that cannot work are refused with the field's name and a valid choice."""

import pytest

from blockviz import BlockConfig, BlockvizError


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(d_model=5), "d_model 5 is not divisible by n_heads 2"),
        (dict(d_model=0), "d_model must be a whole number from 1 to 4096"),
        (dict(n_heads=0), "n_heads must be"),
        (dict(d_ff=-1), "d_ff must be"),
        (dict(activation="tanh"), "activation must be one of gelu, relu"),
        (dict(positional="rope"), "positional must be one of sinusoidal, learned"),
        (dict(dtype="float16"), "dtype must be one of float32, float64"),
        (dict(seed=-1), "seed must be"),
    ],
)
def test_impossible_configs_are_refused(fields, message):
    with pytest.raises(BlockvizError, match=message):
        BlockConfig(**fields)


def test_d_head_is_d_model_over_n_heads():
    assert BlockConfig(d_model=12, n_heads=3).d_head == 4


def test_config_round_trips_through_a_dict():
    config = BlockConfig(d_model=6, n_heads=3, causal=False)
    assert BlockConfig.from_dict(config.to_dict()) == config


def test_a_source_says_whether_it_is_the_toy_model_and_where_its_checkpoints_are(tmp_path):
    """What the training figure and the learning scene ask of a record, read from ``rec.source``
    (issue 33), not from the toy package: a toy model's folder with its checkpoints file."""
    from blockviz.source import CHECKPOINTS, Source

    assert Source("trained", model="toy", path=str(tmp_path)).checkpoints is None  # no file yet
    (tmp_path / CHECKPOINTS).write_bytes(b"")
    toy = Source("trained", model="toy", path=str(tmp_path))
    assert toy.is_toy and toy.checkpoints == tmp_path / CHECKPOINTS
    layer = Source("model", path=str(tmp_path), model="minilm", family="bert", layer=3)
    assert not layer.is_toy and layer.checkpoints is None
    assert not Source().is_toy and Source().checkpoints is None
