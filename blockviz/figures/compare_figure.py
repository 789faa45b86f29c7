"""One head's weights rows from a query in two sentences and their change, drawn under the
layer × head grid of ``blockviz compare`` (:func:`blockviz.figures.heads_figure.draw_heads_figure`'s
``under``): a row per sentence on the weights' map (0–1, √ scale), the change (second − first) on
the diverging map, one column per aligned word, the words upright above their columns. The grid
above colours each head's share of weight moved (½ Σ |change|, :func:`moved_scale`) on the
diverging map's positive arm — the colours of a rise in the change row — not on the weights'
purple: it is no weight. Every scale has its colour bar. The figure computes no number
(:mod:`blockviz.models.evidence` does)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from blockviz.figures.heatmap import ColourScale, draw_blocked, draw_heatmap, signed_scale, weights_scale
from blockviz.figures.labels import ELLIPSIS, POINTS_PER_INCH, text_size_in, token_label, widest_in
from blockviz.figures.layout import ASPECT, Slot
from blockviz.figures.page import MIN_PT, Page
from blockviz.figures.parts import BLOCKED_WEIGHT_TEXT, legend_lines, note
from blockviz.style import BLOCKED_WEIGHT_LABEL, SIGNED_CMAP, Theme, format_number, text_color_on

KEY = "rows"
"""The panel's Axes label; its texts are labelled ``rows:cell``, ``rows:key``, ``rows:row``."""
ROW_NAMES = ("first", "second", "change")
TICK_PAD_IN = 0.05
KEY_SHARE = 0.94
"""A key's name is at most this share of the room it stands over (a cell, or two when staggered)."""
MOVED_LABEL = "share moved (½ Σ |change|)"
"""The colour bar's name of the grid's cells."""


def moved_scale(moved: np.ndarray) -> ColourScale:
    """The colour scale of each head's share of weight moved (0 … 1, ``moved`` any shape): the
    upper half of the diverging map (:data:`blockviz.style.SIGNED_CMAP`, white at 0, red at the
    most) on 0 … the largest share (at least 0.01), labelled :data:`MOVED_LABEL`. A share moved
    is never negative, so the map's blue arm would stand for nothing."""
    limit = max(float(np.max(moved)) if np.size(moved) else 0.0, 0.01)
    upper = ListedColormap(colormaps[SIGNED_CMAP](np.linspace(0.5, 1.0, 128)), name=f"{SIGNED_CMAP}_upper")
    return ColourScale(upper, Normalize(0.0, limit), MOVED_LABEL)


def key_levels(labels: list[str], cell: float, size_pt: float) -> tuple[list[str], int]:
    """The key names as drawn upright above ``cell``-inch columns at ``size_pt``, and on how many
    levels: one if every name fits its cell; else two, staggered (even columns low, odd high),
    each name over up to two cells, longer ones cut with "…"."""
    if widest_in(labels, size_pt) <= KEY_SHARE * cell:
        return labels, 1
    room = 2 * KEY_SHARE * cell
    shown = []
    for label in labels:
        while len(label) > 1 and text_size_in(label, size_pt)[0] > room:
            label = label[:-2] + ELLIPSIS if len(label) > 2 else label[:1]
        shown.append(label)
    return shown, 2


