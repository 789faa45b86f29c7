"""One matrix as one labelled panel: heatmap, annotations, tick labels, title, all sized to fit;
and the colour bars that say what the colours mean."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.text import Text
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from blockviz.figures.heatmap import ColourScale, annotate_heatmap, draw_blocked, draw_extend_arrows, draw_heatmap
from blockviz.figures.labels import (
    LINE_SPACING,
    POINTS_PER_INCH,
    TICK_SHARE,
    level_label,
    text_size_in,
    tick_size,
    widest_in,
)
from blockviz.figures.layout import Piece, Slot, cell_size, fixed_piece
from blockviz.figures.page import MIN_PT, Page
from blockviz.style import Theme, format_number

TICK_PAD_IN = 0.05
TITLE_PAD_PT = 4.0


@dataclass
class Panel:
    """What a matrix panel drew: its Axes, cells, annotations (row by row) and blocked patches."""

    ax: Axes
    mesh: QuadMesh
    texts: list[Text] = field(default_factory=list)
    blocked: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class MatrixSpec:
    """What to draw: ``values`` ``(rows, cols)`` and how to label it.

    ``blocked`` marks cells a mask blocked, drawn in the one blocked style; they read "−∞"
    (scores, ``blocked_filled``) or "0" (weights, ``blocked_filled=False``). ``row_labels=None`` draws no row
    ticks; ``token_rows`` row labels are drawn only by a panel that starts a row of the page
    (its neighbours share them).
    """

    values: np.ndarray
    row_labels: list[str] | None
    col_labels: list[str]
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    blocked: np.ndarray | None = None
    blocked_filled: bool = True
    title_math: bool = False
    title_color: str | None = None
    token_rows: bool = True
    square_cells: bool = False
    """An n × n panel (queries × keys): nearly square cells, narrower rather than flatter on a
    short page (:func:`~blockviz.figures.layout.cell_size`)."""
    numbers_first: bool = False
    """With ``square_cells``: flatter cells (as a table's) where that keeps the numbers written."""

    @cached_property
    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=float)

    @cached_property
    def numbers_width(self) -> dict:
        """Width (in at 10 pt) of the widest number of each decimals asked for."""
        return {}

    def widest_number(self, decimals: int) -> float:
        """Width in inches at 10 pt of the widest annotation with ``decimals`` decimals."""
        if decimals not in self.numbers_width:
            texts = {format_number(float(value), decimals) for value in np.unique(self.array)}
            texts.add(format_number(-0.0001 - 10**-decimals, decimals))
            self.numbers_width[decimals] = widest_in(texts, 10.0)
        return self.numbers_width[decimals]


def matrix_piece(spec: MatrixSpec, scale: ColourScale, theme: Theme, page: Page, key: str, decimals: int = 2) -> Piece:
    """``spec`` as a piece of a :class:`~blockviz.figures.layout.Flow`: its slot for any cell size."""
    made: dict = {}

    readable = readable_cell(spec.widest_number(decimals), page)

    def make(cell: float, first: bool, pitch: float) -> Slot:
        shown = first or not spec.token_rows
        if not spec.token_rows:
            cell = max(
                cell, readable
            )  # a matrix of its own rows (W_O) keeps its numbers when token panels beside it cannot
            pitch = math.inf
        if (cell, shown, pitch) not in made:
            made[cell, shown, pitch] = matrix_slot(
                spec, scale, theme, page, cell, key, decimals, rows=shown, pitch=pitch
            )
        return made[cell, shown, pitch]

    return Piece(make, columns=spec.array.shape[1], token_rows=spec.token_rows and spec.row_labels is not None)


