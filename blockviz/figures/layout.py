"""Placing panels by the inch, so a cell is the size its numbers were chosen for, on a page of a
given width.

A figure is a stack of lines. A line is one of

* a list of :class:`Slot` s, left to right (a fixed line);
* a :class:`Flow`: panels sharing one cell size, left to right, wrapped onto more rows when the
  page is too narrow for them (an operator stays with the panel after it);
* a :class:`TextLine`: words wrapped to the page width.

:func:`build_figure` picks each flow's cell size: the page's largest cell, smaller when a panel
would not fit the width or the figure would be taller than the page allows. Sizes are computed,
not negotiated by a layout engine, so text never overlaps and annotations always fit their cells.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from blockviz.figures.context import font_families
from blockviz.figures.labels import LINE_SPACING, text_size_in
from blockviz.figures.page import MIN_PT, Page

SMALLEST_CELL_IN = 0.14
"""At natural size, cells are never smaller than this."""
ROWS_PER_5_5_IN = 5.5
"""At natural size an n-row heatmap is about 5.5 in tall (cells at most 0.5 in) until cells reach their minimum."""
WIDEST_LINE_IN = 15.0
"""At natural size a line of panels is about this wide at most."""
OPERATOR_COLUMNS = 1.6
LABEL_COLUMNS = 3.0
ONE_ROW_SHARE = 0.7
"""A flow stays on one row if its cells need shrink no further than this share of their size to fit."""
TOO_SMALL_SHARE = 0.3
"""A flow wraps if on one row its cells would shrink below this share of their size, even
when wrapping shows no more numbers."""
TINIEST_CELL_IN = 0.012
MATH_LINE_SPACING = 2.4
"""Between lines of a wrapped formula (fractions and sums stand taller than text), in font sizes."""
TEXT_SLACK = 1.06
"""Text slots are this much wider than the text's outlines: hinted text at low dpi is a little wider."""
TEXT_PAD_IN = 0.05
ASPECT = 0.55
"""Height of a heatmap cell over its width: cells are wider than tall, as a table's are, so a
number fits in a cell of fewer rows' height (the videos' cells have the same shape)."""
SQUARE_ASPECT = 0.8
"""Height over width of an n × n panel's cell (queries × keys): nearly square, as its rows and
columns are the same tokens."""
FLATTEST_SQUARE = 1 / 1.45
"""An n × n panel's cells are never flatter than this (height over width): on a short page they
grow narrower with their rows instead of squashing into strips."""
LABELLED_ROW_IN = 0.112
"""Rows at least this far apart can each carry a 6 pt label."""


@dataclass
class Slot:
    """One Axes ``width`` × ``height`` inches, with ``left``/``right``/``top``/``bottom`` inches
    of room for its labels; ``draw(ax)`` fills it and its return value is kept under ``key``.

    A slot with ``axes=False`` gets no Axes (they are costly): ``draw(figure, rect)`` receives
    the figure and the slot's rectangle ``(x0, y0, width, height)`` in figure fractions.
    """

    width: float
    height: float
    draw: Callable[..., Any]
    key: str | None = None
    left: float = 0.0
    right: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    axes: bool = True
    numbers: int = 0
    """How many numbers it writes (cells annotated)."""
    hug: bool = False
    """An operator: its neighbours stand :data:`HUG_SHARE` of the page's gap from it."""

    @property
    def full_width(self) -> float:
        return self.left + self.width + self.right


@dataclass
class Piece:
    """A panel (or operator) of a :class:`Flow`: ``make(cell, first, pitch)`` is its slot with cells
    ``cell`` inches wide and token rows at most ``pitch`` inches apart, ``first`` when it is the
    first panel of token rows on its row of the page (it then labels them).
    ``columns`` counts its width in cells (for the natural size); ``glue`` keeps it on the same
    row as the piece after it (an operator)."""

    make: Callable[[float, bool, float], Slot]
    columns: float = 0.0
    glue: bool = False
    token_rows: bool = False
    """Its rows are the tokens: the first such piece of a row labels them."""


