"""Scene 9 — multi-head attention: the heads side by side, concatenated, then projected by W_O."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Line, TransformFromCopy, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import parameter_grid, regroup, row_grid, shape_text
from blockviz.scenes.grids import ELLIPSIS_ACROSS, Highlight, NumberGrid, visible_slots
from blockviz.scenes.layout import fit_width
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, HEADER_SIZE, TITLE_SIZE
from blockviz.scenes.text import text

DESCRIPTION = "heads side by side with their own weights; outputs concatenated, times W_O = attn_out"
CHAPTER = "Multi-head attention"
CAPTION = ("Several attention heads read the same rows, each with its own weights; their outputs are concatenated "
           "and multiplied by W_O to give the attention output.")

HEAD_SLOTS = 3
"""At most this many heads drawn side by side (⋯ stands for the rest)."""


class MultiHead(RecordScene):
    """Every head h attends on the same rows with its own weights ``(n, n)`` and gives its own
    output ``(n, d_head)``; the outputs side by side are ``concat`` ``(n, d_model)``, and
    ``attn_out = concat @ W_O + b_O`` ``(n, d_model)`` (Vaswani et al. 2017, §3.2.2).

    The focus token's row of the projection is shown: its concatenated row beside W_O, plus b_O,
    gives its attn_out row (the products c_i · W_O[i, j] are not recorded, so they are said, not shown).
    """

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(f"Multi-head attention: {rec.config.n_heads} heads side by side")
        heads = self.build_heads(title)
        self.show_heads(heads)
        concat, work = self.build_projection(title)
        self.concatenate(heads, concat)
        self.project(concat, work)

    # -- the heads ----------------------------------------------------------------------------
    def build_heads(self, title) -> dict:
        rec, look = self.record, self.look
        slots = visible_slots(rec.config.n_heads, self.h, HEAD_SLOTS)
        crowded = len(slots) >= 3  # three heads across: narrower pattern cells, fewer output columns
        max_columns, pattern_width = (3, 0.26) if crowded else (4, CELL_HEIGHT)
        blocked = rec.mask == -math.inf
        columns, weights, outputs, names, gaps = [], {}, {}, VGroup(), VGroup()
        for k, h in enumerate(slots):
            if h is None:
                gap = text(ELLIPSIS_ACROSS, TITLE_SIZE, look.muted)
                gaps.add(gap)
                columns.append(gap)
                continue
            pattern = NumberGrid(rec.weights[h], self.token_names if k == 0 else None, None, look, colors="weights", blocked=blocked,
                                 show_numbers=False, row_focus=self.focus, column_focus=self.focus, cell_width=pattern_width)
            pattern.header_group.add(text("weights", HEADER_SIZE, look.muted).next_to(pattern.cell_group, DOWN, buff=0.12))
            output = NumberGrid(rec.head_outputs[h], None, axis_labels("d_head", rec.tokens, rec.config.d_head), look, source=("head_outputs", h),
                                color_limit=self.limit("head_outputs"), row_focus=self.focus, max_columns=max_columns, column_header_color=look.output)
            output.header_group.add(text("output", HEADER_SIZE, look.output).next_to(output.cell_group, DOWN, buff=0.12))
            output.next_to(pattern.cell_group, RIGHT, buff=0.3)
            output.shift(UP * (pattern.cell_group.get_top()[1] - output.cell_group.get_top()[1]))
            name = text(f"head {h}", CAPTION_SIZE, look.text, bold=True).next_to(VGroup(pattern.cell_group, output), UP, buff=0.15)
            name.set_x(VGroup(pattern.cell_group, output.cell_group).get_x())
            names.add(name)
            columns.append(VGroup(pattern, output, name))
            weights[h], outputs[h] = pattern, output
        layout = VGroup(*columns).arrange(RIGHT, buff=0.7)
        first = next(iter(weights.values()))
        for h, pattern in weights.items():
            columns[slots.index(h)].shift(UP * (first.cell_group.get_top()[1] - pattern.cell_group.get_top()[1]))
        for gap in gaps:
            gap.set_y(first.cell_group.get_y())
        self.place(layout, title)
        return {"layout": layout, "weights": weights, "outputs": outputs, "names": names, "gaps": gaps}

    def show_heads(self, heads: dict) -> None:
        rec, f = self.record, self.focus
        weights, outputs = heads["weights"], heads["outputs"]
        self.play(FadeIn(VGroup(*weights.values(), heads["names"], heads["gaps"])),
                  *self.say(f"{rec.config.n_heads} heads read the same {rec.n} rows, each through its own W_Q, W_K: its own weights"), run_time=self.step_time)
        self.rest()
        self.play(FadeIn(VGroup(*outputs.values())),
                  *self.say(f"each mixes its own values (its own W_V): d_head = {rec.config.d_head} numbers per row"), run_time=self.step_time)
        self.rest()
        rows = VGroup(*(grid.row(f) for grid in list(weights.values()) + list(outputs.values())))
        self.highlight = Highlight(self.look, rows)
        self.play(FadeIn(self.highlight), *self.say(f"row “{self.token_name(f)}”: a different mixture in every head"), run_time=self.step_time)
        self.rest()

    # -- concatenation and W_O ------------------------------------------------------------------
    def build_projection(self, title):
        rec, look, f = self.record, self.look, self.focus
        d_model, d_head = rec.config.d_model, rec.config.d_head
        concat = NumberGrid(rec.concat, self.token_names, axis_labels("d_model", rec.tokens, d_model), look, source=("concat",),
                            color_limit=self.limit("concat"), row_focus=f, column_header_color=look.output)
        concat.header_group.add(text(f"concat  ({shape_text(rec.n, d_model)})", HEADER_SIZE, look.output).next_to(concat.cell_group, DOWN, buff=0.12))
        concat.segments = self.head_segments(concat, d_head)
        concat.add(concat.segments)
        work = self.build_work()
        layout = VGroup(concat, work).arrange(RIGHT, buff=0.8, aligned_edge=UP)
        work.shift(UP * (concat.cell_group.get_top()[1] - work.column.cell_group.get_top()[1]))
        self.place(layout, title)
        return concat, work

    def head_segments(self, concat: NumberGrid, d_head: int) -> VGroup:
        """A bracket and a "head h" label over each head's columns of the concatenation."""
        segments = VGroup()
        by_head: dict[int, list[int]] = {}
        for j in concat.shown_columns():
            by_head.setdefault(j // d_head, []).append(j)
        top = max(header.get_top()[1] for header in concat.column_headers.values()) + 0.08
        for h, shown in by_head.items():
            left = concat.cells[concat.shown_rows()[0], shown[0]].get_left()[0] + 0.04
            right = concat.cells[concat.shown_rows()[0], shown[-1]].get_right()[0] - 0.04
            bracket = Line([left, top, 0], [right, top, 0], color=self.look.output, stroke_width=3)
            name = fit_width(text(f"head {h}", HEADER_SIZE, self.look.output), right - left).next_to(bracket, UP, buff=0.08)
            segments.add(VGroup(bracket, name))
        return segments

    def build_work(self) -> VGroup:
        """Row f of concat as a column beside W_O, then b_O and the attn_out row under W_O."""
        rec, look, f = self.record, self.look, self.focus
        d_model = rec.config.d_model
        features = axis_labels("d_model", rec.tokens, d_model)
        column = NumberGrid(rec.concat[f][:, None], features, [f"“{self.token_name(f)}”"], look, source=lambda i, _: ("concat", f, i),
                            max_rows=8, color_limit=self.limit("concat"), column_header_color=look.output)
        weights = parameter_grid(rec, "attn.W_O", look, row_names=None, column_names=features)
        weights.next_to(column.cell_group, RIGHT, buff=0.6).align_to(column.cell_group, UP)
        weights.shift(UP * (column.cell_group.get_top()[1] - weights.cell_group.get_top()[1]))
        times = text("×", TITLE_SIZE, look.text).move_to((column.cell_group.get_right() + weights.cell_group.get_left()) / 2)
        name = text("W_O", HEADER_SIZE, look.muted).next_to(weights.column_headers[weights.shown_columns()[0]], UP, buff=0.12).align_to(weights.cell_group, LEFT)
        bias = parameter_grid(rec, "attn.b_O", look, values=rec.params["attn.b_O"][None, :], index=lambda _, j: (j,), row_names=["b_O"], column_names=None)
        bias.next_to(weights.cell_group, DOWN, buff=0.2).align_to(weights.cell_group, LEFT)
        result = row_grid(rec, "attn_out", f, "attn_out", look, column_headers=False, header_color=look.output)
        result.next_to(bias.cell_group, DOWN, buff=0.34).align_to(weights.cell_group, LEFT)
        rule_y = (bias.cell_group.get_bottom()[1] + result.cell_group.get_top()[1]) / 2
        rule = Line([result.header_group.get_left()[0] - 0.35, rule_y, 0], [result.cell_group.get_right()[0], rule_y, 0], color=look.muted, stroke_width=2)
        plus = text("+", CAPTION_SIZE, look.text).move_to(bias.cell_group).set_x(bias.header_group.get_left()[0] - 0.25)
        equals = text("=", CAPTION_SIZE, look.text).move_to(result.cell_group).set_x(result.header_group.get_left()[0] - 0.25)
        work = VGroup(column, times, weights, name, bias, plus, rule, result, equals)
        work.column, work.weights, work.bias, work.result, work.name = column, weights, bias, result, name
        work.first = VGroup(column, times, weights, name)
        work.bias_line = VGroup(bias, plus)
        work.result_line = VGroup(rule, result, equals)
        return work

    def concatenate(self, heads: dict, concat: NumberGrid) -> None:
        rec = self.record
        d_head = rec.config.d_head
        moves = []
        for h, output in heads["outputs"].items():
            for (i, c), label in output.labels.items():
                if (i, h * d_head + c) in concat.labels:
                    moves.append(TransformFromCopy(label, concat.labels[i, h * d_head + c]))
        moved = [move.mobject for move in moves]  # TransformFromCopy animates the target label itself
        rest = VGroup(concat.cell_group, concat.header_group, concat.ellipsis_group, concat.segments,
                      *(label for label in concat.labels.values() if not any(label is target for target in moved)))
        self.play(FadeOut(VGroup(*heads["weights"].values(), heads["names"], self.highlight, heads["gaps"])), run_time=self.step_time / 2)
        self.play(FadeOut(VGroup(*heads["outputs"].values())), FadeIn(rest), *moves,
                  *self.say(f"concatenate: the heads' outputs side by side, {shape_text(rec.n, rec.config.d_model)}"), run_time=self.step_time)
        regroup(self, concat, rest, *moved)
        self.rest()

    def project(self, concat: NumberGrid, work: VGroup) -> None:
        rec, look, f = self.record, self.look, self.focus
        d_model = rec.config.d_model
        highlight = Highlight(look, concat.row(f))
        self.play(FadeIn(highlight), *self.say(f"row “{self.token_name(f)}” of the concatenation…"), run_time=self.step_time)
        column = work.column
        moves = [TransformFromCopy(concat.labels[f, i], column.labels[i, 0]) for i in column.shown_rows() if (f, i) in concat.labels]
        moved = [move.mobject for move in moves]
        arriving = VGroup(column.cell_group, column.header_group, column.ellipsis_group,
                          *(label for label in column.labels.values() if not any(label is target for target in moved)))
        appearing = VGroup(arriving, *work.first[1:])
        self.play(FadeIn(appearing), *moves, *self.say(f"…times W_O ({shape_text(d_model, d_model)})"), run_time=self.step_time)
        regroup(self, column, appearing, *moved)
        self.add(*work.first[1:])
        self.rest()
        self.play(highlight.over(work.weights.cell_group),
                  *self.say("each entry of the row times its row of W_O, added down each column"), run_time=self.step_time)
        self.rest()
        self.play(FadeIn(work.bias_line), *self.say("plus the bias b_O"), run_time=self.step_time)
        self.rest(0.4)
        self.play(FadeIn(work.result_line), highlight.over(work.result.cell_group),
                  *self.say(f"= attn_out of “{self.token_name(f)}”"), run_time=self.step_time)
        self.rest()
        self.play(*self.say(f"every row alike: attn_out is {shape_text(rec.n, d_model)}, as wide as the residual stream"), run_time=self.step_time)
        self.rest(1.5)
