"""The trained toy model's own figures: the prediction (next-token probabilities, read from the
record) and training (loss and the it → chicken weight per checkpoint, read from the model
folder) — their numbers against the record and the checkpoints file, and skipped for the seeded block."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from safetensors import safe_open
from support_figures import assert_legible, cell_texts, texts_by_label

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.registry import skip_reason
from blockviz.ownership import MANIFEST
from blockviz.prediction import Prediction, prediction_of
from blockviz.style import format_number
from blockviz.toy import PACKAGED
from blockviz.toy.learning import learning_of
from blockviz.toy.recording import record_toy

CHICKEN = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def chicken():
    return record_toy(CHICKEN)


@pytest.fixture(scope="module")
def seeded():
    return record("the cat sat")


def test_the_drawn_probabilities_are_the_records_rounded(chicken):
    too = chicken.tokens.index("too")
    figure = draw_figure("prediction", FigureRequest(chicken, token="too"))
    assert_legible(figure, 6.5)
    probs = chicken.probs[too]
    top = torch.topk(probs, 5)  # an independent ranking of the recorded row
    others = float(probs.sum() - top.values.sum())
    expected = [format_number(float(value)) for value in top.values] + [format_number(others)]
    assert cell_texts(figure, "prediction") == expected
    (ax,) = [ax for ax in figure.axes if ax.get_label() == "prediction"]
    vocabulary = chicken.source.vocabulary
    assert [text.get_text() for text in figure.texts if text.get_label() == "prediction:col"] == [
        vocabulary[index] for index in top.indices
    ] + ["+ others"]
    heading = texts_by_label(figure)["heading"]
    assert heading.startswith(
        f"Prediction: after 'too', the block predicts '{vocabulary[int(top.indices[0])]}' {expected[0]}, "
    )


def test_the_title_names_the_likeliest_words_that_do_not_round_to_0():
    rec = record_toy("the cat sat")
    probs = rec.probs[2]
    top = torch.topk(probs, 5)
    named = [
        f"'{rec.source.vocabulary[int(index)]}' {format_number(float(value))}"
        for index, value in zip(top.indices, top.values)
        if format_number(float(value)) != "0.00"
    ]
    assert 1 <= len(named) < 5  # "." 0.54 and "on" 0.45; the other three round to 0.00
    heading = texts_by_label(draw_figure("prediction", FigureRequest(rec)))["heading"]
    assert heading == f"Prediction: after 'sat', the block predicts {', '.join(named[:3])}, \u2026"


def test_the_shown_terms_add_up(chicken):
    figure = draw_figure("prediction", FigureRequest(chicken, token="too"))
    line = texts_by_label(figure)["prediction_sum"]
    terms, sign, total = line.rpartition(" ")[0].rpartition(" ")[0], line.split()[-2], line.split()[-1]
    written = [float(term) for term in terms.split(" + ")]
    assert written == [float(text) for text in cell_texts(figure, "prediction")]
    assert total == "1.00"  # a row of probabilities
    if sign == "=":
        assert round(sum(written), 2) == 1.00
    else:
        assert sign == "\u2248" and round(sum(written), 2) != 1.00


def test_rounded_terms_that_miss_their_total_say_approximately():
    thirds = Prediction(0, ["a", "b"], torch.tensor([0.334, 0.333]).double().numpy(), 0.333, 1, 1.0)
    assert thirds.terms(2) == ["0.33", "0.33", "0.33"] and thirds.sign(2) == "\u2248"
    exact = Prediction(0, ["a"], torch.tensor([0.75]).double().numpy(), 0.25, 3, 1.0)
    assert exact.sign(2) == "="


def test_every_row_adds_up_to_its_shown_terms(chicken):
    for row in range(chicken.n):
        guess = prediction_of(chicken, row)
        assert guess.others == pytest.approx(
            float(chicken.probs[row].sum()) - float(guess.probabilities.sum()), abs=1e-6
        )
        assert list(guess.probabilities) == sorted(guess.probabilities, reverse=True)
        assert guess.probabilities.min() >= float(chicken.probs[row].sort(descending=True).values[5])


def test_both_figures_are_skipped_for_the_seeded_block(seeded):
    assert (
        skip_reason("prediction", seeded)
        == "the record's block has no unembedding, so no next-token prediction (seeded random weights): try --model toy"
    )
    assert skip_reason("training", seeded).startswith(
        "the record's block was not trained by blockviz train (seeded random weights)"
    )


def test_the_training_values_are_the_checkpoints(chicken):
    path = PACKAGED / "checkpoints.safetensors"
    with safe_open(str(path), framework="pt") as handle:
        meta = json.loads(handle.metadata()["blockviz"])
        by_step = {step: handle.get_tensor(f"step{step}.chicken_tired") for step in meta["steps"]}
    card = json.loads((PACKAGED / "card.json").read_text())
    it, subject = 8, 1  # "The chicken didn't cross the road because it …": positions by hand
    learning = learning_of(PACKAGED)
    assert (learning.query, learning.key) == (it, subject)
    assert learning.steps == card["checkpoints"] == meta["steps"]
    assert learning.head == card["lessons"]["it_head"]
    assert learning.weights == [float(by_step[step][learning.head, it, subject]) for step in meta["steps"]]
    assert learning.weights[-1] == pytest.approx(card["lessons"]["it_weight"], abs=1e-4)
    assert learning.losses[-1] == card["final_loss"]

    figure = draw_figure("training", FigureRequest(chicken))
    assert_legible(figure, 6.5)
    axes = {ax.get_label(): ax for ax in figure.axes}
    (weight_line,) = axes["training_weight"].get_lines()
    assert list(weight_line.get_ydata()) == learning.weights
    (loss_line,) = axes["training_loss"].get_lines()
    recorded = [(index, loss) for index, loss in enumerate(meta["losses"]) if loss is not None]
    assert list(zip(loss_line.get_xdata(), loss_line.get_ydata())) == recorded
    assert [
        text.get_text() for text in axes["training_weight"].texts if text.get_label() == "training_weight:value"
    ] == [format_number(value) for value in learning.weights]
    assert [label.get_text() for label in axes["training_weight"].get_xticklabels()] == [
        str(step) for step in meta["steps"]
    ]


def test_figures_writes_both_for_the_toy_model_and_refuses_them_by_name_for_the_seeded_block(tmp_path):
    runner = CliRunner()
    args = [
        "figures",
        CHICKEN,
        "--token",
        "too",
        "--figure",
        "prediction",
        "--figure",
        "training",
        "--format",
        "svg",
        "--dpi",
        "30",
    ]
    result = runner.invoke(main, args + ["--model", "toy", "-o", str(tmp_path / "toy")])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (tmp_path / "toy").iterdir()) == [MANIFEST, "prediction.svg", "training.svg"]
    result = runner.invoke(main, args + ["--model", "seeded", "-o", str(tmp_path / "seeded")])
    assert result.exit_code == 1, result.output  # asked for by name: a failure, not a note
    assert result.output.splitlines() == [
        "Error: figure 'prediction' cannot be drawn: the record's block has no unembedding, so no next-token prediction "
        "(seeded random weights): try --model toy"
    ]
    assert not (tmp_path / "seeded").exists() or not any((tmp_path / "seeded").iterdir())


@pytest.mark.parametrize("width", [3.3, 6.5, None], ids=lambda width: f"width-{width or 'auto'}")
@pytest.mark.parametrize("name", ["prediction", "training"])
def test_legible_on_every_page(chicken, name, width):
    assert_legible(draw_figure(name, FigureRequest(chicken, width=width)), width)


def test_the_others_term_counts_the_vocabulary_as_words_and_unk(chicken):
    figure = draw_figure("prediction", FigureRequest(chicken, token="too"))
    said = " ".join(text.get_text().replace("\n", " ") for text in figure.texts)  # a note wraps
    words = len(chicken.source.vocabulary) - 1  # the vocabulary's first entry is <unk>, not a word
    assert "<unk>" not in prediction_of(chicken, chicken.tokens.index("too")).words
    assert f"others: the {words - 5} other words and <unk>, their probabilities summed" in said


def test_the_toy_shows_every_head_by_default_as_the_help_says(chicken):
    from blockviz.cli.figures_command import figures

    head_help = next(param.help for param in figures.params if param.name == "head")
    assert "Default: every head of blockviz's blocks (seeded, toy, copy)" in head_help
    assert FigureRequest(chicken).heads == list(range(chicken.config.n_heads)) == [0, 1]
    weights = draw_figure("weights", FigureRequest(chicken))
    assert {text.get_text() for text in weights.texts} >= {"weights, head 0", "weights, head 1"}
    heading = texts_by_label(draw_figure("multi-head", FigureRequest(chicken)))["heading"]
    assert heading.startswith("Multi-head attention: 2 heads side by side, then one output projection")
    one = texts_by_label(draw_figure("multi-head", FigureRequest(chicken, head=1)))["heading"]
    assert one.startswith("Multi-head attention: 2 heads (head 1 shown), then one output projection")
