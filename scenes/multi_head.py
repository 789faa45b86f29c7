"""Scene 9 — multi-head attention: the heads side by side, concatenated, then projected by W_O."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Line, ReplacementTransform, TransformFromCopy, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import column_names, parameter_grid, regroup, rounding_note, row_grid, shape_text, shared_limit
from blockviz.scenes.helpers import ELLIPSIS_ACROSS, Highlight, NumberGrid, fit_width, text, visible_slots
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, HEADER_SIZE, TITLE_SIZE

HEAD_SLOTS = 3
"""At most this many heads drawn side by side (⋯ stands for the rest)."""


class MultiHead(RecordScene):
    """Every head h attends on the same rows with its own weights ``(n, n)`` and gives its own
    output ``(n, d_head)``; the outputs side by side are ``concat`` ``(n, d_model)``, and
    ``attn_out = concat @ W_O + b_O`` ``(n, d_model)`` (Vaswani et al. 2017, §3.2.2).

    The focus token's row of the projection is worked column by column: each entry of its
    concatenated row times its row of W_O, summed down each column, plus b_O.
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
            pattern = NumberGrid(rec.weights[h], rec.tokens if k == 0 else None, None, look, colors="weights", blocked=blocked,
                                 show_numbers=False, row_focus=self.focus, column_focus=self.focus, cell_width=pattern_width)
            pattern.header_group.add(text("weights", HEADER_SIZE, look.muted).next_to(pattern.cell_group, DOWN, buff=0.12))
            output = NumberGrid(rec.head_outputs[h], None, column_names("z", rec.config.d_head), look, source=("head_outputs", h),
                                row_focus=self.focus, max_columns=max_columns, column_header_color=look.output)
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
        self.play(FadeIn(self.highlight), *self.say(f"row “{rec.tokens[f]}”: a different mixture in every head"), run_time=self.step_time)
        self.rest()

    # -- concatenation and W_O ------------------------------------------------------------------
    def build_projection(self, title):
        rec, look, f = self.record, self.look, self.focus
        d_model, d_head = rec.config.d_model, rec.config.d_head
        concat = NumberGrid(rec.concat, rec.tokens, column_names("c", d_model), look, source=("concat",), row_focus=f,
                            column_header_color=look.output)
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
        W_O, b_O = rec.params["attn.W_O"], rec.params["attn.b_O"]
        column = NumberGrid(rec.concat[f][:, None], column_names("c", d_model), [f"“{rec.tokens[f]}”"], look, source=lambda i, _: ("concat", f, i),
                            max_rows=8, color_limit=shared_limit(rec.concat), column_header_color=look.output)
        weights = parameter_grid(W_O, "attn.W_O", look, row_names=None, column_names=column_names("o", d_model))
        weights.next_to(column.cell_group, RIGHT, buff=0.6).align_to(column.cell_group, UP)
        weights.shift(UP * (column.cell_group.get_top()[1] - weights.cell_group.get_top()[1]))
        times = text("×", TITLE_SIZE, look.text).move_to((column.cell_group.get_right() + weights.cell_group.get_left()) / 2)
        name = text("W_O", HEADER_SIZE, look.muted).next_to(weights.column_headers[weights.shown_columns()[0]], UP, buff=0.12).align_to(weights.cell_group, LEFT)
        bias = parameter_grid(b_O[None, :], "attn.b_O", look, index=lambda _, j: (j,), row_names=["b_O"], column_names=None)
        bias.next_to(weights.cell_group, DOWN, buff=0.2).align_to(weights.cell_group, LEFT)
        result = row_grid(rec.attn_out, f, "attn_out", look, source_name="attn_out", prefix=None, header_color=look.output)
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
        self.play(FadeIn(highlight), *self.say(f"row “{rec.tokens[f]}” of the concatenation…"), run_time=self.step_time)
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
        products = self.products(work)
        renamed = text("c_i × W_O[i, j]", HEADER_SIZE, self.look.muted).move_to(work.name, aligned_edge=LEFT)
        self.play(*products, ReplacementTransform(work.name, renamed), highlight.over(work.weights.cell_group),
                  *self.say("each entry of the row times its row of W_O"), run_time=self.step_time)
        self.rest()
        note = rounding_note(self.sums, look)
        if len(note):
            note.next_to(work.result.cell_group, DOWN, buff=0.15).align_to(work.result.cell_group, RIGHT)
        self.play(FadeIn(work.bias_line), *self.say("plus the bias b_O"), run_time=self.step_time)
        self.rest(0.4)
        self.play(FadeIn(work.result_line), FadeIn(note), highlight.over(work.result.cell_group),
                  *self.say(f"add down each column{self.elided_rows_note(work)}: attn_out of “{rec.tokens[f]}”"), run_time=self.step_time)
        self.rest()
        self.play(*self.say(f"every row alike: attn_out is {shape_text(rec.n, d_model)}, as wide as the residual stream"), run_time=self.step_time)
        self.rest(1.5)

    def elided_rows_note(self, work: VGroup) -> str:
        return "" if len(work.weights.shown_rows()) == self.record.config.d_model else " (the ⋮ rows too)"

    def products(self, work: VGroup) -> list:
        """W_O's grid turning into the grid of products concat[f, i] · W_O[i, j] (the sums down
        its columns, plus b_O, are attn_out[f]); notes those sums when every row is drawn."""
        rec, f = self.record, self.focus
        W_O = rec.params["attn.W_O"]
        old = work.weights
        grid = NumberGrid(rec.concat[f][:, None] * W_O, None, column_names("o", rec.config.d_model), self.look)
        grid.scale(old.scale_now).shift(old.cell_group.get_center() - grid.cell_group.get_center())
        work.weights = grid
        if len(grid.shown_rows()) == rec.config.d_model:
            for j in grid.shown_columns():
                self.shown_sum([grid.labels[i, j] for i in grid.shown_rows()] + [work.bias.labels[0, j]], work.result.labels[0, j])
        return [ReplacementTransform(old, grid)]

