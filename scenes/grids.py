"""Grids of numbers from the record, and the one highlight that moves over them.

* :func:`visible_slots` — which rows/columns of a long axis to draw, with ``None`` for ⋯.
* :class:`NumberGrid` — a grid of coloured number cells with row and column headers, elided
  beyond :data:`blockviz.scenes.look.MAX_SLOTS` around a focus row/column; every label is a
  :func:`blockviz.scenes.text.number` with the source of its value in the record.
* :class:`Highlight` — the one overlay a scene moves around instead of recolouring cells.
* :func:`as_rows` — a 2-D tensor as rows of floats.

Everything here takes real numbers (a tensor slice of a :class:`~blockviz.block_record.BlockRecord`)
and draws them; nothing computes attention.
"""

from __future__ import annotations

import math
from typing import Sequence

from manim import DOWN, RIGHT, Mobject, Rectangle, Text, VGroup

from blockviz import style
from blockviz.scenes.layout import fit_width
from blockviz.scenes.look import CELL_HEIGHT, CELL_WIDTH, HEADER_SIZE, MAX_SLOTS, NUMBER_SIZE, Look
from blockviz.scenes.text import number, text

ELLIPSIS_ACROSS = "\u22ef"  # ⋯ stands for elided columns
ELLIPSIS_DOWN = "\u22ee"  # ⋮ stands for elided rows


def visible_slots(n: int, focus: int, limit: int = MAX_SLOTS) -> list[int | None]:
    """The positions of an axis of length ``n`` to draw: at most ``limit`` slots, ``None`` = ⋯.

    All positions if ``n <= limit``; otherwise the first and last position and a window
    around ``focus``, with ``None`` wherever positions are left out.
    ``visible_slots(13, 6)`` → ``[0, None, 5, 6, 7, 8, None, 12]``.
    """
    if n <= limit:
        return list(range(n))
    low = high = min(max(focus, 0), n - 1)
    while True:
        grown = False
        if high + 1 < n and len(_slots(n, low, high + 1)) <= limit:
            high, grown = high + 1, True
        if low > 0 and len(_slots(n, low - 1, high)) <= limit:
            low, grown = low - 1, True
        if not grown:
            return _slots(n, low, high)


def _slots(n: int, low: int, high: int) -> list[int | None]:
    head = list(range(low)) if low <= 2 else [0, None]
    tail = list(range(high + 1, n)) if high >= n - 3 else [None, n - 1]
    return head + list(range(low, high + 1)) + tail


def as_rows(values) -> list[list[float]]:
    """A 2-D tensor or nested sequence as a list of rows of floats."""
    if hasattr(values, "tolist"):
        values = values.tolist()
    return [[float(item) for item in row] for row in values]


