"""`blockviz train` and `--model toy|DIR`: the files written, one-line errors with nothing
written, the unknown-word warning, and an interrupted training."""

import json
import shutil
import signal

import pytest
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from blockviz.cli import main
from blockviz.ownership import MANIFEST
from blockviz.toy import PACKAGED
from blockviz.toy.folder import REPRODUCIBLE_FILES, TIMING

SENTENCE = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    """A model trained for 40 steps at the seed's sizes (fast; its lessons are not learned)."""
    folder = tmp_path_factory.mktemp("train") / "small"
    result = CliRunner().invoke(
        main, ["train", "--d-model", "4", "--heads", "2", "--d-ff", "8", "--steps", "40", "-o", str(folder)]
    )
    assert result.exit_code == 0, result.output
    return folder


def _one_line_error(args, codes=(1, 2), expect=None):
    result = CliRunner().invoke(main, args)
    assert result.exit_code in codes, result.output
    assert "Traceback" not in result.output and (
        result.exception is None or isinstance(result.exception, SystemExit)
    ), result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    if expect is not None:
        assert expect in errors[0], errors[0]
    return result


def test_train_writes_the_folder_and_the_same_options_give_the_same_bytes(small_model, tmp_path):
    assert sorted(path.name for path in small_model.iterdir()) == sorted((*REPRODUCIBLE_FILES, TIMING, MANIFEST))
    card = json.loads((small_model / "card.json").read_text())
    assert card["config"]["d_model"] == 4 and card["training"]["steps"] == 40
    assert card["about"].startswith(
        f"trained: one block, {card['parameters']['total']:,} parameters, on 20,000 generated sentences, loss "
    )
    assert card["parameters"]["total"] == sum(t.numel() for t in load_file(small_model / "model.safetensors").values())
    assert "wall_seconds" not in json.dumps(card) and "wall_seconds" in json.loads((small_model / TIMING).read_text())
    again = tmp_path / "again"
    assert (
        CliRunner()
        .invoke(main, ["train", "--d-model", "4", "--heads", "2", "--d-ff", "8", "--steps", "40", "-o", str(again)])
        .exit_code
        == 0
    )
    for name in REPRODUCIBLE_FILES:
        assert (again / name).read_bytes() == (small_model / name).read_bytes(), name


def test_the_checkpoints_hold_the_lesson_attention_at_each_step(small_model):
    from blockviz.toy.folder import read_checkpoints

    checkpoints = read_checkpoints(small_model)
    assert checkpoints["steps"] == [0, 40] and set(checkpoints["weights"]) == {0, 40}
    weights = checkpoints["weights"][40]["chicken_tired"]
    assert weights.shape == (2, 13, 13) and float(weights.sum()) == pytest.approx(2 * 13, rel=1e-5)


def test_the_card_lists_only_the_checkpoints_the_file_holds(small_model):
    from blockviz.toy.folder import read_checkpoints

    for folder in (small_model, PACKAGED):
        card = json.loads((folder / "card.json").read_text())
        steps = read_checkpoints(folder)["steps"]
        assert card["checkpoints"] == steps and set(card["training"]["checkpoints"]) <= set(steps), folder
    small = json.loads((small_model / "card.json").read_text())
    assert small["training"]["checkpoints"] == [0]  # of the defaults 0, 100, …, 2,000 only 0 is within 40 steps
    assert small["checkpoints"] == [0, 40]


def test_record_with_a_trained_folder_and_with_the_shipped_model(small_model):
    for model in (str(small_model), "toy"):
        result = CliRunner().invoke(main, ["record", SENTENCE, "--model", model, "--head", "0"])
        assert result.exit_code == 0, result.output
        assert "logits  (13, " in result.output and "probs  (13, " in result.output
    assert CliRunner().invoke(main, ["record", SENTENCE, "--model", "toy", "--layer", "0"]).exit_code == 0
    _one_line_error(["record", SENTENCE, "--model", "toy", "--layer", "1"], expect="one block, layer 0")
    _one_line_error(
        ["record", SENTENCE, "--model", "toy", "--d-model", "8"],
        codes=(2,),
        expect="--d-model builds blockviz's own block",
    )


def test_the_unknown_word_warning_is_one_line_naming_the_words():
    result = CliRunner().invoke(
        main, ["record", "The Zebra didn't cross the road because it was too zorby.", "--model", "toy", "--head", "0"]
    )
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 'Zebra', 'zorby' are not in the toy model's vocabulary: read as the unknown token <unk>"
    ]


def test_an_unknown_word_of_5000_characters_is_quoted_shortened():
    word = "z" * 5000
    shown = f"'{'z' * 59}\u2026'"
    result = CliRunner().invoke(main, ["record", f"the cat {word}", "--model", "toy", "--head", "0"])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {shown} is not in the toy model's vocabulary: read as the unknown token <unk>"]
    result = _one_line_error(["record", word, "--model", "toy"], codes=(2,), expect=f"vocabulary ({shown})")
    assert word not in result.output


