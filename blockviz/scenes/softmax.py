"""Scene 5 — softmax, one row at a time: subtract the row's largest score, exponentiate, add up, divide."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, Line, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import adds_to, exact, plus_before, remainder, sum_decimals
from blockviz.scenes.choreography import carry, cascade, one_after_another, recolour, replace_labels, send
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, LINE_GAP, NUMBER_SIZE
from blockviz.scenes.text import number, text

NAME = "softmax"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 80
DESCRIPTION = "row by row: subtract the row's max, exponentiate, add up, divide by the sum; rows sum to 1"
CHAPTER = "Softmax"
CAPTION = (
    "Row by row, the largest score is subtracted and each score exponentiated (so every exp is at most 1), "
    "then divided by the row's sum: the weights add up to 1 and blocked keys get exactly 0."
)
ENCODER_CAPTION = (
    "Row by row, the largest score is subtracted and each score exponentiated (so every exp is at most 1), "
    "then divided by the row's sum: the weights add up to 1, and with no causal mask every key may get weight."
)

WORK_ROWS = ("score", "exp(s − m)", "÷ sum")
"""The worked query's rows under the grid, column under column with its keys."""
REPLACED_CAPTION = "the weights take the place of the row's scores"


class Softmax(RecordScene):
    """weights[i, j] = exp(s_ij − m_i) / Σ_k exp(s_ik − m_i) over each row of the masked scores
    ``(n, n)``, with m_i the row's largest score (``row_max``): the record's ``exp_scores`` are
    in (0, 1], exactly 0 for a blocked key (s = −∞), their row sums are ``exp_sums``, and each
    row of ``weights`` sums to 1.

    The worked query's row is worked under the grid, each key's numbers under its column: its
    scores, their exps and sum, the weights. Where keys are left out, they are one "+ N hidden" term
    (the record's total less the shown terms, in its own column). Every number is the record's."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head
    shows_weights = True  # its slides' notes read out the focus row's largest weights

    def construct(self) -> None:
        title = self.show_title(f"Softmax, row by row (head {self.h})")
        grid = self.build(title)
        self.add(grid)
        worked = self.detailed_rows(grid.shown_rows())
        sheet = self.work_rows(worked[0], grid)  # the empty worksheet under the grid, from the start
        previous = VGroup(*(VGroup(row.cell_group, row.header_group) for row in sheet.rows), sheet.rule)
        self.step(FadeIn(previous), caption=self.input_caption())
        highlight = Highlight(self.look, grid.row(self.focus))
        self.add(highlight)
        for i in worked:
            # a still shows no frame of the empty worksheet: the focus row is worked on it, not on a new one
            ready = sheet if i == worked[0] and self.settles() else None
            previous = self.work_row(i, grid, highlight, previous, ready)
        self.play(FadeOut(highlight), run_time=0.3)
        rest = [i for i in grid.shown_rows() if i not in worked]
        if rest:
            self.step(*self.convert_rows(grid, rest), caption=self.rest_caption())
        self.show_largest_weight(grid)

    def show_largest_weight(self, grid) -> None:
        """Frame the focus row's largest weight and say only what the numbers show
        (:func:`blockviz.models.evidence.largest_weight`: the causal horizon, an attention sink,
        the baseline of the other rows); chance for the seeded block."""
        largest = self.largest_weight(grid)
        if largest is not None:
            self.step(
                FadeIn(Highlight(self.look, grid.cells[self.focus, largest.key])), caption=self.largest_caption(grid)
            )

    def largest_weight(self, grid):
        """The focus row's largest weight (:func:`blockviz.array_evidence.largest_weight_of`), or
        ``None`` when ``grid`` does not draw its cell."""
        from blockviz.array_evidence import largest_weight_of

        rec, f = self.record, self.focus
        largest = largest_weight_of(rec.weights, self.h, f, rec.special, rec.config.causal, self.unknown_tokens)
        return largest if largest.key in grid.shown_columns() and grid.has_row(f) else None

    # -- captions -------------------------------------------------------------------------------
    def said_over_sheet(self, grid) -> list[str]:
        """Every caption shown while the grid and its worksheet are up (all of this scene's but
        why ``--head auto`` chose the head): :meth:`place` fits them above the tallest."""
        worked = self.detailed_rows(grid.shown_rows())
        said = [self.input_caption(), *(self.query_caption(i) for i in worked)]
        said += [self.exp_caption(), self.sum_caption(), REPLACED_CAPTION]
        if any(i not in worked for i in grid.shown_rows()):
            said.append(self.rest_caption())
        largest = self.largest_caption(grid)
        return said + ([largest] if largest is not None else [])

    def input_caption(self) -> str:
        return f"{self.wording.softmax_input}: one row per query"

    def query_caption(self, i: int) -> str:
        return f"query “{self.token_name(i)}”: its scores against each key"

    def exp_caption(self) -> str:
        return f"m, the row's largest score; exp(s − m): every exp is ≤ 1{self.wording.exp_of_blocked}"

    def sum_caption(self) -> str:
        if self.hidden:
            return "add them up, hidden keys too; ÷ the sum: the weights, which add up to 1"
        return "add them up, then divide each by the sum: the weights, which add up to 1"

    def rest_caption(self) -> str:
        return f"every other row the same way: each sums to 1, {self.wording.blocked_keys}"

    def largest_caption(self, grid) -> str | None:
        """What the focus row's largest weight shows (:func:`largest_weight_caption`), ``None`` when not drawn."""
        largest = self.largest_weight(grid)
        if largest is None:
            return None
        rec = self.record
        return largest_weight_caption(
            self.token_name(self.focus),
            self.token_name(largest.key),
            largest.reading,
            rec.source.is_trained,
            largest.key == 0,
            rec.source.vocabulary,
        )

    # -- layout ---------------------------------------------------------------------------------
    def decimals(self, i: int) -> tuple[int, int]:
        """Decimals of query ``i``'s exps and weights: one more than the grid's where the shown
        terms would otherwise miss their sum by more than one unit of its last digit."""
        rec, h = self.record, self.h
        keys = self.slots_shown
        exps = [rec.exp_scores[h, i, j].item() for j in keys]
        weights = [rec.weights[h, i, j].item() for j in keys]
        total = rec.exp_sums[h, i].item()
        hidden = len(keys) < rec.n
        # The record's totals split for display: the hidden keys' term is the total less the shown ones.
        return (
            sum_decimals([(exps + ([total - sum(exps)] if hidden else []), total)]),
            sum_decimals([(weights + ([1.0 - sum(weights)] if hidden else []), 1.0)]),
        )

    def build(self, title) -> NumberGrid:
        rec, h, look = self.record, self.h, self.look
        slots = self.token_slots()
        self.slots_shown = [j for j in slots if j is not None]
        self.hidden = len(self.slots_shown) < rec.n
        rows = self.detailed_rows([i for i in slots if i is not None])
        widest = max(
            [cell_width_for(rec.masked_scores[h]), column_width(len(slots))]
            + [cell_width_for(rec.exp_scores[h, i][None, :], d) for i in rows for d in self.decimals(i)]
        )
        self.cell_width = widest
        grid = NumberGrid(
            rec.masked_scores[h],
            self.token_names,
            self.token_names,
            look,
            source=("masked_scores", h),
            row_slots=slots,
            column_slots=slots,
            cell_width=widest,
            cell_height=row_height(len(slots) + len(WORK_ROWS), height=5.0, most=0.8),
        )
        # The side columns: the hidden keys' term (when keys are left out), then Σ.
        side = VGroup()
        if self.hidden:
            count = rec.n - len(self.slots_shown)  # the keys left out, said: "+ 40 hidden", their term under it
            side.add(
                VGroup(text(f"+ {count}", HEADER_SIZE, look.muted), text("hidden", HEADER_SIZE, look.muted)).arrange(
                    DOWN, buff=LINE_GAP
                )
            )
        side.add(text("Σ", HEADER_SIZE + 2, look.text))
        for k, header in enumerate(side):  # room for the "=" or "≈" before each Σ
            header.move_to(grid.body().get_right() + RIGHT * (0.25 + widest * (k + 0.5) + 0.45 * k))
            header.align_to(grid.column_headers[self.slots_shown[0]], DOWN)
        grid.header_group.add(side)
        self.side = side
        stand_in = self.work_rows(self.focus, grid)
        self.place(VGroup(grid, stand_in), title, grow=1.8, said=self.said_over_sheet(grid))
        return grid

    def work_rows(self, i: int, grid: NumberGrid) -> VGroup:
        """Query ``i`` worked under the grid (as it stands, at its scale): its scores, exps and
        weights, each a row of cells under the keys' columns; m beside the scores; the hidden
        keys' term and Σ beside the exps and weights. ``.rows`` holds the three grids,
        ``.side`` the side numbers by row, ``.sums`` the sums shown."""
        rec, h, look = self.record, self.h, self.look
        keys = self.slots_shown
        scale = grid.scale_now
        exp_decimals, weight_decimals = self.decimals(i)
        blocked = (rec.mask[i] == -math.inf)[None, :]
        common = dict(
            column_slots=grid.column_slots,
            cell_width=self.cell_width,
            cell_height=CELL_HEIGHT,
            filled=False,
            show_numbers=False,
        )
        score = NumberGrid(
            rec.masked_scores[h, i][None, :],
            [WORK_ROWS[0]],
            None,
            look,
            source=lambda _, j: ("masked_scores", h, i, j),
            **common,
        )
        exps = NumberGrid(
            rec.exp_scores[h, i][None, :],
            [WORK_ROWS[1]],
            None,
            look,
            colors="none",
            blocked=blocked,
            decimals=exp_decimals,
            source=lambda _, j: ("exp_scores", h, i, j),
            **common,
        )
        weights = NumberGrid(
            rec.weights[h, i][None, :],
            [WORK_ROWS[2]],
            None,
            look,
            colors="weights",
            blocked=blocked,
            decimals=weight_decimals,
            source=lambda _, j: ("weights", h, i, j),
            **common,
        )
        rows = VGroup(score, exps, weights)
        for row in rows:  # empty cells until their numbers come; each label already in the colour its cell will have
            for j in keys:
                row.fill = getattr(row, "fill", {})
                row.fill[0, j] = row.color_of(row.values[0][j], row.is_blocked(0, j))
                label = row.number_at(0, j, fill=row.fill[0, j])
                row.set_label(0, j, label)
                row.label_group.add(label)
        for k, row in enumerate(rows):
            row.shift(DOWN * k * (CELL_HEIGHT + 0.12) - row.cell_group.get_left() * [1, 0, 0])
        rows.scale(scale)
        rows.shift(
            RIGHT * (grid.cell_group.get_left()[0] - score.cell_group.get_left()[0])
            + UP * (grid.get_bottom()[1] - 0.55 * scale - score.cell_group.get_top()[1])
        )
        query = text(f"query “{self.token_name(i)}”", HEADER_SIZE + 2, look.query).scale(scale)
        query.next_to(rows, UP, buff=0.1 * scale).align_to(score.header_group, RIGHT)
        rule = Line(LEFT, RIGHT, color=look.grid, stroke_width=1.5)
        rule_y = (grid.cell_group.get_bottom()[1] + query.get_top()[1]) / 2
        rule.put_start_and_end_on(
            [grid.cell_group.get_left()[0], rule_y, 0], [grid.cell_group.get_right()[0], rule_y, 0]
        )
        size = NUMBER_SIZE
        side_x = [header.get_x() for header in self.side]
        m = VGroup(
            text("m =", size, look.text), number(rec.row_max[h, i].item(), size, look.text, source=("row_max", h, i))
        ).arrange(RIGHT, buff=0.12)
        if rec.masked_scores[h, i].argmax().item() not in keys:
            m.add(text("(hidden)", HEADER_SIZE, look.muted))
            m.arrange(RIGHT, buff=0.12)
        m.scale(scale).next_to(score.body(), RIGHT, buff=0.25 * scale)  # right of a trailing ⋯ too
        sums, side = [], {"exps": VGroup(), "weights": VGroup()}
        for name, row, total_value, total_source, decimals in (
            ("exps", exps, rec.exp_sums[h, i].item(), ("exp_sums", h, i), exp_decimals),
            ("weights", weights, 1.0, ("constant", 1.0), weight_decimals),
        ):
            terms = [row.labels[0, j] for j in keys]
            y = row.cell_group.get_y()
            if self.hidden:
                shown = [
                    (
                        rec.tensors["exp_scores" if name == "exps" else "weights"][h, i, j].item(),
                        (("exp_scores" if name == "exps" else "weights"), h, i, j),
                    )
                    for j in keys
                ]
                rest = (
                    remainder(total_value, total_source, shown, size, look.muted, decimals)
                    .scale(scale)
                    .move_to([side_x[0], y, 0])
                )
                side[name].add(plus_before(rest, look, scale))
                terms.append(rest)
            if name == "exps":
                total = number(total_value, size, look.text, source=total_source)
            else:  # softmax weights sum to 1: a fact of the formula, not a sum computed here
                total = number(1.0, size, look.text, decimals, source=("constant", 1.0))
            total.scale(scale).move_to([side_x[-1], y, 0])
            mark = (
                text("=" if exact(terms, total) else "≈", size, look.muted)
                .scale(scale)
                .next_to(total, LEFT, buff=0.14 * scale)
            )
            side[name].add(mark, total)
            sums.append((terms, total))
        work = VGroup(rule, query, rows, m, side["exps"], side["weights"])
        work.rows, work.side, work.m, work.query, work.rule, work.sums = rows, side, m, query, rule, sums
        return work

    # -- steps ----------------------------------------------------------------------------------
    def work_row(self, i, grid, highlight, previous, work=None):
        """Work query ``i``'s row step by step under the grid, on ``work`` (its
        :meth:`work_rows`, else new ones) in place of ``previous``; return them."""
        work = work or self.work_rows(i, grid)
        score, exps, weights = work.rows
        for terms, total in work.sums:
            self.shown_sum(terms, total)
        self.remove(previous)
        frame = lambda row: VGroup(row.cell_group, row.header_group, row.ellipsis_group)  # noqa: E731
        self.add(work.rule, *(frame(row) for row in work.rows))
        self.play(highlight.over(grid.row(i)), run_time=0.4)
        self.step(
            FadeIn(work.query),
            *recolour(self, score, score.fill),
            carry(self, [grid.labels[i, j] for j in self.slots_shown], [score.labels[0, j] for j in self.slots_shown]),
            caption=self.query_caption(i),
        )
        self.add(score)
        # m alone, or the sum alone, changed under 0.5 % of the picture (issue 36): each comes
        # first in the play that uses it
        self.step(
            one_after_another(
                FadeIn(work.m),
                AnimationGroup(
                    carry(
                        self,
                        [score.labels[0, j] for j in self.slots_shown],
                        [exps.labels[0, j] for j in self.slots_shown],
                    ),
                    *recolour(self, exps, exps.fill),
                ),
            ),
            caption=self.exp_caption(),
            run_time=2 * self.step_time,
        )
        self.add(exps)
        self.step(
            one_after_another(
                FadeIn(work.side["exps"]),
                AnimationGroup(
                    carry(
                        self,
                        [exps.labels[0, j] for j in self.slots_shown],
                        [weights.labels[0, j] for j in self.slots_shown],
                    ),
                    *recolour(self, weights, weights.fill),
                    FadeIn(work.side["weights"]),
                ),
            ),
            caption=self.sum_caption(),
            run_time=2 * self.step_time,
        )
        self.add(weights)
        self.step(*self.convert_rows(grid, [i], lift=weights), caption=REPLACED_CAPTION)
        self.remove(score, exps, weights)
        work.add(score, exps, weights)
        self.add(work)
        return work

    def convert_rows(self, grid: NumberGrid, rows: list[int], lift: NumberGrid | None = None) -> list:
        """The rows' scores turning into their weights (``lift``: the worked weights row they rise
        from), the hidden keys' weight beside them (when keys are left out) and the Σ of 1
        (softmax rows sum to 1: a fact, not a computed number)."""
        rec, h = self.record, self.h
        animations, fills, labels = [], {}, {}
        for i in rows:
            row_labels = []
            for j in grid.shown_columns():
                value = rec.weights[h, i, j].item()
                blocked = rec.masked_scores[h, i, j].item() == -math.inf
                fills[i, j] = self.look.blocked if blocked else grid.colors_for_weight(value)
                labels[i, j] = grid.number_at(
                    i, j, value=value, source=("weights", h, i, j), decimals=0 if blocked else 2, fill=fills[i, j]
                )
                row_labels.append(labels[i, j])
            y = grid.cells[i, grid.shown_columns()[0]].get_y()
            side = []
            if self.hidden:
                shown = [(rec.weights[h, i, j].item(), ("weights", h, i, j)) for j in grid.shown_columns()]
                rest = remainder(1.0, ("constant", 1.0), shown, NUMBER_SIZE, self.look.muted).scale(grid.scale_now)
                side.append(plus_before(rest.move_to([self.side[0].get_x(), y, 0]), self.look, grid.scale_now))
                row_labels.append(rest)
            one = text("1", NUMBER_SIZE, self.look.text).scale(grid.scale_now).move_to([self.side[-1].get_x(), y, 0])
            side.append(one)
            if not adds_to(row_labels, 1.0):  # the shown weights, each rounded on its own, make 0.99 or 1.01
                side.append(
                    text("≈", NUMBER_SIZE, self.look.muted)
                    .scale(grid.scale_now)
                    .next_to(one, LEFT, buff=0.14 * grid.scale_now)
                )
            self.shown_sum(row_labels, one)
            animations.append(FadeIn(VGroup(*side)))
        changes = (
            cascade(self, grid, fills, labels)
            if lift is None
            else recolour(self, grid, fills) + replace_labels(self, grid, labels)  # timed with the rising row
        )
        if lift is not None:  # the worked weights rise into the row they replace, arriving as the old scores leave
            columns = grid.shown_columns()  # on their chips, then gone (number first)
            changes.append(send(self, [lift.labels[0, j] for j in columns], [grid.cells[rows[0], j] for j in columns]))
        return changes + animations


