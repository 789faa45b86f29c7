"""Figures stay legible from 1 to 32 tokens: no text overlaps another, none is cut off, long
tokens are ellipsised, annotations fit their cells or give way to colour alone."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from blockviz import record
from blockviz.figures import FIGURE_NAMES, FigureRequest, draw_figure
from blockviz.figures.context import quiet_glyphs
from blockviz.figures.labels import ellipsize

LONG = (
    'She said "hello" <b> & paid $5 for café au lait, 猫 🐈 with internationalisation '
    "antidisestablishmentarianism and then we all went home to sleep until noon"
)


def visible_texts(figure) -> list[Text]:
    """Every drawn, non-empty text of the figure: titles, tick labels, axis labels, annotations."""
    texts = [artist for artist in figure.findobj(Text) if artist.get_visible() and artist.get_text().strip()]
    return [text for text in texts if not _is_hidden_tick(text)]


def _is_hidden_tick(text: Text) -> bool:
    # Tick label artists that no tick uses are never drawn.
    return text.axes is not None and text.get_label() == "" and text.get_text() == ""


def extents(figure, texts) -> np.ndarray:
    canvas = FigureCanvasAgg(figure)
    with quiet_glyphs():
        canvas.draw()  # places axis labels beside their tick labels
        renderer = canvas.get_renderer()
        boxes = [text.get_window_extent(renderer) for text in texts]
    return np.array([[box.x0, box.y0, box.x1, box.y1] for box in boxes])


def overlapping_pairs(boxes: np.ndarray, tolerance: float = 0.5) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = (boxes[:, index][:, None] for index in range(4))
    overlap = (x0 < x1.T - tolerance) & (x0.T < x1 - tolerance) & (y0 < y1.T - tolerance) & (y0.T < y1 - tolerance)
    np.fill_diagonal(overlap, False)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(overlap)))]


def assert_legible(figure) -> None:
    figure.set_dpi(40)
    texts = visible_texts(figure)
    boxes = extents(figure, texts)
    pairs = overlapping_pairs(boxes)
    assert not pairs, [(texts[i].get_text(), texts[j].get_text()) for i, j in pairs[:5]]
    width, height = figure.canvas.get_width_height()
    inside = (boxes[:, 0] >= -0.5) & (boxes[:, 1] >= -0.5) & (boxes[:, 2] <= width + 0.5) & (boxes[:, 3] <= height + 0.5)
    assert inside.all(), [texts[i].get_text() for i in np.nonzero(~inside)[0][:5]]


@pytest.fixture(scope="module")
def long_request():
    rec = record(LONG)
    assert rec.n == 32
    return FigureRequest(rec)


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_no_text_overlaps_or_is_cut_off_at_32_tokens(long_request, name):
    assert_legible(draw_figure(name, long_request))


@pytest.fixture(scope="module")
def one_token_request():
    return FigureRequest(record("hi"))


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_no_text_overlaps_or_is_cut_off_at_1_token(one_token_request, name):
    assert_legible(draw_figure(name, one_token_request))


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_no_text_overlaps_with_annotations_at_13_tokens(chicken_record, name):
    assert_legible(draw_figure(name, FigureRequest(chicken_record)))


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_no_text_overlaps_with_one_head_chosen(cat_record, name):
    assert_legible(draw_figure(name, FigureRequest(cat_record, token="cat", head=1)))


def test_annotations_fit_their_cells_at_13_tokens(chicken_record):
    rec = chicken_record
    figure = draw_figure("scores", FigureRequest(rec))
    figure.set_dpi(72)
    ax = next(ax for ax in figure.axes if ax.get_label() == "scores[0]")
    renderer = FigureCanvasAgg(figure).get_renderer()
    cell_width = ax.get_window_extent(renderer).width / rec.n
    widths = [text.get_window_extent(renderer).width for text in ax.texts]
    assert len(widths) == rec.n * rec.n
    assert max(widths) < cell_width


def test_32_tokens_show_colour_only_on_n_by_n_panels(long_request):
    figure = draw_figure("weights", long_request)
    panels = [ax for ax in figure.axes if ax.get_label().startswith("weights[")]
    assert len(panels) == 2
    assert all(len(ax.texts) == 0 for ax in panels)


def test_long_tokens_are_ellipsised_in_tick_labels(long_request):
    figure = draw_figure("weights", long_request)
    ax = next(ax for ax in figure.axes if ax.get_label() == "weights[0]")
    labels = [label.get_text() for label in ax.get_xticklabels()]
    assert labels[20] == "internation\u2026" == ellipsize("internationalisation")
    assert labels[10] == "$" and labels[5] == "<" and labels[2] == '"'
    assert max(len(label) for label in labels) == 12
