"""Scene — recap: the focus token's row in and out of the block, the same shape, so blocks stack."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, RoundedRectangle, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ROUNDING_NOTE, ColumnSum, shape_text, sum_decimals
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import column_width, legible_note
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, HEADER_SIZE, NOTE_SIZE
from blockviz.scenes.text import text
from blockviz.scenes.wide import edges_and_largest, slots_of

NAME = "recap"
ORDER = 130
DESCRIPTION = "recap: one token's row in and out of the block, x + attention + FFN (post-norm: each sum normalised), the same shape, so blocks stack"
CHAPTER = "Recap"
CAPTION = (
    "The block takes each token's row and gives back a row of the same length: the input plus what attention "
    "and the FFN add, so the output can enter the next block."
)

FEATURE_SLOTS = 6
"""Columns drawn of each d_model-wide row (⋯ for the rest)."""
WIDE_ENTRIES = 4
"""Entries drawn of a post-norm block's rows wider than :data:`FEATURE_SLOTS`: the first, the last and the largest."""
TERMS = (("resid_pre", "input x"), ("attn_out", "attention"), ("ffn_out", "FFN"))
"""The residual stream's terms for the focus row: ``resid_post = resid_pre + attn_out + ffn_out``."""


class Recap(RecordScene):
    """The focus token's row through the whole block, read from the record: ``resid_pre[f]``
    ``(d_model,)`` in, ``attn_out[f]`` and ``ffn_out[f]`` added (the two residual additions),
    ``resid_post[f]`` ``(d_model,)`` out — as the sentence's ``(n, d_model)`` grid goes in and
    comes out, so the output is a valid input for the next block. A post-norm block (BERT) is
    drawn as it computes (:meth:`post_norm`): each sum is normalised, and its output is
    ``resid_post_norm``."""

    def construct(self) -> None:
        rec, f = self.record, self.focus
        n, d = rec.n, rec.config.d_model
        token = self.token_name(f)
        title = self.show_title(f"Recap: “{token}” in, “{token}” out")
        if rec.architecture.post_norm:
            self.post_norm(title)
            return
        column_sum, shapes, onward = self.build(title)
        x, attention, ffn = column_sum.terms
        ghost = ghost_of(column_sum, *shapes, onward, outline=self.look.grid)  # the whole sum's outline from the start
        self.add(ghost)
        self.step(
            Reveal(VGroup(x, shapes[0])),
            caption=f"in: the row of “{token}”, {d} numbers (the sentence: {shape_text(n, d)})",
        )
        self.step(
            Reveal(VGroup(attention, column_sum.signs[0])),
            caption="attention adds what it gathered from the tokens “" + token + "” may use",
        )
        self.step(Reveal(VGroup(ffn, column_sum.signs[1])), caption="the FFN adds what it makes of the row, on its own")
        light = Highlight(self.look, column_sum.result.cell_group)
        self.step(
            Reveal(VGroup(column_sum.result, column_sum.signs[2], column_sum.rule, column_sum.note, shapes[1])),
            FadeIn(light),
            caption=f"out: a row of the same length, {d} numbers ({shape_text(n, d)} in, {shape_text(n, d)} out)",
        )
        onward_caption = (
            "the same shape in and out, so blocks could stack; this model has one, and its output goes on to the prediction"
            if self.record.architecture.unembedding
            else "the same shape in and out: the output is the next block's input, so blocks stack"
        )
        self.step(Reveal(onward), caption=onward_caption)

    def build(self, title):
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        columns = axis_labels("d_model", rec.tokens, d)
        width = column_width(min(d, FEATURE_SLOTS), width=6.0, most=1.4)
        terms = [rec.tensors[field][f].tolist() for field, _ in TERMS]
        totals = rec.resid_post[f].tolist()
        decimals = sum_decimals(
            [([term[j] for term in terms], totals[j]) for j in range(d)]
        )  # one more where rounding would break a column
        colors = (look.residual, look.output, look.ffn)
        # One width for every row, wide enough for any entry (a trained layer's reach 11 and more), so the columns stay aligned.
        width = max(
            [width]
            + [cell_width_for(rec.tensors[field][f][None, :], decimals) for field, _ in TERMS]
            + [cell_width_for(rec.resid_post[f][None, :])]
        )

        def row(field: str, name: str, color: str, places: int) -> NumberGrid:
            return NumberGrid(
                rec.tensors[field][f][None, :],
                [name],
                columns,
                look,
                source=lambda _, j: (field, f, j),
                max_columns=FEATURE_SLOTS,
                row_header_color=color,
                cell_width=width,
                cell_height=CELL_HEIGHT * 1.5,
                decimals=places,
            )  # tall rows: the sum fills the frame

        grids = [row(field, name, color, decimals) for (field, name), color in zip(TERMS, colors)]
        result = row("resid_post", "output", look.residual, 2)
        column_sum = ColumnSum(grids, result, look)
        column_sum.register(self)
        n = rec.n
        shapes = [
            text(f"{shape_text(n, d)} in", HEADER_SIZE + 2, look.muted),
            text(f"{shape_text(n, d)} out", HEADER_SIZE + 2, look.muted),
        ]
        for label, grid in zip(shapes, (grids[0], result)):
            label.next_to(VGroup(grid.cell_group, grid.ellipsis_group), RIGHT, buff=0.35)
        onward = self.next_block(result, shapes[1])
        self.place(VGroup(column_sum, *shapes, onward), title, grow=1.5)
        return column_sum, shapes, onward

    def next_block(self, result: NumberGrid, beside) -> VGroup:
        """A box for the next block (for a one-block model with an unembedding: the prediction),
        to the right of the output row, with an arrow into it."""
        look = self.look
        name, detail = (
            ("prediction", "LayerNorm, logits")
            if self.record.architecture.unembedding
            else ("next block", "same shape in")
        )
        label = VGroup(
            text(name, CAPTION_SIZE, look.text, bold=True),
            text(detail, HEADER_SIZE, look.muted_on(look.residual, 0.15)),
        ).arrange(DOWN, buff=0.1)
        box = RoundedRectangle(
            corner_radius=0.12,
            width=label.width + 0.4,
            height=max(1.0, label.height + 0.3),
            stroke_color=look.residual,
            stroke_width=3,
        )
        box.set_fill(look.residual, opacity=0.15)
        block = VGroup(box, label.move_to(box))
        block.next_to(beside, RIGHT, buff=0.9).set_y(result.cell_group.get_y())
        arrow = Arrow(
            beside.get_right() + RIGHT * 0.08,
            block.get_left(),
            buff=0.04,
            color=look.muted,
            stroke_width=3,
            max_tip_length_to_length_ratio=0.25,
        )
        return VGroup(arrow, block)

    # -- post-norm (BERT) -------------------------------------------------------------------------
    def post_norm(self, title) -> None:
        """A post-norm block (Vaswani et al. 2017, §3.1) for the focus row: x + attention =
        ``resid_mid``, LayerNorm → ``resid_mid_norm``; + FFN = ``resid_post``, LayerNorm →
        ``resid_post_norm``, the layer's output, ``(d_model,)`` as x."""
        rec, f = self.record, self.focus
        n, d = rec.n, rec.config.d_model
        token = self.token_name(f)
        (first, second), norms, out, shapes, onward, note = self.build_post_norm(title)
        ghost = ghost_of(first, second, *norms, out, *shapes, onward, note, outline=self.look.grid)
        self.add(ghost)
        x, attention = first.terms
        mid_norm, ffn = second.terms
        self.step(
            Reveal(VGroup(x, shapes[0], note)),
            caption=f"in: the row of “{token}”, {d} numbers (the sentence: {shape_text(n, d)})",
        )
        self.step(
            Reveal(VGroup(attention, first.signs[0])),
            caption="attention adds what it gathered from the tokens “" + token + "” may use",
        )
        self.step(
            Reveal(VGroup(first.result, first.signs[1], first.rule, first.note)),
            caption="the sum: x plus attention, entry by entry",
        )
        self.step(
            Reveal(VGroup(norms[0], mid_norm)),
            caption="post-norm: LayerNorm normalizes the sum, row by row",
        )
        self.step(
            Reveal(VGroup(ffn, second.signs[0])), caption="the FFN adds what it makes of the normalized row, on its own"
        )
        self.step(
            Reveal(VGroup(second.result, second.signs[1], second.rule, second.note)),
            caption="the sum again: the normalized row plus the FFN",
        )
        light = Highlight(self.look, out.cell_group)
        self.step(
            Reveal(VGroup(norms[1], out, shapes[1])),
            FadeIn(light),
            caption=f"LayerNorm once more, and out: a row of the same length, {d} numbers ({shape_text(n, d)} in, {shape_text(n, d)} out)",
        )
        onward_caption = (
            "the same shape in and out, so blocks could stack; this model has one, and its output goes on to the prediction"
            if self.record.architecture.unembedding
            else "the same shape in and out: the output is the next block's input, so blocks stack"
        )
        self.step(Reveal(onward), caption=onward_caption)

    def build_post_norm(self, title):
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        features = axis_labels("d_model", rec.tokens, d)
        fields = ("resid_pre", "attn_out", "resid_mid", "resid_mid_norm", "ffn_out", "resid_post", "resid_post_norm")
        row_of = {field: rec.tensors[field][f] for field in fields}
        shown = (
            edges_and_largest([row_of[field].tolist() for field in fields], WIDE_ENTRIES)
            if d > FEATURE_SLOTS
            else list(range(d))
        )
        first_decimals = sum_decimals(
            [
                ([row_of["resid_pre"][j].item(), row_of["attn_out"][j].item()], row_of["resid_mid"][j].item())
                for j in range(d)
            ]
        )
        second_decimals = sum_decimals(
            [
                ([row_of["resid_mid_norm"][j].item(), row_of["ffn_out"][j].item()], row_of["resid_post"][j].item())
                for j in range(d)
            ]
        )
        places = {
            "resid_pre": first_decimals,
            "attn_out": first_decimals,
            "resid_mid_norm": second_decimals,
            "ffn_out": second_decimals,
        }
        width = max(
            [column_width(min(d, FEATURE_SLOTS), width=6.0, most=1.4)]
            + [cell_width_for(row_of[field][None, :], places.get(field, 2)) for field in fields]
        )
        names = {
            "resid_pre": ("input x", look.residual),
            "attn_out": ("attention", look.output),
            "resid_mid": ("sum", look.residual),
            "resid_mid_norm": ("normalized", look.residual),
            "ffn_out": ("FFN", look.ffn),
            "resid_post": ("sum", look.residual),
            "resid_post_norm": ("output", look.residual),
        }

        def row(field: str, headers: bool = False) -> NumberGrid:
            name, color = names[field]
            return NumberGrid(
                row_of[field][None, :],
                [name],
                features if headers else None,
                look,
                source=lambda _, j: (field, f, j),
                column_slots=slots_of(shown, d),
                row_header_color=color,
                cell_width=width,
                decimals=places.get(field, 2),
            )

        first = ColumnSum([row("resid_pre", headers=True), row("attn_out")], row("resid_mid"), look)
        second = ColumnSum([row("resid_mid_norm"), row("ffn_out")], row("resid_post"), look)
        out = row("resid_post_norm")
        lines = (
            [
                f"⋯: {d - len(shown)} of {d} entries hidden (shown: the first, the last, and the {len(shown) - 2} largest of the rest)"
            ]
            if len(shown) < d
            else []
        )
        for column_sum in (first, second):  # one rounding note for both sums, under the output
            if len(column_sum.note):
                column_sum.remove(column_sum.note)
                lines[:0] = [] if ROUNDING_NOTE in lines else [ROUNDING_NOTE]
            column_sum.note = VGroup()
        norms = [self.norm_step(), self.norm_step()]
        parts = [first, norms[0], second, norms[1], out]
        VGroup(*parts).arrange(DOWN, buff=0.08)
        for part in (second, out):  # every row's cells in one column
            cells = part.terms[0].cell_group if isinstance(part, ColumnSum) else part.cell_group
            part.shift(RIGHT * (first.terms[0].cell_group.get_left()[0] - cells.get_left()[0]))
        for norm, above in zip(norms, (first.result, second.result)):
            norm.align_to(above.cell_group, LEFT).shift(RIGHT * 0.2)
        first.register(self)
        second.register(self)
        n = rec.n
        shapes = [
            text(f"{shape_text(n, d)} in", HEADER_SIZE + 2, look.muted),
            text(f"{shape_text(n, d)} out", HEADER_SIZE + 2, look.muted),
        ]
        for label, grid in zip(shapes, (first.terms[0], out)):
            label.next_to(grid.body(), RIGHT, buff=0.35)
        onward = self.next_block(out, shapes[1])
        note = VGroup(*(text(line, NOTE_SIZE, look.muted) for line in lines)).arrange(
            DOWN, aligned_edge=LEFT, buff=0.08
        )
        if lines:
            note.next_to(out.cell_group, DOWN, buff=0.3).align_to(out.header_group, LEFT)
        self.place(VGroup(*parts, *shapes, onward, note), title, bottom_space=1.35, grow=1.5)
        legible_note(note)
        return (first, second), norms, out, shapes, onward, note

    def norm_step(self) -> VGroup:
        """An arrow down, named LayerNorm: the sum above is normalized into the row below."""
        look = self.look
        arrow = Arrow(
            UP * 0.16, DOWN * 0.16, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.5
        )
        return VGroup(arrow, text("LayerNorm, each row", HEADER_SIZE, look.muted)).arrange(RIGHT, buff=0.15)