def largest_weight_caption(
    query: str, key: str, reading: str, trained: bool, first: bool = True, vocabulary: tuple[str, ...] | None = None
) -> str:
    """The caption on a row's largest weight, claiming only what its ``reading`` shows
    (:class:`blockviz.models.evidence.LargestWeight`); ``first``: the key is the first token (else
    a special one); ``vocabulary`` a toy model's words, its unknown token first. One line at 480p
    for words up to the length of "chicken".

    >>> largest_weight_caption("sat", "the", "sink", trained=True)
    '“sat” weighs “the” most, the first token: an attention sink, not a meaning'
    >>> largest_weight_caption("sat", "zebra (<unk>)", "unknown", True, False, ("<unk>", "sat"))
    '“sat” weighs “zebra (<unk>)” most, but <unk> stands for every word outside the vocabulary: not a meaning'
    """
    if reading == "horizon":
        return f"“{query}” is the first token: it sees only itself, so its weight is no choice"
    if not trained:
        return f"random weights: “{query}” weighs “{key}” most by chance, not for its meaning"
    if reading == "sink":
        where = "the first token" if first else "a special token"
        return f"“{query}” weighs “{key}” most, {where}: an attention sink, not a meaning"
    if reading == "unknown":
        unknown = vocabulary[0] if vocabulary else "the unknown token"
        return (
            f"“{query}” weighs “{key}” most, but {unknown} stands for every word outside the vocabulary: not a meaning"
        )
    if reading == "above":
        return f"learned in training: “{query}” weighs “{key}” most, well above the other rows"
    return f"“{query}” weighs “{key}” most, as the other rows do: not a link of its own"