@dataclass(frozen=True)
class RowsPanel:
    """What the panel shows: ``keys`` (aligned words, length k), ``first`` and ``second`` the
    head's weights rows (length k, 0 where a sentence lacks the word), ``caption`` the line above;
    ``blocked`` (length k, or ``None``): the words the causal mask hides from the query in both
    sentences, drawn in the blocked style and reading "0", as in the weights figure; ``absent``
    (``(2, k)``, or ``None``): row 0 the words the first sentence lacks, row 1 those the second
    lacks — their cells in that sentence's row are left blank, not written 0.00."""

    keys: list[str]
    first: np.ndarray
    second: np.ndarray
    caption: str
    blocked: np.ndarray | None = None
    absent: np.ndarray | None = None

    def under(self, page: Page, theme: Theme):
        """The lines and colour scales for ``draw_heads_figure(..., under=panel.under)``."""
        change = np.asarray(self.second, dtype=float) - np.asarray(self.first, dtype=float)
        limit = max(float(np.abs(change).max()), 0.01)
        scale = signed_scale(limit, "change (second − first)")
        lines = [note(page, self.caption, key="rows-caption"), [self._slot(page, theme, change, scale)]]
        if self.blocked is not None and self.blocked.any():
            lines += legend_lines(page, theme, BLOCKED_WEIGHT_TEXT, filled=False)
        return lines, [weights_scale(), scale]

    def _slot(self, page: Page, theme: Theme, change: np.ndarray, signed) -> Slot:
        tick = page.tick
        left = widest_in(ROW_NAMES, tick) + TICK_PAD_IN + 0.02
        k = len(self.keys)
        cell = min(0.6, (page.content_width - left - 0.05) / k) if page.width is not None else 0.5
        labels, levels = key_levels([token_label(key) for key in self.keys], cell, tick)
        line = text_size_in("Ag", tick)[1] + 0.03
        top = levels * line + TICK_PAD_IN + 0.02  # the keys' names stand upright above their columns
        height = cell * ASPECT
        texts = {format_number(float(v), 2) for v in np.concatenate([self.first, self.second, change])}
        number_pt = min(page.number, 10.0 * 0.88 * cell / widest_in(texts, 10.0), 0.7 * height * POINTS_PER_INCH)
        weights = weights_scale()
        values = np.vstack([self.first, self.second, change]).astype(float)
        blocked = np.tile(self.blocked if self.blocked is not None else np.zeros(k, dtype=bool), (3, 1))
        blank = np.zeros((3, k), dtype=bool)
        if self.absent is not None:
            blank[:2] = np.asarray(self.absent, dtype=bool) & ~blocked[:2]

        def draw(ax: Axes):
            ax.set_label(KEY)
            hidden = np.full(k, -np.inf)
            rows = np.where(blank[:2], -np.inf, values[:2])  # a word a sentence lacks: no cell there
            draw_heatmap(ax, np.vstack([rows, hidden]), weights, theme, min(cell, height), blocked)
            draw_heatmap(ax, np.vstack([hidden, hidden, change]), signed, theme, min(cell, height), blocked)
            draw_blocked(ax, blocked, theme)
            ax.set_axis_off()
            figure = ax.figure
            drawn = []
            if number_pt >= MIN_PT:
                for (row, col), value in np.ndenumerate(values):
                    if blank[row, col]:
                        continue
                    colour = (
                        theme.blocked
                        if blocked[row, col]
                        else (weights if row < 2 else signed).rgba(np.array([value]))[0]
                    )
                    drawn.append(
                        figure.text(
                            col,
                            row,
                            BLOCKED_WEIGHT_LABEL if blocked[row, col] else format_number(float(value), 2),
                            transform=ax.transData,
                            ha="center",
                            va="center",
                            fontsize=number_pt,
                            color=text_color_on(colour),
                            parse_math=False,
                            label=f"{KEY}:cell",
                        )
                    )
            columns = blended_transform_factory(ax.transData, ax.transAxes)
            rows = blended_transform_factory(ax.transAxes, ax.transData)
            above = ScaledTranslation(0, TICK_PAD_IN, figure.dpi_scale_trans)
            left_of = ScaledTranslation(-TICK_PAD_IN, 0, figure.dpi_scale_trans)
            for col, label in enumerate(labels):
                level = ScaledTranslation(0, line * (col % levels), figure.dpi_scale_trans)
                figure.text(
                    col, 1.0, label, transform=columns + above + level, ha="center", va="bottom",
                    fontsize=tick, color=theme.text, parse_math=False, label=f"{KEY}:key",
                )  # fmt: skip
            for row, name in enumerate(ROW_NAMES):
                figure.text(
                    0.0, row, name, transform=rows + left_of, ha="right", va="center",
                    fontsize=tick, color=theme.text, parse_math=False, label=f"{KEY}:row",
                )  # fmt: skip
            return drawn

        return Slot(
            k * cell,
            3 * height,
            draw,
            key=KEY,
            left=left,
            right=0.05,
            top=top,
            bottom=0.04,
            numbers=int((~blank).sum()) if number_pt >= MIN_PT else 0,
        )
