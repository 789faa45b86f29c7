"""Cell numbers drawn from cached stamps look like matplotlib's own text, in the same place."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from blockviz.figures.cell_text import CellText, add_cell_text, cache_layouts, cell_font

STRINGS = ["0.25", "\u22121.07", "\u2212\u221e", "12.50"]


def rendered(kind: str, color: str = "#000000") -> np.ndarray:
    """Darkness (0–1) of a 200-dpi canvas with STRINGS centred in a row, as ``kind`` texts."""
    figure = Figure(figsize=(4, 1), dpi=200)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.5, len(STRINGS) - 0.5)
    ax.set_axis_off()
    font = cell_font("sans-serif", 9.0)
    for index, text in enumerate(STRINGS):
        if kind == "cell":
            add_cell_text(ax, index, 0.5, text, font, color)
        else:
            ax.text(index, 0.5, text, ha="center", va="center", fontproperties=font, color=color, parse_math=False)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return 1.0 - np.asarray(canvas.buffer_rgba())[..., 0] / 255.0


def ink_box(darkness: np.ndarray) -> tuple[int, int, int, int]:
    rows, cols = np.nonzero(darkness > 0.3)
    return rows.min(), rows.max(), cols.min(), cols.max()


def test_stamped_numbers_match_matplotlib_text_in_place_and_shape():
    plain, cell = rendered("plain"), rendered("cell")
    assert np.all(np.abs(np.array(ink_box(plain)) - np.array(ink_box(cell))) <= 1)
    assert np.corrcoef(plain.ravel(), cell.ravel())[0, 1] > 0.8  # hinting differs a little; one pixel off gives < 0.7
    assert abs(plain.sum() - cell.sum()) < 0.05 * plain.sum()


def test_stamps_take_the_text_colour():
    figure = Figure(figsize=(1, 1), dpi=100, facecolor="black")
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    add_cell_text(ax, 0.5, 0.5, "8.88", cell_font("sans-serif", 12.0), "#ffffff")
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3]
    assert pixels.max() == 255 and np.all(pixels[..., 0] == pixels[..., 2])


def test_cell_text_reports_the_same_extent_as_text():
    figure = Figure(figsize=(2, 1), dpi=100)
    ax = figure.add_axes((0, 0, 1, 1))
    font = cell_font("sans-serif", 8.0)
    cell = add_cell_text(ax, 0.5, 0.5, "\u22120.37", font, "#000000")
    plain = ax.text(0.5, 0.5, "\u22120.37", ha="center", va="center", fontproperties=font, parse_math=False)
    renderer = FigureCanvasAgg(figure).get_renderer()
    assert isinstance(cell, Text) and cell in ax.texts
    assert np.allclose(cell.get_window_extent(renderer).bounds, plain.get_window_extent(renderer).bounds)


def test_tick_labels_become_cell_texts_except_missing_glyphs():
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_xticks([0, 1, 2], ["cat", "\u732b", "sat"])
    cache_layouts(ax.get_xticklabels())
    kinds = [type(label) for label in ax.get_xticklabels()]
    assert kinds == [CellText, Text, CellText]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["cat", "\u732b", "sat"]