@dataclass
class Flow:
    """Pieces sharing one cell size, for panels of ``rows`` rows."""

    pieces: list[Piece]
    rows: int = 1
    largest_cell: float | None = None
    """A cap of its own on the cell size (e.g. a figure with a fixed cell)."""
    share: str | None = None
    """Flows of a figure with the same ``share`` draw their cells one size, the smallest any of
    them takes alone (one quantity, one cell size: each head's panels of the same step)."""
    cell: float | None = field(default=None, init=False, repr=False, compare=False)
    """The cell size its last :meth:`arrange` chose."""
    tight: bool = False
    """Close under the line before it (:data:`TIGHT_GAP_IN`): a step of a stack of steps."""
    row_gap: float | None = None
    """Inches between its own rows when it wraps (``None``: the page's gap)."""

    def natural_cell(self, page: Page) -> float:
        """The cell size at natural width: 0.5 for short sentences, smaller as rows grow past 11
        or the line holds many columns, never below 0.14."""
        columns = sum(piece.columns for piece in self.pieces)
        operators = sum(1 for piece in self.pieces if piece.glue)
        by_rows = ROWS_PER_5_5_IN / max(1, self.rows) / ASPECT
        by_columns = WIDEST_LINE_IN / max(1.0, columns + operators * OPERATOR_COLUMNS + LABEL_COLUMNS)
        return max(SMALLEST_CELL_IN, min(self.cap(page), by_rows, by_columns))

    def cap(self, page: Page) -> float:
        return min(page.largest_cell, self.largest_cell or math.inf)

    def arrange(
        self, page: Page, pitch: float, gap: float, wrap_for_numbers: bool = True, compact: bool = False
    ) -> list[list[Slot]]:
        """The rows of slots this flow takes on ``page`` with token rows at most ``pitch`` inches
        apart; ``wrap_for_numbers=False`` wraps only what does not fit or would be too small to
        read, not to show more numbers (the figure is too tall for them anyway); ``compact``
        packs wrapped panels onto fewer rows with cells down to 40 % of their size (for a figure
        too tall even with its rows closest)."""
        if page.width is None:
            self.cell = self.natural_cell(page)
            return [make_row(self.pieces, self.cell, pitch)]
        room = page.content_width
        cap = self.cap(page)
        groups = piece_groups(self.pieces)
        one_row = _largest_cell(lambda cell: row_width([make_row(self.pieces, cell, pitch)], gap), room, cap)
        single = [make_row(self.pieces, one_row, pitch)]
        fits = row_width(single, gap) <= room + 1e-9
        self.cell = one_row
        if len(groups) == 1 or (fits and one_row >= ONE_ROW_SHARE * cap):
            return single
        cell = min(
            _largest_cell(lambda cell: row_width([make_row(group, cell, pitch)], gap), room, cap) for group in groups
        )
        wrapped = _packed(groups, cell, pitch, gap, room)
        wrapped_cell = cell
        for share in FEWER_ROWS_SHARES + (
            COMPACT_SHARES if compact else ()
        ):  # a little smaller cells may save a row (a shorter figure) and show as many numbers
            fewer = _packed(groups, cell * share, pitch, gap, room)
            if len(fewer) < len(wrapped) and _numbers(fewer) >= _numbers(wrapped):
                wrapped, wrapped_cell = fewer, cell * share
                break
        if not fits or (wrap_for_numbers and _numbers(wrapped) > _numbers(single)) or one_row < TOO_SMALL_SHARE * cap:
            self.cell = wrapped_cell
            return wrapped  # wrapping shows numbers the single row cannot, or the single row is too small to read
        return single

    def arrange_at(self, cell: float, page: Page, pitch: float, gap: float) -> list[list[Slot]]:
        """The rows of slots with cells ``cell`` inches wide: one row if it fits the page, else
        its panels packed onto as few rows as they fill (an operator kept with the panel after it)."""
        self.cell = cell
        single = [make_row(self.pieces, cell, pitch)]
        if page.width is None or row_width(single, gap) <= page.content_width + 1e-9:
            return single
        return _packed(piece_groups(self.pieces), cell, pitch, gap, page.content_width)


