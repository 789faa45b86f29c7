"""Scene 11 — inside the FFN: one token's row widened, passed through the activation, narrowed."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, FadeOut, Indicate, TransformFromCopy, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ACTIVATION_FORMULAS, activation_curve, regroup, row_grid, shape_text
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_of, row_height
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.text import formula, text
from blockviz.style import FFN_COLOR

DESCRIPTION = "one row through the FFN: widen to d_ff, the activation curve, narrow back"
CHAPTER = "Inside the FFN"
CAPTION = ("The FFN widens one token's row to d_ff numbers, bends each through GELU (or ReLU), and narrows it back; "
           "every row goes through the same function without reading any other row.")

EVERY_ROW_SLOTS = 4
"""Columns drawn of the ln2 and ffn_out grids when every row is shown."""
ROW_SLOTS = 7
"""Columns drawn of each row (beside the activation's curve)."""

ACTIVATION_SAYS = {
    "gelu": "negative values squashed towards 0, positive ones kept",
    "relu": "negative values become 0, positive ones kept",
    "gelu_tanh": "negative values squashed towards 0, positive ones kept",  # GPT-2's GELU, its tanh form
    "silu": "negative values squashed towards 0, positive ones kept",
}
"""What the activation does, after its name (:attr:`blockviz.config.BlockConfig.activation_name`)."""


def ffn_input(rec) -> str:
    """The field the FFN reads: ``ln2`` (pre-norm), or a post-norm block's normalised sum ``resid_mid_norm``."""
    return "ln2" if "ln2" in rec.tensors else "resid_mid_norm"


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
            "ln2": row_grid(rec, ffn_input(rec), f, f"{ffn_input(rec)} “{token}”", look, max_columns=ROW_SLOTS),
            "ffn_pre": row_grid(rec, "ffn_pre", f, "ffn_pre", look, header_color=FFN_COLOR, max_columns=ROW_SLOTS, empty=True),
            "ffn_post": row_grid(rec, "ffn_post", f, "ffn_post", look, header_color=FFN_COLOR, max_columns=ROW_SLOTS, empty=True),
            "ffn_out": row_grid(rec, "ffn_out", f, "ffn_out", look, max_columns=ROW_SLOTS, empty=True),
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
        frames = {name: VGroup(grid.cell_group, grid.header_group, grid.ellipsis_group) for name, grid in rows.items() if name != "ln2"}
        # The whole worksheet in view at once: the rows to fill, the operations between them, the curve's axes.
        self.step(FadeIn(rows["ln2"]), FadeIn(VGroup(*frames.values(), *ops, plot.frame)),
                  caption=f"the normalized row of “{self.token_name(f)}”: d_model = {d} numbers")
        for name, frame in frames.items():  # the empty rows as whole grids from now on: their numbers go into them
            self.remove(frame)
            self.add(rows[name])
        self.step(*self.fill(rows["ffn_pre"]),
                  caption=f"the wide layer: {d} → d_ff = {d_ff} numbers")
        self.step(FadeIn(plot.curve), caption=f"the activation, {rec.config.activation_name}: {ACTIVATION_SAYS[rec.config.activation]}")
        self.step(FadeIn(plot.dots), caption=f"each entry of the row is a point on the curve ({d_ff} dots)")
        self.trace_entries(rows["ffn_pre"], rows["ffn_post"], plot.dots)
        self.step(*self.fill(rows["ffn_out"]), caption=f"the narrow layer: back to d_model = {d}")

    def fill(self, grid: NumberGrid) -> list:
        """Animations colouring a row's cells and writing its numbers (the grid was drawn empty)."""
        keys = [(0, j) for j in grid.shown_columns()]
        fills = {key: grid.color_of(grid.values[0][key[1]]) for key in keys}
        labels = {key: grid.number_at(*key, fill=fills[key]) for key in keys}
        return self.recolour(grid, fills) + self.replace_labels(grid, labels)

    def trace_entries(self, pre: NumberGrid, post: NumberGrid, dots: VGroup) -> None:
        """Light each shown entry of ffn_pre, its dot on the curve, then its ffn_post value."""
        columns = pre.shown_columns()
        lights = [Highlight(self.look, grid.cells[0, columns[0]]) for grid in (pre, post)]  # one per row: none crosses the text between
        self.play(*(FadeIn(light) for light in lights), *self.say("entry by entry: read x on the curve, write down its height"), run_time=self.step_time)
        fills = {(0, j): post.color_of(post.values[0][j]) for j in columns}
        labels = {(0, j): post.number_at(0, j, fill=fills[0, j]) for j in columns}
        for j in columns:
            recolour = self.recolour(post, {(0, j): fills[0, j]})
            post.set_label(0, j, labels[0, j])
            self.adopt(post, [labels[0, j]])
            self.play(*(light.over(grid.cells[0, j]) for light, grid in zip(lights, (pre, post))), Indicate(dots[j], scale_factor=1.8), *recolour,
                      TransformFromCopy(dots[j], labels[0, j]), run_time=self.entry_time)
        self.play(*(FadeOut(light) for light in lights), run_time=0.3)
        self.rest()

    # -- every row ------------------------------------------------------------------------------
    def every_row(self, rows, ops, plot, title) -> None:
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        columns = axis_labels("d_model", rec.tokens, d)
        slots = self.token_slots()
        common = dict(row_slots=slots, max_columns=EVERY_ROW_SLOTS, cell_height=row_height(len(slots), most=0.9))
        field = ffn_input(rec)
        before = NumberGrid(rec.tensors[field], self.token_names, columns, look, source=(field,), color_limit=self.limit(field), **common)
        after = NumberGrid(rec.ffn_out, None, columns, look, source=("ffn_out",), color_limit=self.limit("ffn_out"), **common)
        arrow = Arrow(LEFT * 0.6, RIGHT * 0.6, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.25)
        box = VGroup(text("FFN, row by row", CAPTION_SIZE, FFN_COLOR, bold=True), arrow,
                     text(f"{shape_text(rec.n, d)} → {shape_text(rec.n, rec.config.d_ff)} → {shape_text(rec.n, d)}", HEADER_SIZE, look.muted)).arrange(DOWN, buff=0.15)
        names = [text(name, HEADER_SIZE, look.muted).next_to(grid.body(), DOWN, buff=0.12) for grid, name in ((before, field), (after, "ffn_out"))]
        before.header_group.add(names[0])
        after.header_group.add(names[1])
        layout = VGroup(before, box, after).arrange(RIGHT, buff=0.5)
        box.set_y(before.cell_group.get_y())
        self.place(layout, title, grow=1.6)
        self.step(self.one_after_another(FadeOut(VGroup(*rows.values(), *ops, plot)), FadeIn(layout)), caption="the same function on every row")
        lights = [Highlight(look, grid.row(f)) for grid in (before, after)]  # one per grid: none crosses the middle text
        self.step(*(FadeIn(light) for light in lights), caption="each row reads no other row: only attention mixes positions")