def matrix_slot(
    spec: MatrixSpec,
    scale: ColourScale,
    theme: Theme,
    page: Page,
    cell: float,
    key: str,
    decimals: int = 2,
    rows: bool = True,
    pitch: float = math.inf,
) -> Slot:
    """A slot drawing ``spec`` with cells ``cell`` inches wide (as wide and tall as
    :func:`~blockviz.figures.layout.cell_size` says); its Axes is labelled ``key``
    (``ax.get_label()``) so the panel can be found again. ``rows=False`` leaves out the row labels."""
    values = spec.array
    n_rows, n_cols = values.shape
    widest = spec.widest_number(decimals)
    cell, cell_height = cell_size(
        cell, pitch, spec.square_cells, readable_cell(widest, page) if spec.numbers_first else math.inf
    )
    ticks_pt, row_step = tick_size(cell_height, page.tick)
    number_pt = _number_size(cell, cell_height, widest, page.number)
    row_labels = spec.row_labels if rows else None
    col_width = widest_in(spec.col_labels, ticks_pt)
    rotate = col_width > 0.92 * cell
    col_step = _step(cell, ticks_pt) if rotate else 1
    col_labels = spec.col_labels[::col_step]
    col_width = widest_in(col_labels, ticks_pt)
    col_height = text_size_in("Ag", ticks_pt)[1] if col_labels else 0.0
    left = 0.0
    ylabel = (
        spec.ylabel if text_size_in(spec.ylabel, page.axis)[0] <= n_rows * cell_height else ""
    )  # written along the rows, if they are long enough
    row_labels_width = widest_in(row_labels[::row_step], ticks_pt) if row_labels is not None else 0.0
    if row_labels is not None:
        left = row_labels_width + TICK_PAD_IN + 0.03
        if ylabel:
            left += text_size_in(spec.ylabel, page.axis)[1] + 0.06
    bottom = (col_width if rotate else col_height) + TICK_PAD_IN + 0.04 if col_labels else 0.02
    if spec.xlabel:
        bottom += text_size_in(spec.xlabel, page.axis)[1] + 0.06
    title_width = 0.0
    top = 0.0
    title = spec.title if spec.title_math else _title_lines(spec.title, n_cols * cell, page.title)
    if title:
        title_width, title_height = text_size_in(title, page.title, math=spec.title_math)
        top = title_height + TITLE_PAD_PT / POINTS_PER_INCH + 0.04
    label_overhang = (
        max(0.0, (1.3 * text_size_in("Ag", ticks_pt)[1] - cell_height) / 2) if row_labels is not None else 0.0
    )  # the first row's label stands above a row lower than it
    title_pad = TITLE_PAD_PT + label_overhang * POINTS_PER_INCH
    top += label_overhang
    width = n_cols * cell
    overhang = max(0.0, (title_width - width) / 2 + 0.03)
    if not rotate and col_labels:
        overhang = max(overhang, (text_size_in(col_labels[-1], ticks_pt)[0] - cell) / 2 + 0.02)

    def draw(ax: Axes) -> Panel:
        ax.set_label(key)
        mesh = draw_heatmap(ax, values, scale, theme, min(cell, cell_height), blocked=spec.blocked)
        blocked = draw_blocked(ax, spec.blocked, theme) if spec.blocked is not None else []
        texts = []
        if number_pt is not None:
            texts = annotate_heatmap(
                ax,
                values,
                scale,
                theme,
                number_pt,
                blocked=spec.blocked,
                decimals=decimals,
                blocked_filled=spec.blocked_filled,
            )
        ax.set_axis_off()  # labels are plain texts: an Axis with its ticks costs far more to build and draw
        figure = ax.figure
        columns = blended_transform_factory(ax.transData, ax.transAxes)
        lines = blended_transform_factory(ax.transAxes, ax.transData)
        below = ScaledTranslation(0, -TICK_PAD_IN, figure.dpi_scale_trans)
        for col, label in zip(range(0, n_cols, col_step), col_labels):
            figure.text(
                col,
                0,
                label,
                transform=columns + below,
                ha="center",
                va="top",
                rotation=90 if rotate and not level_label(label, cell, ticks_pt) else 0,
                fontsize=ticks_pt,
                color=theme.text,
                parse_math=False,
                label=f"{key}:col",
            )
        if row_labels is not None:
            left_of = ScaledTranslation(-TICK_PAD_IN, 0, figure.dpi_scale_trans)
            for row, label in zip(range(0, n_rows, row_step), row_labels[::row_step]):
                figure.text(
                    0,
                    row,
                    label,
                    transform=lines + left_of,
                    ha="right",
                    va="center",
                    fontsize=ticks_pt,
                    color=theme.text,
                    parse_math=False,
                    label=f"{key}:row",
                )
            if ylabel:
                beyond = ScaledTranslation(-(row_labels_width + TICK_PAD_IN + 0.05), 0, figure.dpi_scale_trans)
                figure.text(
                    0,
                    0.5,
                    ylabel,
                    transform=ax.transAxes + beyond,
                    ha="right",
                    va="center",
                    rotation=90,
                    fontsize=page.axis,
                    color=theme.text,
                    parse_math=False,
                    label=f"{key}:ylabel",
                )
        if spec.xlabel:
            under = ScaledTranslation(
                0, -((col_width if rotate else col_height) + TICK_PAD_IN + 0.05), figure.dpi_scale_trans
            )
            figure.text(
                0.5,
                0,
                spec.xlabel,
                transform=ax.transAxes + under,
                ha="center",
                va="top",
                fontsize=page.axis,
                color=theme.text,
                parse_math=False,
                label=f"{key}:xlabel",
            )
        if title:
            above = ScaledTranslation(0, title_pad / POINTS_PER_INCH, figure.dpi_scale_trans)
            figure.text(
                0.5,
                1.0,
                title,
                transform=ax.transAxes + above,
                ha="center",
                va="bottom",
                fontsize=page.title,
                parse_math=spec.title_math,
                color=spec.title_color or theme.text,
                linespacing=LINE_SPACING,
                multialignment="center",
                label=f"{key}:title",
            )
        return Panel(ax, mesh, texts, blocked)

    return Slot(
        width,
        n_rows * cell_height,
        draw,
        key=key,
        left=max(left, overhang),
        right=overhang,
        top=top,
        bottom=bottom,
        numbers=0 if number_pt is None else values.size,
    )