FEWER_ROWS_SHARES = (0.95, 0.9, 0.85, 0.8)
"""Cell sizes, as shares of a wrapped flow's own, tried for packing it onto fewer rows."""
COMPACT_SHARES = (0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.45, 0.4)
"""Further shares tried when the figure is too tall for the page even with its rows closest."""


def _packed(groups: list[list[Piece]], cell: float, pitch: float, gap: float, room: float) -> list[list[Slot]]:
    """``groups`` packed left to right onto as few rows of ``room`` inches as they fill in order (greedy)."""
    rows: list[list[Piece]] = []
    for group in groups:
        if rows and row_width([make_row(rows[-1] + group, cell, pitch)], gap) <= room + 1e-9:
            rows[-1] += group
        else:
            rows.append(list(group))
    return [make_row(row, cell, pitch) for row in rows]


def _numbers(rows: list[list[Slot]]) -> int:
    return sum(slot.numbers for row in rows for slot in row)


def cell_height(cell: float, pitch: float = math.inf, aspect: float = ASPECT) -> float:
    """Height of a heatmap cell ``cell`` inches wide: ``aspect`` of its width, taller (up to
    square) where token labels one per row would otherwise be too close for 6 pt type, and at
    most ``pitch`` (the figure keeping to the page's height)."""
    return min(cell, max(cell * aspect, LABELLED_ROW_IN), pitch)


def cell_size(
    cell: float, pitch: float = math.inf, square: bool = False, numbers_from: float = math.inf
) -> tuple[float, float]:
    """Width and height in inches of a heatmap cell offered ``cell`` inches of width with token
    rows at most ``pitch`` apart. A table's cell (``square=False``) keeps its width and gives way
    in height (:func:`cell_height`); an n × n panel's (``square``) is :data:`SQUARE_ASPECT` as
    tall as wide (taller, up to 1 / :data:`FLATTEST_SQUARE`, where that labels every row) and,
    when ``pitch`` is shorter, narrower too, never flatter than :data:`FLATTEST_SQUARE` — unless a cell ``numbers_from`` inches wide writes its numbers and
    is no flatter than a table's (:data:`ASPECT`), with every row still labelled."""
    if not square:
        return cell, cell_height(cell, pitch)
    width = min(cell, pitch / FLATTEST_SQUARE)
    if width < numbers_from <= min(cell, pitch / ASPECT) and pitch >= LABELLED_ROW_IN:
        width = numbers_from
    return width, min(max(width * SQUARE_ASPECT, LABELLED_ROW_IN), width / FLATTEST_SQUARE, pitch)


def make_row(pieces: list[Piece], cell: float, pitch: float) -> list[Slot]:
    """The slots of ``pieces`` on one row: the first piece with token rows labels them."""
    first = next((index for index, piece in enumerate(pieces) if piece.token_rows), -1)
    return [piece.make(cell, index == first, pitch) for index, piece in enumerate(pieces)]


@dataclass
class TextLine:
    """Text centred on the page, its words wrapped onto more lines to fit the page width (each
    line of a mathtext line is wrapped at the ``parts`` it is given, joined by ``joiner``).

    One Text artist holds every line; its label (``get_label()``) is ``key``.
    """

    parts: list[str]
    size_pt: float
    key: str | None = None
    math: bool = False
    family: str = "sans-serif"
    joiner: str = " "
    options: dict = field(default_factory=dict)
    words: bool = True
    """Wrap between words (with ``joiner`` " "); ``False``: only between the parts."""
    tight: bool = False
    """Close under the line before it (:data:`TIGHT_GAP_IN`)."""
    paragraph: bool = False
    """A note: :data:`PARAGRAPH_GAP_IN` under a note before it."""

    def arrange(self, page: Page) -> list[list[Slot]]:
        weight = self.options.get("fontweight", "normal")
        room = (page.content_width - TEXT_PAD_IN) / TEXT_SLACK
        size = self.size_pt
        while True:
            lines = _wrap(self.parts, self.joiner, size, room, self.family, self.math, weight, self.words)
            widest = max(_measure(line, size, self.family, self.math, weight)[0] for line in lines)
            if widest <= room or size <= MIN_PT:
                break
            size = max(
                MIN_PT, size - 0.5
            )  # a word (or formula part) wider than the page: smaller type, down to the minimum
        return [[text_slot("\n".join(lines), size, key=self.key, math=self.math, family=self.family, **self.options)]]


