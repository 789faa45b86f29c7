"""Figures stay legible on the page they are laid out for, from 1 to 64 tokens: as wide as the
page, no text under 6 pt, none overlapping another, none cut off, every number inside its cell,
long tokens ellipsised, annotations giving way to colour alone where they would not fit."""

from __future__ import annotations

import pytest
from conftest import LONG_SENTENCE
from figure_cache import drawn
from figure_cache import sentence_record as shared_record
from support_figures import BLOCK_FIGURES, assert_legible, cells

from blockviz.block_record import record
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.labels import ellipsize, token_label, token_labels, token_named
from blockviz.figures.page import MIN_PT, page

ODD = (
    'She said "hello" <b> & paid $5 for café au lait, 猫 🐈 with internationalisation '
    "antidisestablishmentarianism and then we all went home to sleep until noon"
)
SENTENCES = {1: "hi", 13: LONG_SENTENCE, 64: " ".join(f"w{i}" for i in range(64))}
WIDTHS = [3.3, 6.5, None]


def sentence_record(tokens: int):
    rec = shared_record(SENTENCES[tokens])
    assert rec.n == tokens
    return rec


@pytest.mark.parametrize("width", WIDTHS, ids=lambda width: f"width-{width or 'auto'}")
@pytest.mark.parametrize("tokens", sorted(SENTENCES))
@pytest.mark.parametrize("name", BLOCK_FIGURES)
def test_legible_on_the_page(name, tokens, width):
    if tokens == 64 and width is None and name not in ("weights", "value-mixing", "multi-head"):
        pytest.skip(
            "natural size at 64 tokens: the three figures whose layout differs most (the rest are checked at 64 tokens on pages)"
        )
    assert_legible(drawn(name, SENTENCES[tokens], width), width)


@pytest.fixture(scope="module")
def odd_request():
    rec = record(ODD)
    assert rec.n == 32
    return FigureRequest(rec)


@pytest.mark.parametrize("name", ["weights", "value-mixing", "qkv"])
def test_odd_and_long_tokens_stay_legible(odd_request, name):
    assert_legible(draw_figure(name, odd_request), 6.5)


@pytest.mark.parametrize("name", ["scores", "value-mixing"])
def test_no_text_overlaps_with_one_head_chosen(cat_record, name):
    assert_legible(draw_figure(name, FigureRequest(cat_record, token="cat", head=1)), 6.5)


def test_numbers_shown_where_they_fit_and_dropped_where_they_would_be_under_6_pt(chicken_record):
    scores = draw_figure("scores", FigureRequest(chicken_record, head=0, width=6.5))
    texts = cells(scores, "scores[0]")
    assert len(texts) == chicken_record.n**2 and min(text.get_fontsize() for text in texts) >= MIN_PT
    narrow = drawn("weights", SENTENCES[64], 3.3)
    panels = [ax for ax in narrow.axes if ax.get_label().startswith("weights[")]
    assert len(panels) == 2 and all(len(cells(narrow, ax.get_label())) == 0 for ax in panels)


def test_a_small_matrix_keeps_its_numbers_beside_colour_only_panels():
    figure = drawn("multi-head", SENTENCES[64], 6.5)
    assert len(cells(figure, "W_O")) == 16


def test_long_tokens_are_ellipsised_in_tick_labels(odd_request):
    figure = draw_figure("weights", FigureRequest(odd_request.record, width=None))
    labels = [text.get_text() for text in figure.texts if text.get_label() == "weights[0]:col"]
    assert labels[20] == "internation\u2026" == ellipsize("internationalisation")
    assert labels[10] == "$" and labels[5] == "<"  # symbols are drawn as they are
    assert labels[2] == '\u201c"\u201d'  # punctuation quoted, as the videos draw it
    assert max(len(label) for label in labels) == 12


