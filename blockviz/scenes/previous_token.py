"""Scene — block 0's previous-token head: each word puts its weight on the word before, so the
head's output in each row is mostly the previous word's value — block 0 writes each word into the
next row, for the block after it to read. Only a record of several blocks has it."""

from __future__ import annotations

import math

import torch
from manim import DOWN, LEFT, RIGHT, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.stack_story import CopyModelRecord, block_name, in_block, previous_token_head
from blockviz.scenes.text import text
from blockviz.scenes.token_axis import visible_slots

NAME = "previous-token"
TOKEN_AXIS = True
ORDER = 162
DESCRIPTION = "block 0's previous-token head: each word's value moves into the next row"
CHAPTER = "Block 0 looks one word back"
CAPTION = (
    "In the first block, one head puts each word's weight on the word before it, so its output in "
    "each row carries the previous word's value: the next block can read, in every row, which word came before."
)
NEEDS = "stack"

MOSTLY = 0.5
"""A weight from which the captions say the output is "mostly" that value."""
DIM = 0.15


class PreviousToken(CopyModelRecord, RecordScene):
    """Block 0's head g (:func:`~blockviz.scenes.stack_story.previous_token_head`: the most weight
    on the previous token) of a record of several blocks: its ``weights[g]`` ``(n, n)``, the cells
    just under the diagonal (each word's weight on the word before), and for the focus row f
    (f ≥ 1; the second token for the first) ``value[g, f − 1]`` beside ``head_outputs[g, f]``
    ``(d_head,)``: the weighted sum of the values, mostly the one before when its weight is."""

    def construct(self) -> None:
        view = self.record.block(0)
        g = previous_token_head(view)
        self.g = g
        self.first = block_name(self.record, 0)
        looks_back = view.n > 1 and all(view.weights[g, i, i - 1].item() > MOSTLY for i in range(1, view.n))
        said = "each word looks one word back" if looks_back else "its weight on the word before"
        title = self.show_title(f"{self.first[0].upper()}{self.first[1:]}, head {g}: {said}")
        grid, rows = self.build(title, view)
        self.add(ghost_of(grid, *rows, opacity=DIM))
        self.step(Reveal(grid), caption=f"{self.first}, head {g}: each row's weights on the words it may use")
        if view.n < 2:
            self.step(caption="one word: there is no word before it to look at")
            self.step(caption="its whole weight is on itself, the one key it may use")
            return
        lights = [Highlight(self.look, grid.cells[i, i - 1]) for i in range(1, view.n) if (i, i - 1) in grid.cells]
        if lights:
            self.step(
                *(FadeIn(light) for light in lights),
                caption="just under the diagonal: each word's weight on the word before it",
            )
            self.step(*(FadeOut(light) for light in lights), caption=self.share_caption(view))
        row = self.row
        cell = Highlight(self.look, grid.cells[row, row - 1])
        weight = self.quote(view.weights[g, row, row - 1].item(), in_block(0, "weights", g, row, row - 1))
        value, output = self.pair_rows(rows[0])
        self.step(  # the weight, and the value it takes
            FadeIn(cell),
            Reveal(value),
            caption=f"“{self.token_name(row)}” puts {weight} of its weight on “{self.token_name(row - 1)}”",
        )
        self.step(Reveal(output), caption=self.output_caption(view, row))
        self.step(  # from the one row worked back to every row
            FadeOut(cell),
            *(FadeIn(light) for light in lights),
            caption=self.closing_caption(view),
        )

    @staticmethod
    def pair_rows(pair: NumberGrid) -> tuple[VGroup, VGroup]:
        """The value row (its cells, numbers, name and the column headers) and the head output
        row (its cells, numbers and name) of the pair built by :meth:`build`, to show one after the other."""
        *headers, value_name, output_name = pair.header_group

        def row(r: int, *names) -> VGroup:
            columns = pair.shown_columns()
            return VGroup(*(pair.cells[r, j] for j in columns), *(pair.labels[r, j] for j in columns), *names)

        return row(0, value_name, *headers, pair.ellipsis_group), row(1, output_name)

    @property
    def row(self) -> int:
        """The row worked: the focus, or the second token when the focus is the first."""
        return self.focus if self.focus >= 1 or self.record.n < 2 else 1

    def build(self, title, view) -> tuple[NumberGrid, list[NumberGrid]]:
        """The weights grid, and under it the previous word's value and the row's head output, placed (not shown)."""
        look, g = self.look, self.g
        slots = visible_slots(
            view.n, self.row, keep=[self.row - 1] if view.n > 1 else []
        )  # the row worked, the one before
        grid = NumberGrid(
            view.weights[g],
            self.token_names,
            self.token_names,
            look,
            colors="weights",
            source=in_block(0, "weights", g),
            blocked=view.mask == -math.inf,
            row_slots=slots,
            column_slots=slots,
            cell_width=column_width(len(slots), width=7.0, most=1.2),
            cell_height=row_height(len(slots) + 1, height=3.4, most=0.5),
        )
        parts: list = [grid]
        rows = []
        if view.n >= 2:
            row = self.row
            fields = (("value", row - 1), ("head_outputs", row))
            pair = NumberGrid(
                torch.stack([view.tensors[field][g, i] for field, i in fields]),
                None,
                axis_labels("d_head", view.tokens, view.config.d_head),
                look,
                colors="none",  # the numbers side by side: the output row is the values, weighted
                source=lambda r, j: in_block(0, fields[r][0], g, fields[r][1], j),
                max_columns=view.config.d_head,
            )
            for r, said in enumerate(
                (f"value of “{self.token_name(row - 1)}”", f"head output of “{self.token_name(row)}”")
            ):
                name = text(said, HEADER_SIZE, look.text)
                name.next_to(pair.row(r), LEFT, buff=0.2)
                pair.header_group.add(name)
            rows.append(pair)
            parts.append(pair)
        layout = VGroup(*parts).arrange(DOWN, buff=0.35)
        grid.header_group.add(text("weights", CAPTION_SIZE - 4, look.muted).next_to(grid.body(), RIGHT, buff=0.2))
        self.place(layout, title, bottom_space=1.3, grow=1.6)
        return grid, rows

    def share_caption(self, view) -> str:
        """How many rows put most of their weight (more than half) on the word before."""
        rows = range(1, view.n)
        most = sum(1 for i in rows if view.weights[self.g, i, i - 1].item() > MOSTLY)
        return f"{most} of the {len(rows)} words after the first put more than half their weight on the word before"

    def closing_caption(self, view) -> str:
        """What the head writes, as far as every row's weight on the word before says."""
        if all(view.weights[self.g, i, i - 1].item() > MOSTLY for i in range(1, view.n)):
            return f"{self.first} writes into each row the word before it: the next block can read it there"
        return f"where a row's weight on the word before is high, {self.first} writes that word into the row"

    def output_caption(self, view, row: int) -> str:
        """What the head output row is, as far as the weight on the word before says."""
        before = self.token_name(row - 1)
        if view.weights[self.g, row, row - 1].item() > MOSTLY:
            return f"so its head output is mostly “{before}”'s value: each value times its weight, added up"
        return f"its head output holds only a share of “{before}”'s value: each value times its weight, added up"
