"""Scene 5 — softmax, one row at a time: subtract the row's largest score, exponentiate, add up, divide."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, TransformFromCopy, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import rounding_note
from blockviz.scenes.grids import ELLIPSIS_DOWN, Highlight, NumberGrid
from blockviz.scenes.layout import fit_width
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, NUMBER_SIZE
from blockviz.scenes.text import number, text

DESCRIPTION = "row by row: subtract the row's max, exponentiate, add up, divide by the sum; rows sum to 1"
CHAPTER = "Softmax"
CAPTION = ("Row by row, the largest score is subtracted and each score exponentiated (so every exp is at most 1), "
           "then divided by the row's sum: the weights add up to 1 and blocked keys get exactly 0.")


class Softmax(RecordScene):
    """weights[i, j] = exp(s_ij − m_i) / Σ_k exp(s_ik − m_i) over each row of the masked scores
    ``(n, n)``, with m_i the row's largest score (``row_max``): the record's ``exp_scores`` are
    in (0, 1], exactly 0 for a blocked key (s = −∞), their row sums are ``exp_sums``, and each
    row of ``weights`` sums to 1. Every number shown is read from the record."""

    pause = 1.0

    def construct(self) -> None:
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
        grid = NumberGrid(rec.masked_scores[h], self.token_names, self.token_names, self.look, source=("masked_scores", h),
                          color_limit=self.limit("masked_scores"), row_focus=self.focus, column_focus=self.focus)
        stand_in = self.build_table(self.focus, grid)[0]  # where each row's working goes
        layout = VGroup(grid, stand_in).arrange(RIGHT, buff=1.2, aligned_edge=UP)
        self.place(layout, title)
        self.table_corner = stand_in.get_corner(UP + LEFT)
        self.sum_header = text("Σ", HEADER_SIZE + 2, self.look.text).scale(grid.scale_now)
        self.sum_header.next_to(grid.cell_group, RIGHT, buff=0.25 * grid.scale_now).align_to(grid.column_headers[grid.shown_columns()[0]], DOWN)
        self.sum_labels: dict[int, object] = {}
        return grid

    def work_row(self, i, grid, highlight, previous):
        table, parts = self.build_table(i, grid)
        table.scale(grid.scale_now).move_to(self.table_corner, aligned_edge=UP + LEFT)
        if parts["adds"] is not None:
            self.shown_sum(*parts["adds"])
        if previous is not None:
            self.play(FadeOut(previous), highlight.over(grid.row(i)), run_time=0.4)
        else:
            highlight.place(grid.row(i))
        self.play(FadeIn(parts["first"]), *(TransformFromCopy(grid.labels[i, j], label) for j, label in parts["scores"]),
                  *self.say(f"row “{self.token_name(i)}”: its scores against each key"), run_time=self.step_time)
        self.play(FadeIn(parts["max"]), *self.say("the row's largest score"), run_time=self.step_time)
        self.play(FadeIn(parts["exp"]), *self.say("subtract the row's largest score, then exponentiate: every exp is ≤ 1, and exp(−∞) = 0"),
                  run_time=self.step_time)
        self.play(FadeIn(parts["sum"]), *self.say("add them up"), run_time=self.step_time)
        self.play(FadeIn(parts["weights"]), *self.say("divide each by the sum: the weights"), run_time=self.step_time)
        self.rest(0.4)
        self.play(*self.convert_rows(grid, [i]), *self.say("the weights replace the row, and they sum to 1"), run_time=self.step_time)
        self.rest()
        return table

    def build_table(self, i, grid):
        """The worked row i: key | score | exp(s − max) | ÷ sum, one line per drawn key, then the
        row's max and the sum of its exps. Returns the table and its parts in the order shown."""
        rec, h, look = self.record, self.h, self.look
        size = NUMBER_SIZE + 2
        headers = [text(name, HEADER_SIZE, look.muted) for name in ("key", "score", "exp(s − max)", "÷ sum")]
        columns = [VGroup(header) for header in headers]
        score_pairs, exp_labels = [], []
        for j in grid.column_slots:
            if j is None:
                for column in columns:
                    column.add(text(ELLIPSIS_DOWN, size, look.muted))
                continue
            blocked = rec.masked_scores[h, i, j].item() == -math.inf
            decimals = 0 if blocked else 2
            score = number(rec.masked_scores[h, i, j].item(), size, look.text, source=("masked_scores", h, i, j))
            exp_label = number(rec.exp_scores[h, i, j].item(), size, look.text, decimals, source=("exp_scores", h, i, j))
            weight = number(rec.weights[h, i, j].item(), size, look.text, decimals, source=("weights", h, i, j))
            key = fit_width(text(self.token_name(j), HEADER_SIZE, look.text), 1.4)
            for column, mobject in zip(columns, (key, score, exp_label, weight)):
                column.add(mobject)
            score_pairs.append((j, score))
            exp_labels.append(exp_label)
        for column in columns:
            for row, mobject in enumerate(column):
                mobject.move_to(DOWN * row * CELL_HEIGHT * 1.05)
        body = VGroup(*columns).arrange(RIGHT, buff=0.35, aligned_edge=UP)
        max_line = VGroup(text("max =", size, look.text), number(rec.row_max[h, i].item(), size, look.text, source=("row_max", h, i)))
        if len(exp_labels) < rec.n:
            max_line.add(text("(with the ⋮ keys)", HEADER_SIZE, look.muted))
        max_line.arrange(RIGHT, buff=0.15, aligned_edge=DOWN).next_to(body, DOWN, buff=0.3).align_to(columns[1], LEFT)
        total = number(rec.exp_sums[h, i].item(), size, look.text, source=("exp_sums", h, i))
        sum_line = VGroup(text("sum =", size, look.text), total)
        if len(exp_labels) < rec.n:
            sum_line.add(text("(with the ⋮ keys)", HEADER_SIZE, look.muted))
        sum_line.arrange(RIGHT, buff=0.15, aligned_edge=DOWN).next_to(max_line, DOWN, buff=0.2).align_to(columns[2], LEFT)
        if len(exp_labels) == rec.n:
            note = rounding_note([(exp_labels, total)], look)  # only when the rounded exps miss the sum
            if len(note):
                sum_line.add(note.next_to(sum_line, DOWN, buff=0.15).align_to(sum_line, LEFT))
        table = VGroup(body, max_line, sum_line)
        paired = {id(label) for _, label in score_pairs}
        score_rest = VGroup(*(mobject for mobject in columns[1] if id(mobject) not in paired))
        parts = {"first": VGroup(columns[0], score_rest), "scores": score_pairs, "max": max_line, "exp": columns[2],
                 "sum": sum_line, "weights": columns[3], "adds": (exp_labels, total) if len(exp_labels) == rec.n else None}
        return table, parts

    def convert_rows(self, grid: NumberGrid, rows: list[int]) -> list:
        """The rows' scores turning into their weights, and a Σ of 1 beside each (softmax rows
        sum to 1: a fact, not a number computed here)."""
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
            one = text("1", NUMBER_SIZE, self.look.text).scale(grid.scale_now)
            one.next_to(grid.cell_group, RIGHT, buff=0.25 * grid.scale_now).set_y(grid.cells[i, grid.shown_columns()[0]].get_y())
            if len(row_labels) == rec.n:
                self.shown_sum(row_labels, one)
            animations.append(FadeIn(one))
            self.sum_labels[i] = one
        if rows and self.sum_header not in self.mobjects:
            animations.append(FadeIn(self.sum_header))
        return self.recolour(grid, fills) + self.replace_labels(grid, labels) + animations