def test_punctuation_is_a_quoted_chip_in_figures_as_in_videos():
    """ "." is never a lone dot on a tick: “.”, as the scenes' headers draw it; a title names it
    so once, and a word 'as before'."""
    figure = drawn("weights", "The chicken didn't cross the road because it was too tired.", None)
    labels = [text.get_text() for text in figure.texts if text.get_label() == "weights[0]:col"]
    assert labels[-1] == "\u201c.\u201d" and labels[1] == "chicken"
    assert (token_label(" "), token_label("...")) == ("\u201c \u201d", "\u201c...\u201d")
    assert (token_named("."), token_named("it")) == ("\u201c.\u201d", "'it'")


def test_close_rows_label_every_kth_token():
    figure = drawn("weights", SENTENCES[64], 3.3)
    labels = [text.get_text() for text in figure.texts if text.get_label() == "weights[0]:row"]
    step = int(labels[1][1:])
    assert step > 1 and labels == [f"w{i}" for i in range(0, 64, step)]


TOKEN_ROW_FIGURES = [
    "token-grid",
    "qkv",
    "scores",
    "mask",
    "weights",
    "value-mixing",
    "multi-head",
    "ffn",
    "causal-vs-bidirectional",
]
"""The figures with panels of token rows (residual-stream stacks one token's rows of each sum)."""


@pytest.mark.parametrize("name", TOKEN_ROW_FIGURES)
def test_every_token_row_is_labelled_at_13_tokens_on_a_text_column(name):
    """At 6.5 in, 13 tokens are few enough to label every row of every panel that labels rows:
    the height the page allows is kept by giving up numbers (colour alone), not labels."""
    rec = sentence_record(13)
    figure = drawn(name, SENTENCES[13], 6.5)
    labelled: dict[str, list] = {}
    for text in figure.texts:
        if text.get_label().endswith(":row") and not text.get_label().startswith(
            ("W_O", "b_O")
        ):  # W_O's rows are d0…, not tokens
            labelled.setdefault(text.get_label(), []).append(text)
    assert labelled, name
    for key, texts in labelled.items():
        assert [text.get_text() for text in texts] == token_labels(rec.tokens), key
        assert min(text.get_fontsize() for text in texts) >= MIN_PT, key
    assert figure.get_size_inches()[1] <= page(6.5).max_height + 1e-6


@pytest.mark.parametrize("width", [3.3, 6.5])
@pytest.mark.parametrize("name", ["scores", "mask", "weights", "causal-vs-bidirectional", "multi-head"])
def test_attention_figures_of_64_tokens_keep_to_the_page_height(name, width):
    figure = drawn(name, SENTENCES[64], width)
    assert figure.get_size_inches()[1] <= page(width).max_height + 1e-6, (
        figure.get_size_inches()
    )  # 8.0 in at 3.3 in (multi-head was 8.16)


@pytest.mark.parametrize("width", [3.3, 6.5])
@pytest.mark.parametrize("tokens", [13, 64])
def test_layer_norm_keeps_to_the_page_height(tokens, width):
    """Its steps stand close, as a table's rows (it was 8.3 in tall at 3.3 in), their type never under 6 pt."""
    figure = drawn("layer-norm", SENTENCES[tokens], width)
    assert figure.get_size_inches()[1] <= page(width).max_height + 1e-6, figure.get_size_inches()
    assert min(text.get_fontsize() for text in figure.texts) >= MIN_PT


def test_the_mask_figure_draws_each_heads_scores_in_cells_of_one_size():
    """At 64 tokens head 0's row (scores + M = masked) wraps and head 1's (scores + M = masked, M
    not drawn again) does not: their cells were different sizes."""
    for width in (6.5, 3.3, None):
        figure = drawn("mask", SENTENCES[64], width)
        inches = figure.get_size_inches()
        sizes = {}
        for ax in figure.axes:
            if ax.get_label() in (
                "scaled_scores[0]",
                "scaled_scores[1]",
                "masked_scores[0]",
                "masked_scores[1]",
                "mask",
            ):
                box = ax.get_position()
                sizes[ax.get_label()] = (round(box.width * inches[0] / 64, 6), round(box.height * inches[1] / 64, 6))
        assert len(sizes) == 5 and len(set(sizes.values())) == 1, (width, sizes)