Line = list | Flow | TextLine

TIGHT_GAP_IN = 0.025
"""Between the rows of a stack of steps (a ``tight`` line under the one before it), instead of the page's gap."""


PARAGRAPH_GAP_IN = 0.045
"""Between notes (and a legend) one under the other."""


class Row(list):
    """The slots of one row of the page, left to right; ``gap_above`` inches from the row above
    (``None``: the page's gap); ``paragraph``: a note's (or a legend's) row."""

    gap_above: float | None = None
    paragraph: bool = False


def paragraph_row(slots: list[Slot]) -> Row:
    """A row of a note or legend (:data:`PARAGRAPH_GAP_IN` under another one)."""
    row = Row(slots)
    row.paragraph = True
    return row


def _tightened(rows: list[list[Slot]], tight: bool, row_gap: float | None = None) -> list[list[Slot]]:
    """``rows`` of one line; a ``tight`` line's first row sits :data:`TIGHT_GAP_IN` under the row
    above, its other rows ``row_gap`` under each other."""
    rows = [Row(row) for row in rows]
    if tight and rows:
        rows[0].gap_above = TIGHT_GAP_IN
    for row in rows[1:]:
        row.gap_above = row_gap
    return rows


def text_slot(
    text: str, size_pt: float, key: str | None = None, math: bool = False, family: str = "sans-serif", **text_options
) -> Slot:
    """A slot just holding ``text`` (a title, an operator such as "+" or "÷ √d_k"), drawn on the
    figure itself; the Text's label (``get_label()``) is ``key``."""
    width, height = _measure(text, size_pt, family, math, text_options.get("fontweight", "normal"))

    def draw(figure: Figure, rect):
        x0, y0, w, h = rect
        if math:
            return math_patches(
                figure,
                (x0 + w / 2, y0 + h / 2),
                text,
                size_pt,
                family,
                key or "",
                text_options.get("color"),
                text_options.get("fontweight", "normal"),
            )
        return figure.text(
            x0 + w / 2,
            y0 + h / 2,
            text,
            ha="center",
            va="center",
            fontsize=size_pt,
            parse_math=math,
            family=list(font_families(family)),
            label=key or "",
            multialignment="center",
            linespacing=MATH_LINE_SPACING if math else LINE_SPACING,
            **text_options,
        )

    return Slot(width * TEXT_SLACK + TEXT_PAD_IN, height + 0.06, draw, key=key, axes=False)


