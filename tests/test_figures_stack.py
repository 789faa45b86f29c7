"""Figures of a stack of blocks (blockviz.figures.stack, copy_training) and the composition
scores they show (blockviz.composition): hand-worked scores, the circuits the record's own
tensors satisfy, every number drawn the record's, legible at a paper column, one-line refusals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from support_figures import assert_legible, cells, texts_by_label

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.composition import (
    block_circuits,
    circuits,
    composition_score,
    normalised_norm,
    random_composition,
    record_composition,
)
from blockviz.errors import BlockvizError
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.registry import skip_reason
from blockviz.prediction import lens_rows
from blockviz.style import format_number
from blockviz.toy import PACKAGED_COPY
from blockviz.toy.copy_curves import ONE_BLOCK, copy_curve, one_block_curve
from blockviz.toy.induction import repeat_pairs
from blockviz.toy.recording import record_toy

LESSON = "lamp cake river tall dog lamp cake river"
"""A copy sentence: "lamp cake river" repeated after a gap of two words."""
STACK_FIGURES = ("stack-weights", "composition", "induction", "logit-lens", "copy-training")


@pytest.fixture(scope="module")
def copy_record():
    rec = record_toy(LESSON, "copy")
    assert len(rec.blocks) == 2
    return rec


# -- composition scores ---------------------------------------------------------------------


def test_composition_scores_of_a_hand_worked_pair_of_heads():
    """Head 1 writes dimension 0 of a row into dimension 0 (W_OV¹ = e₀e₀ᵀ). A reading head whose
    score is query-dim-1 · key-dim-0 (W_QK² = e₁e₀ᵀ) reads it through its key only: K = 1, Q = 0.
    An identity OV read by that QK: ‖QK‖ / (√2 · 1) = 1/√2."""
    writes = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    key_reads = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    copies = torch.tensor([[1.0, 1.0], [0.0, 0.0]])  # reads dimension 0, writes it to both
    ignores = torch.tensor([[0.0, 0.0], [1.0, 1.0]])  # reads dimension 1 only
    assert composition_score("K", writes, key_reads, copies) == pytest.approx(1.0)
    assert composition_score("Q", writes, key_reads, copies) == pytest.approx(0.0)
    assert composition_score("V", writes, key_reads, copies) == pytest.approx(1.0)
    assert composition_score("V", writes, key_reads, ignores) == pytest.approx(0.0)
    assert composition_score("Q", torch.eye(2), torch.tensor([[1.0, 0.0], [0.0, 0.0]]), copies) == pytest.approx(
        1 / math.sqrt(2)
    )
    with pytest.raises(BlockvizError, match="all-zero"):
        normalised_norm(torch.zeros(2, 2), torch.eye(2))
    with pytest.raises(BlockvizError, match="choose one of Q, K, V"):
        composition_score("X", writes, key_reads, copies)


def test_circuits_of_hand_worked_weights():
    """One head, d_model 2, d_head 1: W_QK = W_Q W_Kᵀ, W_OV = W_V W_O (W_O's row of the head)."""
    w_q, w_k, w_v = torch.tensor([[[1.0], [0.0]]]), torch.tensor([[[0.0], [1.0]]]), torch.tensor([[[1.0], [1.0]]])
    w_o = torch.tensor([[2.0, 0.0], [0.0, 0.0]])  # d_model × d_model; head 0 owns row 0 (d_head 1)
    made = circuits(w_q, w_k, w_v, w_o[:1].repeat(2, 1), lambda h: h)
    assert made.qk[0].tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert made.ov[0].tolist() == [[2.0, 0.0], [2.0, 0.0]]


def test_the_circuits_reproduce_the_records_own_scores_and_head_outputs(copy_record):
    """Invariants of the record, not a rerun: with γ folded in, the LayerNorm's normalised rows z
    give (query − b_Q − βW_Q)(key − b_K − βW_K)ᵀ = z W_QK zᵀ, and the head's share of attn_out
    before its value bias, weights · (z W_OV), is (head_output − b_V) W_O^h less β's share."""
    for view in copy_record.blocks:
        made = block_circuits(view)
        params = view.params
        z = view.ln1_norm.double()
        beta = params["ln1.bias"].double()
        d_head = view.config.d_head
        for head in range(view.config.n_heads):
            w_q, w_k, w_v = (params[f"attn.W_{kind}"][head].double() for kind in "QKV")
            q = view.query[head].double() - params["attn.b_Q"][head].double() - beta @ w_q
            k = view.key[head].double() - params["attn.b_K"][head].double() - beta @ w_k
            torch.testing.assert_close(z @ made.qk[head] @ z.T, q @ k.T, atol=1e-4, rtol=1e-4)
            w_o = params["attn.W_O"].double()[head * d_head : (head + 1) * d_head]
            weights = view.weights[head].double()
            value_part = view.head_outputs[head].double() - params["attn.b_V"][head].double() - beta @ w_v
            torch.testing.assert_close(weights @ z @ made.ov[head], value_part @ w_o, atol=1e-4, rtol=1e-4)


def test_the_copy_model_k_composes_its_previous_token_head_above_random(copy_record):
    """The induction circuit is K-composition: block 0's previous-token head (head 0, the card's)
    feeds block 1's keys more than random weights of the same shapes would."""
    card = json.loads((PACKAGED_COPY / "card.json").read_text())
    previous = card["copy"]["previous_token"]["head"]
    trained, baseline = record_composition(copy_record, 1), random_composition(copy_record, 1)
    assert (trained.writer, trained.reader) == (0, 1)
    for reader in range(2):
        assert trained.scores["K"][previous][reader] > baseline.scores["K"][previous][reader] + 0.15
    for kind in "QKV":
        assert all(0.0 <= score <= 1.0 for row in trained.scores[kind] for score in row)
    assert random_composition(copy_record, 1).scores == baseline.scores  # seeded
    assert random_composition(copy_record, 1, seed=1).scores != baseline.scores
    with pytest.raises(BlockvizError, match="composition needs two blocks"):
        record_composition(record("the cat sat"), 1)
    with pytest.raises(BlockvizError, match="choose a block from 1 to 1"):
        record_composition(copy_record, 0)


# -- the figures ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", STACK_FIGURES)
@pytest.mark.parametrize("width", [3.3, 6.5])
def test_the_stack_figures_are_legible(copy_record, name, width):
    assert skip_reason(name, copy_record) is None
    assert_legible(draw_figure(name, FigureRequest(copy_record, width=width)), width)


def test_the_stack_weights_figure_colours_each_block_by_its_own_weights(copy_record):
    """Each panel's cells are its block's head's weights (the mesh's values; blocked cells empty),
    on the fixed 0–1 scale; a bold line names each block."""
    figure = draw_figure("stack-weights", FigureRequest(copy_record, width=6.5))
    for index, view in enumerate(copy_record.blocks):
        for head in range(2):
            (ax,) = [ax for ax in figure.axes if ax.get_label() == f"weights[{index}][{head}]"]
            mesh = ax.collections[0]
            drawn = np.ma.filled(np.asarray(mesh.get_array(), dtype=float).reshape(copy_record.n, -1), np.nan)
            weights = view.weights[head].double().numpy()
            seen = np.tril(np.ones_like(weights, dtype=bool))
            np.testing.assert_allclose(drawn[seen], weights[seen], atol=1e-6)
            assert (mesh.norm.vmin, mesh.norm.vmax) == (0.0, 1.0)
        assert texts_by_label(figure)[f"block{index}"] == f"block {index}"
    assert not np.allclose(copy_record.block(0).weights, copy_record.block(1).weights)


def test_the_composition_figure_writes_the_scores_of_the_library(copy_record):
    figure = draw_figure("composition", FigureRequest(copy_record, width=6.5))
    trained, baseline = record_composition(copy_record, 1), random_composition(copy_record, 1)
    for kind in "QKV":
        for scores, what in ((trained, "trained"), (baseline, "random")):
            written = [text.get_text() for text in cells(figure, f"composition[{kind}][{what}]")]
            assert written == [format_number(value) for row in scores.scores[kind] for value in row]
    heading = texts_by_label(figure)["heading"]
    assert heading.startswith("Composition: block 0 head 0 \u2192 block 1 head") and "K-composition" in heading


def test_the_composition_title_names_the_pair_furthest_above_its_own_random_score(copy_record):
    """The baseline is cell by cell (the same pair's score with random weights), not the panel's
    mean: the title names the cell of largest trained − random over Q, K and V, and both its numbers."""
    trained, baseline = record_composition(copy_record, 1), random_composition(copy_record, 1)
    above = {kind: np.array(trained.scores[kind]) - np.array(baseline.scores[kind]) for kind in "QKV"}
    kind = max(above, key=lambda k: above[k].max())
    h1, h2 = np.unravel_index(np.argmax(above[kind]), above[kind].shape)
    heading = texts_by_label(draw_figure("composition", FigureRequest(copy_record, width=6.5)))["heading"]
    assert heading.startswith(
        f"Composition: block 0 head {h1} \u2192 block 1 head {h2}: {kind}-composition "
        f"{format_number(trained.scores[kind][h1][h2])}, the furthest above the same pair's score with random "
        f"weights ({format_number(baseline.scores[kind][h1][h2])})"
    ), heading
    assert "mean" not in heading


def test_the_induction_figure_writes_each_heads_mean_weight_on_the_repeats(copy_record):
    """ "lamp cake river tall dog lamp cake river": the repeated words at 5, 6, 7 look for the words
    after their first occurrences, 1, 2, 3; each cell is the mean of those three weights."""
    pairs = repeat_pairs(copy_record.tokens)
    assert pairs == [(5, 1), (6, 2), (7, 3)]
    figure = draw_figure("induction", FigureRequest(copy_record, width=6.5))
    expected = [
        format_number(float(np.mean([float(view.weights[head, q, k]) for q, k in pairs])))
        for view in copy_record.blocks
        for head in range(2)
    ]
    assert [text.get_text() for text in cells(figure, "induction")] == expected
    previous = [
        format_number(float(torch.diagonal(view.weights[head], offset=-1).mean()))
        for view in copy_record.blocks
        for head in range(2)
    ]
    assert [text.get_text() for text in cells(figure, "previous")] == previous
    assert float(expected[2]) >= 0.5 or float(expected[3]) >= 0.5  # block 1 holds the induction head


def test_the_logit_lens_figure_writes_each_blocks_prediction(copy_record):
    figure = draw_figure("logit-lens", FigureRequest(copy_record, token="cake#2", width=6.5))
    rows = lens_rows(copy_record, 6)
    for block, guess in enumerate(rows):
        assert [text.get_text() for text in cells(figure, f"lens[{block}]")] == guess.terms(2)
    assert rows[-1].words[0] == "river"  # after the second "cake", the model copies the word after the first
    assert "block 1 predicts 'river'" in texts_by_label(figure)["heading"]


def test_the_copy_training_figure_draws_both_cards_curves(copy_record):
    figure = draw_figure("copy-training", FigureRequest(copy_record, width=6.5))
    two, one = copy_curve(PACKAGED_COPY), one_block_curve()
    (loss_axes,) = [ax for ax in figure.axes if ax.get_label() == "copy_loss"]
    (accuracy_axes,) = [ax for ax in figure.axes if ax.get_label() == "copy_accuracy"]
    drawn = {line.get_label(): line for line in accuracy_axes.get_lines()}
    assert (
        list(drawn["two blocks"].get_xdata()) == two.steps and list(drawn["two blocks"].get_ydata()) == two.accuracies
    )
    assert list(drawn["one block"].get_ydata()) == one.accuracies
    losses = {line.get_label(): list(line.get_ydata()) for line in loss_axes.get_lines()}
    assert losses["one block"] == [loss for loss in one.losses if loss is not None]
    assert "jumps from 0.19 to 0.84 between steps 600 and 800" in texts_by_label(figure)["heading"]


def test_the_one_block_contrast_is_the_copy_model_trained_with_one_block():
    """The shipped contrast is the copy task's recipe with one block, and stays far from copying."""
    one, two = json.loads(ONE_BLOCK.read_text()), json.loads((PACKAGED_COPY / "card.json").read_text())
    assert one["task"] == "copy" and one["blocks"] == 1 and two["blocks"] == 2
    assert "blockviz train --task copy --blocks 1" in one["made"]
    for entry in ("config", "training", "corpus"):
        assert one[entry] == two[entry], entry
    assert one["copy"]["accuracy"] <= 0.25 and two["copy"]["accuracy"] >= 0.7


def test_a_figure_of_every_block_refuses_a_record_it_cannot_draw_in_one_line(tmp_path):
    one_block = record("the cat sat")
    assert "the record holds one block" in skip_reason("composition", one_block)
    assert "the record holds one block" in skip_reason("stack-weights", one_block)
    assert "the record holds one block" in skip_reason("induction", one_block)
    assert "no word of the sentence comes back" in skip_reason("induction", record_toy("cat road lamp", "copy"))
    assert "the prediction figure" in skip_reason("logit-lens", record_toy("the cat sat"))
    assert "blockviz's seeded block has no unembedding" in skip_reason("logit-lens", one_block)
    assert "not trained by blockviz train" in skip_reason("copy-training", one_block)
    assert "its training is the copy-training figure" in skip_reason("training", record_toy(LESSON, "copy"))
    result = CliRunner().invoke(
        main, ["figures", "the cat sat", "--figure", "composition", "-o", str(tmp_path / "out")]
    )
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: figure 'composition' cannot be drawn: the record holds one block, so no block reads another's output: "
        "record a stack (--model copy, or --layer all)"
    ]
    assert not list((tmp_path / "out").glob("*.png"))


def test_an_encoder_says_why_it_has_no_logit_lens():
    """A stand-in for MiniLM's record of every layer (loading it is the slow tests' job): no
    unembedding, no lens, bidirectional."""
    from types import SimpleNamespace

    from blockviz.source import Source

    encoder = SimpleNamespace(
        architecture=SimpleNamespace(unembedding=False),
        lens=None,
        n=3,
        source=Source("model", model="minilm", family="bert", layer=5, n_layers=6, dtype="float32"),
        config=SimpleNamespace(causal=False),
    )
    encoder.blocks = (encoder,) * 6
    assert skip_reason("logit-lens", encoder) == (
        "no logit lens: minilm is an encoder (bidirectional, no unembedding): it predicts no next token"
    )
