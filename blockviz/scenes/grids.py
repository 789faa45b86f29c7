"""Grids of numbers from the record, and the one highlight that moves over them.

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
import weakref
from collections.abc import Sequence

from manim import DOWN, RIGHT, Animation, Mobject, Rectangle, RoundedRectangle, Text, VGroup

from blockviz import style
from blockviz.scale_limits import shown_limit
from blockviz.scenes.copies import copy_of
from blockviz.scenes.layout import fit_width
from blockviz.scenes.look import CELL_HEIGHT, CELL_WIDTH, HEADER_SIZE, MAX_SLOTS, NUMBER_SIZE, Look
from blockviz.scenes.shown_scales import family_scale, shared_limit
from blockviz.scenes.text import number, shortened, text
from blockviz.scenes.token_axis import KeptName, visible_slots

ELLIPSIS_ACROSS = "\u22ef"  # ⋯ stands for elided columns
ELLIPSIS_DOWN = "\u22ee"  # ⋮ stands for elided rows
ELLIPSIS_SHARE = 0.55
"""The width of a ⋯ column as a share of a cell's."""
ELLIPSIS_ROW_SHARE = 0.72
"""The height of a ⋮ row as a share of a cell's: room for the ⋮ and a highlight's margin around its neighbours."""
ELLIPSIS_MARGIN = 0.05
"""Room kept on each side of a ⋮ or ⋯ mark in its slot (more than a highlight's margin)."""
ROW_HEADER_WIDTH = 1.7
"""The widest a row header may be (longer names are cut with "…")."""
HEADER_GAP = 0.08
"""The least room between a kept header (:class:`~blockviz.scenes.token_axis.KeptName`) and its neighbours' along an axis."""
CLIPPED_EDGE = 3.0
"""Stroke width of the edge marking a cell whose value lies beyond its grid's scale."""
HEADER_ROOM = 0.96
"""The share of a cell's width a column header may take (a kept one more, beside room left for its neighbours)."""
CHIP_PADDING = 0.05
CHIP_FILL = 0.1
"""Opacity of a quoted token's chip: faint enough that the query's blue keeps 4.5:1 on it (4.59:1 on the dark page)."""


def header_widths(
    centres: Sequence[float], natural: Sequence[float], kept: Sequence[bool], room: float, gap: float = HEADER_GAP
) -> list[float]:
    """The width each header of one axis may take, centred on ``centres`` (its slot's centre along
    the axis): a kept header its whole ``natural`` width; any other at most ``room`` and, beside a
    kept one, only what leaves ``gap`` clear of it (0 when nothing is left).

    >>> header_widths([0, 1, 2], [1.4, 0.5, 2.0], [False, True, False], room=0.9)
    [0.9, 0.5, 0.9]
    >>> [round(w, 2) for w in header_widths([0, 1, 2], [0.5, 1.4, 2.0], [False, True, False], room=0.9)]
    [0.44, 1.4, 0.44]
    """
    widths = []
    for k, (centre, width) in enumerate(zip(centres, natural)):
        if kept[k]:
            widths.append(float(width))
            continue
        half = room / 2
        for j in (k - 1, k + 1):
            if 0 <= j < len(centres) and kept[j]:
                half = min(half, abs(centre - centres[j]) - natural[j] / 2 - gap)
        widths.append(max(0.0, 2 * half))
    return widths


def kept_pitch(natural: Sequence[float], kept: Sequence[bool], gap: float = HEADER_GAP) -> float:
    """The least distance between neighbouring slot centres at which no two kept headers side by
    side (``natural`` widths, in slot order) touch: ``max((a + b) / 2 + gap)`` over kept
    neighbours, 0 when none are.

    >>> kept_pitch([1.0, 1.2, 0.3], [True, True, False])
    1.18
    """
    pairs = [(a, b) for (a, ka), (b, kb) in zip(zip(natural, kept), list(zip(natural, kept))[1:]) if ka and kb]
    return round(max(((a + b) / 2 + gap for a, b in pairs), default=0.0), 10)


