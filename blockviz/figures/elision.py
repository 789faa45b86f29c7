"""Wide tensors drawn legibly: a few of their columns, the rest elided.

A trained model's rows are wide (d_model 384–576, d_ff 1536). A panel then shows its first and
last columns and those of largest magnitude, in their order, with a "⋯" column wherever columns
are left out, and the figure says how many are hidden. Panels that are added, multiplied or
gated together share one choice of columns (:func:`choose_columns` over all of them), so that
every shown cell's equation can still be read off the figure. Numbers at larger scales get
fewer decimals (:func:`fitting_decimals`) so that they fit their cells.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from blockviz.figures.heatmap import ColourScale
from blockviz.figures.labels import widest_in
from blockviz.figures.layout import LABELLED_ROW_IN, Flow, make_row, piece_groups, row_width
from blockviz.figures.page import Page
from blockviz.figures.panels import MatrixSpec, matrix_piece, matrix_slot, readable_cell
from blockviz.style import Theme, format_number

GAP = "\u22ef"
"""What a hidden run of columns reads: ⋯ (midline horizontal ellipsis)."""
MAX_COLUMNS = 12
"""Panels up to this many columns are drawn whole."""
EDGE_COLUMNS = 1
"""Columns kept at each end of an elided panel (of token rows: several panels share a page row)."""
LARGEST_COLUMNS = 2
"""Columns of largest magnitude kept besides the edges."""
ROW_EDGE_COLUMNS, ROW_LARGEST_COLUMNS = 2, 6
"""The same for a figure of single rows (one token's row, stacked: LayerNorm, residual stream)."""


@dataclass(frozen=True)
class Columns:
    """Which of ``total`` columns are shown (``shown``, sorted original indices)."""

    shown: tuple[int, ...]
    total: int
    largest: tuple[int, ...] = ()
    """The shown columns chosen for their magnitude (not at an edge)."""
    edges: int = 0
    """Columns shown at each end."""

    @property
    def hidden(self) -> int:
        return self.total - len(self.shown)

    @property
    def layout(self) -> list[int | None]:
        """The drawn columns left to right: an original index, or ``None`` for a ⋯ column."""
        drawn: list[int | None] = []
        for index in self.shown:
            if drawn and drawn[-1] is not None and index != drawn[-1] + 1:
                drawn.append(None)
            drawn.append(index)
        return drawn

    @property
    def gaps(self) -> list[int]:
        """Drawn positions of the ⋯ columns."""
        return [position for position, index in enumerate(self.layout) if index is None]

    def take(self, values) -> np.ndarray:
        """``values`` ``(rows, total)`` as drawn ``(rows, len(layout))``: ⋯ columns hold 0."""
        values = np.asarray(values, dtype=float)
        out = np.zeros(values.shape[:-1] + (len(self.layout),))
        for position, index in enumerate(self.layout):
            if index is not None:
                out[..., position] = values[..., index]
        return out

    def labels(self, labels: list[str], gap: str = GAP) -> list[str]:
        return [gap if index is None else labels[index] for index in self.layout]


def all_columns(total: int) -> Columns:
    return Columns(tuple(range(total)), total)


def choose_columns(
    arrays, total: int, max_columns: int = MAX_COLUMNS, edges: int = EDGE_COLUMNS, largest: int = LARGEST_COLUMNS
) -> Columns:
    """The columns shown of panels ``arrays`` (each ``(rows, total)``) drawn side by side: all of
    them up to ``max_columns``; otherwise the first and last ``edges`` and the ``largest``
    columns of largest |value| over every row of every array."""
    if total <= max_columns:
        return all_columns(total)
    kept = set(range(edges)) | set(range(total - edges, total))
    magnitude = np.zeros(total)
    for values in arrays:
        values = np.abs(np.asarray(values, dtype=float).reshape(-1, total))
        magnitude = np.maximum(magnitude, np.where(np.isfinite(values), values, 0.0).max(axis=0))
    ranked = [int(index) for index in np.argsort(-magnitude, kind="stable") if int(index) not in kept][:largest]
    return Columns(tuple(sorted(kept | set(ranked))), total, tuple(sorted(ranked)), edges)


def fitting_decimals(limit: float, decimals: int = 2) -> int:
    """Decimals of a panel whose numbers reach ``limit``: ``decimals`` under 10, one fewer under
    100, none from 100 (``164.3`` reads "164", ``22543.1`` "22543"), so every number fits a cell
    of a few characters."""
    if limit >= 100:
        return 0
    if limit >= 10:
        return min(decimals, 1)
    return decimals


def cell_text(value: float, decimals: int = 2) -> str:
    """A cell's number written to fit its cell: :func:`fitting_decimals` of its own size
    (``0.12``, ``−35.7``, ``164``, ``22543``)."""
    return format_number(value, fitting_decimals(abs(value), decimals))


@dataclass(frozen=True, eq=False)
class FittedSpec(MatrixSpec):
    """A :class:`MatrixSpec` whose cells read :func:`cell_text` (measured so)."""

    def widest_number(self, decimals: int) -> float:
        if decimals not in self.numbers_width:
            texts = {cell_text(float(value), decimals) for value in np.unique(self.array)}
            texts.add(format_number(-0.0001 - 10**-decimals, decimals))
            self.numbers_width[decimals] = widest_in(texts, 10.0)
        return self.numbers_width[decimals]


AXIS_WORDS = {"d_model": "residual-stream", "d_head": "head", "d_ff": "hidden-layer"}
"""How a hidden-columns note names each axis (its code name → words a reader reads)."""


def hidden_note(columns: list[tuple[Columns, str]]) -> str | None:
    """One line on what is hidden: "380 of 384 residual-stream columns, 1532 of 1536 hidden-layer columns hidden
    (⋯); shown: the first and last and the 2 of largest |value|" — ``None`` when nothing is."""
    parts: list[str] = []
    shown: list[str] = []
    for chosen, what in columns:
        if chosen.hidden:
            part = f"{chosen.hidden} of {chosen.total} {AXIS_WORDS.get(what, what)} columns"
            if part not in parts:
                parts.append(part)
            rule = f"the first and last {chosen.edges}" if chosen.edges > 1 else "the first and last"
            if chosen.largest:
                rule += f" and the {len(chosen.largest)} of largest |value|"
            if rule not in shown:
                shown.append(rule)
    if not parts:
        return None
    return f"{', '.join(parts)} hidden ({GAP}); shown: {' or '.join(shown)}"


def elided_piece(
    values,
    columns: Columns,
    row_labels,
    col_labels: list[str],
    scale: ColourScale,
    theme: Theme,
    page: Page,
    key: str,
    decimals: int = 2,
    **spec_options,
):
    """A matrix panel of ``values`` ``(rows, columns.total)`` showing ``columns`` only (its ⋯
    columns drawn blank, each cell reading ⋯), as a piece of a :class:`~blockviz.figures.layout.Flow`.
    Its cells read as the full matrix's: ``key:cell`` texts row by row over the drawn columns."""
    spec = FittedSpec(
        columns.take(values), row_labels, columns.labels(col_labels) if col_labels else [], **spec_options
    )
    piece = matrix_piece(spec, scale, theme, page, key, decimals)
    readable = readable_cell(spec.widest_number(decimals), page)
    gaps = columns.gaps
    make = piece.make
    wrapped: dict[int, object] = {}

    def make_elided(cell: float, first: bool, pitch: float):
        slot = make(cell, first, pitch)
        if id(slot) not in wrapped:
            wrapped[id(slot)] = (
                slot,
                dataclasses.replace(slot, draw=_drawing_gaps(slot.draw, spec.array, gaps, theme, key, decimals)),
            )
        return wrapped[id(slot)][1]

    elided = dataclasses.replace(piece, make=make_elided)
    elided.readable = readable  # the smallest cell whose numbers are written: see numbers_flow
    return elided


ROW_GAP = "\u22ee"
"""What a hidden run of rows reads: ⋮ (vertical ellipsis); ⋱ where it crosses hidden columns."""
CROSSED_GAP = "\u22f1"


def elided_matrix_piece(
    values,
    rows: Columns,
    columns: Columns,
    row_labels: list[str],
    col_labels: list[str],
    scale: ColourScale,
    theme: Theme,
    page: Page,
    key: str,
    decimals: int = 2,
    **spec_options,
):
    """A matrix of its own rows (a weight matrix such as W_O, ``(rows.total, columns.total)``)
    showing ``rows`` and ``columns`` only: a ⋮ row wherever rows are left out, a ⋯ column wherever
    columns are, each drawn blank; its cells read as the full matrix's (``key:cell`` texts row by
    row over the drawn rows and columns)."""
    values = np.asarray(values, dtype=float)
    drawn = columns.take(rows.take(values.T).T)
    spec = FittedSpec(
        drawn, rows.labels(row_labels, ROW_GAP), columns.labels(col_labels), token_rows=False, **spec_options
    )
    piece = matrix_piece(spec, scale, theme, page, key, decimals)
    readable = readable_cell(spec.widest_number(decimals), page)
    made: dict[tuple, object] = {}

    def make_elided(cell: float, first: bool, pitch: float):
        cell, pitch = (
            max(cell, readable),
            max(pitch, LABELLED_ROW_IN),
        )  # its rows as close as the token panels' when the page is short, but still numbered
        if (cell, pitch) not in made:
            slot = matrix_slot(spec, scale, theme, page, cell, key, decimals, pitch=pitch)
            made[cell, pitch] = dataclasses.replace(
                slot, draw=_drawing_gaps(slot.draw, spec.array, columns.gaps, theme, key, decimals, row_gaps=rows.gaps)
            )
        return made[cell, pitch]

    elided = dataclasses.replace(piece, make=make_elided)
    elided.readable = readable
    return elided


def numbers_flow(pieces: list, rows: int, page: Page) -> list:
    """The lines of :class:`~blockviz.figures.layout.Flow` s holding ``pieces``, their cells no
    larger than their numbers need, packed in order as many to a line as fit the page: wide
    panels then stand two to a line with their numbers, not one to a line at the largest cells
    (the figure then too tall for its numbers) nor all on one line too small for them."""
    readable = [piece.readable for piece in pieces if hasattr(piece, "readable")]
    if not readable:
        return [Flow(pieces, rows=rows)]
    cap = min(page.largest_cell, max(readable) * 1.03)
    if page.width is None:
        return [Flow(pieces, rows=rows, largest_cell=cap)]
    lines: list[list] = []
    for group in piece_groups(pieces):
        if (
            lines and row_width([make_row(lines[-1] + group, max(readable), math.inf)], page.gap) <= page.content_width
        ):  # the layout shrinks cells to it
            lines[-1] += group
        else:
            lines.append(list(group))
    return [Flow(line, rows=rows, largest_cell=cap) for line in lines]


def fitted_piece(spec: MatrixSpec, scale: ColourScale, theme: Theme, page: Page, key: str, decimals: int = 2):
    """``spec`` drawn whole, each number written to fit its cell (:func:`cell_text`); blocked
    cells read as ever."""
    fields = {field.name: getattr(spec, field.name) for field in dataclasses.fields(MatrixSpec)}
    fitted = FittedSpec(**fields)
    piece = matrix_piece(fitted, scale, theme, page, key, decimals)
    make = piece.make
    blocked = np.asarray(spec.blocked, dtype=bool) if spec.blocked is not None else None
    wrapped: dict[int, object] = {}

    def make_fitted(cell: float, first: bool, pitch: float):
        slot = make(cell, first, pitch)
        if id(slot) not in wrapped:
            wrapped[id(slot)] = (
                slot,
                dataclasses.replace(
                    slot, draw=_drawing_gaps(slot.draw, fitted.array, [], theme, key, decimals, blocked)
                ),
            )
        return wrapped[id(slot)][1]

    return dataclasses.replace(piece, make=make_fitted)


def _drawing_gaps(
    draw,
    values: np.ndarray,
    gaps: list[int],
    theme: Theme,
    key: str,
    decimals: int,
    blocked=None,
    row_gaps: list[int] = (),
):
    from matplotlib.patches import Rectangle

    rows, cols = values.shape
    skip = (np.isneginf(values) | (blocked if blocked is not None else False)).ravel()

    def draw_with_gaps(ax):
        panel = draw(ax)
        for text, value, blocked_cell in zip(panel.texts, values.ravel(), skip):
            if not blocked_cell:
                text.set_text(cell_text(float(value), decimals))
        for gap in row_gaps:
            ax.add_patch(
                Rectangle((-0.5, gap - 0.5), cols, 1.0, facecolor=theme.background, edgecolor="none", zorder=2)
            )
            if panel.texts:
                for col in range(cols):
                    text = panel.texts[gap * cols + col]
                    text.set_text(CROSSED_GAP if col in gaps else ROW_GAP)
                    text.set_color(theme.muted_text)
            else:
                ax.figure.text(
                    (cols - 1) / 2,
                    gap,
                    ROW_GAP,
                    transform=ax.transData,
                    ha="center",
                    va="center",
                    fontsize=7.0,
                    color=theme.muted_text,
                    parse_math=False,
                    label=f"{key}:gap",
                )
        for gap in gaps:
            ax.add_patch(
                Rectangle((gap - 0.5, -0.5), 1.0, rows, facecolor=theme.background, edgecolor="none", zorder=2)
            )
            if panel.texts:
                for row in range(rows):
                    text = panel.texts[row * cols + gap]
                    text.set_text(CROSSED_GAP if row in row_gaps else GAP)
                    text.set_color(theme.muted_text)
            else:
                ax.figure.text(
                    gap,
                    (rows - 1) / 2,
                    GAP,
                    transform=ax.transData,
                    ha="center",
                    va="center",
                    fontsize=7.0,
                    color=theme.muted_text,
                    parse_math=False,
                    label=f"{key}:gap",
                )
        return panel

    return draw_with_gaps
