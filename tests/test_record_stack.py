"""A record of several blocks: its views, the residual stream as one sequence, saving and loading."""

import json

import pytest
import torch
from support_stack import SENTENCE, toy_stack

from blockviz import BlockRecord, BlockvizError
from blockviz.record_fields import PREDICTION_FIELDS, STACK_FIELDS
from blockviz.toy.recording import record_toy


@pytest.fixture(scope="module")
def stack():
    return toy_stack(n_blocks=3)


def test_a_stack_reads_as_its_last_block_and_each_view_is_one_block(stack):
    assert len(stack.blocks) == 3
    assert torch.equal(stack.weights, stack.block(2).weights)
    assert all(view.blocks == (view,) for view in stack.blocks)
    one = record_toy(SENTENCE)  # block 0 of the stack is the toy model itself
    for name in one.tensors:
        assert torch.equal(stack.block(0).tensors[name], one.tensors[name]), name


def test_the_residual_stream_is_one_sequence(stack):
    for before, after in zip(stack.blocks, stack.blocks[1:]):
        assert torch.equal(after.resid_pre, before.resid_post)
    assert not torch.equal(stack.block(1).resid_pre, stack.block(0).resid_pre)


def test_a_block_whose_input_is_not_the_previous_output_is_refused(stack):
    views = list(stack.blocks)
    views[1], views[2] = views[2], views[1]
    with pytest.raises(BlockvizError, match=r"^block 1's resid_pre is not block 0's resid_post: they differ by"):
        BlockRecord.stacked(views)


def test_every_blocks_logit_lens_adds_up_and_the_last_is_the_models_prediction(stack):
    for view in stack.blocks:
        assert torch.allclose(view.probs.double().sum(-1), torch.ones(view.n, dtype=torch.float64), atol=1e-6)
    assert torch.equal(stack.probs, stack.block(2).probs)
    assert not torch.equal(stack.block(0).probs, stack.block(2).probs)


@pytest.mark.parametrize("index", [3, -1, True])
def test_a_block_out_of_range_is_one_line(stack, index):
    with pytest.raises(BlockvizError, match=r"is out of range: the record has 3 blocks, 0–2$"):
        stack.block(index)


def test_a_one_block_record_is_its_own_block_0(cat_record):
    assert cat_record.blocks == (cat_record,) and cat_record.block(0) is cat_record
    with pytest.raises(BlockvizError, match="^block 1 is out of range: the record has one block, block 0$"):
        cat_record.block(1)


@pytest.mark.parametrize("suffix", [".json", ".safetensors"])
def test_a_stack_saves_and_loads_back_identical(tmp_path, stack, suffix):
    path = tmp_path / f"r{suffix}"
    stack.save(path)
    loaded = BlockRecord.load(path)
    assert len(loaded.blocks) == 3
    for mine, theirs in zip(stack.blocks, loaded.blocks):
        for name in mine.tensors:
            assert torch.equal(mine.tensors[name], theirs.tensors[name]), name
        assert list(mine.params) == list(theirs.params)


def test_the_json_of_a_stack_keeps_what_it_has_once_beside_its_blocks(tmp_path, stack):
    path = tmp_path / "r.json"
    stack.save(path)
    document = json.loads(path.read_text())
    assert document["format"] == "blockviz-record/3" and document["n_blocks"] == 3
    assert set(document["tensors"]) == {
        *STACK_FIELDS,
        *PREDICTION_FIELDS,
        "W_E",
        "W_pos",
        "ln_f.weight",
        "ln_f.bias",
        "W_U",
    }
    assert len(document["blocks"]) == 3
    assert "resid_pre" in document["blocks"][0] and "attn.W_Q" in document["blocks"][2]
    assert "probs" in document["blocks"][1] and "probs" not in document["blocks"][2]  # block 1's logit lens
    assert document["blocks"][1]["resid_pre"] == document["blocks"][0]["resid_post"]


def test_a_tampered_stack_fails_the_residual_check_on_loading(tmp_path, stack):
    path = tmp_path / "r.json"
    stack.save(path)
    document = json.loads(path.read_text())
    document["blocks"][2]["resid_pre"][1][0] += 0.5
    path.write_text(json.dumps(document))
    with pytest.raises(
        BlockvizError,
        match=r"is not a valid record: block 2's resid_pre is not block 1's resid_post: they differ by 0\.5 at \[1, 0\]",
    ):
        BlockRecord.load(path)


def test_a_tampered_block_fails_its_recomputation_on_loading(tmp_path, stack):
    path = tmp_path / "r.json"
    stack.save(path)
    document = json.loads(path.read_text())
    document["blocks"][1]["attn.W_V"][0][0][0] += 0.5
    path.write_text(json.dumps(document))
    with pytest.raises(
        BlockvizError, match=r"is not a valid record: field 'value' is not what the record's parameters make"
    ):
        BlockRecord.load(path)


def test_a_stack_file_that_miscounts_its_blocks_is_refused(tmp_path, stack):
    path = tmp_path / "r.json"
    stack.save(path)
    document = json.loads(path.read_text())
    document["n_blocks"] = 2
    path.write_text(json.dumps(document))
    with pytest.raises(BlockvizError, match=r"tensor 'blocks\.2\.resid_pre' names no block of the 2 the record holds"):
        BlockRecord.load(path)


@pytest.mark.parametrize("suffix", [".json", ".safetensors"])
def test_a_one_block_record_keeps_the_layout_of_format_2(tmp_path, suffix):
    """The toy record as blockviz wrote it before stacks: format 2, no blocks, the same tensors."""
    rec = record_toy(SENTENCE)
    path = tmp_path / f"r{suffix}"
    rec.save(path)
    from blockviz.tensorfile import read_header, read_tensors

    header = read_header(path)
    assert header["format"] == "blockviz-record/2" and "n_blocks" not in header and "blocks" not in header
    tensors, _ = read_tensors(path)
    assert (
        list(tensors) == [*rec.activations(), *rec.params]
        if suffix == ".json"
        else set(tensors) == {*rec.activations(), *rec.params}
    )
    loaded = BlockRecord.load(path)
    assert loaded.blocks == (loaded,) and torch.equal(loaded.probs, rec.probs)
