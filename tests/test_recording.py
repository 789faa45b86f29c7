"""The front door, ``blockviz.record`` and ``blockviz.attentions``: the same numbers as the CLI
for every kind of block, and one-line errors for what does not fit together."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

import blockviz
from blockviz.block_record import BlockRecord
from blockviz.cli import main
from blockviz.errors import BlockvizError


def cli_record(tmp_path, *options):
    path = tmp_path / "rec.safetensors"
    result = CliRunner().invoke(main, ["record", "the cat sat", *options, "--save", str(path)])
    assert result.exit_code == 0, result.output
    return BlockRecord.load(path)


def assert_same_record(python, command):
    assert python.tokens == command.tokens and python.source == command.source
    names = sorted(spec.name for spec in python.fields)
    assert names == sorted(spec.name for spec in command.fields)
    for name in names:
        assert torch.equal(getattr(python, name), getattr(command, name)), name


@pytest.mark.parametrize(
    ("python", "options"),
    [
        ({}, []),  # the default: the trained toy model, in Python as on the command line
        ({"model": "seeded"}, ["--model", "seeded"]),
        ({"d_model": 8, "n_heads": 4, "seed": 3}, ["--d-model", "8", "--heads", "4", "--seed", "3"]),
        ({"causal": False}, ["--bidirectional"]),
    ],
    ids=["toy", "seeded", "sizes", "bidirectional"],
)
def test_the_front_door_gives_the_commands_numbers(tmp_path, python, options):
    assert_same_record(blockviz.record("the cat sat", **python), cli_record(tmp_path, *options))


def test_the_default_is_the_trained_toy_model():
    rec = blockviz.record("the cat sat")
    assert rec.source.kind == "trained" and rec.source.model == "toy" and rec.probs.shape[0] == 3
    assert blockviz.record("the cat sat", d_model=8).source.kind == "seeded"


def test_a_models_layer_through_the_front_door(tmp_path):
    pytest.importorskip("transformers")
    rec = blockviz.record("the cat sat", "minilm", layer=3)
    assert_same_record(rec, cli_record(tmp_path, "--model", "minilm", "--layer", "3"))
    every_layer = blockviz.attentions("the cat sat", "minilm")
    assert every_layer.weights.shape == (6, 12, 5, 5)  # [CLS] the cat sat [SEP]
    assert torch.allclose(every_layer.weights[3], rec.weights.float(), atol=1e-5)


def test_attentions_of_one_block_are_its_records_weights():
    toy = blockviz.attentions("the cat sat")
    assert toy.weights.shape == (1, 2, 3, 3)
    assert torch.equal(toy.weights[0], blockviz.record("the cat sat").weights.float())
    seeded = blockviz.attentions("the cat sat", n_heads=4, d_model=8)
    assert torch.equal(seeded.weights[0], blockviz.record("the cat sat", "seeded", n_heads=4, d_model=8).weights)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: blockviz.record("the cat sat", "minilm", layer=3, d_model=8), "d_model sizes blockviz's seeded block"),
        (lambda: blockviz.record("the cat sat", "toy", d_model=8), "drop d_model, or record model='seeded'"),
        (lambda: blockviz.record("the cat sat", "minilm"), "model 'minilm' needs layer=L"),
        (lambda: blockviz.record("the cat sat", layer=2), "layer 2 is out of range: toy is one block, layer 0"),
        (lambda: blockviz.record("the cat sat", "seeded", layer=1), "blockviz's seeded block is one block, layer 0"),
        (lambda: blockviz.record("the cat sat", dmodel=8), "'dmodel' is not a size of the seeded block"),
        (lambda: blockviz.record("the cat sat", "no-such-model", layer=0), "no-such-model"),
    ],
)
def test_what_does_not_fit_together_is_one_line(call, message):
    with pytest.raises(BlockvizError, match=None) as raised:
        call()
    assert message in str(raised.value) and "\n" not in str(raised.value)
