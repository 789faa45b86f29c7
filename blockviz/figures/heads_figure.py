"""The layer × head grid: every head's attention from one token, one cell per head.

Rows are layers (layer 0 at the top), columns heads (query heads, under grouped-query attention
too). A cell is coloured by its weight on the weights' map and normalisation of every figure
(:func:`blockviz.figures.heatmap.weights_scale`: 0–1, by √weight) and reads the weight — with
one key chosen, the weight on it; otherwise each head's largest weight and, above it, the key
that gets it. The highest-ranked head is framed, and every weight has the decimals that tell it
apart (:attr:`HeadsGrid.decimals`). Laid out for a page width (:mod:`blockviz.figures.page`,
6.5 in by default): 6 layers × 12 heads and 30 layers × 9 heads both keep every number at 6 pt
or more; a grid too dense for that shows colour alone.

The figure computes no number: it draws the arrays it is given (:mod:`blockviz.models.heads`
ranks them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from blockviz.errors import BlockvizError
from blockviz.figures.context import figure_context
from blockviz.figures.heatmap import ColourScale, annotate_heatmap, draw_heatmap, weights_scale
from blockviz.figures.labels import ELLIPSIS, POINTS_PER_INCH, text_size_in, token_label, widest_in
from blockviz.figures.layout import ASPECT, Slot, TextLine, build_figure
from blockviz.figures.page import DEFAULT_WIDTH, MIN_PT, Page
from blockviz.figures.page import page as page_for
from blockviz.figures.parts import colorbar_line, heading, note
from blockviz.figures.saving import save_figure
from blockviz.style import LIGHT, Theme, format_number, text_color_on

KEY = "heads"
"""The grid's Axes label; its texts are labelled ``heads:cell``, ``heads:row``, ``heads:col``,
``heads:xlabel``, ``heads:ylabel``, its frame ``heads:best``."""
LARGEST_CELL_IN = 0.8
"""The widest a cell gets (a few heads on a wide page)."""
CELL_LINE_SPACING = 1.1
"""Between the key's name and its weight in a cell, in font sizes."""
TICK_PAD_IN = 0.05
NAME_SHARE = 0.86
"""A key's name is at most this share of its cell's width."""
MAX_DECIMALS = 4
"""The most decimals the grid's weights get (:attr:`HeadsGrid.decimals`)."""


@dataclass(frozen=True)
class HeadsGrid:
    """What the grid shows: ``values`` ``(n_layers, n_heads)`` weights in [0, 1]; ``keys``
    ``(n_layers, n_heads)`` token names written above each weight (``None``: one key for every
    cell, named in the title); ``best`` the ``(layer, head)`` framed (``None``: none);
    ``title`` and ``notes`` (lines under it); ``head_label`` the columns' name ("head", or
    "query head" under grouped-query attention); ``layers`` the layer numbers of the rows
    (default 0 … n_layers − 1)."""

    values: np.ndarray
    title: str
    keys: list[list[str]] | None = None
    best: tuple[int, int] | None = None
    notes: tuple[str, ...] = ()
    head_label: str = "head"
    layers: tuple[int, ...] | None = None
    scale: ColourScale | None = None
    """The cells' colour scale: the weights' (:func:`~blockviz.figures.heatmap.weights_scale`) by
    default; ``blockviz compare``'s share of weight moved has its own (its colour bar comes first)."""

    @property
    def decimals(self) -> int:
        """Decimals of every weight in the grid: 2, or as many more (at most
        :data:`MAX_DECIMALS`) as tell the framed best weight apart from every other different
        one (0.7196 and 0.7163 both read 0.72 with 2)."""
        if self.best is None:
            return 2
        best = float(self.values[self.best])
        others = {float(value) for value in self.values.ravel()} - {best}
        decimals = 2
        while decimals < MAX_DECIMALS and format_number(best, decimals) in {
            format_number(value, decimals) for value in others
        }:
            decimals += 1
        return decimals

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=float)
        if values.ndim != 2 or 0 in values.shape:
            raise BlockvizError(f"the heads grid needs weights (n_layers, n_heads), got shape {values.shape}")
        if self.keys is not None and [len(row) for row in self.keys] != [values.shape[1]] * values.shape[0]:
            raise BlockvizError(
                f"the heads grid needs one key name per cell, {values.shape[0]} rows of {values.shape[1]}"
            )
        if self.layers is not None and len(self.layers) != values.shape[0]:
            raise BlockvizError(
                f"the heads grid needs one layer number per row ({values.shape[0]}), got {len(self.layers)}"
            )
        object.__setattr__(self, "values", values)