def readable_cell(widest_at_10: float, page: Page) -> float:
    """The smallest cell whose numbers are written (at :data:`MIN_PT`), at most the page's largest cell."""
    width = widest_at_10 * MIN_PT / (10.0 * 0.84) * 1.01
    return min(page.largest_cell, max(width, MIN_PT / (0.75 * POINTS_PER_INCH * 0.55) * 1.01))


def _title_lines(title: str, width: float, size_pt: float) -> str:
    """``title`` on two lines (split at the space nearest its middle) if it is much wider than
    its panel, ``width`` inches."""
    if " " not in title or text_size_in(title, size_pt)[0] <= width + 0.3:
        return title
    middle = len(title) / 2
    split = min(
        (index for index, character in enumerate(title) if character == " "), key=lambda index: abs(index - middle)
    )
    return title[:split] + "\n" + title[split + 1 :]


def _number_size(cell: float, cell_height: float, widest_at_10: float, largest_pt: float) -> float | None:
    """The size of the numbers in cells ``cell`` × ``cell_height`` inches: the largest up to
    ``largest_pt`` that fits, ``None`` under :data:`MIN_PT`."""
    if widest_at_10 == 0:
        return largest_pt
    size = min(largest_pt, 10.0 * 0.84 * cell / widest_at_10, 0.75 * cell_height * POINTS_PER_INCH)
    return round(size, 2) if size >= MIN_PT else None


def _step(pitch: float, size_pt: float) -> int:
    """Label every ``step``-th of ticks ``pitch`` inches apart, so labels ``size_pt`` tall never touch."""
    return max(1, math.ceil(size_pt / (TICK_SHARE * pitch * POINTS_PER_INCH)))


