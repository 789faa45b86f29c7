"""What the title card, the explorer, ``record`` and ``heads`` say about a trained toy record:
whose weights they are and what the model is, never "random" or a seed; the vocabulary's words
on the prediction's columns."""

import pytest

from blockviz.toy.recording import record_toy

SENTENCE = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def rec():
    return record_toy(SENTENCE)


def test_the_title_cards_weights_note_says_trained_and_what_the_model_is(rec):
    from blockviz.scenes.title_card import weights_sentence

    first, second = weights_sentence(rec.config.seed, rec.source)
    assert first == "trained weights: blockviz's toy model"
    assert (
        second == rec.source.describe()
        and second.startswith("trained: one block, ")
        and "parameters, on " in second
        and ", loss " in second
    )
    assert "random" not in first + second and "seed" not in first + second


def test_the_title_card_shows_the_note_inside_the_frame(rec):
    from manim import config

    from blockviz.scenes.look import look
    from blockviz.scenes.title_card import TitleCardLayout

    layout = TitleCardLayout(rec, look("dark"))
    assert layout.weights_note.shown == f"trained weights: blockviz's toy model {rec.source.describe()}"
    (left, bottom, _), (right, _, _) = (
        layout.weights_note.get_corner([-1, -1, 0]),
        layout.weights_note.get_corner([1, 1, 0]),
    )
    assert -config.frame_width / 2 < left and right < config.frame_width / 2 and -config.frame_height / 2 < bottom
    assert layout.weights_note.height >= 0.3  # two lines, each readable at 480 p


def test_the_explorer_header_says_what_the_model_is_not_its_seed(rec):
    from blockviz.explorer.page import summary_line

    line = summary_line(rec)
    assert line.endswith(f" — {rec.source.describe()}") and not line.endswith(", seed 0") and ", seed " not in line
    assert "13 tokens, width 8, 2 heads, FFN width 16" in line
    assert rec.source.describe() in rec.explore(token="it").html()


def test_record_prints_the_source_line_and_labels_the_prediction_with_the_vocabulary(rec):
    from click.testing import CliRunner

    from blockviz.cli import main

    result = CliRunner().invoke(main, ["record", "the cat sat", "--model", "toy", "--all-columns"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{rec.source.describe()}: pre-norm LayerNorm")
    for name in ("logits", "probs"):
        title = lines.index(next(line for line in lines if line.startswith(f"{name}  (3, {rec.config.vocab_size})")))
        header = lines[title + 1].split()
        assert header == list(rec.source.vocabulary)  # the words in id order, not v0 … v69
        assert header[:2] == ["<unk>", "the"] and "v0" not in header
    probs = lines[lines.index(next(line for line in lines if line.startswith("probs"))) + 2].split()
    assert (
        probs[0] == "the" and abs(sum(float(value) for value in probs[1:]) - 1) < 0.05
    )  # a row of probabilities, 2 decimals each


def test_heads_ranks_the_toy_models_heads_from_its_record(rec, tmp_path):
    from click.testing import CliRunner

    from blockviz.cli import main

    result = CliRunner().invoke(
        main,
        ["heads", SENTENCE, "--model", "toy", "--from", "it", "--to", "chicken", "-o", str(tmp_path / "heads.png")],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"toy (blockviz): 1 layer × 2 heads; {rec.source.describe()}"
    it, chicken = rec.tokens.index("it"), rec.tokens.index("chicken")
    best = max(range(rec.config.n_heads), key=lambda head: float(rec.weights[head, it, chicken]))
    header = next(k for k, line in enumerate(lines) if line.split()[:3] == ["rank", "layer", "head"])
    first = lines[header + 1].split()  # the first ranked head, under the table's header
    assert first[:3] == ["1", "0", str(best)] and float(first[3]) == pytest.approx(
        float(rec.weights[best, it, chicken]), abs=5e-5
    )
    assert float(first[3]) >= 0.5  # the lesson: "it" looks at "chicken"
    assert (tmp_path / "heads.png").stat().st_size > 0


def test_heads_of_the_toy_model_refuses_a_layer_it_does_not_have(tmp_path):
    from click.testing import CliRunner

    from blockviz.cli import main

    result = CliRunner().invoke(
        main, ["heads", SENTENCE, "--model", "toy", "--layer", "1", "--from", "it", "-o", str(tmp_path / "h.png")]
    )
    assert result.exit_code == 1 and "layer 1 is out of range" in result.output and not (tmp_path / "h.png").exists()


@pytest.mark.render
def test_render_draws_the_toy_models_weights(tmp_path):
    """Tiny stills of softmax and multi-head from --model toy: written, and not the seeded
    block's pictures of the same sentence (the numbers drawn are the trained weights')."""
    from click.testing import CliRunner
    from PIL import Image

    from blockviz.cli import main

    tiny = ["--resolution", "160x90", "--fps", "5"]
    common = ["render", SENTENCE, "--token", "it", "--scene", "softmax,multi-head", "--format", "png", *tiny]
    trained = CliRunner().invoke(main, [*common, "--model", "toy", "-o", str(tmp_path / "toy")])
    assert trained.exit_code == 0, trained.output
    seeded = CliRunner().invoke(main, [*common, "--model", "seeded", "-o", str(tmp_path / "seeded")])
    assert seeded.exit_code == 0, seeded.output
    for scene in ("softmax", "multi-head"):
        picture = Image.open(tmp_path / "toy" / f"{scene}.png")
        assert picture.size == (160, 90)
        assert picture.tobytes() != Image.open(tmp_path / "seeded" / f"{scene}.png").tobytes(), scene