def math_patches(
    figure: Figure,
    centre,
    text: str,
    size_pt: float,
    family: str,
    key: str,
    colour: str | None = None,
    weight: str = "normal",
) -> list:
    """``text`` (mathtext, lines split at "\\n") drawn as filled outlines centred on ``centre``
    (figure fractions): matplotlib parses a formula once for its outline, which PNG, SVG and PDF
    then share, where a Text is parsed again for each resolution. Each line is a PathPatch
    labelled ``key``; its ``formula`` and ``fontsize`` attributes hold the line's text and size;
    ``weight`` is the weight of its words (a bold title with a typeset name in it)."""
    from matplotlib import rcParams
    from matplotlib.cbook import is_math_text
    from matplotlib.font_manager import FontProperties
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path
    from matplotlib.transforms import Affine2D

    from blockviz.figures.labels import text_paths

    lines = text.split("\n")
    sizes = [text_size_in(line, size_pt, family, math=True, weight=weight) for line in lines]
    pitch = MATH_LINE_SPACING * size_pt / 72
    total = pitch * (len(lines) - 1) + max(height for _, height in sizes)
    width_in, height_in = figure.get_size_inches()
    x_in, top_in = centre[0] * width_in, centre[1] * height_in + total / 2
    scale = size_pt / MATH_PATH_PT
    patches = []
    for index, (line, (_line_width, _line_height)) in enumerate(zip(lines, sizes)):
        prop = FontProperties(family=list(font_families(family)), size=MATH_PATH_PT, weight=weight)
        path = Path(
            *text_paths().get_text_path(prop, line, ismath=is_math_text(line))
        )  # as measured: one parse, by this process's own TextToPath
        box = path.get_extents()
        middle_y = top_in - index * pitch - max(height for _, height in sizes) / 2
        transform = (
            Affine2D()
            .translate(-(box.x0 + box.x1) / 2, -(box.y0 + box.y1) / 2)
            .scale(scale / 72)
            .translate(x_in, middle_y)
            + figure.dpi_scale_trans
        )
        patch = PathPatch(
            path,
            transform=transform,
            facecolor=colour or rcParams["text.color"],
            edgecolor="none",
            linewidth=0,
            label=key,
        )
        patch.formula, patch.fontsize = line, size_pt
        figure.add_artist(patch)
        patches.append(patch)
    return patches


MATH_PATH_PT = 100.0
"""The size formulas' outlines are laid out at (matplotlib's TextToPath.FONT_SCALE), then scaled."""


def operator_piece(text: str, size_pt: float, math: bool = False, hug: bool = False) -> Piece:
    """An operator between two panels ("+", "=", "→", "÷√d_k"), kept with the panel after it;
    ``hug``: standing close to its operands (:data:`HUG_SHARE`)."""
    slot = text_slot(text, size_pt, math=math)
    slot.hug = hug
    return fixed_piece(slot, glue=True)


HUG_SHARE = 0.4
"""An operator's distance to its neighbours, as a share of the page's gap."""


def _gaps(row: list[Slot], gap: float) -> list[float]:
    """The distances between neighbouring slots of ``row``."""
    return [gap * HUG_SHARE if left.hug or right.hug else gap for left, right in zip(row, row[1:])]


def fixed_piece(slot: Slot, glue: bool = False) -> Piece:
    """A piece whose slot is the same whatever the cells."""
    return Piece(lambda cell, first, pitch: slot, columns=0.0, glue=glue)


def build_figure(lines: list[Line], page: Page) -> tuple[Figure, dict[str, Any]]:
    """A figure holding ``lines`` top to bottom, each row's slots left to right and centred, as
    wide as ``page`` (or, at natural size, as its widest row).

    Returns the figure and what each keyed slot's ``draw`` returned.
    """
    lines = [line for line in lines if line]
    gap = page.gap
    rows = _arrange(lines, page, math.inf, gap)
    if page.width is not None and page.max_height is not None and _height(rows, page) > page.max_height:
        rows = _shrink_to_height(lines, page, gap)
        if _height(rows, page) > page.max_height:  # too tall even with its rows closest: panels closer together
            compact = _shrink_to_height(lines, page, gap, compact=True)
            rows = compact if _height(compact, page) < _height(rows, page) else rows
    widths = [row_width([row], gap) for row in rows]
    figure_width = (
        max(widths) + 2 * page.margin if page.width is None else max(page.width, max(widths) + 2 * page.margin)
    )
    figure_height = _height(rows, page)
    figure = Figure(figsize=(figure_width, figure_height))
    results: dict[str, Any] = {}
    top = figure_height - page.margin
    for index, (row, width) in enumerate(zip(rows, widths)):
        if index:
            top -= _gap_above(row, gap)
        body = max(slot.height for slot in row)
        body_bottom = top - max(slot.top for slot in row) - body
        x = (figure_width - width) / 2
        for slot, after in zip(row, _gaps(row, gap) + [0.0]):
            y = body_bottom + (body - slot.height) / 2
            rect = (
                (x + slot.left) / figure_width,
                y / figure_height,
                slot.width / figure_width,
                slot.height / figure_height,
            )
            result = slot.draw(figure.add_axes(rect)) if slot.axes else slot.draw(figure, rect)
            if slot.key is not None:
                results[slot.key] = result
            x += slot.full_width + after
        top -= _row_height(row)
    return figure, results


