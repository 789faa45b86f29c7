"""Scene 10 — block flow: the route through the pre-norm block, with this sentence's shapes and numbers."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, Circle, RoundedRectangle, VGroup, VMobject

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ColumnSum, row_grid, shape_text
from blockviz.scenes.choreography import carry, ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, cell_width_for
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE, SUM_COLUMNS
from blockviz.scenes.post_norm_flow import construct_post_norm, norm_name
from blockviz.scenes.symbols import symbol
from blockviz.scenes.text import is_mathtext, text, typeset

NAME = "block-flow"
ORDER = 110
DESCRIPTION = "the pre-norm block's route with shapes: LayerNorm, attention, add, LayerNorm, FFN, add"
CHAPTER = "The block's flow"
CAPTION = (
    "The pre-norm block normalizes, attends, adds the input back, normalizes, applies the FFN and adds again, "
    "so the grid leaves with the shape it came in and blocks can stack."
)
POST_NORM_CAPTION = (
    "The post-norm block attends, adds the input back and normalizes the sum, applies the FFN, adds again and "
    "normalizes again, so the grid leaves with the shape it came in and blocks can stack."
)

ARROW_LENGTH = 0.55
BYPASS_HEIGHT = 0.7
DIM = 0.25
"""Opacity of the route before its steps are taken (the whole route is in view from the start)."""
NODE_TINT = 0.18
"""Opacity of a node box's fill in its role colour (its note stays 4.5:1 on it: :meth:`Look.muted_on`)."""