def draw_heads_figure(grid: HeadsGrid, theme: Theme = LIGHT, width: float | None = DEFAULT_WIDTH, under=None) -> Figure:
    """The figure of ``grid``: heading, notes, the layer × head grid, the weights' colour bar
    ("weight (√ scale)"), on a page ``width`` inches wide (``None``: natural size).

    ``under``: ``under(page, theme) -> (lines, scales)``, more figure lines drawn under the grid
    (:mod:`blockviz.figures.layout`) and the colour scales they use beside the weights' (``blockviz
    compare`` puts one head's rows there)."""
    page = page_for(width)
    with figure_context(theme):
        above = heading(page, grid.title) + [
            note(page, text, key=f"note{index or ''}") for index, text in enumerate(grid.notes)
        ]
        extra, scales = under(page, theme) if under is not None else ([], [])
        below = extra + [colorbar_line([grid.scale or weights_scale(), *scales], page)]
        room = None if page.max_height is None else page.max_height - _height_of(above + below, page)
        return build_figure(above + [[_grid_slot(grid, theme, page, room)]] + below, page)[0]


def write_heads_figure(
    grid: HeadsGrid,
    path: str | Path,
    theme: Theme = LIGHT,
    width: float | None = DEFAULT_WIDTH,
    dpi: int = 200,
    under=None,
) -> Path:
    """Draw ``grid`` and save it to ``path``, its format named by the suffix (``.png``, ``.svg``,
    ``.pdf``); returns the path.

    Raises :class:`BlockvizError` as :func:`blockviz.figures.saving.save_figure` (an unknown
    format, a failed write: no file is left behind).
    """
    path = Path(path)
    figure = draw_heads_figure(grid, theme, width, under)
    with figure_context(theme):
        return save_figure(figure, path, path.suffix.lower().lstrip("."), dpi, title="blockviz heads")


@dataclass(frozen=True)
class _Sizes:
    cell: float
    cell_height: float
    tick_pt: float
    number_pt: float | None
    left: float
    top: float


def _height_of(lines: list, page: Page) -> float:
    """Inches ``lines`` (text lines and colour-bar flows) take on ``page``, with the page's margins
    and a gap after each (the grid's)."""
    rows = [
        row
        for line in lines
        for row in (
            line.arrange(page)
            if isinstance(line, TextLine)
            else [line]
            if isinstance(line, list)
            else line.arrange(page, math.inf, page.gap)
        )
    ]
    return (
        sum(
            max(slot.top for slot in row)
            + max(slot.height for slot in row)
            + max(slot.bottom for slot in row)
            + page.gap
            for row in rows
        )
        + 2 * page.margin
    )


def _sizes(grid: HeadsGrid, page: Page, room_height: float | None) -> _Sizes:
    """Cells as wide as the page allows (at most :data:`LARGEST_CELL_IN`), as tall as their
    lines need and ``room_height`` inches (the page's height less the other lines) allow;
    numbers as large as fit, ``None`` under 6 pt."""
    n_layers, n_heads = grid.values.shape
    tick_pt = page.tick
    row_labels = [str(layer) for layer in _layers(grid)]
    label_height = text_size_in("Ag", page.axis)[1]
    left = widest_in(row_labels, tick_pt) + TICK_PAD_IN + label_height + 0.1
    top = text_size_in("0", tick_pt)[1] + TICK_PAD_IN + label_height + 0.1
    room = page.content_width - left - 0.05 if page.width is not None else LARGEST_CELL_IN * n_heads
    cell = min(LARGEST_CELL_IN, room / n_heads)
    lines = 2 if grid.keys is not None else 1
    wanted = max(cell * ASPECT, (lines * CELL_LINE_SPACING * page.number) / POINTS_PER_INCH + 0.06)
    if room_height is not None:
        wanted = min(wanted, (room_height - top - 0.04) / n_layers)
    tick_pt = min(tick_pt, max(MIN_PT, 0.75 * wanted * POINTS_PER_INCH))
    by_height = (wanted - 0.03) * POINTS_PER_INCH / (lines * CELL_LINE_SPACING)
    by_width = (
        10.0
        * 0.88
        * cell
        / widest_in(
            {format_number(float(v), grid.decimals) for v in np.unique(grid.values)}
            | {format_number(0.0, grid.decimals)},
            10.0,
        )
    )
    number_pt = min(page.number, by_height, by_width)
    if (
        grid.keys is not None
    ):  # names and weights share one size: as large as lets the widest name fit, ellipsised only under 6 pt
        widest_name = widest_in({token_label(name) for row in grid.keys for name in row}, 10.0)
        number_pt = min(number_pt, max(MIN_PT, 10.0 * NAME_SHARE * cell / widest_name if widest_name else number_pt))
    number_pt = round(number_pt, 2)
    return _Sizes(cell, wanted, tick_pt, number_pt if number_pt >= MIN_PT else None, left, top)