def _arrange(
    lines: list[Line], page: Page, pitch: float, gap: float, wrap_for_numbers: bool = True, compact: bool = False
) -> list[list[Slot]]:
    arranged: list[list[list[Slot]]] = []
    for line in lines:
        if isinstance(line, Flow):
            arranged.append(
                _tightened(line.arrange(page, pitch, gap, wrap_for_numbers, compact), line.tight, line.row_gap)
            )
        elif isinstance(line, TextLine):
            rows = _tightened(line.arrange(page), line.tight)
            rows[0].paragraph = line.paragraph
            arranged.append(rows)
        else:
            arranged.append([line if isinstance(line, Row) else Row(line)])
    smallest: dict[str, float] = {}
    for line in lines:
        if isinstance(line, Flow) and line.share is not None:
            smallest[line.share] = min(smallest.get(line.share, math.inf), line.cell)
    for index, line in enumerate(lines):
        if isinstance(line, Flow) and line.share is not None and line.cell != smallest[line.share]:
            arranged[index] = _tightened(
                line.arrange_at(smallest[line.share], page, pitch, gap), line.tight, line.row_gap
            )
    rows = [row for line_rows in arranged for row in line_rows]
    for above, row in zip(rows, rows[1:]):
        if above.paragraph and row.paragraph:
            row.gap_above = PARAGRAPH_GAP_IN
    return rows


def _shrink_to_height(lines: list[Line], page: Page, gap: float, compact: bool = False) -> list[list[Slot]]:
    """The rows with token rows as far apart as keeps the figure within the page's height (the
    smallest figure if none does): a table's cells keep their width, their height gives way; an
    n × n panel's grow narrower too (:func:`cell_size`), so its panels may then share a row.

    Panels wrapped onto more rows to show their numbers make a figure taller; when that leaves
    token rows too close to label each one (:data:`LABELLED_ROW_IN`), the panels stay on one row
    instead if their rows are then further apart (colour alone, every token labelled)."""
    pitch, best = _tallest_pitch(lines, page, gap, wrap_for_numbers=True, compact=compact)
    if pitch < LABELLED_ROW_IN:
        unwrapped_pitch, unwrapped = _tallest_pitch(lines, page, gap, wrap_for_numbers=False, compact=compact)
        if unwrapped_pitch > pitch:
            return unwrapped
    return best


def _tallest_pitch(
    lines: list[Line], page: Page, gap: float, wrap_for_numbers: bool, compact: bool
) -> tuple[float, list[list[Slot]]]:
    """The largest distance between token rows (up to the page's largest cell) at which the figure
    keeps to the page's height, and its rows (the tiniest distance's if none does)."""
    low, high = TINIEST_CELL_IN, page.largest_cell
    best = _arrange(lines, page, low, gap, wrap_for_numbers, compact)
    if _height(best, page) > page.max_height:
        return low, best
    if _height(rows := _arrange(lines, page, LABELLED_ROW_IN, gap, wrap_for_numbers, compact), page) <= page.max_height:
        low, best = LABELLED_ROW_IN, rows  # every token labelled: search only further apart
    for _ in range(7):  # to within 1/128 of the range: under 0.003 in per row
        middle = (low + high) / 2
        rows = _arrange(lines, page, middle, gap, wrap_for_numbers, compact)
        if _height(rows, page) <= page.max_height:
            low, best = middle, rows
        else:
            high = middle
    return low, best


