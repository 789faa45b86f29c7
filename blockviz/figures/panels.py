"""One matrix as one labelled panel: heatmap, annotations, tick labels, title, all sized to fit."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.text import Text

from blockviz.figures.heatmap import ColourScale, annotate_heatmap, draw_blocked, draw_heatmap
from blockviz.figures.labels import annotation_size, text_size_in, tick_size, widest_in
from blockviz.figures.layout import Slot
from blockviz.style import Theme, format_number

TITLE_PT = 9.5
AXIS_LABEL_PT = 8.0
TICK_PAD_IN = 0.06


@dataclass
class Panel:
    """What a matrix panel drew: its Axes, cells, annotations (row by row) and blocked patches."""

    ax: Axes
    mesh: QuadMesh
    texts: list[Text] = field(default_factory=list)
    blocked: list = field(default_factory=list)


@dataclass(frozen=True)
class MatrixSpec:
    """What to draw: ``values`` ``(rows, cols)`` and how to label it.

    ``blocked`` marks cells to hatch; ``blocked_filled`` paints them grey (−∞ scores) rather
    than hatching over their colour (zero weights). ``row_labels=None`` hides the row ticks.
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


def matrix_slot(spec: MatrixSpec, scale: ColourScale, theme: Theme, cell: float, key: str, decimals: int = 2) -> Slot:
    """A slot drawing ``spec`` with square cells ``cell`` inches wide; its Axes is labelled ``key``
    (``ax.get_label()``) so the panel can be found again."""
    values = np.asarray(spec.values, dtype=float)
    rows, cols = values.shape
    ticks_pt = tick_size(cell)
    annotations = [format_number(float(value), decimals) for value in values.ravel()]
    number_pt = annotation_size(cell, set(annotations) | {format_number(-0.0001 - 10 ** -decimals, decimals)})
    col_width = widest_in(spec.col_labels, ticks_pt)
    col_height = text_size_in("Ag", ticks_pt)[1]
    rotate = col_width > 0.92 * cell
    left = 0.0
    if spec.row_labels is not None:
        left = widest_in(spec.row_labels, ticks_pt) + TICK_PAD_IN + 0.02
        if spec.ylabel:
            left += text_size_in(spec.ylabel, AXIS_LABEL_PT)[1] + 0.08
    bottom = (col_width if rotate else col_height) + TICK_PAD_IN + 0.04
    if spec.xlabel:
        bottom += text_size_in(spec.xlabel, AXIS_LABEL_PT)[1] + 0.08
    title_width = 0.0
    top = 0.0
    if spec.title:
        title_width, title_height = text_size_in(spec.title, TITLE_PT, math=spec.title_math)
        top = title_height + 0.1
    width = cols * cell
    overhang = max(0.0, (title_width - width) / 2 + 0.04)

    def draw(ax: Axes) -> Panel:
        ax.set_label(key)
        mesh = draw_heatmap(ax, values, scale, theme, blocked=spec.blocked if spec.blocked_filled else None)
        blocked = draw_blocked(ax, spec.blocked, theme, filled=spec.blocked_filled) if spec.blocked is not None else []
        texts = []
        if number_pt is not None:
            texts = annotate_heatmap(ax, values, scale, theme, number_pt, blocked=spec.blocked, decimals=decimals, blocked_filled=spec.blocked_filled)
        ax.tick_params(length=2, pad=TICK_PAD_IN * 72 - 2, labelsize=ticks_pt, width=0.5)
        ax.set_xticks(range(cols), spec.col_labels, rotation=90 if rotate else 0, parse_math=False)
        if spec.row_labels is None:
            ax.set_yticks([])
        else:
            ax.set_yticks(range(rows), spec.row_labels, parse_math=False)
            if spec.ylabel:
                ax.set_ylabel(spec.ylabel, fontsize=AXIS_LABEL_PT, parse_math=False)
        if spec.xlabel:
            ax.set_xlabel(spec.xlabel, fontsize=AXIS_LABEL_PT, parse_math=False)
        if spec.title:
            ax.set_title(spec.title, fontsize=TITLE_PT, pad=5, parse_math=spec.title_math, color=spec.title_color or theme.text)
        return Panel(ax, mesh, texts, blocked)

    return Slot(width, rows * cell, draw, key=key, left=max(left, overhang), right=max(overhang, 0.0), top=top, bottom=bottom)


def colorbar_slot(scale: ColourScale, height: float, label: str | None = None, key: str | None = None) -> Slot:
    """A colour bar for ``scale``, ``height`` inches tall (longer if its label needs it),
    labelled with ``label`` (default: the scale's own label, the quantity it belongs to). Tick
    labels are written like every number (:func:`~blockviz.style.format_number`), with enough
    decimals for small scales, and never as an offset or a power of ten."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.ticker import FuncFormatter

    ticks_pt = 7.0
    label = scale.label if label is None else label
    label_width, label_height = text_size_in(label, AXIS_LABEL_PT) if label else (0.0, 0.0)
    label_room = label_height + 0.1 if label else 0.0
    decimals = tick_decimals(scale.norm.vmax - scale.norm.vmin)
    ticks = [format_number(value, decimals) for value in (scale.norm.vmin, scale.norm.vmax, -abs(scale.norm.vmax) / 3)]

    def draw(ax: Axes):
        ax.set_label(key or "colorbar")
        bar = ax.figure.colorbar(ScalarMappable(scale.norm, scale.cmap), cax=ax, format=FuncFormatter(lambda value, _: format_number(value, decimals)))
        bar.outline.set_visible(False)
        bar.ax.tick_params(labelsize=ticks_pt, length=2, width=0.5)
        if label:
            bar.set_label(label, fontsize=AXIS_LABEL_PT, parse_math=False)
        return bar

    return Slot(0.12, max(0.6, height, label_width + 0.1), draw, key=key, right=widest_in(ticks, ticks_pt) + 0.1 + label_room)


def tick_decimals(span: float) -> int:
    """Decimals of colour-bar ticks over a range ``span`` wide: 2 (as every number), more
    when ticks 1/8 of the range apart would otherwise read the same (at most 6)."""
    step = span / 8
    decimals = 2
    while decimals < 6 and step < 10 ** -decimals:
        decimals += 1
    return decimals


def colorbar_slots(scales: list[ColourScale], height: float) -> list[Slot]:
    """One colour bar per distinct scale of ``scales``, in order of first use, each labelled
    with its quantity: the bars at the end of a line whose panels use several scales. A
    quantity that is 0 everywhere (e.g. a bias at its initial value) gets none."""
    distinct: dict[tuple, ColourScale] = {}
    for scale in scales:
        if not scale.all_zero:
            distinct.setdefault((scale.label, scale.norm.vmin, scale.norm.vmax), scale)
    return [colorbar_slot(scale, height) for scale in distinct.values()]