def _layers(grid: HeadsGrid) -> tuple[int, ...]:
    return grid.layers if grid.layers is not None else tuple(range(grid.values.shape[0]))


def _fit(text: str, width: float, size_pt: float) -> str:
    """``text`` (a token, :func:`~blockviz.figures.labels.token_label`) cut with "…" to fit ``width`` inches at ``size_pt``."""
    shown = token_label(text)
    while len(shown) > 1 and text_size_in(shown, size_pt)[0] > width:
        shown = shown[:-2] + ELLIPSIS if len(shown) > 2 else shown[:1]
    return shown


def _grid_slot(grid: HeadsGrid, theme: Theme, page: Page, room_height: float | None) -> Slot:
    sizes = _sizes(grid, page, room_height)
    values = grid.values
    n_layers, n_heads = values.shape
    scale = grid.scale or weights_scale()

    def draw(ax: Axes):
        ax.set_label(KEY)
        draw_heatmap(ax, values, scale, theme, min(sizes.cell, sizes.cell_height))
        ax.set_axis_off()
        figure = ax.figure
        texts = []
        if sizes.number_pt is not None:
            if grid.keys is None:
                texts = annotate_heatmap(ax, values, scale, theme, sizes.number_pt, decimals=grid.decimals)
            else:
                colours = scale.rgba(values)
                for (layer, head), value in np.ndenumerate(values):
                    shown = f"{_fit(grid.keys[layer][head], NAME_SHARE * sizes.cell, sizes.number_pt)}\n{format_number(float(value), grid.decimals)}"
                    texts.append(
                        figure.text(
                            head,
                            layer,
                            shown,
                            transform=ax.transData,
                            ha="center",
                            va="center",
                            fontsize=sizes.number_pt,
                            linespacing=CELL_LINE_SPACING,
                            color=text_color_on(colours[layer, head]),
                            parse_math=False,
                            label=f"{KEY}:cell",
                        )
                    )
        if grid.best is not None:
            layer, head = grid.best
            ax.add_patch(
                Rectangle(
                    (head - 0.5, layer - 0.5),
                    1.0,
                    1.0,
                    fill=False,
                    edgecolor=theme.text,
                    linewidth=1.6,
                    label=f"{KEY}:best",
                    clip_on=False,
                )
            )
        columns = blended_transform_factory(ax.transData, ax.transAxes)
        rows = blended_transform_factory(ax.transAxes, ax.transData)
        above = ScaledTranslation(0, TICK_PAD_IN, figure.dpi_scale_trans)
        left_of = ScaledTranslation(-TICK_PAD_IN, 0, figure.dpi_scale_trans)
        for head in range(n_heads):
            figure.text(
                head,
                1.0,
                str(head),
                transform=columns + above,
                ha="center",
                va="bottom",
                fontsize=sizes.tick_pt,
                color=theme.text,
                parse_math=False,
                label=f"{KEY}:col",
            )
        for row, layer in enumerate(_layers(grid)):
            figure.text(
                0.0,
                row,
                str(layer),
                transform=rows + left_of,
                ha="right",
                va="center",
                fontsize=sizes.tick_pt,
                color=theme.text,
                parse_math=False,
                label=f"{KEY}:row",
            )
        over = ScaledTranslation(0, sizes.top - text_size_in("Ag", page.axis)[1] - 0.04, figure.dpi_scale_trans)
        figure.text(
            0.5,
            1.0,
            grid.head_label,
            transform=ax.transAxes + over,
            ha="center",
            va="bottom",
            fontsize=page.axis,
            color=theme.text,
            parse_math=False,
            label=f"{KEY}:xlabel",
        )
        beside = ScaledTranslation(-(sizes.left - 0.04), 0, figure.dpi_scale_trans)
        figure.text(
            0.0,
            0.5,
            "layer",
            transform=ax.transAxes + beside,
            ha="left",
            va="center",
            rotation=90,
            fontsize=page.axis,
            color=theme.text,
            parse_math=False,
            label=f"{KEY}:ylabel",
        )
        return texts

    return Slot(
        n_heads * sizes.cell,
        n_layers * sizes.cell_height,
        draw,
        key=KEY,
        left=sizes.left,
        right=0.05,
        top=sizes.top,
        bottom=0.04,
        numbers=0 if sizes.number_pt is None else values.size,
    )
