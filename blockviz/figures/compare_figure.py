"""One head's weights rows from a query in two sentences and their change, drawn under the
layer × head grid of ``blockviz compare`` (:func:`blockviz.figures.heads_figure.draw_heads_figure`'s
``under``): a row per sentence on the weights' map (0–1, √ scale), the change (second − first) on
the diverging map, one column per aligned word. The figure computes no number
(:mod:`blockviz.models.evidence` does)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from blockviz.figures.heatmap import draw_heatmap, signed_scale, weights_scale
from blockviz.figures.labels import POINTS_PER_INCH, text_size_in, token_label, widest_in
from blockviz.figures.layout import ASPECT, Slot
from blockviz.figures.page import MIN_PT, Page
from blockviz.figures.parts import note
from blockviz.style import Theme, format_number, text_color_on

KEY = "rows"
"""The panel's Axes label; its texts are labelled ``rows:cell``, ``rows:key``, ``rows:row``."""
ROW_NAMES = ("first", "second", "change")
TICK_PAD_IN = 0.05


@dataclass(frozen=True)
class RowsPanel:
    """What the panel shows: ``keys`` (aligned words, length k), ``first`` and ``second`` the
    head's weights rows (length k, 0 where a sentence lacks the word), ``caption`` the line above."""

    keys: list[str]
    first: np.ndarray
    second: np.ndarray
    caption: str

    def under(self, page: Page, theme: Theme):
        """The lines and colour scales for ``draw_heads_figure(..., under=panel.under)``."""
        change = np.asarray(self.second, dtype=float) - np.asarray(self.first, dtype=float)
        limit = max(float(np.abs(change).max()), 0.01)
        scale = signed_scale(limit, "change (second − first)")
        return [note(page, self.caption, key="rows-caption"), [self._slot(page, theme, change, scale)]], [scale]

    def _slot(self, page: Page, theme: Theme, change: np.ndarray, signed) -> Slot:
        labels = [token_label(key) for key in self.keys]
        tick = page.tick
        left = widest_in(ROW_NAMES, tick) + TICK_PAD_IN + 0.02
        top = widest_in(labels, tick) + TICK_PAD_IN + 0.02  # the keys' names stand upright above their columns
        k = len(self.keys)
        cell = min(0.6, (page.content_width - left - 0.05) / k) if page.width is not None else 0.5
        height = cell * ASPECT
        texts = {format_number(float(v), 2) for v in np.concatenate([self.first, self.second, change])}
        number_pt = min(page.number, 10.0 * 0.88 * cell / widest_in(texts, 10.0), 0.7 * height * POINTS_PER_INCH)
        weights = weights_scale()
        values = np.vstack([self.first, self.second, change]).astype(float)

        def draw(ax: Axes):
            ax.set_label(KEY)
            hidden = np.full(k, -np.inf)
            draw_heatmap(ax, np.vstack([self.first, self.second, hidden]), weights, theme, min(cell, height))
            draw_heatmap(ax, np.vstack([hidden, hidden, change]), signed, theme, min(cell, height))
            ax.set_axis_off()
            figure = ax.figure
            drawn = []
            if number_pt >= MIN_PT:
                for (row, col), value in np.ndenumerate(values):
                    colour = (weights if row < 2 else signed).rgba(np.array([value]))[0]
                    drawn.append(
                        figure.text(
                            col,
                            row,
                            format_number(float(value), 2),
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
                figure.text(
                    col, 1.0, label, transform=columns + above, ha="center", va="bottom", rotation=90,
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
            top=top + text_size_in("Ag", tick)[1] * 0,
            bottom=0.04,
            numbers=values.size if number_pt >= MIN_PT else 0,
        )
