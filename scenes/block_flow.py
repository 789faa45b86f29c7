"""Scene 10 — block flow: the route through the pre-norm block, with this sentence's shapes."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, Circle, FadeIn, RoundedRectangle, TransformFromCopy, VGroup, VMobject, config

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ColumnSum, row_grid, shape_text
from blockviz.scenes.grids import Highlight
from blockviz.scenes.layout import fit_between
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.text import text
from blockviz.style import FFN_COLOR

DESCRIPTION = "the pre-norm block's route with shapes: LayerNorm, attention, add, LayerNorm, FFN, add"
CHAPTER = "The block's flow"
CAPTION = ("The pre-norm block normalizes, attends, adds the input back, normalizes, applies the FFN and adds again, "
           "so the grid leaves with the shape it came in and blocks can stack.")

ARROW_LENGTH = 0.85
BYPASS_HEIGHT = 0.75
DIAGRAM_BAND = 2.6
"""Height (scene units) of the band the diagram is fitted into, under the title."""


class BlockFlow(RecordScene):
    """The pre-norm block (Xiong et al. 2020): ``resid_mid = resid_pre + attn_out`` with
    ``attn_out = attention(LayerNorm(resid_pre))``, then ``resid_post = resid_mid + ffn_out`` with
    ``ffn_out = FFN(LayerNorm(resid_mid))``; every grid is ``(n, d_model)`` except the FFN's
    hidden ``(n, d_ff)``, so the output has the input's shape and blocks stack.

    The focus token's row of both residual additions is shown with the record's numbers.
    """

    def construct(self) -> None:
        rec = self.record
        n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
        title = self.show_title("The whole block, with this sentence's shapes")
        diagram, first, second = self.build(title)
        nodes, arrows, shapes, bypasses = diagram.nodes, diagram.arrows, diagram.shapes, diagram.bypasses
        token = self.token_name(self.focus)
        highlight = Highlight(self.look, nodes["x"])
        self.step([FadeIn(nodes["x"]), FadeIn(highlight)], f"the block's input x: {shape_text(n, d)}, one row per token")
        self.step([FadeIn(VGroup(arrows[0], shapes[0], nodes["ln1"])), highlight.over(nodes["ln1"])], "normalize each row (LayerNorm)")
        self.step([FadeIn(VGroup(arrows[1], shapes[1], nodes["attention"], arrows[2], shapes[2])), highlight.over(nodes["attention"])],
                  f"attention mixes across allowed positions: {shape_text(n, d)} → {shape_text(n, d)}")
        self.step([FadeIn(VGroup(nodes["add1"], bypasses[0])), highlight.over(nodes["add1"])], "add the input back: the residual stream")
        self.step([FadeIn(VGroup(*first.terms, first.signs[0], first.heading))], f"row “{token}”: x plus attention's output")
        self.step([FadeIn(VGroup(first.result, first.signs[1], first.rule, first.note))], "= resid_mid, entry by entry")
        self.step([FadeIn(VGroup(arrows[3], shapes[3], nodes["ln2"])), highlight.over(nodes["ln2"])], "normalize again (LayerNorm)")
        self.step([FadeIn(VGroup(arrows[4], shapes[4], nodes["ffn"], arrows[5], shapes[5])), highlight.over(nodes["ffn"])],
                  f"the FFN changes each row on its own: {shape_text(n, d)} → {shape_text(n, d_ff)} → {shape_text(n, d)}")
        self.step([FadeIn(VGroup(nodes["add2"], bypasses[1])), highlight.over(nodes["add2"])], "add again")
        self.step([TransformFromCopy(first.result, second.terms[0]), FadeIn(VGroup(second.terms[1], second.signs[0], second.heading))],
                  "resid_mid plus the FFN's output")
        self.step([FadeIn(VGroup(second.result, second.signs[1], second.rule, second.note))], "= resid_post: the block's output")
        self.step([FadeIn(VGroup(arrows[6], shapes[6], nodes["out"])), highlight.over(nodes["out"]), FadeIn(Highlight(self.look, nodes["x"]))],
                  f"{shape_text(n, d)} out, as {shape_text(n, d)} came in: the same shape, so blocks stack", pause=2.0)

    def step(self, animations: list, caption: str, pause: float | None = None) -> None:
        self.play(*animations, *self.say(caption), run_time=self.step_time)
        self.rest(pause)

    # -- building -----------------------------------------------------------------------------
    def build(self, title):
        diagram = self.build_diagram()
        first, second = self.build_sums()
        sums = VGroup(first, second).arrange(RIGHT, buff=1.2, aligned_edge=UP)
        top = title.get_bottom()[1] - 0.25
        fit_between(diagram, top, top - DIAGRAM_BAND, grow=1.2)
        diagram.align_to([0, top, 0], UP)
        fit_between(sums, diagram.get_bottom()[1] - 0.35, -config.frame_height / 2 + 0.9, grow=1.4)
        return diagram, first, second

    def build_diagram(self) -> VGroup:
        rec, look = self.record, self.look
        n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
        nodes = {
            "x": self.node("x", shape_text(n, d), look.residual),
            "ln1": self.node("LayerNorm", "each row", look.muted),
            "attention": self.node("attention", "mixes rows", look.output),
            "add1": self.adder(),
            "ln2": self.node("LayerNorm", "each row", look.muted),
            "ffn": self.node("FFN", f"via {shape_text(n, d_ff)}", FFN_COLOR),
            "add2": self.adder(),
            "out": self.node("out", shape_text(n, d), look.residual),
        }
        order = list(nodes.values())
        spaced = VGroup(*order).arrange(RIGHT, buff=ARROW_LENGTH)
        arrows, shapes = VGroup(), VGroup()
        for left, right in zip(order, order[1:]):
            arrow = Arrow(left.get_right(), right.get_left(), buff=0.04, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.18)
            arrows.add(arrow)
            shapes.add(text(shape_text(n, d), HEADER_SIZE - 2, look.muted).next_to(arrow, DOWN, buff=0.08))
        bypasses = VGroup(self.bypass(arrows[0], nodes["add1"]), self.bypass(arrows[3], nodes["add2"]))
        diagram = VGroup(spaced, arrows, shapes, bypasses)
        diagram.nodes, diagram.arrows, diagram.shapes, diagram.bypasses = nodes, arrows, shapes, bypasses
        return diagram

    def node(self, name: str, note: str, color: str) -> VGroup:
        label = VGroup(text(name, CAPTION_SIZE, self.look.text, bold=True), text(note, HEADER_SIZE, self.look.muted)).arrange(DOWN, buff=0.1)
        box = RoundedRectangle(corner_radius=0.12, width=label.width + 0.24, height=0.95, stroke_color=color, stroke_width=3)
        box.set_fill(color, opacity=0.18)
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
        into = Arrow([adder.get_x(), top, 0], adder.get_top(), buff=0, color=self.look.residual, stroke_width=3, max_tip_length_to_length_ratio=0.35)
        name = text("residual", HEADER_SIZE, self.look.muted).next_to(path, UP, buff=0.06)
        return VGroup(path, into, name)

    def build_sums(self) -> tuple[ColumnSum, ColumnSum]:
        rec, look, f = self.record, self.look, self.focus

        def row(name: str, color: str | None = None):
            return row_grid(rec, name, f, name, look, header_color=color)

        sums = []
        for terms, result, heading in ((("resid_pre", "attn_out"), "resid_mid", "after attention"), (("resid_mid", "ffn_out"), "resid_post", "after the FFN")):
            column_sum = ColumnSum([row(terms[0]), row(terms[1], look.output if terms[1] == "attn_out" else FFN_COLOR)], row(result), look)
            column_sum.heading = text(f"{heading}, row “{self.token_name(f)}”", HEADER_SIZE, look.text).next_to(column_sum, UP, buff=0.15).align_to(column_sum, LEFT)
            column_sum.add(column_sum.heading)
            column_sum.register(self)
            sums.append(column_sum)
        return sums[0], sums[1]
