"""Scene 11 — inside the FFN: one token's row widened, passed through the activation, narrowed."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, Arrow, Indicate, Line, VGroup

from blockviz.record_fields import BY_NAME, axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import (
    activation_curve,
    activation_formula,
    row_grid,
    shape_text,
    shown_value,
)
from blockviz.scenes.choreography import adopt, carry, cascade, one_after_another, recolour, second_half
from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, HighlightJump, NumberGrid, cell_width_for
from blockviz.scenes.layout import column_of, row_height
from blockviz.scenes.light_timing import aside_while_carried
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE
from blockviz.scenes.symbols import bare, parameter_symbol, symbol
from blockviz.scenes.text import formula, text, typeset
from blockviz.scenes.wide import edges_and_largest, slots_of

NAME = "ffn"
TOKEN_AXIS = True
ORDER = 120
DESCRIPTION = "one row through the FFN: widen to d_ff, the activation curve, narrow back (gated: SiLU(gate) ⊙ up)"
CHAPTER = "Inside the FFN"
CAPTION = (
    "The FFN widens one token's row to its hidden width, bends each through its activation, {activation}, and narrows it back; "
    "every row goes through the same function without reading any other row."
)
GATED_CHAPTER = "Inside the gated FFN ({glu})"
GATED_CAPTION = (
    "The gated FFN ({glu}) widens one token's row twice to its hidden width, a gate through {activation} and an up "
    "projection, multiplies the two entry by entry and narrows the product back; every row goes through the same "
    "function without reading any other row."
)

EVERY_ROW_SLOTS = 4
"""Columns drawn of the ln2 and ffn_out grids when every row is shown."""
ROW_SLOTS = 7
"""Columns drawn of each row (beside the activation's curve)."""
OP_ARROW = 0.44
"""The height of the arrow of an operation between two rows (× W_in, the activation, × W_out)."""
GATED_OP_ARROW = 0.32
"""The gated FFN's: its worksheet has three more rows (gate, up, their product) in the same height."""
GATED_ENTRIES = 4
"""Entries drawn of each row of a gated FFN wider than that: the first, the last and the largest, ⋯ between."""

ACTIVATION_SAYS = {
    "gelu": "negative values squashed towards 0, positive ones kept",
    "relu": "negative values become 0, positive ones kept",
    "gelu_tanh": "negative values squashed towards 0, positive ones kept",  # GPT-2's GELU, its tanh form
    "silu": "negative values squashed towards 0, positive ones kept",
}
"""What the activation does, after its name (:attr:`blockviz.block_config.BlockConfig.activation_name`)."""


def product_decimals(products, total_decimals: int = 2, most: int = 4) -> int:
    """The fewest decimals (from ``total_decimals``) at which every ``(factors, product)`` reads
    right: the written factors multiply to the product written with ``total_decimals`` within one
    unit of its last digit (a gated FFN's ``ffn_gate_act ⊙ ffn_up = ffn_post``, column by column)."""
    for decimals in range(total_decimals, most + 1):
        if all(
            abs(math.prod(shown_value(factor, decimals) for factor in factors) - shown_value(product, total_decimals))
            <= 10**-total_decimals + 1e-9
            for factors, product in products
        ):
            return decimals
    return most


def dots_caption(what: str, d_ff: int, shown: int) -> str:
    """The caption as the curve's dots arrive: one per entry of the ``what`` row, and how many of
    the ``d_ff`` are written out in the row when it is elided."""
    written = "" if shown >= d_ff else f", {shown} of them written out in the row"
    return f"each entry of the {what} is a point on the curve ({d_ff} dots{written})"


def times_weights(kind: str, bias: bool) -> str:
    """Mathtext of the product by the FFN's ``W_<kind>`` (and ``+ b_<kind>`` with ``bias``):
    ``times_weights("in", True)`` → ``$\\times\\, W_{\\mathrm{in}} + b_{\\mathrm{in}}$``."""
    weights = bare(parameter_symbol(f"ffn.W_{kind}"))
    plus = f" + {bare(parameter_symbol(f'ffn.b_{kind}'))}" if bias else ""
    return f"$\\times\\, {weights}{plus}$"


def ffn_input(rec) -> str:
    """The field the FFN reads: ``ln2`` (pre-norm), or a post-norm block's normalised sum ``resid_mid_norm``."""
    return rec.architecture.ffn_input


class InsideFFN(RecordScene):
    """The position-wise FFN on row f (Vaswani et al. 2017, Eq. 2, with GELU or ReLU):
    ``ffn_pre = ln2 @ W_in + b_in`` ``(d_ff,)``, ``ffn_post = activation(ffn_pre)`` entry by
    entry, ``ffn_out = ffn_post @ W_out + b_out`` ``(d_model,)``. Every row goes through the same
    function and reads no other row.

    The activation's curve is drawn from ``torch.nn.functional``; its dots sit at the record's
    ``(ffn_pre[f, j], ffn_post[f, j])`` for every j of the row.

    A gated FFN (Shazeer 2020, Eq. 6; Llama's SwiGLU) is drawn as its own steps:
    ``ffn_gate = ln2 @ W_gate``, ``ffn_gate_act = activation(ffn_gate)`` (the curve's dots at
    ``(ffn_gate[f, j], ffn_gate_act[f, j])``), ``ffn_up = ln2 @ W_up``, ``ffn_post =
    ffn_gate_act ⊙ ffn_up`` written column over column (``products``), ``ffn_out = ffn_post @
    W_out``. Rows wider than :data:`GATED_ENTRIES` show their first, last and largest entries
    (the d_ff rows one choice, by ``|ffn_post|``), ⋯ between, and how many are hidden.
    """

    entry_time = 0.6
    """Run time (s) of one entry of a row: the highlights step onto it and its number arrives
    (carried from its dot on the curve, or written as the product of the column)."""

    def next_entry(self, post, j: int):
        """Entry ``j`` of ``post``'s row about to be written: (the animations colouring its cell,
        its number — set in the grid, still to be shown)."""
        fill = post.color_of(post.values[0][j])
        label = post.number_at(0, j, fill=fill)
        recolouring = recolour(self, post, {(0, j): fill})
        post.set_label(0, j, label)
        adopt(self, post, [label])
        return recolouring, label

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.products: list[tuple] = []  # (factor, factor, product) labels shown: a gated FFN's gate_act ⊙ up = post

    @property
    def curve_variable(self) -> str:
        """What the activation curve maps, as the rows and axes name it (:mod:`blockviz.symbols`):
        a gated FFN's gate g, else the hidden row u."""
        return bare(symbol("ffn_gate" if self.record.architecture.gated else "ffn_pre", self.record))

    def construct(self) -> None:
        rec = self.record
        name = rec.config.activation_name
        if rec.architecture.gated:
            title = self.show_title(f"Inside the gated FFN: {name}(gate) ⊙ up, narrow back")
            rows, ops, plot = self.build_gated(title)
            self.work_gated_row(rows, ops, plot)
        else:
            title = self.show_title(f"Inside the FFN: widen, through {name}, narrow back")
            rows, ops, plot = self.build(title)
            self.work_row(rows, ops, plot)
        self.every_row(rows, ops, plot, title)

    # -- one row --------------------------------------------------------------------------------
    def build(self, title):
        rec, look, f = self.record, self.look, self.focus
        d, d_ff = rec.config.d_model, rec.config.d_ff
        token = self.token_name(f)
        row = row_grid
        hidden = {"header_color": look.ffn, "max_columns": ROW_SLOTS, "empty": True}  # the d_ff-wide rows
        rows = {
            "ln2": row(rec, ffn_input(rec), f, f"{symbol(ffn_input(rec), rec)} “{token}”", look, max_columns=ROW_SLOTS),
            **{name: row(rec, name, f, symbol(name, rec), look, **hidden) for name in ("ffn_pre", "ffn_post")},
            "ffn_out": row(rec, "ffn_out", f, symbol("ffn_out", rec), look, max_columns=ROW_SLOTS, empty=True),
        }
        activation = rec.config.activation
        ops = [
            self.op(f"{times_weights('in', True)}   ({shape_text(d, d_ff)}: widen)"),
            self.op(f"{rec.config.activation_name}, entry by entry"),
            self.op(f"{times_weights('out', True)}   ({shape_text(d_ff, d)}: narrow)"),
        ]
        grids = list(rows.values())
        stack = column_of([grids[0], ops[0], grids[1], ops[1], grids[2], ops[2], grids[3]], buff=0.14)
        for grid in grids[1:]:  # cells in one column, whatever the header widths
            grid.shift(RIGHT * (grids[0].cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        for op in ops:
            op.align_to(grids[0].cell_group, LEFT)
        pre, post = rec.ffn_pre[f].tolist(), rec.ffn_post[f].tolist()
        axes, curve, dots, labels = activation_curve(
            pre, post, activation, look, look.ffn, axis_names=(symbol("ffn_pre", rec), symbol("ffn_post", rec))
        )
        equation = formula(activation_formula(activation, self.curve_variable), look.ffn, 20).next_to(
            axes, UP, buff=0.2
        )
        plot = VGroup(axes, curve, labels, equation, dots)
        plot.axes, plot.curve, plot.dots, plot.frame = axes, curve, dots, VGroup(axes, labels, equation)
        layout = VGroup(stack, plot).arrange(RIGHT, buff=0.7)
        self.place(layout, title, grow=1.2)
        self.plot = plot
        return rows, ops, plot

    def op(self, shown: str, length: float = OP_ARROW) -> VGroup:
        """An operation between two rows: a down arrow ``length`` tall, ``shown`` beside it."""
        arrow = Arrow(
            UP * length / 2,
            DOWN * length / 2,
            buff=0,
            color=self.look.muted,
            stroke_width=3,
            max_tip_length_to_length_ratio=0.4,
        )
        return VGroup(arrow, typeset(shown, HEADER_SIZE, self.look.muted)).arrange(RIGHT, buff=0.15)

    def work_row(self, rows, ops, plot) -> None:
        rec, f = self.record, self.focus
        d, d_ff = rec.config.d_model, rec.config.d_ff
        frames = {
            name: VGroup(grid.cell_group, grid.header_group, grid.ellipsis_group)
            for name, grid in rows.items()
            if name != "ln2"
        }
        # The whole worksheet in view at once: the rows to fill, the operations between them, the curve's axes.
        self.step(
            Reveal(rows["ln2"]),
            FadeIn(VGroup(*frames.values(), *ops, plot.frame)),
            caption=f"the normalized row of “{self.token_name(f)}”: the width, {d} numbers",
        )
        for name, frame in frames.items():  # the empty rows as whole grids from now on: their numbers go into them
            self.remove(frame)
            self.add(rows[name])
        self.step(*self.fill(rows["ffn_pre"]), caption=f"the wide layer: {d} → {d_ff} numbers, the FFN's hidden width")
        self.step(
            FadeIn(plot.curve),
            caption=f"the activation, {rec.config.activation_name}: {ACTIVATION_SAYS[rec.config.activation]}",
        )
        self.step(FadeIn(plot.dots), caption=dots_caption("row", d_ff, len(rows["ffn_pre"].shown_columns())))
        self.trace_entries(rows["ffn_pre"], rows["ffn_post"], plot.dots)
        self.step(*self.fill(rows["ffn_out"]), caption=f"the narrow layer: back to the width, {d} numbers")

    def fill(self, grid: NumberGrid) -> list:
        """Animations colouring a row's cells and writing its numbers (the grid was drawn empty)."""
        keys = [(0, j) for j in grid.shown_columns()]
        fills = {key: grid.color_of(grid.values[0][key[1]]) for key in keys}
        labels = {key: grid.number_at(*key, fill=fills[key]) for key in keys}
        return cascade(self, grid, fills, labels)

    def trace_entries(self, pre: NumberGrid, post: NumberGrid, dots: VGroup) -> None:
        """Light each shown entry of ffn_pre (gated: ffn_gate), its dot on the curve, then its
        ffn_post (gated: ffn_gate_act) value: the dot's height, carried from the dot into its
        cell (the lights out of its way meanwhile)."""
        columns = pre.shown_columns()
        lights = [
            Highlight(self.look, grid.cells[0, columns[0]]) for grid in (pre, post)
        ]  # one per row: none crosses the text between
        self.play(
            *(FadeIn(light) for light in lights),
            *self.say(f"entry by entry: read {self.curve_variable} on the curve, write down its height"),
            run_time=self.step_time,
        )
        for j in columns:
            recolour, label = self.next_entry(post, j)
            height = label.copy().move_to(dots[j])
            self.play(
                *(
                    HighlightJump(light, grid.cells[0, j], rate_func=aside_while_carried)
                    for light, grid in zip(lights, (pre, post))
                ),
                Indicate(dots[j], scale_factor=1.8),
                *recolour,
                carry(self, [height], [label]),
                run_time=self.entry_time,
            )
        self.play(*(FadeOut(light) for light in lights), run_time=0.3)
        self.rest()

    # -- the gated FFN (one row) -------------------------------------------------------------------
    def build_gated(self, title):
        """The gated FFN's worksheet for row f: ``ln2`` (d_model), ``ffn_gate``, ``ffn_gate_act``,
        ``ffn_up``, ``ffn_post`` (d_ff, one choice of columns: the first, the last and the largest
        of ffn_post), ``ffn_out`` (d_model); the product written as ``gate_act ⊙ up = post``,
        column over column; the activation's curve with a dot at each ``(ffn_gate, ffn_gate_act)``."""
        rec, look, f = self.record, self.look, self.focus
        d, d_ff = rec.config.d_model, rec.config.d_ff
        field = ffn_input(rec)
        wide = [field, "ffn_out"]
        hidden = ["ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post"]
        row_of = {name: rec.tensors[name][f] for name in wide + hidden}
        columns = {name: edges_and_largest([row_of[name].tolist()], GATED_ENTRIES) for name in wide}
        shared = edges_and_largest([row_of["ffn_post"].tolist()], GATED_ENTRIES)
        columns.update({name: shared for name in hidden})
        factors = product_decimals(
            [
                ([row_of["ffn_gate_act"][j].item(), row_of["ffn_up"][j].item()], row_of["ffn_post"][j].item())
                for j in shared
            ]
        )
        places = {name: factors if name in ("ffn_gate_act", "ffn_up") else 2 for name in wide + hidden}
        width = max(
            cell_width_for([[row_of[name][j].item() for j in columns[name]]], places[name]) for name in wide + hidden
        )  # one width for the shown: columns aligned
        token = self.token_name(f)
        names = {
            field: f"{symbol(field, rec)} “{token}”",
            **{name: symbol(name, rec) for name in ("ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out")},
        }
        rows = {
            name: self.feature_row(
                name,
                names[name],
                columns[name],
                places[name],
                width,
                empty=name != field,
                color=look.ffn if name in hidden else None,
                headers=name in (field, "ffn_gate", "ffn_out"),
            )
            for name in [field, "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out"]
        }
        bias = rec.architecture.bias
        ops = [
            self.op(f"{times_weights('gate', bias)}   ({shape_text(d, d_ff)}: widen)", GATED_OP_ARROW),
            self.op(f"{rec.config.activation_name}, entry by entry", GATED_OP_ARROW),
            self.op(f"{times_weights('out', bias)}   ({shape_text(d_ff, d)}: narrow)", GATED_OP_ARROW),
        ]
        grids = list(rows.values())
        product = VGroup(*grids[2:5])  # gate_act ⊙ up = post, written column over column
        grids[3].next_to(grids[2].cell_group, DOWN, buff=0.16)
        grids[4].next_to(grids[3].cell_group, DOWN, buff=0.32)
        stack = column_of([grids[0], ops[0], grids[1], ops[1], product, ops[2], grids[5]], buff=0.14)
        for grid in grids[1:]:  # cells in one column, whatever the header widths
            grid.shift(RIGHT * (grids[0].cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        for op in ops:
            op.align_to(grids[0].cell_group, LEFT)
        signs = VGroup(
            *(
                text(sign, CAPTION_SIZE, look.text).next_to(grid.row_headers[0], LEFT, buff=0.2)
                for sign, grid in (("⊙", grids[3]), ("=", grids[4]))
            )
        )
        rule_y = (grids[3].cell_group.get_bottom()[1] + grids[4].cell_group.get_top()[1]) / 2
        rule = Line(LEFT, RIGHT, color=look.muted, stroke_width=2).put_start_and_end_on(
            [signs.get_left()[0] - 0.1, rule_y, 0], [grids[4].cell_group.get_right()[0], rule_y, 0]
        )
        up_from = typeset(times_weights("up", bias), HEADER_SIZE, look.muted).next_to(  # u: the input row × W_up
            grids[3].body(), RIGHT, buff=0.3
        )
        stack.add(signs, rule, up_from)
        pre, post = rec.ffn_gate[f].tolist(), rec.ffn_gate_act[f].tolist()
        axes, curve, dots, labels = activation_curve(
            pre, post, rec.config.activation, look, look.ffn, width=3.5, height=2.9
        )
        gate_axis = (
            typeset(symbol("ffn_gate", rec), HEADER_SIZE, look.muted)
            .next_to(axes.x_axis.get_right(), DOWN, buff=0.12)
            .align_to(axes.x_axis.get_right(), RIGHT)
        )
        if (
            gate_axis.get_left()[0] < labels[2].get_right()[0] + 0.1
        ):  # under the axis, clear of the curve; below its "1" if they would meet
            gate_axis.next_to(labels[2], DOWN, buff=0.08).align_to(axes.x_axis.get_right(), RIGHT)
        labels.submobjects[0] = gate_axis
        labels.submobjects[1] = (
            typeset(symbol("ffn_gate_act", rec), HEADER_SIZE, look.muted).move_to(labels[1]).align_to(labels[1], LEFT)
        )  # the curve maps the gate
        equation = formula(activation_formula(rec.config.activation, self.curve_variable), look.ffn, 20).next_to(
            axes, UP, buff=0.2
        )
        hidden = [
            f"{what}: {total - len(shown)} of {total}"
            for what, shown, total in (
                ("d_ff", shared, d_ff),
                ("input", columns[field], d),
                ("output", columns["ffn_out"], d),
            )
            if len(shown) < total
        ]
        lines = ["⋯ hides entries:", *hidden, "shown: the first, the last", "and the largest"] if hidden else []
        note = VGroup(*(text(line, HEADER_SIZE, look.muted) for line in lines)).arrange(
            DOWN, aligned_edge=LEFT, buff=0.1
        )
        plot = VGroup(axes, curve, labels, equation, dots)
        plot.axes, plot.curve, plot.dots, plot.frame = axes, curve, dots, VGroup(axes, labels, equation, note)
        side = VGroup(plot, note).arrange(DOWN, buff=0.5, aligned_edge=LEFT) if lines else plot
        layout = VGroup(stack, side).arrange(RIGHT, buff=0.6)
        self.place(layout, title, grow=1.2, said=self.gated_captions(len(shared)).values())
        plot.add(note)  # leaves with the plot
        self.plot = plot
        rows["signs"], rows["rule"], rows["up_from"] = signs, rule, up_from
        return rows, ops, plot

    def feature_row(
        self,
        field: str,
        name: str,
        shown: list[int],
        decimals: int,
        width: float,
        *,
        empty: bool,
        color: str | None,
        headers: bool,
    ) -> NumberGrid:
        """Row f of ``field`` ``(d,)`` as a 1 × d grid headed ``name``, its columns ``shown`` (⋯ between)."""
        rec, f = self.record, self.focus
        d = rec.tensors[field].shape[-1]
        labels = axis_labels(BY_NAME[field].shape[-1], rec.tokens, d) if headers else None
        return NumberGrid(
            rec.tensors[field][f][None, :],
            [name],
            labels,
            self.look,
            source=lambda _, j: (field, f, j),
            column_slots=slots_of(shown, d),
            row_header_color=color,
            cell_width=width,
            decimals=decimals,
            filled=not empty,
            show_numbers=not empty,
            fit_numbers=False,
        )  # ``width`` holds every shown number

    def gated_captions(self, shown: int) -> dict[str, str]:
        """The gated FFN's captions, by step (``shown``: how many of the d_ff entries the rows write
        out), so that :meth:`~blockviz.scenes.base.RecordScene.place` keeps the rows clear of the tallest."""
        rec = self.record
        d, d_ff, name = rec.config.d_model, rec.config.d_ff, rec.config.activation_name
        return {
            "input": f"the normalized row of “{self.token_name(self.focus)}”: the width, {d} numbers",
            "gate": f"the gate: its weights widen the row, {d} → {d_ff} numbers, the FFN's hidden width",
            "curve": f"the gate goes through {name}: {ACTIVATION_SAYS[rec.config.activation]}",
            "dots": dots_caption("gate", d_ff, shown),
            "up": f"a second wide layer, up: the same row times its own weights, {d_ff} numbers too",
            "out": f"the output weights narrow all {d_ff} entries back to the width, {d} numbers",
        }

    def work_gated_row(self, rows, ops, plot) -> None:
        field = ffn_input(self.record)
        grids = {key: grid for key, grid in rows.items() if isinstance(grid, NumberGrid)}
        said = self.gated_captions(len(grids["ffn_gate"].shown_columns()))
        frames = {
            key: VGroup(grid.cell_group, grid.header_group, grid.ellipsis_group)
            for key, grid in grids.items()
            if key != field
        }
        self.step(
            Reveal(grids[field]),
            FadeIn(VGroup(*frames.values(), *ops, rows["signs"], rows["rule"], rows["up_from"], plot.frame)),
            caption=said["input"],
        )
        for key, frame in frames.items():
            self.remove(frame)
            self.add(grids[key])
        self.step(*self.fill(grids["ffn_gate"]), caption=said["gate"])
        self.step(FadeIn(plot.curve), caption=said["curve"])
        self.step(FadeIn(plot.dots), caption=said["dots"])
        self.trace_entries(grids["ffn_gate"], grids["ffn_gate_act"], plot.dots)
        self.step(*self.fill(grids["ffn_up"]), caption=said["up"])
        self.multiply_entries(grids["ffn_gate_act"], grids["ffn_up"], grids["ffn_post"])
        self.step(*self.fill(grids["ffn_out"]), caption=said["out"])

    def multiply_entries(self, gate: NumberGrid, up: NumberGrid, post: NumberGrid) -> None:
        """Light each shown column of ``gate`` ⊙ ``up`` and write its product in ``post``;
        ``self.products`` keeps each ``(gate label, up label, post label)``."""
        columns = post.shown_columns()
        column = lambda j: VGroup(*(grid.cells[0, j] for grid in (gate, up, post)))  # noqa: E731
        light = Highlight(self.look, column(columns[0]))
        self.play(
            FadeIn(light),
            *self.say(f"entry by entry, the gate scales up: {self.record.config.activation_name}(gate) ⊙ up"),
            run_time=self.step_time,
        )
        for j in columns:
            recolour, label = self.next_entry(post, j)
            self.play(light.over(column(j)), *recolour, FadeIn(label, rate_func=second_half), run_time=self.entry_time)
            self.products.append((gate.labels[0, j], up.labels[0, j], label))
        self.play(FadeOut(light), run_time=0.3)
        self.rest()

    # -- every row ------------------------------------------------------------------------------
    def every_row(self, rows, ops, plot, title) -> None:
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        columns = axis_labels("d_model", rec.tokens, d)
        slots = self.token_slots()
        common = dict(row_slots=slots, max_columns=EVERY_ROW_SLOTS, cell_height=row_height(len(slots), most=0.9))
        field = ffn_input(rec)
        before = NumberGrid(
            rec.tensors[field],
            self.token_names,
            columns,
            look,
            source=(field,),
            **common,
        )
        after = NumberGrid(rec.ffn_out, None, columns, look, source=("ffn_out",), **common)
        arrow = Arrow(
            LEFT * 0.6, RIGHT * 0.6, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.25
        )
        ffn_name = "gated FFN" if rec.architecture.gated else "FFN"
        box = VGroup(
            text(f"{ffn_name}, row by row", CAPTION_SIZE, look.ffn, bold=True),
            arrow,
            text(
                f"{shape_text(rec.n, d)} → {shape_text(rec.n, rec.config.d_ff)} → {shape_text(rec.n, d)}",
                HEADER_SIZE,
                look.muted,
            ),
        ).arrange(DOWN, buff=0.15)
        names = [
            typeset(symbol(name, rec), HEADER_SIZE, look.muted).next_to(grid.body(), DOWN, buff=0.12)
            for grid, name in ((before, field), (after, "ffn_out"))
        ]
        before.header_group.add(names[0])
        after.header_group.add(names[1])
        layout = VGroup(before, box, after).arrange(RIGHT, buff=0.5)
        box.set_y(before.cell_group.get_y())
        self.place(layout, title, grow=1.6)
        self.step(
            one_after_another(Conceal(VGroup(*rows.values(), *ops, plot)), Reveal(layout)),
            caption="the same function on every row",
            run_time=2.5 * self.step_time,  # two cascades in turn: ≤ 5 % of the pixels a frame
        )
        lights = [
            Highlight(look, grid.row(f)) for grid in (before, after)
        ]  # one per grid: none crosses the middle text
        self.step(
            *(FadeIn(light) for light in lights), caption="each row reads no other row: only attention mixes positions"
        )
