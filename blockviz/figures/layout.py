"""Placing panels by the inch, so a cell is the size its numbers were chosen for.

A figure is a stack of lines; a line is a row of :class:`Slot` s, each an Axes of a fixed
size in inches with room around it for its title and tick labels. Sizes are computed, not
negotiated by a layout engine, so text never overlaps and annotations always fit their cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from blockviz.figures.labels import text_size_in

GAP_IN = 0.12
"""Space between neighbouring slots and between lines, in inches."""
MARGIN_IN = 0.12

LARGEST_CELL_IN = 0.5
SMALLEST_CELL_IN = 0.14
ROWS_PER_5_5_IN = 5.5
"""An n-row heatmap is about 5.5 in tall (cells at most 0.5 in) until cells reach their minimum."""
WIDEST_LINE_IN = 15.0


@dataclass
class Slot:
    """One Axes ``width`` × ``height`` inches, with ``left``/``right``/``top``/``bottom`` inches
    of room for its labels; ``draw(ax)`` fills it and its return value is kept under ``key``.

    A slot with ``axes=False`` gets no Axes (they are costly): ``draw(figure, rect)`` receives
    the figure and the slot's rectangle ``(x0, y0, width, height)`` in figure fractions.
    """

    width: float
    height: float
    draw: Callable[[Axes], Any]
    key: str | None = None
    left: float = 0.0
    right: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    axes: bool = True

    @property
    def full_width(self) -> float:
        return self.left + self.width + self.right


def cell_size(max_rows: int, total_columns: int) -> float:
    """Side of a heatmap cell in inches: 0.5 for short sentences, smaller as rows grow past 11
    or a line holds many columns, never below 0.14."""
    by_rows = ROWS_PER_5_5_IN / max(1, max_rows)
    by_columns = WIDEST_LINE_IN / max(1, total_columns)
    return max(SMALLEST_CELL_IN, min(LARGEST_CELL_IN, by_rows, by_columns))


def text_slot(text: str, size_pt: float, key: str | None = None, math: bool = False, family: str = "sans-serif", **text_options) -> Slot:
    """A slot just holding ``text`` (a title, an operator such as "+" or "÷ √d_k"), drawn on the
    figure itself; the Text's label (``get_label()``) is ``key``."""
    width, height = text_size_in(text, size_pt, family=family, math=math, weight=text_options.get("fontweight", "normal"))

    def draw(figure: Figure, rect):
        x0, y0, w, h = rect
        return figure.text(x0 + w / 2, y0 + h / 2, text, ha="center", va="center", fontsize=size_pt, parse_math=math,
                           family=family, label=key or "", **text_options)

    return Slot(width * 1.1 + 0.08, height + 0.06, draw, key=key, axes=False)  # slack: hinted text at low dpi is up to ~10% wider than its outlines


def build_figure(lines: list[list[Slot]]) -> tuple[Figure, dict[str, Any]]:
    """A figure holding ``lines`` top to bottom, each line's slots left to right and centred.

    Returns the figure and what each keyed slot's ``draw`` returned.
    """
    lines = [line for line in lines if line]
    heights = [_line_height(line) for line in lines]
    widths = [sum(slot.full_width for slot in line) + GAP_IN * (len(line) - 1) for line in lines]
    figure_width = max(widths) + 2 * MARGIN_IN
    figure_height = sum(heights) + GAP_IN * (len(lines) - 1) + 2 * MARGIN_IN
    figure = Figure(figsize=(figure_width, figure_height))
    results: dict[str, Any] = {}
    top = figure_height - MARGIN_IN
    for line, height, width in zip(lines, heights, widths):
        body = max(slot.height for slot in line)
        body_bottom = top - max(slot.top for slot in line) - body
        x = (figure_width - width) / 2
        for slot in line:
            y = body_bottom + (body - slot.height) / 2
            rect = ((x + slot.left) / figure_width, y / figure_height, slot.width / figure_width, slot.height / figure_height)
            result = slot.draw(figure.add_axes(rect)) if slot.axes else slot.draw(figure, rect)
            if slot.key is not None:
                results[slot.key] = result
            x += slot.full_width + GAP_IN
        top -= height + GAP_IN
    return figure, results


def _line_height(line: list[Slot]) -> float:
    return max(slot.top for slot in line) + max(slot.height for slot in line) + max(slot.bottom for slot in line)