class NumberGrid(VGroup):
    """A labelled grid of number cells for a 2-D tensor ``(rows, columns)`` of a record.

    Cells are coloured by :mod:`blockviz.style` (signed values on the diverging map, weights on
    the 0–1 map, −∞ cells in the theme's blocked grey) and carry their number as a ``Text`` in
    the readable colour (:func:`blockviz.style.text_color_on`). Axes longer than ``max_rows`` /
    ``max_columns`` are elided with ⋮ / ⋯ around ``row_focus`` / ``column_focus``.

    Cells are addressed by their position in the tensor (0-based), not by slot on screen:
    ``grid.cells[i, j]``, ``grid.labels[i, j]``, ``grid.row_headers[i]``. Positions that are
    elided have no entry; ``grid.has_row(i)`` says whether row ``i`` is drawn.

    Parameters
    ----------
    values
        ``(rows, columns)`` tensor or nested sequence of floats; −∞ allowed.
    row_names, column_names
        Header text per row / column, drawn as given: tokens through
        :func:`blockviz.tokens.display_token`, feature axes from
        :func:`blockviz.record_fields.axis_labels`; ``None`` draws no headers.
    look
        Colours of the theme.
    colors
        ``"signed"`` (diverging map scaled to ``color_limit``), ``"weights"`` (0–1 map) or
        ``"none"`` (plain cells).
    color_limit
        Half-width of the signed colour scale; required for ``"signed"``. Pass the record's
        ``rec.scale_limit(field)`` so one quantity has one scale in every scene.
    source
        ``(tensor name, *leading index)`` recorded on each label, e.g. ``("scores", head)``;
        label ``(i, j)`` gets ``source + (i, j)``. Or a function ``(i, j) → (name, *index)``
        for a grid that shows a tensor transposed or sliced.
    show_numbers
        ``False`` draws empty cells; put numbers in later with :meth:`number_at`.
    blocked
        Optional ``(rows, columns)`` booleans: cells a mask blocked (their weight is exactly
        0) are drawn grey and labelled without decimals ("0"). A −∞ value is always blocked.
    """

    def __init__(
        self,
        values,
        row_names: Sequence[str] | None,
        column_names: Sequence[str] | None,
        look: Look,
        *,
        colors: str = "signed",
        color_limit: float | None = None,
        source: tuple | None = None,
        row_focus: int = 0,
        column_focus: int = 0,
        max_rows: int = MAX_SLOTS,
        max_columns: int = MAX_SLOTS,
        cell_width: float = CELL_WIDTH,
        cell_height: float = CELL_HEIGHT,
        font_size: float = NUMBER_SIZE,
        header_size: float = HEADER_SIZE,
        row_header_color: str | None = None,
        column_header_color: str | None = None,
        show_numbers: bool = True,
        filled: bool = True,
        decimals: int = 2,
        blocked=None,
    ) -> None:
        super().__init__()
        self.values = as_rows(values)
        self.blocked = [[bool(flag) for flag in row] for row in (blocked.tolist() if hasattr(blocked, "tolist") else blocked)] if blocked is not None else None
        self.look = look
        self.color_rule = colors
        self.source = source
        self.decimals = decimals
        self.font_size = font_size
        self.cell_width = cell_width
        self.cell_height = cell_height
        n_rows, n_columns = len(self.values), len(self.values[0])
        if colors == "signed" and color_limit is None:
            raise ValueError("a signed grid needs its colour scale: color_limit=record.scale_limit(field)")
        self.color_limit = color_limit
        self.row_slots = visible_slots(n_rows, row_focus, max_rows)
        self.column_slots = visible_slots(n_columns, column_focus, max_columns)
        self.cells: dict[tuple[int, int], Rectangle] = {}
        self.labels: dict[tuple[int, int], Text] = {}
        self.row_headers: dict[int, Text] = {}
        self.column_headers: dict[int, Text] = {}
        self.cell_group, self.label_group, self.header_group, self.ellipsis_group = VGroup(), VGroup(), VGroup(), VGroup()
        self._build_cells(filled)
        if show_numbers:
            for (i, j) in self.cells:
                self.labels[i, j] = self.number_at(i, j)
                self.label_group.add(self.labels[i, j])
        self._build_headers(row_names, column_names, header_size, row_header_color or look.text, column_header_color or look.text)
        self.add(self.cell_group, self.label_group, self.header_group, self.ellipsis_group)

    # -- building ---------------------------------------------------------------------------
    def _slot_center(self, row_slot: int, column_slot: int):
        return RIGHT * column_slot * self.cell_width + DOWN * row_slot * self.cell_height

    def _build_cells(self, filled: bool) -> None:
        for r, i in enumerate(self.row_slots):
            for c, j in enumerate(self.column_slots):
                if i is None or j is None:
                    mark = ELLIPSIS_DOWN if i is None else ELLIPSIS_ACROSS
                    if i is None and j is None:
                        mark = "\u22f1"  # ⋱
                    self.ellipsis_group.add(text(mark, self.font_size, self.look.muted).move_to(self._slot_center(r, c)))
                    continue
                cell = Rectangle(width=self.cell_width, height=self.cell_height, stroke_color=self.look.grid, stroke_width=1)
                cell.set_fill(self.color_of(self.values[i][j], self.is_blocked(i, j)) if filled else self.look.background, opacity=1)
                cell.move_to(self._slot_center(r, c))
                self.cells[i, j] = cell
                self.cell_group.add(cell)

    def _build_headers(self, row_names, column_names, size, row_color, column_color) -> None:
        left_edge = self.cell_group.get_left()[0]
        top_edge = self.cell_group.get_top()[1]
        if row_names is not None:
            for r, i in enumerate(self.row_slots):
                shown = ELLIPSIS_DOWN if i is None else row_names[i]
                header = fit_width(text(shown, size, self.look.muted if i is None else row_color), 1.6)
                header.move_to(self._slot_center(r, 0)).set_x(left_edge - 0.12 - header.width / 2)
                self.header_group.add(header)
                if i is not None:
                    self.row_headers[i] = header
        if column_names is not None:
            for c, j in enumerate(self.column_slots):
                shown = ELLIPSIS_ACROSS if j is None else column_names[j]
                header = fit_width(text(shown, size, self.look.muted if j is None else column_color), self.cell_width * 0.94)
                header.move_to(self._slot_center(0, c)).set_y(top_edge + 0.1 + size / 48 * 0.35)
                self.header_group.add(header)
                if j is not None:
                    self.column_headers[j] = header

    # -- reading and making labels -------------------------------------------------------------
    def is_blocked(self, i: int, j: int) -> bool:
        """Whether cell ``(i, j)`` is blocked (−∞, or marked in ``blocked``)."""
        return self.values[i][j] == -math.inf or (self.blocked is not None and self.blocked[i][j])

    @property
    def scale_now(self) -> float:
        """How much the grid has been scaled since it was built (labels made later match it)."""
        first = next(iter(self.cells.values()))
        return first.width / self.cell_width

    def color_of(self, value: float, blocked: bool = False) -> str:
        """Hex fill colour of a cell holding ``value`` under this grid's colour rule."""
        if value == -math.inf or blocked:
            return self.look.blocked
        if self.color_rule == "weights":
            return style.hex_color(style.weight_color(value))
        if self.color_rule == "signed":
            return style.hex_color(style.signed_color(value, self.color_limit))
        return self.look.background

    def colors_for_weight(self, value: float) -> str:
        """Hex fill of an attention weight (the 0–1 map), whatever this grid's colour rule."""
        return style.hex_color(style.weight_color(value))

    def number_at(self, i: int, j: int, value: float | None = None, source: tuple | None = None, decimals: int | None = None, fill: str | None = None) -> Text:
        """A new number label for cell ``(i, j)`` (this grid's value unless ``value`` given), placed
        on the cell in the colour readable on its fill (the cell's present fill unless ``fill``
        given). Not added to the grid."""
        value = self.values[i][j] if value is None else value
        if source is None and self.source is not None:
            source = self.source(i, j) if callable(self.source) else self.source + (i, j)
        if decimals is None:
            decimals = 0 if self.is_blocked(i, j) and value in (0.0, -math.inf) else self.decimals
        fill = fill or self.cells[i, j].get_fill_color().to_hex()
        label = number(value, self.font_size, style.text_color_on(fill), decimals, source=source).scale(self.scale_now)
        return fit_width(label, self.cells[i, j].width * 0.94).move_to(self.cells[i, j])

    def has_row(self, i: int) -> bool:
        return i in self.row_slots

    def shown_rows(self) -> list[int]:
        return [i for i in self.row_slots if i is not None]

    def shown_columns(self) -> list[int]:
        return [j for j in self.column_slots if j is not None]

    def row(self, i: int) -> VGroup:
        """The drawn cells of row ``i``."""
        return VGroup(*(self.cells[i, j] for j in self.shown_columns()))

    def column(self, j: int) -> VGroup:
        """The drawn cells of column ``j``."""
        return VGroup(*(self.cells[i, j] for i in self.shown_rows()))

    def set_label(self, i: int, j: int, label: Text) -> Text | None:
        """Record ``label`` as the label of cell ``(i, j)``; returns the label it replaces."""
        previous = self.labels.get((i, j))
        self.labels[i, j] = label
        return previous


class Highlight(Rectangle):
    """The single overlay a scene moves over rows, columns and cells (cheaper than recolouring).

    ``highlight.over(target)`` returns an animation that moves and resizes it around ``target``.
    """

    def __init__(self, look: Look, target: Mobject | None = None, buff: float = 0.05, color: str | None = None) -> None:
        super().__init__(width=1, height=1, stroke_color=color or look.highlight, stroke_width=4, fill_opacity=0)
        self.buff = buff
        if target is not None:
            self.place(target)

    def place(self, target: Mobject) -> Highlight:
        """Move and resize at once (no animation)."""
        self.stretch_to_fit_width(target.width + 2 * self.buff)
        self.stretch_to_fit_height(target.height + 2 * self.buff)
        return self.move_to(target)

    def over(self, target: Mobject):
        """An animation moving the highlight around ``target``."""
        return self.animate.stretch_to_fit_width(target.width + 2 * self.buff).stretch_to_fit_height(target.height + 2 * self.buff).move_to(target)



__all__ = ["NumberGrid", "Highlight", "visible_slots", "as_rows", "ELLIPSIS_ACROSS", "ELLIPSIS_DOWN"]
