"""Scene 5 — softmax, one row at a time: exponentials, their sum, each divided by it."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, TransformFromCopy, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.helpers import Highlight, NumberGrid, fit_width, number, text
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, NUMBER_SIZE


class Softmax(RecordScene):
    """weights[i, j] = exp(s_ij) / Σ_k exp(s_ik) over each row of the masked scores ``(n, n)``:
    each row sums to 1, and a blocked key (s = −∞) gets exactly 0."""

    pause = 1.0

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(f"Softmax, row by row (head {self.h})")
        grid = self.build_grid(title)
        self.add(grid)
        self.play(*self.say("the masked scores: one row per query"), run_time=self.step_time)
        self.rest()
        highlight = Highlight(self.look, grid.row(self.focus))
        self.add(highlight)
        table = None
        for i in self.detailed_rows():
            table = self.work_row(i, grid, highlight, table)
        rest = [i for i in grid.shown_rows() if i not in self.detailed_rows()]
        if rest:
            self.play(*self.convert_rows(grid, rest), *self.say("every other row the same way"), run_time=1.2)
        self.play(*self.say("every row of weights sums to 1; blocked cells are exactly 0"), run_time=0.5)
        self.sweep(highlight, [VGroup(grid.row(i), self.sum_labels[i]) for i in grid.shown_rows()])
        self.play(FadeOut(highlight), run_time=0.4)
        self.rest(1.5)

    def build_grid(self, title) -> NumberGrid:
        rec, h = self.record, self.h
        grid = NumberGrid(rec.masked_scores[h], rec.tokens, rec.tokens, self.look, source=("masked_scores", h), row_focus=self.focus, column_focus=self.focus)
        stand_in = self.build_table(self.focus, grid)[0]  # where each row's working goes
        layout = VGroup(grid, stand_in).arrange(RIGHT, buff=1.5, aligned_edge=UP)
        self.place(layout, title)
        self.table_corner = stand_in.get_corner(UP + LEFT)
        self.sum_header = text("Σ", HEADER_SIZE + 2, self.look.text).scale(grid.scale_now)
        self.sum_header.next_to(grid.cell_group, RIGHT, buff=0.25 * grid.scale_now).align_to(grid.column_headers[grid.shown_columns()[0]], DOWN)
        self.sum_labels: dict[int, object] = {}
        return grid

    def work_row(self, i, grid, highlight, previous):
        rec = self.record
        table, columns, (exp_labels, total_label) = self.build_table(i, grid)
        table.scale(grid.scale_now).move_to(self.table_corner, aligned_edge=UP + LEFT)
        if len(exp_labels) == rec.n:
            self.shown_sum(exp_labels, total_label)
        first, score_pairs, exp_column, sum_line, weight_column = columns
        if previous is not None:
            self.play(FadeOut(previous), highlight.over(grid.row(i)), run_time=0.4)
        else:
            highlight.place(grid.row(i))
        self.play(FadeIn(first), *(TransformFromCopy(grid.labels[i, j], label) for j, label in score_pairs),
                  *self.say(f"row “{rec.tokens[i]}”: its scores against each key"), run_time=self.step_time)
        self.play(FadeIn(exp_column), *self.say("exponentiate each score: all positive, and exp(−∞) = 0"), run_time=self.step_time)
        self.play(FadeIn(sum_line), *self.say("add them up"), run_time=self.step_time)
        self.play(FadeIn(weight_column), *self.say("divide each by the sum: the weights"), run_time=self.step_time)
        self.rest(0.4)
        self.play(*self.convert_rows(grid, [i]), *self.say("the weights replace the row, and they sum to 1"), run_time=self.step_time)
        self.rest()
        return table

    def build_table(self, i, grid):
        """The worked row i: key | score | exp | ÷ sum, one line per drawn key, and the sum."""
        rec, h, look = self.record, self.h, self.look
        scores = rec.masked_scores[h, i].tolist()
        exps = [math.exp(s) for s in scores]
        total = sum(exps)
        size = NUMBER_SIZE + 2
        headers = [text(name, HEADER_SIZE, look.muted) for name in ("key", "score", "exp", "÷ sum")]
        columns = [VGroup(header) for header in headers]
        score_pairs, exp_labels = [], []
        for j in grid.column_slots:
            if j is None:
                for column in columns:
                    column.add(text("⋮", size, look.muted))
                continue
            blocked = scores[j] == -math.inf
            score = number(scores[j], size, look.text, source=("masked_scores", h, i, j))
            exp_label = number(exps[j], size, look.text, decimals=0 if blocked else 2)
            weight = number(rec.weights[h, i, j].item(), size, look.text, decimals=0 if blocked else 2, source=("weights", h, i, j))
            for column, mobject in zip(columns, (fit_width(text(rec.tokens[j], HEADER_SIZE, look.text), 1.4), score, exp_label, weight)):
                column.add(mobject)
            score_pairs.append((j, score))
            exp_labels.append(exp_label)
        for column in columns:
            for row, mobject in enumerate(column):
                mobject.move_to(DOWN * row * CELL_HEIGHT * 1.05)
        body = VGroup(*columns).arrange(RIGHT, buff=0.35, aligned_edge=UP)
        total_label = number(total, size, look.text)
        sum_line = VGroup(text("sum =", size, look.text), total_label)
        if len(exp_labels) < rec.n:
            sum_line.add(text("(with the ⋮ keys)", HEADER_SIZE, look.muted))
        sum_line.arrange(RIGHT, buff=0.15).next_to(body, DOWN, buff=0.3).align_to(columns[2], LEFT)
        table = VGroup(body, sum_line)
        paired = {id(label) for _, label in score_pairs}
        score_rest = VGroup(*(mobject for mobject in columns[1] if id(mobject) not in paired))
        return table, (VGroup(columns[0], score_rest), score_pairs, columns[2], sum_line, columns[3]), (exp_labels, total_label)

    def convert_rows(self, grid: NumberGrid, rows: list[int]) -> list:
        rec, h = self.record, self.h
        animations, fills, labels = [], {}, {}
        for i in rows:
            row_labels = []
            for j in grid.shown_columns():
                value = rec.weights[h, i, j].item()
                blocked = rec.masked_scores[h, i, j].item() == -math.inf
                fills[i, j] = self.look.blocked if blocked else grid.colors_for_weight(value)
                labels[i, j] = grid.number_at(i, j, value=value, source=("weights", h, i, j), decimals=0 if blocked else 2, fill=fills[i, j])
                row_labels.append(labels[i, j])
            row_sum = number(rec.weights[h, i].sum().item(), NUMBER_SIZE, self.look.text).scale(grid.scale_now)
            row_sum.next_to(grid.cell_group, RIGHT, buff=0.25 * grid.scale_now).set_y(grid.cells[i, grid.shown_columns()[0]].get_y())
            if len(row_labels) == rec.n:
                self.shown_sum(row_labels, row_sum)
            animations.append(FadeIn(row_sum))
            self.sum_labels[i] = row_sum
        if rows and self.sum_header not in self.mobjects:
            animations.append(FadeIn(self.sum_header))
        return self.recolour(grid, fills) + self.replace_labels(grid, labels) + animations
