"""Scene 11 — inside the FFN: one token's row widened, passed through the activation, narrowed."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, FadeOut, Indicate, TransformFromCopy, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ACTIVATION_FORMULAS, activation_curve, regroup, row_grid, shape_text
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_of
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.text import formula, text
from blockviz.style import FFN_COLOR

DESCRIPTION = "one row through the FFN: widen to d_ff, the activation curve, narrow back"
CHAPTER = "Inside the FFN"
CAPTION = ("The FFN widens one token's row to d_ff numbers, bends each through GELU (or ReLU), and narrows it back; "
           "every row goes through the same function without reading any other row.")

ACTIVATION_SAYS = {
    "gelu": "negative values squashed towards 0, positive ones kept",
    "relu": "negative values become 0, positive ones kept",
}
"""What the activation does, after its name (:attr:`blockviz.config.BlockConfig.activation_name`)."""


class InsideFFN(RecordScene):
    """The position-wise FFN on row f (Vaswani et al. 2017, Eq. 2, with GELU or ReLU):
    ``ffn_pre = ln2 @ W_in + b_in`` ``(d_ff,)``, ``ffn_post = activation(ffn_pre)`` entry by
    entry, ``ffn_out = ffn_post @ W_out + b_out`` ``(d_model,)``. Every row goes through the same
    function and reads no other row.

    The activation's curve is drawn from ``torch.nn.functional``; its dots sit at the record's
    ``(ffn_pre[f, j], ffn_post[f, j])`` for every j of the row.
    """

    entry_time = 0.3
    """Run time (s) of the highlight stepping from one widened entry to the next."""

    def construct(self) -> None:
        rec = self.record
        name = rec.config.activation_name
        title = self.show_title(f"Inside the FFN: one row widened, through {name}, narrowed back")
        rows, ops, plot = self.build(title)
        self.work_row(rows, ops, plot)
        self.every_row(rows, ops, plot, title)

    # -- one row --------------------------------------------------------------------------------
    def build(self, title):
        rec, look, f = self.record, self.look, self.focus
        d, d_ff = rec.config.d_model, rec.config.d_ff
        token = self.token_name(f)
        rows = {
            "ln2": row_grid(rec, "ln2", f, f"ln2 “{token}”", look),
            "ffn_pre": row_grid(rec, "ffn_pre", f, "ffn_pre", look, header_color=FFN_COLOR),
            "ffn_post": row_grid(rec, "ffn_post", f, "ffn_post", look, header_color=FFN_COLOR),
            "ffn_out": row_grid(rec, "ffn_out", f, "ffn_out", look),
        }
        activation = rec.config.activation
        ops = [
            self.op(f"× W_in + b_in   (W_in: {shape_text(d, d_ff)}, widen)"),
            self.op(f"{rec.config.activation_name}, entry by entry"),
            self.op(f"× W_out + b_out   (W_out: {shape_text(d_ff, d)}, narrow)"),
        ]
        grids = list(rows.values())
        stack = column_of([grids[0], ops[0], grids[1], ops[1], grids[2], ops[2], grids[3]], buff=0.14)
        for grid in grids[1:]:  # cells in one column, whatever the header widths
            grid.shift(RIGHT * (grids[0].cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        for op in ops:
            op.align_to(grids[0].cell_group, LEFT)
        pre, post = rec.ffn_pre[f].tolist(), rec.ffn_post[f].tolist()
        axes, curve, dots, labels = activation_curve(pre, post, activation, look, FFN_COLOR)
        equation = formula(ACTIVATION_FORMULAS[activation], FFN_COLOR, 20).next_to(axes, UP, buff=0.2)
        plot = VGroup(axes, curve, labels, equation, dots)
        plot.axes, plot.curve, plot.dots, plot.frame = axes, curve, dots, VGroup(axes, labels, equation)
        layout = VGroup(stack, plot).arrange(RIGHT, buff=0.7)
        self.place(layout, title, grow=1.2)
        self.plot = plot
        return rows, ops, plot

    def op(self, shown: str) -> VGroup:
        arrow = Arrow(UP * 0.22, DOWN * 0.22, buff=0, color=self.look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.4)
        return VGroup(arrow, text(shown, HEADER_SIZE, self.look.muted)).arrange(RIGHT, buff=0.15)

    def work_row(self, rows, ops, plot) -> None:
        rec, f = self.record, self.focus
        d, d_ff = rec.config.d_model, rec.config.d_ff
        self.play(FadeIn(rows["ln2"]), *self.say(f"the normalized row of “{self.token_name(f)}”: d_model = {d} numbers"), run_time=self.step_time)
        self.rest()
        self.play(FadeIn(VGroup(ops[0], rows["ffn_pre"])), *self.say(f"the wide layer: {d} → d_ff = {d_ff} numbers"), run_time=self.step_time)
        self.rest()
        self.play(FadeIn(VGroup(ops[1], plot.frame, plot.curve)), *self.say(f"the activation, {rec.config.activation_name}: {ACTIVATION_SAYS[rec.config.activation]}"), run_time=self.step_time)
        self.play(FadeIn(plot.dots), *self.say(f"each entry of the row is a point on the curve ({d_ff} dots)"), run_time=self.step_time)
        self.rest(0.4)
        self.trace_entries(rows["ffn_pre"], rows["ffn_post"], plot.dots)
        self.play(FadeIn(VGroup(ops[2], rows["ffn_out"])), *self.say(f"the narrow layer: back to d_model = {d}"), run_time=self.step_time)
        self.rest()

    def trace_entries(self, pre: NumberGrid, post: NumberGrid, dots: VGroup) -> None:
        """Light each shown entry of ffn_pre, its dot on the curve, then its ffn_post value."""
        columns = pre.shown_columns()
        frame = VGroup(post.cell_group, post.header_group, post.ellipsis_group)
        highlight = Highlight(self.look, VGroup(pre.cells[0, columns[0]], post.cells[0, columns[0]]))
        self.play(FadeIn(frame), FadeIn(highlight), *self.say("entry by entry: read x on the curve, write down its height"), run_time=self.step_time)
        for j in columns:
            self.play(highlight.over(VGroup(pre.cells[0, j], post.cells[0, j])), Indicate(dots[j], scale_factor=1.8),
                      TransformFromCopy(dots[j], post.labels[0, j]), run_time=self.entry_time)
        regroup(self, post, frame, *(post.labels[0, j] for j in columns))
        self.play(FadeOut(highlight), run_time=0.3)

    # -- every row ------------------------------------------------------------------------------
    def every_row(self, rows, ops, plot, title) -> None:
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        columns = axis_labels("d_model", rec.tokens, d)
        before = NumberGrid(rec.ln2, self.token_names, columns, look, source=("ln2",), color_limit=self.limit("ln2"), row_focus=f, max_columns=6)
        after = NumberGrid(rec.ffn_out, None, columns, look, source=("ffn_out",), color_limit=self.limit("ffn_out"), row_focus=f, max_columns=6)
        arrow = Arrow(LEFT * 0.6, RIGHT * 0.6, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.25)
        box = VGroup(text("FFN, row by row", CAPTION_SIZE, FFN_COLOR, bold=True), arrow,
                     text(f"{shape_text(rec.n, d)} → {shape_text(rec.n, rec.config.d_ff)} → {shape_text(rec.n, d)}", HEADER_SIZE, look.muted)).arrange(DOWN, buff=0.15)
        names = [text(name, HEADER_SIZE, look.muted).next_to(grid.cell_group, DOWN, buff=0.12) for grid, name in ((before, "ln2"), (after, "ffn_out"))]
        before.header_group.add(names[0])
        after.header_group.add(names[1])
        layout = VGroup(before, box, after).arrange(RIGHT, buff=0.5)
        box.set_y(before.cell_group.get_y())
        self.place(layout, title, grow=1.2)
        self.play(FadeOut(VGroup(*rows.values(), *ops, plot)), FadeIn(layout),
                  *self.say("the same function on every row"), run_time=self.step_time)
        shown = before.shown_rows()
        lights = [Highlight(look, grid.row(shown[0])) for grid in (before, after)]  # one per grid: none crosses the middle text
        self.play(*(FadeIn(light) for light in lights), run_time=0.3)
        for i in shown[1:]:
            self.play(*(light.over(grid.row(i)) for light, grid in zip(lights, (before, after))), run_time=0.3)
        self.play(*(light.over(grid.row(f)) for light, grid in zip(lights, (before, after))),
                  *self.say("each row reads no other row: only attention mixes positions"), run_time=self.step_time)
        self.rest(1.5)
