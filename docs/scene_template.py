"""A template scene, to copy: one head's attention weights, and the focus query's row added up to 1.

It keeps every rule of docs/writing-a-scene.md, and tests/test_scenes_template.py builds it with
the checks every catalogued scene gets. To make a scene of it, copy it to
``blockviz/scenes/<module>.py``, change ``NAME``, ``ORDER``, the three strings and the class,
and write its thin file ``scenes/<module>.py``. It also runs as it is::

    manim -ql docs/scene_template.py WeightRows
"""

from __future__ import annotations

import math

from manim import DOWN, RIGHT, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, remainder, sum_decimals
from blockviz.scenes.choreography import products_then_sum
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import NOTE_SIZE, WORK_SIZE
from blockviz.scenes.text import number, text

NAME = "weight-rows"
ORDER = 95
DESCRIPTION = "one head's weights, a query's row added up: each row of weights sums to 1"
CHAPTER = "Each row of weights adds up to 1"
CAPTION = "Each query's weights, one per key, add up to 1: softmax shares out the query's attention among the keys."


class WeightRows(RecordScene):
    """``weights[h]`` ``(n, n)`` of head ``h``, rows = queries, columns = keys: each row sums to 1
    (softmax). The focus query's row is written out under the grid, its weights added up to 1;
    keys left out of the grid are one term, 1 less the shown weights."""

    def construct(self) -> None:
        title = self.show_title(f"Each row of weights adds up to 1 (head {self.h})")
        grid, line = self.build(title)
        self.step(Reveal(grid), caption="the weights: one row per query, one column per key")  # cells, then numbers
        highlight = Highlight(self.look, grid.row(self.focus))
        self.step(FadeIn(highlight), caption=f"query “{self.token_name(self.focus)}”: its weights, one per key")
        self.step(products_then_sum(line), caption="added up, they make 1")
        self.step(FadeOut(highlight), caption="every row adds up to 1: softmax shares out each query's attention")

    def build(self, title) -> tuple[NumberGrid, VGroup]:
        """The weights grid and the focus row's sum under it, placed in the frame (not shown)."""
        rec, h = self.record, self.h
        slots = self.token_slots()
        grid = NumberGrid(
            rec.weights[h],
            self.token_names,
            self.token_names,
            self.look,
            colors="weights",
            source=("weights", h),
            blocked=rec.mask == -math.inf,
            row_slots=slots,
            column_slots=slots,
            cell_width=column_width(len(slots), width=9.0, most=2.6),
            cell_height=row_height(len(slots) + 1, height=4.6),
        )
        line = self.sum_line(grid.shown_columns())
        line.next_to(grid, DOWN, buff=0.45)
        self.place(VGroup(grid, line), title, grow=1.8)
        return grid, line

    def sum_line(self, keys: list[int]) -> VGroup:
        """``w₀ + w₁ + … (+ the hidden keys' share) = 1`` for the focus row: every term the
        record's, the total 1 by definition; "≈" where the shown terms miss it by rounding."""
        rec, h, i, look = self.record, self.h, self.focus, self.look
        shown = [(rec.weights[h, i, j].item(), ("weights", h, i, j)) for j in keys]
        hidden = len(keys) < rec.n
        weights = [value for value, _ in shown]
        decimals = sum_decimals([(weights + ([1.0 - sum(weights)] if hidden else []), 1.0)])
        blocked = [rec.mask[i, j] == -math.inf for j in keys]  # exactly 0: written "0", as in the grid
        terms = [
            number(value, WORK_SIZE, look.text, 0 if off else decimals, source=source)
            for (value, source), off in zip(shown, blocked)
        ]
        if hidden:
            terms.append(remainder(1.0, ("constant", 1.0), shown, WORK_SIZE, look.muted, decimals))
        total = number(1.0, WORK_SIZE, look.text, decimals, source=("constant", 1.0))
        self.shown_sum(terms, total)
        parts = [terms[0]]
        for term in terms[1:]:
            parts += [text("+", WORK_SIZE, look.muted), term]
        if hidden:
            parts.append(text(f"({rec.n - len(keys)} keys not shown)", NOTE_SIZE, look.muted))
        sign = text("=" if exact(terms, total) else "≈", WORK_SIZE, look.text)
        return VGroup(*parts, sign, total).arrange(RIGHT, buff=0.15)