def is_quoted(name: str) -> bool:
    """Whether a header is a quoted token (:func:`~blockviz.scenes.token_axis.token_face`: “.”), drawn on a chip."""
    return len(name) >= 3 and name[0] == "\u201c" and name[-1] == "\u201d"


def cell_width_for(values, decimals: int = 2, font_size: float = NUMBER_SIZE) -> float:
    """The cell width that holds the longest of ``values`` (rows of floats, or a tensor) written
    with ``decimals`` at ``font_size``, with a margin (0 for no finite value)."""
    finite = [abs(value) for row in as_rows(values) for value in row if math.isfinite(value)] if len(values) else []
    if not finite:
        return 0.0
    return (
        number(-max(finite), font_size, decimals=decimals, source=("width",)).width / 0.87
    )  # 6.5 % of the cell clear on each side: neighbours never read as one number


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
        Half-width of the signed colour scale, for a scale several grids of one equation share;
        by default chosen from the cells the grid draws (:func:`~blockviz.scale_limits.shown_limit`:
        their largest |value|, blocked cells left out, robust to one outlier), so the largest
        shown value always reaches the scale's end. Cells beyond it are edged (clipped), and so
        is a value the record's scale of its family marks as an outlier
        (:func:`~blockviz.scenes.shown_scales.family_scale`), in every grid that shows it.
    record
        The record the ``source`` names, whose family scales say which values are outliers; by
        default the record of the scene being built (none outside a scene).
    source
        ``(tensor name, *leading index)`` recorded on each label, e.g. ``("scores", head)``;
        label ``(i, j)`` gets ``source + (i, j)``. Or a function ``(i, j) → (name, *index)``
        for a grid that shows a tensor transposed or sliced.
    show_numbers
        ``False`` draws empty cells; put numbers in later with :meth:`number_at`.
    blocked
        Optional ``(rows, columns)`` booleans: cells a mask blocked (their weight is exactly
        0) are drawn grey and labelled without decimals ("0"). A −∞ value is always blocked.
    fit_numbers
        Widen the cells to hold the longest number (``False`` for a pattern drawn without numbers).
    row_slots, column_slots
        The slots to draw (:func:`~blockviz.scenes.token_axis.visible_slots`' form), instead of eliding around the focus:
        token axes pass the scene's choice (the focus, its top keys, the first token).

    Headers of one axis share one size: a name too long for its place is cut with "…"
    (:func:`~blockviz.scenes.text.shortened`), never shrunk on its own; a quoted token (“.”)
    sits on a faint chip, so punctuation is never a lone dot.
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
        row_slots: Sequence[int | None] | None = None,
        column_slots: Sequence[int | None] | None = None,
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
        fit_numbers: bool = True,
        record=None,
    ) -> None:
        super().__init__()
        self.values = as_rows(values)
        self.record = record
        self.blocked = (
            [[bool(flag) for flag in row] for row in (blocked.tolist() if hasattr(blocked, "tolist") else blocked)]
            if blocked is not None
            else None
        )
        self.look = look
        self.color_rule = colors
        self.source = source
        self.decimals = decimals
        self.font_size = font_size
        self.cell_width = cell_width
        self.cell_height = cell_height
        n_rows, n_columns = len(self.values), len(self.values[0])
        if fit_numbers:  # never a number shrunk to fit its cell
            cell_width = max(cell_width, cell_width_for(self.values, decimals, font_size))
        self.cell_width = cell_width
        self.row_slots = list(row_slots) if row_slots is not None else visible_slots(n_rows, row_focus, max_rows)
        self.column_slots = (
            list(column_slots) if column_slots is not None else visible_slots(n_columns, column_focus, max_columns)
        )
        self.scale_clipped = False
        self.scale_request: int | None = None
        if colors == "signed" and color_limit is None:
            color_limit = self._shown_scale()
        self.color_limit = color_limit
        if column_names is not None:  # two kept names side by side: the cells widen until neither is cut
            column_names = self._column_forms(column_names, header_size)
            self.cell_width = max(self.cell_width, self._kept_cell_width(column_names, header_size))
        self.cells: dict[tuple[int, int], Rectangle] = {}
        self.labels: dict[tuple[int, int], Text] = {}
        self.row_headers: dict[int, Text] = {}
        self.column_headers: dict[int, Text] = {}
        self.cell_group, self.label_group, self.header_group, self.ellipsis_group = (
            VGroup(),
            VGroup(),
            VGroup(),
            VGroup(),
        )
        self._build_cells(filled)
        if show_numbers:
            for i, j in self.cells:
                self.labels[i, j] = self.number_at(i, j)
                self.label_group.add(self.labels[i, j])
        self._build_headers(
            row_names, column_names, header_size, row_header_color or look.text, column_header_color or look.text
        )
        self.add(self.cell_group, self.label_group, self.header_group, self.ellipsis_group)

    def body(self) -> VGroup:
        """The cells with their ⋯ and ⋮: what a name under (or beside) the grid must clear."""
        return VGroup(self.cell_group, self.ellipsis_group)

    # -- building ---------------------------------------------------------------------------
    def _slot_center(self, row_slot: int, column_slot: int):
        if not hasattr(self, "_mark_sizes"):
            self._mark_sizes = (
                text(ELLIPSIS_ACROSS, self.font_size, self.look.muted).width,
                text(ELLIPSIS_DOWN, self.font_size, self.look.muted).height,
            )
        across, down = self._mark_sizes
        return (
            RIGHT * self._offsets(self.column_slots, self.cell_width, ELLIPSIS_SHARE, across)[column_slot]
            + DOWN * self._offsets(self.row_slots, self.cell_height, ELLIPSIS_ROW_SHARE, down)[row_slot]
        )

    @staticmethod
    def _offsets(slots, pitch: float, share: float, mark: float = 0.0) -> list[float]:
        """Centre of each slot along an axis: a ⋯ slot takes ``share`` of a cell, and at least the
        ``mark``'s size (⋮'s height, ⋯'s width) plus a highlight's margin on each side of it, so
        a box around a neighbouring row or column never cuts the mark."""
        sizes = [max(pitch * share, mark + 2 * ELLIPSIS_MARGIN) if slot is None else pitch for slot in slots]
        return [sum(sizes[:k]) + sizes[k] / 2 for k in range(len(sizes))]

    def _build_cells(self, filled: bool) -> None:
        blank = Rectangle(  # copied: a copy costs a tenth of a new one
            width=self.cell_width,
            height=self.cell_height,
            stroke_color=self.look.cell_edge,
            stroke_width=self.look.cell_edge_width,
        )
        for r, i in enumerate(self.row_slots):
            for c, j in enumerate(self.column_slots):
                if i is None or j is None:
                    mark = ELLIPSIS_DOWN if i is None else ELLIPSIS_ACROSS
                    if i is None and j is None:
                        mark = "\u22f1"  # ⋱
                    self.ellipsis_group.add(
                        text(mark, self.font_size, self.look.muted).move_to(self._slot_center(r, c))
                    )
                    continue
                cell = copy_of(blank)
                cell.set_fill(
                    self.color_of(self.values[i][j], self.is_blocked(i, j)) if filled else self.look.background,
                    opacity=1,
                )
                if filled and self.is_clipped(i, j) and not self.is_blocked(i, j):
                    cell.set_stroke(
                        self.look.text, width=CLIPPED_EDGE
                    )  # beyond the scale: its colour is the scale's end
                cell.move_to(self._slot_center(r, c))
                cell.grid_of = weakref.ref(self)  # whose scale its colour is on (blockviz.scenes.colour_bar)
                self.cells[i, j] = cell
                self.cell_group.add(cell)

    def _shown_scale(self) -> float:
        """The colour scale chosen from the cells this grid draws, their blocked cells left out
        (:func:`~blockviz.scale_limits.shown_limit`), or one the scene already gave its family
        (:mod:`blockviz.scenes.shown_scales`); notes whether it clips some (:attr:`scale_clipped`)
        and the number of its ask to the scene's pool (``scale_request``).
        Values the record's scale of their family clips are clipped here too (:func:`family_scale`)."""
        keys = [(i, j) for i in self.shown_rows() for j in self.shown_columns() if not self.is_blocked(i, j)]
        source = None
        if keys and self.source is not None:
            source = self.source(*keys[0]) if callable(self.source) else self.source
        values = [self.values[i][j] for i, j in keys]
        outliers = family_scale(source, self.record)
        scale = shown_limit(values, outliers)
        limit, self.scale_request = shared_limit(source, values, outliers, scale)
        self.scale_clipped = scale.largest > limit
        return limit

    def take_values(self, values, source) -> None:
        """Show ``values`` (the grid's shape; e.g. the scaled scores where the scores were) from now
        on, their labels' sources ``source``, coloured on the scale chosen from them as a new
        grid's would be (:meth:`_shown_scale`): cells recoloured with :meth:`color_of` after this
        call take it, and so does the colour bar."""
        self.values = as_rows(values)
        self.source = source
        self.color_limit = self._shown_scale()

    def is_clipped(self, i: int, j: int) -> bool:
        """Whether cell ``(i, j)`` holds a value beyond this grid's signed scale (drawn at its end colour, edged)."""
        value = self.values[i][j]
        return self.color_rule == "signed" and math.isfinite(value) and abs(value) > self.color_limit

    def _column_forms(self, column_names: Sequence[str], size: float) -> list[str]:
        """``column_names`` as the column headers draw them: a kept name wider than its column
        (:data:`HEADER_ROOM` of a cell) by its short form (:attr:`~blockviz.scenes.token_axis.KeptName.short`,
        kept too), so its neighbours keep their headers."""
        room = self.cell_width * HEADER_ROOM
        return [
            KeptName(name.short)
            if isinstance(name, KeptName) and name.short != name and self._header_width(name, size) > room
            else name
            for name in column_names
        ]

    def _kept_cell_width(self, column_names, size: float) -> float:
        """The cell width at which kept column headers (:class:`~blockviz.scenes.token_axis.KeptName`) side by side all fit
        (:func:`kept_pitch`; 0 when none are neighbours)."""
        slots = [j for j in self.column_slots if j is not None]
        runs = [(a, b) for a, b in zip(self.column_slots, self.column_slots[1:]) if a is not None and b is not None]
        if not any(isinstance(column_names[a], KeptName) and isinstance(column_names[b], KeptName) for a, b in runs):
            return 0.0
        natural = {j: self._header_width(column_names[j], size) for j in slots}
        return max(
            kept_pitch([natural[a], natural[b]], [isinstance(column_names[x], KeptName) for x in (a, b)])
            for a, b in runs
        )

    def _header_width(self, name: str, size: float) -> float:
        """How wide header ``name`` is drawn whole (its chip's padding included)."""
        return text(name, size).width + (2 * CHIP_PADDING if is_quoted(name) else 0)

    def _build_headers(self, row_names, column_names, size, row_color, column_color) -> None:
        left_edge = self.cell_group.get_left()[0]
        top_edge = self.cell_group.get_top()[1]
        if row_names is not None:
            for r, i in enumerate(self.row_slots):
                name = ELLIPSIS_DOWN if i is None else row_names[i]
                header = self._header(
                    name,
                    size,
                    self.look.muted if i is None else row_color,
                    max(ROW_HEADER_WIDTH, self._header_width(name, size))
                    if isinstance(name, KeptName)
                    else ROW_HEADER_WIDTH,
                )
                header.move_to(self._slot_center(r, 0)).set_x(left_edge - 0.14 - header.width / 2)
                self.header_group.add(header)
                if i is not None:
                    self.row_headers[i] = header
        if column_names is not None:
            names = [ELLIPSIS_ACROSS if j is None else column_names[j] for j in self.column_slots]
            kept = [j is None or isinstance(name, KeptName) for j, name in zip(self.column_slots, names)]
            widths = header_widths(
                [self._slot_center(0, c)[0] for c in range(len(names))],
                [self._header_width(name, size) for name in names],
                kept,
                self.cell_width * HEADER_ROOM,
            )
            for c, j in enumerate(self.column_slots):
                header = self._header(
                    names[c],
                    size,
                    self.look.muted if j is None else column_color,
                    widths[c] + (0.01 if kept[c] else 0),
                    fewest=0,
                )
                header.move_to(self._slot_center(0, c)).set_y(top_edge + 0.12 + size / 48 * 0.35)
                self.header_group.add(header)
                if j is not None:
                    self.column_headers[j] = header

    def _header(self, name: str, size: float, color: str, width: float, fewest: int = 1) -> Mobject:
        label = shortened(name, width - (2 * CHIP_PADDING if is_quoted(name) else 0), size, color, fewest=fewest)
        if fewest == 0 and label.width > width + 0.01:  # not even "…" fits beside a kept name: the header gives way
            label.set_fill(opacity=0)
        if not is_quoted(name):
            return label
        chip = RoundedRectangle(
            corner_radius=0.05,
            width=label.width + 2 * CHIP_PADDING,
            height=label.height + 2 * CHIP_PADDING,
            stroke_color=self.look.grid,
            stroke_width=1,
            fill_color=self.look.grid,
            fill_opacity=CHIP_FILL,
        )
        chip.move_to(label)
        header = VGroup(chip, label)
        header.shown = label.shown
        return header

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
        self.weights_shown = True  # its colour bar is the weights' (blockviz.scenes.colour_bar)
        return style.hex_color(style.weight_color(value))

    def number_at(
        self,
        i: int,
        j: int,
        value: float | None = None,
        source: tuple | None = None,
        decimals: int | None = None,
        fill: str | None = None,
    ) -> Text:
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

    def arrival_parts(self) -> list[list[Mobject]]:
        """The grid's drawn parts in the order it arrives or leaves (a
        :class:`~blockviz.scenes.fades.Reveal` or :class:`~blockviz.scenes.fades.Conceal` of it
        brings them one after another): cell after cell, row by row, each cell with its number,
        a row's header with its first cell and a column's header with its first row's cell — a
        whole row at once was up to 9 % of a frame on three tokens (issue 36)."""
        rows, columns = self.shown_rows(), self.shown_columns()
        parts = []
        for i in rows:
            for j in columns:
                headers = [self.row_headers.get(i)] if j == columns[0] else []
                headers += [self.column_headers.get(j)] if i == rows[0] else []
                parts.append(self._part([(i, j)], *headers))
        return parts

    def _part(self, keys: list[tuple[int, int]], *headers: Mobject | None) -> list[Mobject]:
        part = [self.cells[key] for key in keys if key in self.cells]
        part += [self.labels[key] for key in keys if key in self.labels]
        return part + [header for header in headers if header is not None]

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
        """An animation taking the highlight to ``target``: it fades where it is, then around
        ``target`` (sliding, its edges would cut the texts between)."""
        return HighlightJump(self, target)


class HighlightJump(Animation):
    """A :class:`Highlight` fading out around what it frames, then in around ``target`` (its
    size and place taken at the start): at no moment does an edge cross a text."""

    def __init__(self, highlight: Highlight, target: Mobject, **kwargs) -> None:
        super().__init__(highlight, **kwargs)
        self.goal = (target.width + 2 * highlight.buff, target.height + 2 * highlight.buff, target.get_center())

    def begin(self) -> None:
        light = self.mobject
        self.start = (light.width, light.height, light.get_center())
        self.opacity = light.get_stroke_opacity()
        super().begin()

    def interpolate_mobject(self, alpha: float) -> None:
        done = self.rate_func(alpha)
        width, height, centre = self.start if done < 0.5 else self.goal
        light = self.mobject
        light.stretch_to_fit_width(width).stretch_to_fit_height(height).move_to(centre)
        light.set_stroke(opacity=self.opacity * abs(1 - 2 * done))


__all__ = [
    "NumberGrid",
    "Highlight",
    "HighlightJump",
    "header_widths",
    "kept_pitch",
    "as_rows",
    "cell_width_for",
    "is_quoted",
    "ELLIPSIS_ACROSS",
    "ELLIPSIS_DOWN",
]