class BlockFlow(RecordScene):
    """The pre-norm block (Xiong et al. 2020): ``resid_mid = resid_pre + attn_out`` with
    ``attn_out = attention(LayerNorm(resid_pre))``, then ``resid_post = resid_mid + ffn_out`` with
    ``ffn_out = FFN(LayerNorm(resid_mid))``; every grid is ``(n, d_model)`` except the FFN's
    hidden ``(n, d_ff)``, so the output has the input's shape and blocks stack.

    Drawn as two halves, one above the other, each beside its residual addition for the focus
    token's row, with the record's numbers."""

    def construct(self) -> None:
        rec = self.record
        if rec.architecture.post_norm:  # attention → add → norm → FFN → add → norm
            return construct_post_norm(self)
        n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
        title = self.show_title("The whole block, with this sentence's shapes")
        halves, sums = self.build(title)
        first, second = halves
        token = self.token_name(self.focus)
        ghost = ghost_of(
            *halves, *(column_sum.frame for column_sum in sums), opacity=DIM
        )  # a dim stand-in under what comes
        self.add(ghost)
        lights = {}

        def light(node):
            lights[id(node)] = Highlight(self.look, node)
            return FadeIn(lights[id(node)])

        self.step(
            FadeIn(first.nodes[0]),
            light(first.nodes[0]),
            caption=f"the whole route; first, the block's input x: {shape_text(n, d)}, one row per token",
        )
        self.step(
            FadeIn(VGroup(first.arrows[0], first.shapes[0], first.nodes[1])),
            light(first.nodes[1]),
            caption=f"normalize each row ({norm_name(rec)})",
        )
        self.step(
            FadeIn(VGroup(first.arrows[1], first.shapes[1], first.nodes[2], first.arrows[2], first.shapes[2])),
            light(first.nodes[2]),
            caption=f"attention mixes across allowed positions: {shape_text(n, d)} → {shape_text(n, d)}",
        )
        self.add_up(
            sums[0],
            f"add the input back (the residual stream): row “{token}”, x plus attention's output…",
            "…= h, entry by entry",
            arriving=[FadeIn(VGroup(first.nodes[3], first.bypass)), light(first.nodes[3])],
        )
        self.step(
            FadeIn(second.nodes[0]),
            FadeIn(VGroup(second.arrows[0], second.shapes[0], second.nodes[1])),
            light(second.nodes[1]),
            caption=f"from h: normalize again ({norm_name(rec)})",
        )
        self.step(
            FadeIn(VGroup(second.arrows[1], second.shapes[1], second.nodes[2], second.arrows[2], second.shapes[2])),
            light(second.nodes[2]),
            caption=f"the FFN changes each row on its own: {shape_text(n, d)} → {shape_text(n, d_ff)} → {shape_text(n, d)}",
        )
        self.add_up(
            sums[1],
            "add again: h plus the FFN's output…",
            "…= y: the block's output",
            carried=sums[0].result,
            arriving=[FadeIn(VGroup(second.nodes[3], second.bypass)), light(second.nodes[3])],
        )
        self.step(
            *(FadeOut(highlight) for highlight in lights.values()),
            light(first.nodes[0]),
            light(sums[1].result.cell_group),
            caption=f"y: {shape_text(n, d)} out, as {shape_text(n, d)} came in: the same shape, so blocks stack",
        )

    def add_up(self, column_sum: ColumnSum, terms_caption: str, result_caption: str, carried=None, arriving=()) -> None:
        """The terms of ``column_sum`` arrive (``carried``: the row the first term is, moving down) with
        ``arriving`` (the ⊕ they meet at), then its result."""
        first = column_sum.terms[0]
        if carried is not None:
            labels = [first.labels[0, j] for j in first.shown_columns()]
            rest = VGroup(
                first.cell_group,
                first.header_group,
                first.ellipsis_group,
                column_sum.terms[1],
                column_sum.signs[0],
                column_sum.heading,
            )
            self.step(
                *arriving,
                Reveal(rest),
                carry(self, [carried.labels[0, j] for j in first.shown_columns()], labels),
                caption=terms_caption,
            )
            self.remove(*labels)
            self.add(first)
        else:
            self.step(
                *arriving,
                Reveal(VGroup(*column_sum.terms, column_sum.signs[0], column_sum.heading)),
                caption=terms_caption,
            )
        self.step(
            Reveal(VGroup(column_sum.result, column_sum.signs[1], column_sum.rule, column_sum.note)),
            caption=result_caption,
        )

    # -- building -----------------------------------------------------------------------------
    def build(self, title):
        rec, look = self.record, self.look
        n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
        norm = norm_name(rec)  # LayerNorm or RMSNorm
        first = self.half(
            [
                (symbol("resid_pre", rec), shape_text(n, d), look.residual),
                (norm, "each row", look.muted),
                ("attention", "mixes rows", look.output),
                None,
            ]
        )
        second = self.half(
            [
                (symbol("resid_mid", rec), shape_text(n, d), look.residual),
                (norm, "each row", look.muted),
                ("FFN", f"via {shape_text(n, d_ff)}", look.ffn),
                None,
            ]
        )
        sums = self.build_sums()
        rows = VGroup(
            *(VGroup(half, column_sum).arrange(RIGHT, buff=0.6) for half, column_sum in zip((first, second), sums))
        )
        rows.arrange(DOWN, buff=0.5, aligned_edge=LEFT)
        first.shift(
            RIGHT * (second.nodes[3].get_x() - first.nodes[3].get_x())
        )  # the two ⊕ one above the other: resid_mid goes down
        for row in rows:  # the sums in one column
            row[1].align_to(rows[0][1], LEFT)
        self.place(rows, title, grow=1.3)
        return (first, second), sums

    def half(self, parts) -> VGroup:
        """One half of the block in a line: input, LayerNorm, sub-layer, ⊕, output; arrows with the
        grid's shape under each, and the residual path from before the LayerNorm into the ⊕."""
        rec, look = self.record, self.look
        _n, _d = rec.n, rec.config.d_model
        nodes = [self.adder() if part is None else self.node(*part) for part in parts]
        row = VGroup(*nodes).arrange(RIGHT, buff=ARROW_LENGTH)
        arrows, shapes = VGroup(), VGroup()
        for left, right in zip(nodes, nodes[1:]):
            arrow = Arrow(
                left.get_right(),
                right.get_left(),
                buff=0.04,
                color=look.muted,
                stroke_width=3,
                max_tip_length_to_length_ratio=0.18,
            )
            arrows.add(arrow)
            shapes.add(VGroup())  # every arrow carries an n × d_model grid: the nodes say it
        bypass = self.bypass(arrows[0], nodes[3])
        half = VGroup(row, arrows, shapes, bypass)
        half.nodes, half.arrows, half.shapes, half.bypass = nodes, arrows, shapes, bypass
        return half

    def node(self, name: str, note: str, color: str) -> VGroup:
        label = VGroup(
            typeset(name, CAPTION_SIZE, self.look.text)
            if is_mathtext(name)
            else text(name, CAPTION_SIZE, self.look.text, bold=True),
            text(note, HEADER_SIZE, self.look.muted_on(color, NODE_TINT)),
        ).arrange(DOWN, buff=0.1)
        box = RoundedRectangle(
            corner_radius=0.12, width=label.width + 0.24, height=1.0, stroke_color=color, stroke_width=3
        )
        box.set_fill(color, opacity=NODE_TINT)
        return VGroup(box, label.move_to(box))

    def adder(self) -> VGroup:
        circle = Circle(radius=0.27, color=self.look.residual, stroke_width=3)
        return VGroup(circle, text("+", CAPTION_SIZE + 4, self.look.text, bold=True).move_to(circle))

    def bypass(self, start_arrow: Arrow, adder: VGroup) -> VGroup:
        """The residual path: up from the arrow before the LayerNorm, over, and down into ``adder``."""
        start = start_arrow.get_center()
        top = start[1] + BYPASS_HEIGHT
        path = VMobject(color=self.look.residual, stroke_width=3)
        path.set_points_as_corners([start, [start[0], top, 0], [adder.get_x(), top, 0]])
        into = Arrow(
            [adder.get_x(), top, 0],
            adder.get_top(),
            buff=0,
            color=self.look.residual,
            stroke_width=3,
            max_tip_length_to_length_ratio=0.35,
        )
        name = text("residual", HEADER_SIZE, self.look.muted).next_to(path, UP, buff=0.06)
        return VGroup(path, into, name)

    def build_sums(self) -> tuple[ColumnSum, ColumnSum]:
        rec, look, f = self.record, self.look, self.focus

        def row(name: str, color: str | None = None):
            return row_grid(
                rec, name, f, symbol(name, rec), look, header_color=color, max_columns=SUM_COLUMNS, cell_width=width
            )

        sums = []
        names = ("resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post")
        width = max(
            cell_width_for(rec.tensors[name][f][None, :]) for name in names
        )  # one width: the columns stay aligned however large an entry

        for terms, result, heading in (
            (("resid_pre", "attn_out"), "resid_mid", "after attention"),
            (("resid_mid", "ffn_out"), "resid_post", "after the FFN"),
        ):
            column_sum = ColumnSum(
                [row(terms[0]), row(terms[1], look.output if terms[1] == "attn_out" else look.ffn)], row(result), look
            )
            column_sum.heading = (
                text(f"{heading}, row “{self.token_name(f)}”", HEADER_SIZE, look.text)
                .next_to(column_sum, UP, buff=0.15)
                .align_to(column_sum, LEFT)
            )
            column_sum.add(column_sum.heading)
            column_sum.frame = VGroup(
                *(VGroup(grid.cell_group, grid.header_group) for grid in (*column_sum.terms, column_sum.result))
            )
            column_sum.register(self)
            sums.append(column_sum)
        return sums[0], sums[1]