def colorbar_piece(scale: ColourScale, page: Page, label: str | None = None, key: str | None = None) -> Piece:
    """A horizontal colour bar for ``scale``, labelled above with ``label`` (default: the scale's
    own label, the quantity it colours). Tick labels are written like every number
    (:func:`~blockviz.style.format_number`), with enough decimals for small scales, and never
    as an offset or a power of ten.

    Drawn as an image of the map on an Axes without axis, its tick labels and title the Axes'
    texts (labelled "tick" and "title"): the same picture as ``Figure.colorbar`` for a fraction
    of its cost."""
    label = scale.label if label is None else label
    decimals = tick_decimals(scale.norm.vmax - scale.norm.vmin)
    ticks = list(scale.ticks)
    tick_texts = [format_number(value, decimals) for value in ticks]
    label_width, label_height = text_size_in(label, page.axis) if label else (0.0, 0.0)
    tick_height = text_size_in("0.", page.bar_tick)[1]
    end_overhang = (
        max(text_size_in(tick_texts[0], page.bar_tick)[0], text_size_in(tick_texts[-1], page.bar_tick)[0]) / 2 + 0.02
    )
    width = max(page.colorbar_width, label_width + 0.1)
    side = max(end_overhang, (label_width - width) / 2 + 0.02)
    height = 0.08 if page.width is not None else 0.1

    def draw(ax: Axes):
        ax.set_label(key or "colorbar")
        ax.set_axis_off()
        ax.imshow(
            np.linspace(0.0, 1.0, COLORBAR_STEPS)[None, :],
            cmap=scale.cmap,
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            extent=(0.0, 1.0, 0.0, 1.0),
            interpolation="nearest",
        )  # the map in normalised units: a √ scale shows as one
        if scale.clipped:
            draw_extend_arrows(ax, scale)
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        figure = ax.figure
        below = ScaledTranslation(0, -0.035, figure.dpi_scale_trans)
        for value, text in zip(ticks, tick_texts):
            position = float(scale.norm(value))
            ax.plot(
                [position, position],
                [0.0, -0.35],
                color=page_text(figure),
                linewidth=0.5,
                clip_on=False,
                solid_capstyle="butt",
            )
            ax.text(
                position,
                0.0,
                text,
                transform=blended_transform_factory(ax.transData, ax.transAxes) + below,
                ha="center",
                va="top",
                fontsize=page.bar_tick,
                parse_math=False,
                label="tick",
                clip_on=False,
            )
        if label:
            ax.text(
                0.5,
                1.0,
                label,
                transform=ax.transAxes + ScaledTranslation(0, 0.035, figure.dpi_scale_trans),
                ha="center",
                va="bottom",
                fontsize=page.axis,
                parse_math=False,
                label="title",
                clip_on=False,
            )
        return ax

    return fixed_piece(
        Slot(
            width,
            height,
            draw,
            key=key,
            left=side,
            right=side,
            top=label_height + 0.08 if label else 0.0,
            bottom=tick_height + 0.07,
        )
    )


COLORBAR_STEPS = 256


def page_text(figure) -> str:
    """The text colour figures are drawn with (the theme's, from the rcParams in force)."""
    from matplotlib import rcParams

    return rcParams["text.color"]


def tick_decimals(span: float) -> int:
    """Decimals of colour-bar ticks over a range ``span`` wide: 2 (as every number), more
    when ticks 1/8 of the range apart would otherwise read the same (at most 6)."""
    step = span / 8
    decimals = 2
    while decimals < 6 and step < 10**-decimals:
        decimals += 1
    return decimals


def colorbar_pieces(scales: list[ColourScale], page: Page) -> list[Piece]:
    """One colour bar per distinct scale of ``scales``, in order of first use, each labelled
    with its quantity. A quantity that is 0 everywhere (e.g. a bias at its initial value)
    gets none."""
    distinct: dict[tuple, ColourScale] = {}
    for scale in scales:
        if not scale.all_zero:
            distinct.setdefault((scale.label, scale.norm.vmin, scale.norm.vmax), scale)
    return [colorbar_piece(scale, page) for scale in distinct.values()]