def test_a_sentence_only_of_unknown_words(tmp_path):
    saved = tmp_path / "rec.safetensors"
    _one_line_error(
        ["record", "zebras yodel", "--model", "toy", "--save", str(saved)],
        codes=(2,),
        expect="no word of the sentence is in the toy model's vocabulary",
    )
    assert not saved.exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--d-model", "8", "--heads", "3"], "not divisible by n_heads 3"),
        (["--steps", "0"], "--steps"),
        (["--steps", "-5"], "--steps"),
    ],
)
def test_bad_sizes_and_steps_are_usage_errors_and_write_nothing(tmp_path, options, message):
    out = tmp_path / "model"
    _one_line_error(["train", *options, "-o", str(out)], codes=(2,), expect=message)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_an_output_folder_through_a_file_or_holding_other_files(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_line_error(
        ["train", "--steps", "1", "-o", str(blocker / "model")], codes=(1,), expect="is a file, not a folder"
    )
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    _one_line_error(
        ["train", "--steps", "1", "-o", str(other)],
        codes=(1,),
        expect=f"{str(other / 'notes.txt')!r} was not written by blockviz",
    )
    _one_line_error(
        ["train", "--steps", "1", "-o", str(tmp_path / ("m" * 300))], codes=(1,), expect="(File name too long)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "other"] and [p.name for p in other.iterdir()] == [
        "notes.txt"
    ]


def _broken_copy(small_model, tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(small_model, folder)
    return folder


def test_a_model_folder_missing_a_table(small_model, tmp_path):
    folder = _broken_copy(small_model, tmp_path, "no-unembedding")
    tensors = load_file(folder / "model.safetensors")
    del tensors["W_U"]
    save_file(tensors, folder / "model.safetensors")
    _one_line_error(["record", SENTENCE, "--model", str(folder)], expect="has no table 'W_U'")


def test_a_model_folder_whose_table_does_not_match_its_vocabulary(small_model, tmp_path):
    folder = _broken_copy(small_model, tmp_path, "mismatch")
    words = json.loads((folder / "vocabulary.json").read_text())
    card = json.loads((folder / "card.json").read_text())
    (folder / "vocabulary.json").write_text(json.dumps(words + ["zebra"]))
    _one_line_error(
        ["record", SENTENCE, "--model", str(folder)],
        expect=f"has {len(words) + 1} words in vocabulary.json but its card says {len(words)}",
    )
    card["config"]["vocab_size"] = len(words) + 1
    (folder / "card.json").write_text(json.dumps(card))
    _one_line_error(["record", SENTENCE, "--model", str(folder)], expect="table 'W_E' in the toy model")


def test_a_model_folder_without_its_vocabulary(small_model, tmp_path):
    folder = _broken_copy(small_model, tmp_path, "no-vocabulary")
    (folder / "vocabulary.json").unlink()
    _one_line_error(["record", SENTENCE, "--model", str(folder)], expect="has no vocabulary.json")


def test_an_interrupted_training_says_how_far_it_got_and_writes_nothing(tmp_path, monkeypatch):
    import blockviz.toy.build as build

    def interrupted_train(options, on_step):  # Ctrl-C after step 3
        for step in (1, 2, 3):
            on_step(step, 4.5)
        signal.raise_signal(signal.SIGINT)
        raise AssertionError("the signal did not stop training")

    monkeypatch.setattr(build, "train", interrupted_train)
    out = tmp_path / "model"
    result = CliRunner().invoke(main, ["train", "-o", str(out)])
    assert result.exit_code == 130, result.output
    assert "training stopped at step 3 of 4,000 (loss 4.500): nothing written to" in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_retraining_an_existing_model_folder_replaces_it(small_model, tmp_path):
    folder = _broken_copy(small_model, tmp_path, "again")  # a copy, byte for byte: still blockviz's own files
    retrain = ["train", "--d-model", "4", "--heads", "2", "--d-ff", "8", "--steps", "3", "-o", str(folder)]
    assert CliRunner().invoke(main, retrain).exit_code == 0
    assert json.loads((folder / "card.json").read_text())["training"]["steps"] == 3
    assert (folder / "model.safetensors").read_bytes() != (small_model / "model.safetensors").read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["again"]
    (folder / "vocabulary.json").write_text("[]")  # changed by the user: now theirs
    _one_line_error(retrain, codes=(1,), expect="vocabulary.json' was not written by blockviz (or was changed since)")
    assert (folder / "vocabulary.json").read_text() == "[]"


def test_the_shipped_model_is_in_the_package():
    assert all((PACKAGED / name).is_file() for name in REPRODUCIBLE_FILES)


def test_the_default_block_is_the_toy_model_and_seeded_is_one_option_away():
    toy = CliRunner().invoke(main, ["record", "the cat sat"])
    seeded = CliRunner().invoke(main, ["record", "the cat sat", "--model", "seeded"])
    sized = CliRunner().invoke(main, ["record", "the cat sat", "--d-model", "8"])
    assert toy.exit_code == seeded.exit_code == sized.exit_code == 0
    assert toy.output.startswith("trained: one block") and "probs  (3, 70)" in toy.output
    assert "embed  (3, 4)" in seeded.output and "probs" not in seeded.output  # the seeded block's default sizes
    assert "embed  (3, 8)" in sized.output and "probs" not in sized.output  # a seeded-block option chooses it
    _one_line_error(["record", "hello world"], expect="--model seeded")
    _one_line_error(["record", " ".join(["the cat sat"] * 9)], expect="--model seeded")


def test_record_prints_each_rows_five_likeliest_next_words_adding_up_with_the_others():
    import torch

    from blockviz.style import format_number
    from blockviz.toy.recording import record_toy

    result = CliRunner().invoke(main, ["record", SENTENCE, "--model", "toy"])
    assert result.exit_code == 0, result.output
    rec = record_toy(SENTENCE)
    too = rec.tokens.index("too")
    top = torch.topk(rec.probs[too], 5)  # an independent ranking of the recorded row
    words = [rec.source.vocabulary[int(index)] for index in top.indices]
    others = format_number(float(rec.probs[too].sum() - top.values.sum()))
    lines = result.output.splitlines()
    table = lines[next(k for k, line in enumerate(lines) if line.startswith("prediction  (")) :]
    line = next(line for line in table if line.split()[:1] == ["too"])
    expected = [f"{word} {format_number(float(value))}" for word, value in zip(words, top.values)]
    assert line.split()[1:] == " ".join(expected).split() + [others, "=" if "=" in line else "≈", "1.00"]


def _damage_checkpoints(folder, kind):
    """Spoil ``folder``'s checkpoints file as ``kind`` says (the metadata kept unless said)."""
    import torch
    from safetensors import safe_open

    path = folder / "checkpoints.safetensors"
    if kind == "missing":
        path.unlink()
        return
    if kind == "cut in half":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        return
    with safe_open(str(path), framework="pt") as handle:
        metadata = handle.metadata()
    tensors = load_file(path)
    if kind == "NaN weights":
        tensors = {name: torch.full_like(tensor, float("nan")) for name, tensor in tensors.items()}
    elif kind == "NaN loss":
        meta = json.loads(metadata["blockviz"])
        meta["losses"][-1] = float("nan")
        metadata = {"blockviz": json.dumps(meta)}
    elif kind == "no metadata":
        metadata = None
    elif kind == "no lesson":
        tensors = {name: tensor for name, tensor in tensors.items() if not name.endswith(".chicken_tired")}
    save_file(tensors, path, metadata=metadata)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("missing", "has no checkpoints.safetensors"),
        ("cut in half", "cannot be read (SafetensorError)"),
        ("NaN weights", "with weights that are not numbers from 0 to 1"),
        ("NaN loss", "hold losses that are not one finite number (or null) per step"),
        ("no metadata", "hold no steps, losses and lessons in their metadata"),
        ("no lesson", "hold no 13-word 'chicken_tired' lesson at step 0"),
    ],
)
def test_a_damaged_checkpoints_file_is_one_line_for_the_training_figure(small_model, tmp_path, kind, message):
    folder = _broken_copy(small_model, tmp_path, "damaged")
    _damage_checkpoints(folder, kind)
    out = tmp_path / "figures"
    result = _one_line_error(
        ["figures", SENTENCE, "--model", str(folder), "--figure", "training", "--format", "svg", "-o", str(out)],
        codes=(1,),
        expect=message,
    )
    assert "write the folder again with blockviz train -o DIR" in result.output
    assert not out.exists() or not any(out.iterdir())


def test_nan_checkpoints_are_one_line_for_the_learning_scene(small_model, tmp_path):
    folder = _broken_copy(small_model, tmp_path, "nan")
    _damage_checkpoints(folder, "NaN weights")
    out = tmp_path / "frames"
    _one_line_error(
        ["render", SENTENCE, "--model", str(folder), "--scene", "learning", "--format", "png", "-o", str(out)],
        codes=(1,),
        expect="with weights that are not numbers from 0 to 1",
    )
    assert not list(out.glob("*.png"))


@pytest.mark.parametrize("name", ["card.json", "vocabulary.json"])
def test_a_model_file_nested_a_hundred_thousand_deep_is_one_line(small_model, tmp_path, name):
    folder = _broken_copy(small_model, tmp_path, "deep")
    depth = 100_000
    (folder / name).write_text("[" * depth + "]" * depth)
    _one_line_error(
        ["record", SENTENCE, "--model", str(folder)],
        codes=(1,),
        expect=f"cannot read the {'model card' if name == 'card.json' else 'vocabulary'} '{folder / name}' (nested too deep)",
    )