def piece_groups(pieces: list[Piece]) -> list[list[Piece]]:
    """``pieces`` cut after each piece without ``glue``: the runs that must stay on one row."""
    groups, current = [], []
    for piece in pieces:
        current.append(piece)
        if not piece.glue:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _largest_cell(width_at: Callable[[float], float], room: float, cap: float) -> float:
    """The largest cell up to ``cap`` at which ``width_at(cell)`` fits ``room`` (widths grow with cells)."""
    high_width = width_at(cap)
    if high_width <= room:
        return cap  # fits as it is
    low_width = width_at(TINIEST_CELL_IN)
    if low_width > room:
        return cap  # no cell size makes it fit
    low, high = TINIEST_CELL_IN, cap
    side = 0
    for _ in range(14):  # false position (Illinois): widths grow nearly linearly with the cell, so a few steps suffice
        if high - low <= CELL_TOLERANCE_IN:
            break
        guess = low + (room - low_width) * (high - low) / (high_width - low_width)
        guess = min(max(guess, low + CELL_TOLERANCE_IN / 4), high - CELL_TOLERANCE_IN / 4)
        width = width_at(guess)
        if width <= room:
            low, low_width = guess, width
            high_width = room + (high_width - room) / 2 if side == 1 else high_width
            side = 1
        else:
            high, high_width = guess, width
            low_width = room - (room - low_width) / 2 if side == -1 else low_width
            side = -1
    return low


CELL_TOLERANCE_IN = 1e-4
"""Cell sizes are found to within this (a 64-column panel's width to within 0.01 in)."""


def row_width(rows: list[list[Slot]], gap: float) -> float:
    """The width of the widest of ``rows`` in inches: its slots and the ``gap`` between them."""
    return max(sum(slot.full_width for slot in row) + sum(_gaps(row, gap)) for row in rows)


def _row_height(row: list[Slot]) -> float:
    return max(slot.top for slot in row) + max(slot.height for slot in row) + max(slot.bottom for slot in row)


def _gap_above(row: list[Slot], gap: float) -> float:
    gap_above = getattr(row, "gap_above", None)
    return gap if gap_above is None else gap_above


def _height(rows: list[list[Slot]], page: Page) -> float:
    return sum(_row_height(row) for row in rows) + sum(_gap_above(row, page.gap) for row in rows[1:]) + 2 * page.margin


def _measure(text: str, size_pt: float, family: str, math: bool, weight: str) -> tuple[float, float]:
    if math and "\n" in text:
        sizes = [text_size_in(line, size_pt, family, math=True, weight=weight) for line in text.split("\n")]
        return max(width for width, _ in sizes), MATH_LINE_SPACING * size_pt / 72 * (len(sizes) - 1) + max(
            height for _, height in sizes
        )
    return text_size_in(text, size_pt, family, math=math, weight=weight)


def _words(text: str, math: bool) -> list[str]:
    """The words of ``text``; in mathtext, a $…$ group stays one word; a word of one or two
    characters stays with the word before it (no line starts with "0" of "head 0")."""
    words: list[str] = []
    for word in text.split(" "):
        if words and ((math and words[-1].count("$") % 2) or len(word) <= 2):
            words[-1] += " " + word
        else:
            words.append(word)
    return words


def _wrap(
    parts: list[str], joiner: str, size: float, room: float, family: str, math: bool, weight: str, words: bool = True
) -> list[str]:
    """``parts`` joined by ``joiner`` into as few lines as fit ``room`` inches (greedy)."""
    if joiner == " " and words:
        parts = [word for part in parts for word in _words(part, math)]
    lines: list[str] = []
    widths: list[float] = []
    joiner_width = (
        text_size_in(joiner.replace(" ", "\u00a0"), size, family, weight=weight)[0]
        if joiner.strip()
        else text_size_in("\u00a0" * len(joiner), size, family)[0]
    )
    for part in parts:
        width = _measure(part, size, family, math, weight)[0]
        if lines and widths[-1] + joiner_width + width <= room:  # widths of the parts add up (each measured once)
            lines[-1] += joiner + part
            widths[-1] += joiner_width + width
        else:
            lines.append(part)
            widths.append(width)
    return lines
