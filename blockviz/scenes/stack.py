"""Scene — a stack of blocks: the grid entering the first block, the grid it hands back (the same
shape), and that grid entering the next block, number for number. Only a record of several blocks
(``--model copy``) has it."""

from __future__ import annotations

from manim import DOWN, RIGHT, Arrow, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import row_height
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.stack_story import CopyModelRecord, block_name, in_block
from blockviz.scenes.text import text

NAME = "stack"
TOKEN_AXIS = True
ORDER = 160
DESCRIPTION = "a stack of blocks: a block hands back a grid of the shape it took, and the next block takes it"
CHAPTER = "Feed it into another block"
CAPTION = (
    "A block takes a grid of one row per token and hands back a grid of the same shape, so its output "
    "can be the next block's input, number for number."
)
NEEDS = "stack"

DIM = 0.15
"""Opacity of the stand-in of what is still to come."""
FEATURE_SLOTS = 2
"""Columns of d_model drawn in each grid: the first and the last, the others at ⋯; the tokens name the rows of the first grid."""


class Stack(CopyModelRecord, RecordScene):
    """Block 0's input ``resid_pre`` ``(n, d_model)``, its output ``resid_post`` (the same shape)
    and block 1's input ``resid_pre``: the record checks it is block 0's output exactly
    (:func:`blockviz.record_check.check_stack`), so the third grid's numbers are the second's."""

    def construct(self) -> None:
        rec = self.record
        count = len(rec.blocks)
        first, second = block_name(rec, 0), block_name(rec, 1)
        title = self.show_title(f"A stack of {count} blocks: same shape out as in")
        grids, steps = self.build(title)
        entering, leaving, next_input = grids
        self.add(ghost_of(*grids, *steps, opacity=DIM))  # the whole stack in view from the start, dim
        n, d = rec.n, rec.config.d_model
        self.step(Reveal(entering), caption=f"the grid entering {first}: {n} tokens × {d} numbers")
        self.step(FadeIn(steps[0]), Reveal(leaving), caption=f"{first} hands back a grid of the same shape: {n} × {d}")
        self.step(
            FadeIn(steps[1]),
            Reveal(next_input),
            caption=f"{second} takes that grid as its input: the same numbers, nothing added on the way",
        )
        lights = [Highlight(self.look, grid.row(self.focus)) for grid in grids]
        self.step(
            *(FadeIn(light) for light in lights),
            caption=f"“{self.token_name(self.focus)}”: its row leaves {first} and enters {second} unchanged",
        )
        more = "" if count == 2 else f", and so on to the last of the {count}"
        self.step(
            *(FadeOut(light) for light in lights),
            caption=f"so blocks stack: {second} reads what {first} wrote into each row{more}",
        )

    def build(self, title) -> tuple[list[NumberGrid], list[VGroup]]:
        """The three grids side by side, a step between each two (block 0; "the same grid"), placed (not shown)."""
        rec, look = self.record, self.look
        slots = self.token_slots()
        features = axis_labels("d_model", rec.tokens, rec.config.d_model)
        columns = list(range(min(FEATURE_SLOTS - 1, rec.config.d_model))) + (
            [None, rec.config.d_model - 1] if rec.config.d_model > FEATURE_SLOTS else []
        )
        output = rec.block(0).architecture.block_output  # resid_post; post-norm: resid_post_norm
        first, second = block_name(rec, 0), block_name(rec, 1)
        names = [
            (f"{first}'s input", 0, "resid_pre"),
            (f"{first}'s output", 0, output),
            (f"{second}'s input", 1, "resid_pre"),
        ]
        grids = []
        for said, k, field in names:
            grid = NumberGrid(
                rec.block(k).tensors[field],
                self.token_names if k == 0 and field == "resid_pre" else None,
                features,
                look,
                source=lambda i, j, k=k, field=field: in_block(k, field, i, j),
                row_slots=slots,
                column_slots=columns,
                cell_height=row_height(len(slots) + 1, height=4.4, most=1.4),
            )
            grid.header_group.add(text(said, CAPTION_SIZE - 4, look.muted).next_to(grid.body(), DOWN, buff=0.2))
            grids.append(grid)
        steps = [self.step_label(first), self.step_label("the same grid")]
        layout = VGroup(grids[0], steps[0], grids[1], steps[1], grids[2]).arrange(RIGHT, buff=0.3)
        for step in steps:
            step.set_y(grids[0].cell_group.get_y())
        self.place(layout, title, bottom_space=1.3, grow=1.6)
        return grids, steps

    def step_label(self, said: str) -> VGroup:
        """An arrow right with ``said`` over it."""
        arrow = Arrow(RIGHT * -0.45, RIGHT * 0.45, buff=0, color=self.look.muted, stroke_width=3)
        return VGroup(text(said, HEADER_SIZE, self.look.muted), arrow).arrange(DOWN, buff=0.08)
