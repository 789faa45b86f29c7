"""Scene 4 — the causal mask: M adds 0 where a key is allowed and −∞ where it is a later token."""

from __future__ import annotations

import math

from manim import DOWN, RIGHT, UP, AnimationGroup, TransformFromCopy, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.choreography import adopt, lagged, one_after_another, recolour
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import fit_width, row_height
from blockviz.scenes.look import CAPTION_SIZE, TITLE_SIZE
from blockviz.scenes.text import text

NAME = "mask"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 60
DESCRIPTION = "the causal mask M: later positions become −∞"
CHAPTER = "The causal mask"
CAPTION = "The mask adds 0 where a key is allowed and −∞ where it comes later: a position uses itself and earlier positions, never later ones."
ENCODER_CHAPTER = "No mask: every key allowed"
ENCODER_CAPTION = "Without a causal mask M is all 0: nothing is blocked, and every position may use every position, earlier and later."

SCALED_LABEL = "scaled scores"
MASKED_LABEL = ("masked scores", "= scaled scores + M")
"""The scores grid's name once M is added, in two centred lines."""


class Mask(RecordScene):
    """``masked_scores = scaled_scores + M`` with M ``(n, n)`` 0 on and below the diagonal and −∞
    above it: a position can use itself and earlier positions, never later ones. A bidirectional
    record's M is all 0: the captions say what the record's mask blocks, if anything; the scores
    grid is renamed "masked scores" when M is added, and the "+" before M leaves (M stays beside
    them, named in "masked scores = scaled scores + M"); with nothing blocked, the lights on the
    focus row widen to the whole of both grids as M is added."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(
            "The mask: no looking ahead" if rec.config.causal else "The mask: here, nothing is blocked"
        )
        scores, plus, mask = self.build(title)
        self.add(scores)
        frame = VGroup(mask.cell_group, mask.header_group, mask.ellipsis_group)
        self.step(FadeIn(VGroup(plus, frame)), caption="the scaled scores: every query with every key, and M to add")
        self.remove(frame)
        self.add(mask.cell_group, mask.header_group, mask.ellipsis_group)
        self.step(FadeIn(mask.label_group), caption=self.rule())
        self.remove(mask.cell_group, mask.header_group, mask.ellipsis_group, mask.label_group)
        self.add(mask)
        lights = [
            Highlight(self.look, grid.row(self.focus)) for grid in (scores, mask)
        ]  # one per grid: no box crosses the +
        self.step(*(FadeIn(light) for light in lights), caption=self.focus_caption())
        applied = self.apply_mask(scores, mask) or self.everywhere(lights, (scores, mask))
        self.step(*applied, *self.relabel(scores), caption=self.applied_caption(), run_time=1.4)
        # M is in the scores now: its "+" leaves, so the masked scores do not read as "+ M" once more
        self.step(*(FadeOut(light) for light in lights), FadeOut(plus), caption=self.rows_caption())

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        slots = self.token_slots()
        common = dict(row_slots=slots, column_slots=slots, cell_height=row_height(len(slots), height=4.2, most=1.0))
        scores = NumberGrid(
            rec.scaled_scores[h],
            self.token_names,
            self.token_names,
            look,
            source=("scaled_scores", h),
            **common,
        )
        self.scores_name = text(SCALED_LABEL, CAPTION_SIZE - 4, look.muted).next_to(scores.body(), DOWN, buff=0.2)
        scores.header_group.add(self.scores_name)
        mask = NumberGrid(
            rec.mask, None, None, look, colors="none", source=("mask",), cell_width=0.62, decimals=0, **common
        )  # its rows and columns are the scores'
        mask.header_group.add(text("M", CAPTION_SIZE, look.text).next_to(mask.body(), DOWN, buff=0.2))
        plus = text("+", TITLE_SIZE, look.text)
        layout = VGroup(scores, plus, mask).arrange(RIGHT, buff=0.35)
        plus.set_y(scores.cell_group.get_y())
        mask.shift(UP * (scores.cell_group.get_top()[1] - mask.cell_group.get_top()[1]))  # row beside row
        self.place(layout, title, bottom_space=1.25, grow=1.8)  # room for the name's second line once M is added
        return scores, plus, mask

    def rule(self) -> str:
        if self.record.config.causal:
            return "M: 0 where a key may be used (itself and earlier), −∞ where it comes later"
        return "M is all 0: bidirectional attention lets every position use every position"

    def allowed_counts(self) -> list[int]:
        """How many keys each query may use, read from the record's mask ``(n, n)``."""
        return [int((self.record.mask[i] == 0).sum()) for i in range(self.record.n)]

    def applied_caption(self) -> str:
        if bool((self.record.mask == -math.inf).any()):
            return "−∞ comes in from M: those cells will get exactly 0 weight"
        return "M adds 0 everywhere: every score stays as it was, no key is blocked"

    def rows_caption(self) -> str:
        counts, n = self.allowed_counts(), self.record.n
        if n > 1 and counts == list(range(1, n + 1)):
            return "row by row, the allowed keys grow by one"
        if all(count == n for count in counts):
            return f"every row may use all {n} keys" if n > 1 else "the one query may use its one key"
        return "row by row, the keys each query may use"

    def everywhere(self, lights: list, grids: tuple) -> list:
        """When M blocks nothing: each grid's light widens from the focus row to all of it, ⋮ and ⋯ too —
        M adds 0 to every score, and every score stays as it was."""
        return [light.over(grid.body()) for light, grid in zip(lights, grids)]

    def relabel(self, scores: NumberGrid) -> list:
        """Animations renaming the scores grid "masked scores = scaled scores + M" under its cells."""
        old = self.scores_name
        new = VGroup(*(text(line, CAPTION_SIZE - 4, self.look.muted) for line in MASKED_LABEL)).arrange(DOWN, buff=0.08)
        new.scale(old.width / text(SCALED_LABEL, CAPTION_SIZE - 4, self.look.muted).width)  # the grid's scale
        fit_width(new, max(scores.cell_group.width, old.width))
        new.next_to(scores.body(), DOWN, buff=0.2)
        scores.header_group.remove(old)
        self.add(old)
        self.scores_name = new

        def settle():
            self.remove(new)
            scores.header_group.add(new)

        self.after_play.append(settle)
        return [one_after_another(FadeOut(old), FadeIn(new))]

    def focus_caption(self) -> str:
        i = self.focus
        allowed = [j for j in range(self.record.n) if self.record.mask[i, j] == 0]
        return f"“{self.token_name(i)}” may use {len(allowed)} of {self.record.n} positions"

    def apply_mask(self, scores: NumberGrid, mask: NumberGrid) -> list:
        """The −∞ of M move into the score cells they block (the old numbers leave first)."""
        rec, h = self.record, self.h
        blocked, arrivals = {}, []
        for (i, j), old in list(scores.labels.items()):
            value = rec.masked_scores[h, i, j].item()
            if value == -math.inf:
                blocked[i, j] = scores.number_at(
                    i, j, value=value, source=("masked_scores", h, i, j), fill=self.look.blocked
                )
            else:
                old.source = ("masked_scores", h, i, j)  # + 0 leaves the number as it was
        leaving = []
        for key, new in blocked.items():
            old = scores.set_label(*key, new)
            scores.label_group.remove(old)
            self.add(old)
            leaving.append(FadeOut(old))
            self.after_play.append(lambda old=old: self.remove(old))
            arrivals.append(TransformFromCopy(mask.labels[key], new))
        adopt(self, scores, list(blocked.values()))
        if not blocked:
            return []
        rows = sorted({i for i, _ in blocked})
        return lagged(  # row after row (a cascade)
            [
                recolour(self, scores, {key: self.look.blocked for key in blocked if key[0] == i})
                + [
                    one_after_another(
                        AnimationGroup(*(fade for key, fade in zip(blocked, leaving) if key[0] == i)),
                        AnimationGroup(*(move for key, move in zip(blocked, arrivals) if key[0] == i)),
                    )
                ]
                for i in rows
            ]
        )
