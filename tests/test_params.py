"""Your own weights: a file of parameters replaces the seeded ones, or is refused clearly."""

import json
import math

import pytest
import torch
from safetensors.torch import save_file

from blockviz import BlockConfig, BlockvizError
from blockviz.block_record import record


def seeded_params(config=BlockConfig()):
    return dict(record("x", config=config).params)  # a record's own params are read-only


def write_json(path, params):
    path.write_text(json.dumps({name: t.tolist() for name, t in params.items()}))


def test_weights_file_replaces_the_seeded_parameters(tmp_path):
    params = seeded_params()
    params["attn.W_V"] = torch.zeros_like(params["attn.W_V"])
    params["attn.b_V"] = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    save_file(params, str(tmp_path / "w.safetensors"))
    rec = record("the cat sat", params=tmp_path / "w.safetensors")
    # Every value is the bias, so each head's output is exactly that bias (weights sum to 1).
    torch.testing.assert_close(rec.head_outputs[1], torch.tensor([[3.0, 4.0]] * 3))
    assert torch.equal(rec.params["attn.b_V"], params["attn.b_V"])


def test_saved_record_works_as_a_weights_file(tmp_path, cat_record):
    cat_record.save(tmp_path / "r.json")
    again = record("the cat sat", params=tmp_path / "r.json")
    torch.testing.assert_close(again.resid_post, cat_record.resid_post, atol=1e-6, rtol=0)


def test_learned_positions_come_from_the_weights_file(tmp_path):
    config = BlockConfig(positional="learned")
    params = seeded_params(config)
    params["W_pos"] = torch.arange(64 * 4, dtype=torch.float32).reshape(64, 4)
    write_json(tmp_path / "w.json", params)
    rec = record("a b", config=config, params=tmp_path / "w.json")
    assert rec.pos_embed.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_missing_parameter_is_named(tmp_path):
    params = seeded_params()
    del params["ffn.W_in"]
    write_json(tmp_path / "w.json", params)
    with pytest.raises(BlockvizError, match="has no parameter 'ffn.W_in': add it with shape \\[4, 8\\]"):
        record("a", params=tmp_path / "w.json")


def test_wrong_shape_names_parameter_expected_and_got(tmp_path):
    params = seeded_params()
    params["attn.W_O"] = torch.zeros(3, 4)
    write_json(tmp_path / "w.json", params)
    with pytest.raises(BlockvizError, match=r"'attn.W_O' .* has shape \[3, 4\], expected \[4, 4\]"):
        record("a", params=tmp_path / "w.json")


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_weight_is_refused(tmp_path, bad):
    params = seeded_params()
    params["ln2.bias"][0] = bad
    save_file(params, str(tmp_path / "w.safetensors"))
    with pytest.raises(BlockvizError, match="'ln2.bias' .* holds NaN or ∞"):
        record("a", params=tmp_path / "w.safetensors")


def test_nan_literal_in_json_is_refused(tmp_path):
    (tmp_path / "w.json").write_text('{"ln1.bias": [NaN, 0, 0, 0]}')
    with pytest.raises(BlockvizError, match="not valid JSON"):
        record("a", params=tmp_path / "w.json")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("missing.json", None, "no file at"),
        ("w.pt", b"\x80\x04pickle", "neither .safetensors nor .json"),
        ("w.safetensors", b"garbage bytes", "not a valid .safetensors file"),
        ("w.json", b"{not json", "not valid JSON"),
        ("w.json", b"[1, 2]", "must hold a JSON object"),
        ("w.json", b'{"ln1.bias": [[1, 2], [3]]}', "not a rectangular list of numbers"),
    ],
)
def test_unreadable_weights_files_are_one_clear_error(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(BlockvizError, match=message):
        record("a", params=path)


def test_another_records_parameters_can_be_passed_directly(cat_record):
    again = record("the cat sat", params=cat_record.params)
    assert torch.equal(again.resid_post, cat_record.resid_post)
    bad = dict(cat_record.params, **{"ffn.b_in": torch.zeros(3)})
    with pytest.raises(BlockvizError, match=r"'ffn.b_in' in the given parameters has shape \[3\], expected \[8\]"):
        record("a", params=bad)
