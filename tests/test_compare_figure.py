"""The figure of ``blockviz compare`` (issue 24): the grid's share of weight moved on the diverging
map's positive arm with its own colour bar, beside the weights' and the change's bars, and the
rows panel's words written upright (horizontal), staggered when they are wider than a cell."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib import colormaps

from blockviz.figures.compare_figure import KEY, MOVED_LABEL, RowsPanel, key_levels, moved_scale
from blockviz.figures.heads_figure import HeadsGrid, draw_heads_figure
from blockviz.style import SIGNED_CMAP

MOVED = np.array([[0.16, 0.03], [0.0, 0.08]])
KEYS = ["the", "cat→dog", "sat", "on", "the", "mat"]
FIRST = np.array([0.0, 0.75, 0.0, 0.2, 0.0, 0.05])
SECOND = np.array([0.0, 0.59, 0.0, 0.33, 0.0, 0.08])


def figure(keys=KEYS):
    grid = HeadsGrid(MOVED, "How far attention moves", best=(0, 0), scale=moved_scale(MOVED))
    panel = RowsPanel(keys, FIRST[: len(keys)], SECOND[: len(keys)], "its weights")
    return draw_heads_figure(grid, under=panel.under)


def colour_bar_titles(fig) -> list[str]:
    return [
        text.get_text()
        for ax in fig.axes
        if ax.get_label() == "colorbar"
        for text in ax.texts + [ax.title]
        if text.get_text() and not text.get_text()[0].isdigit() and not text.get_text().startswith("\u2212")
    ]


def test_the_share_moved_has_its_own_colour_bar_beside_the_weights_and_the_change():
    fig = figure()
    bars = [ax for ax in fig.axes if ax.get_label() == "colorbar"]
    assert len(bars) == 3
    titles = " ".join(colour_bar_titles(fig))
    for title in (MOVED_LABEL, "weight", "change (second − first)"):
        assert title in titles


def test_the_share_moved_is_drawn_on_the_upper_half_of_the_diverging_map():
    scale = moved_scale(MOVED)
    signed = colormaps[SIGNED_CMAP]
    assert scale.norm.vmin == 0.0 and scale.norm.vmax == pytest.approx(0.16)
    assert np.allclose(scale.rgba(np.array([0.0]))[0], signed(0.5), atol=0.01)  # white at no move
    assert np.allclose(scale.rgba(np.array([0.16]))[0], signed(1.0), atol=0.01)  # the map's red end at the most
    assert moved_scale(np.zeros((1, 2))).norm.vmax == 0.01  # a grid of no moves still has a scale


def test_the_rows_panels_words_are_horizontal():
    fig = figure()
    keys = [text for text in fig.texts if text.get_label() == f"{KEY}:key"]
    assert [text.get_text() for text in keys] == KEYS
    assert {text.get_rotation() for text in keys} == {0.0}


def test_words_wider_than_a_cell_are_staggered_on_two_levels_and_never_cross():
    labels, levels = key_levels(["a", "internationalisation", "b"], cell=0.3, size_pt=8)
    assert levels == 2 and labels[0] == "a" and labels[1].endswith("…")
    assert key_levels(["a", "b"], cell=0.3, size_pt=8) == (["a", "b"], 1)
    fig = figure(["because", "therefore", "nevertheless", "whereas", "moreover", "although"])
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = [text.get_window_extent(renderer) for text in fig.texts if text.get_label() == f"{KEY}:key"]
    assert len({round(box.y0) for box in boxes}) == 2
    assert not any(one.overlaps(two) for k, one in enumerate(boxes) for two in boxes[k + 1 :])


def test_words_the_mask_hides_from_the_query_in_both_sentences_are_blocked_and_read_0():
    import torch

    from blockviz.models.evidence import Side, Words, align_words, unseen_words

    words_a = Words.of_tokens(["the", "cat", "sat", "on"], None)
    words_b = Words.of_tokens(["the", "dog", "sat", "on", "it"], None)
    pairs = align_words(words_a.names, words_b.names)
    weights = torch.zeros(1, 1, 5, 5)
    # "sat" (position 2) sees the, cat/dog, sat; "on" and "it" come after it in both sentences
    side_a, side_b = Side(weights[..., :4, :4], words_a, [False] * 4, 2, 0), Side(weights, words_b, [False] * 5, 2, 0)
    assert unseen_words(side_a, side_b, pairs, causal=True) == [False, False, False, True, True]
    assert not any(unseen_words(side_a, side_b, pairs, causal=False))
    later = Side(weights, words_b, [False] * 5, 4, 0)  # the second sentence's query is "it": it sees "on"
    assert unseen_words(side_a, later, pairs, causal=True) == [False, False, False, False, False]

    blocked = np.array([False, False, False, True, False, True])
    grid = HeadsGrid(MOVED, "How far attention moves", best=(0, 0), scale=moved_scale(MOVED))
    fig = draw_heads_figure(grid, under=RowsPanel(KEYS, FIRST, SECOND, "its weights", blocked).under)
    cells = [text.get_text() for text in fig.texts if text.get_label() == f"{KEY}:cell"]
    by_row = [cells[row * 6 : (row + 1) * 6] for row in range(3)]
    assert [row[3] for row in by_row] == ["0", "0", "0"] and [row[5] for row in by_row] == ["0", "0", "0"]
    assert by_row[0][4] == "0.00" and by_row[1][1] == "0.59"  # a seen word's 0 keeps its decimals
    assert any("blocked by the mask" in text.get_text() for text in fig.texts)


def test_a_word_one_sentence_lacks_is_left_blank_in_its_row_not_written_0():
    from blockviz.figures.heads_grids import rows_panel
    from blockviz.heads import compare

    comparison = compare("the cat sat on the mat", "the big cat sat on the mat", "mat")
    assert comparison.pairs[1] == (None, 1)  # "big": only the second sentence has it
    best = comparison.shifts[0]
    assert best.row_a[1] == 0.0 and best.row_b[1] > 0.0
    panel = rows_panel(best, comparison.labels, "mat", comparison.layers, comparison.unseen, comparison.pairs)
    assert "a blank: the sentence lacks the word" in panel.caption
    grid = HeadsGrid(MOVED, "How far attention moves", best=(0, 0), scale=moved_scale(MOVED))
    fig = draw_heads_figure(grid, under=panel.under)
    cells = [(text.get_position(), text.get_text()) for text in fig.texts if text.get_label() == f"{KEY}:cell"]
    k = len(comparison.labels)
    assert len(cells) == 3 * k - 1
    written = {(round(x), round(y)): shown for (x, y), shown in cells}
    assert (1, 0) not in written  # the first sentence's "big": blank
    assert written[(1, 1)] == f"{best.row_b[1]:.2f}" and written[(1, 2)] == f"{best.change[1]:.2f}".replace("-", "−")
    assert written[(0, 0)] == f"{best.row_a[0]:.2f}"
