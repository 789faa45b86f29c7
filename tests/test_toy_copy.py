"""`blockviz train --task copy` and `--model copy`: a stack of blocks trained on the copy task,
the same bytes on a rerun, its folder loaded back, one-line errors with nothing written."""

import json

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from blockviz.cli import main
from blockviz.toy import PACKAGED_COPY, is_toy_model, toy_folder
from blockviz.toy.copying import CopyRecipe, CopySequence
from blockviz.toy.folder import REPRODUCIBLE_FILES, load_toy, read_checkpoints
from blockviz.toy.induction import COPY_LESSON, copy_measures, induction_scores, previous_token_scores
from blockviz.toy.model import ToyModel

TINY = ["train", "--task", "copy", "--d-model", "8", "--heads", "2", "--d-ff", "8", "--steps", "12"]
"""A copy model trained for 12 steps (fast; it copies nothing yet)."""


@pytest.fixture(scope="module")
def tiny_copy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("copy") / "tiny"
    result = CliRunner().invoke(main, [*TINY, "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_a_copy_model_has_two_blocks_by_default_and_the_same_options_give_the_same_bytes(tiny_copy, tmp_path):
    folder, output = tiny_copy
    card = json.loads((folder / "card.json").read_text())
    assert card["task"] == "copy" and card["blocks"] == 2 and card["config"]["d_model"] == 8
    assert card["about"].startswith(
        f"trained: two blocks, {card['parameters']['total']:,} parameters, on {12 * card['training']['batch']:,} copy sequences"
    )
    tensors = load_file(folder / "model.safetensors")
    assert card["parameters"]["total"] == sum(tensor.numel() for tensor in tensors.values())
    assert {"blocks.0.attn.W_Q", "blocks.1.attn.W_Q", "W_E", "W_pos", "W_U"} <= set(tensors)
    assert not any(name.startswith("attn.") for name in tensors)
    assert "copy: previous-token" in output and "accuracy on the repeat" in output
    again = tmp_path / "again"
    assert CliRunner().invoke(main, [*TINY, "-o", str(again)]).exit_code == 0
    for name in REPRODUCIBLE_FILES:
        assert (again / name).read_bytes() == (folder / name).read_bytes(), name


def test_the_card_holds_the_measures_of_the_loaded_model(tiny_copy):
    folder, _ = tiny_copy
    loaded = load_toy(folder)
    assert loaded.n_blocks == 2 and isinstance(loaded.model, ToyModel)
    card = json.loads((folder / "card.json").read_text())
    measured = copy_measures(
        loaded.model,
        loaded.vocabulary,
        CopyRecipe(**{k: card["corpus"][k] for k in ("length", "shortest", "longest", "min_gap", "seed")}),
    )
    assert card["copy"]["per_head"] == measured.to_dict()
    assert card["copy"]["accuracy"] == round(measured.accuracy, 4)
    assert [point["step"] for point in card["curve"]] == [0, 12]


def test_the_checkpoints_hold_each_blocks_attention_on_the_copy_lesson(tiny_copy):
    folder, _ = tiny_copy
    checkpoints = read_checkpoints(folder)
    n = len(COPY_LESSON.split())
    assert checkpoints["steps"] == [0, 12]
    assert checkpoints["lessons"] == {"copy_block0": COPY_LESSON, "copy_block1": COPY_LESSON}
    for step in (0, 12):
        for block in (0, 1):
            weights = checkpoints["weights"][step][f"copy_block{block}"]
            assert weights.shape == (2, n, n)
            assert torch.allclose(weights.sum(dim=-1), torch.ones(2, n))


def test_one_block_trains_the_contrast_model_under_the_toys_names(tmp_path):
    folder = tmp_path / "one"
    result = CliRunner().invoke(main, [*TINY, "--blocks", "1", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    card = json.loads((folder / "card.json").read_text())
    assert card["blocks"] == 1 and card["about"].startswith("trained: one block")
    assert "attn.W_Q" in load_file(folder / "model.safetensors")
    assert card["copy"]["induction"]["block"] == 0


@pytest.mark.parametrize(
    "options, message",
    [
        (["--task", "copy", "--blocks", "0"], "--blocks"),
        (["--blocks", "2"], "the lessons task trains one block"),
        (["--task", "copy", "--d-model", "6", "--heads", "4"], "d_model"),
        (["--task", "recite"], "--task"),
    ],
)
def test_impossible_copy_options_are_one_line_exit_2_and_write_nothing(tmp_path, options, message):
    folder = tmp_path / "m"
    result = CliRunner().invoke(main, ["train", *options, "-o", str(folder)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output
    assert not folder.exists() and list(tmp_path.iterdir()) == []


def test_copy_names_the_shipped_copy_model():
    assert is_toy_model("copy") and is_toy_model("Copy ")
    assert toy_folder("copy") == PACKAGED_COPY


def test_a_copy_models_record_is_a_stack_of_its_blocks_with_the_logit_lens(tiny_copy, tmp_path):
    folder, _ = tiny_copy
    saved = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["record", COPY_LESSON, "--model", str(folder), "--save", str(saved)])
    assert result.exit_code == 0, result.output
    data = json.loads(saved.read_text())
    assert len(data["blocks"]) == 2 and data["source"]["vocabulary"] == list(load_toy(folder).vocabulary.words)
    assert data["blocks"][1]["resid_pre"] == data["blocks"][0]["resid_post"]
    loaded = load_toy(folder)
    ids = torch.tensor(loaded.vocabulary.encode(COPY_LESSON))
    with torch.no_grad():
        logits = loaded.model(ids)
    assert torch.allclose(torch.tensor(data["tensors"]["logits"]), logits, atol=1e-5)
    assert "logits" in data["blocks"][0]  # block 0's output through ln_f and W_U: its logit lens


def _lesson_pairs() -> list[tuple[int, int]]:
    words = COPY_LESSON.split()
    first, repeat = words.index("lamp"), len(words) - 3
    return CopySequence(tuple(words), first=first, repeat=repeat, phrase=3).predicted


@pytest.mark.skipif(not (PACKAGED_COPY / "card.json").is_file(), reason="the copy model is not shipped yet")
def test_the_shipped_copy_models_record_shows_a_previous_token_head_and_an_induction_head(tmp_path):
    saved = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["record", COPY_LESSON, "--model", "copy", "--save", str(saved)])
    assert result.exit_code == 0, result.output
    data = json.loads(saved.read_text())
    assert len(data["blocks"]) == 2
    first = torch.tensor(data["blocks"][0]["weights"])  # (n_heads, n, n)
    second = torch.tensor(data["blocks"][1]["weights"])
    assert float(previous_token_scores(first).max()) >= 0.5
    assert float(induction_scores(second, _lesson_pairs()).max()) >= 0.5
    words = data["source"]["vocabulary"]
    predicted = [words[int(row.argmax())] for row in torch.tensor(data["tensors"]["probs"])]
    assert [predicted[query] for query, _ in _lesson_pairs()] == ["cake", "river"]


@pytest.mark.skipif(not (PACKAGED_COPY / "card.json").is_file(), reason="the copy model is not shipped yet")
def test_the_shipped_copy_model_meets_every_goal_its_card_states():
    loaded = load_toy(PACKAGED_COPY)
    card = loaded.card
    measured = copy_measures(loaded.model, loaded.vocabulary, CopyRecipe())
    assert card["copy"]["per_head"] == measured.to_dict()
    assert all(measured.goals.values()), measured
    assert card["blocks"] == 2 and card["config"]["d_model"] <= 16 and card["config"]["n_heads"] <= 2
    assert card["config"]["max_tokens"] <= 32
    assert sum(path.stat().st_size for path in PACKAGED_COPY.iterdir()) < 100_000
