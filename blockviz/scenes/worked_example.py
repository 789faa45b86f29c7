"""Scene 7 — the guide's worked example: scores (0, ln 3) → exp(s − max) (⅓, 1) → weights (¼, ¾) → mixture (0.5, 3)."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.fades import FadeIn
from blockviz.scenes.grids import Highlight
from blockviz.scenes.look import WORK_SIZE
from blockviz.scenes.text import formula, number, text
from blockviz.worked_example import worked_example

NAME = "worked-example"
ORDER = 10
DESCRIPTION = "scores 0 and ln 3 → exp(s − max) ⅓ and 1 → weights ¼, ¾ → ¼·(2, 0) + ¾·(0, 4) = (0.5, 3)"
CHAPTER = "A worked example"
CAPTION = (
    "Scores 0 and ln 3, less the larger, exponentiate to ⅓ and 1, which sum to 4/3: "
    "the weights are ¼ and ¾, and the mixture ¼·(2, 0) + ¾·(0, 4) = (0.5, 3)."
)

EXACT = {"scores": "(0, ln 3)", "row_max": "ln 3", "exp_scores": "(⅓, 1)", "exp_sum": "4/3", "weights": "(¼, ¾)"}
"""The example's numbers as the guide writes them, beside their rounded values (tests check they agree)."""

CAPTIONS = (
    "the scores of two keys: 0 and ln 3",
    "the larger score, ln 3, is subtracted from each",
    "exponentiate: ⅓ and 1 (every exp is ≤ 1)",
    "add them: 4/3",
    "divide each by the sum: ¼ and ¾, which sum to 1",
    "weight each value vector",
    "add: the mixture has as many entries as a value",
)


class WorkedExample(RecordScene):
    """One query, two keys: scores 0 and ln 3; the larger subtracted, exponentials ⅓ and 1, their
    sum 4/3; weights ¼ and ¾; the mixture ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Every number is read
    from :func:`blockviz.worked_example.worked_example` (computed by the block's own softmax)."""

    def construct(self) -> None:
        title = self.show_title("A worked example: one query, two keys")
        lines = self.build_lines()
        equations = VGroup(  # Σ_k beside its k in the denominator: a big Σ with k under it touches the bar
            formula(
                r"$w_j = \dfrac{\exp(s_j - m)}{\Sigma_k\, \exp(s_k - m)},\quad m = \max_k s_k$", self.look.text, 30
            ),
            formula(r"$z = \sum_j\ w_j\, v_j$", self.look.text, 30),
        ).arrange(RIGHT, buff=1.0)
        layout = VGroup(equations, lines).arrange(DOWN, buff=0.45)
        self.place(layout, title, grow=1.4)
        # The worksheet first: the formulas and every line's name; each line's numbers then arrive in turn.
        self.step(
            FadeIn(equations),
            FadeIn(VGroup(*(line[0] for line in lines))),
            caption="softmax and mixing on numbers small enough to check by hand",
        )
        highlight = Highlight(self.look, lines[0], buff=0.1)
        for k, (line, caption) in enumerate(zip(lines, CAPTIONS)):
            follow = FadeIn(highlight) if k == 0 else highlight.over(line)  # the line being worked
            self.step(FadeIn(VGroup(*line[1:])), follow, caption=caption)

    def value(self, field: str, *index, color: str | None = None, decimals: int = 2):
        """The example's ``field[index]`` as a number label."""
        tensor = getattr(worked_example(), field)
        return number(
            tensor[index].item(), WORK_SIZE, color or self.look.text, decimals, source=("worked_example", field, *index)
        )

    def vector(self, field: str, *index, color: str | None = None, decimals: int = 2) -> VGroup:
        """``(a, b)`` of the example's ``field[index]`` (a vector), entries at ``vector[1]``, ``vector[3]``."""
        size = getattr(worked_example(), field)[index].shape[0]
        parts = [text("(", WORK_SIZE, self.look.muted)]
        for c in range(size):
            parts.append(self.value(field, *index, c, color=color, decimals=decimals))
            parts.append(text("," if c < size - 1 else ")", WORK_SIZE, self.look.muted))
        for before, part in zip(parts, parts[1:]):  # set as written: "(0.00, 1.10)", a space only after a comma
            part.next_to(before, RIGHT, buff=0.14 if before.shown == "," else 0.04)
        for comma, before in zip(parts[2:-1:2], parts[1:-1:2]):
            comma.align_to(before, DOWN).shift(DOWN * 0.06)
        return VGroup(*parts)

    def line(self, name: str, *parts) -> VGroup:
        look = self.look
        pieces = [text(name, WORK_SIZE, look.muted)] + [
            text(part, WORK_SIZE, look.text) if isinstance(part, str) else part for part in parts
        ]
        return VGroup(*pieces).arrange(RIGHT, buff=0.18)

    def build_lines(self) -> VGroup:
        look = self.look
        exps = [self.value("exp_scores", j) for j in range(2)]
        total = self.value("exp_sum")
        self.shown_sum(exps, total)
        weighted = [self.vector("weighted_values", j, color=look.value) for j in range(2)]
        terms = [
            self.vector("weighted_values", j, color=look.value) for j in range(2)
        ]  # the same, written again to add
        mixture = self.vector("mixture", color=look.output)
        for c in range(2):
            self.shown_sum([vector[1 + 2 * c] for vector in terms], mixture[1 + 2 * c])
        lines = VGroup(
            self.line("scores", self.vector("scores"), f"= {EXACT['scores']}"),
            self.line("largest", "m =", self.value("row_max"), f"= {EXACT['row_max']}"),
            self.line("exp(s − m)", self.vector("exp_scores"), f"= {EXACT['exp_scores']}"),
            self.line("sum", exps[0], "+", exps[1], "=", total, f"= {EXACT['exp_sum']}"),
            self.line("weights", self.vector("weights"), f"= {EXACT['weights']}"),
            self.line(
                "weighted values",
                self.value("weights", 0),
                "·",
                self.vector("values", 0, color=look.value, decimals=0),
                "=",
                weighted[0],
                "and",
                self.value("weights", 1),
                "·",
                self.vector("values", 1, color=look.value, decimals=0),
                "=",
                weighted[1],
            ),
            self.line("mixture", terms[0], "+", terms[1], "=", mixture),
        ).arrange(DOWN, buff=0.32, aligned_edge=LEFT)
        return lines
