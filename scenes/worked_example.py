"""Scene 7 — the guide's worked example: scores (0, ln 3) → weights (¼, ¾) → mixture (0.5, 3)."""

from __future__ import annotations

import math
from fractions import Fraction

from manim import DOWN, LEFT, RIGHT, FadeIn, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.helpers import formula, number, text
from blockviz.scenes.look import WORK_SIZE


def worked_example():
    """The guide's two-key example computed by :func:`blockviz.attention.softmax_and_mix`.

    Returns ``(scores (2,), values (2, 2), weights (2,), mixture (2,))`` as tensors.
    """
    import torch

    from blockviz.attention import softmax_and_mix

    scores = torch.tensor([[0.0, math.log(3.0)]], dtype=torch.float64)
    values = torch.tensor([[2.0, 0.0], [0.0, 4.0]], dtype=torch.float64)
    weights, mixture = softmax_and_mix(scores, values)
    return scores[0], values, weights[0], mixture[0]


class WorkedExample(RecordScene):
    """One query, two keys: scores 0 and ln 3, exponentials 1 and 3, weights ¼ and ¾, and the
    mixture ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Numbers from :func:`blockviz.attention.softmax_and_mix`."""

    pause = 0.9

    def construct(self) -> None:
        title = self.show_title("A worked example: one query, two keys")
        scores, values, weights, mixture = worked_example()
        exps = [math.exp(s) for s in scores.tolist()]
        lines = self.build_lines(scores.tolist(), exps, values.tolist(), weights.tolist(), mixture.tolist())
        equations = VGroup(formula(r"$w_j = \frac{e^{s_j}}{\sum_k e^{s_k}}$", self.look.text, 26), formula(r"$z = \sum_j w_j\, v_j$", self.look.text, 26)).arrange(RIGHT, buff=1.2)
        layout = VGroup(equations, lines).arrange(DOWN, buff=0.45)
        self.place(layout, title, grow=1.3)
        captions = ["the scores of two keys: 0 and ln 3", "exponentiate: 1 and 3", "add them: 4",
                    "divide by the sum: ¼ and ¾, which sum to 1", "weight each value vector", "add: the mixture has as many entries as a value"]
        self.play(FadeIn(equations), run_time=self.step_time)
        for line, caption in zip(lines, captions):
            self.play(FadeIn(line), *self.say(caption), run_time=self.step_time)
            self.rest()
        self.rest(1.0)

    def vector(self, values, color, decimals=2):
        parts = [text("(", WORK_SIZE, self.look.muted)]
        for index, value in enumerate(values):
            parts.append(number(value, WORK_SIZE, color, decimals))
            parts.append(text("," if index < len(values) - 1 else ")", WORK_SIZE, self.look.muted))
        vector = VGroup(*parts).arrange(RIGHT, buff=0.1)
        for comma, before in zip(parts[2:-1:2], parts[1:-1:2]):
            comma.align_to(before, DOWN).shift(DOWN * 0.06)
        return vector

    def line(self, name: str, *parts) -> VGroup:
        look = self.look
        pieces = [text(name, WORK_SIZE, look.muted)] + [text(part, WORK_SIZE, look.text) if isinstance(part, str) else part for part in parts]
        return VGroup(*pieces).arrange(RIGHT, buff=0.18)

    def build_lines(self, scores, exps, values, weights, mixture) -> VGroup:
        look = self.look
        exp_labels = [number(value, WORK_SIZE, look.text) for value in exps]
        total = number(sum(exps), WORK_SIZE, look.text)
        self.shown_sum(exp_labels, total)
        fractions = ", ".join(str(Fraction(weight).limit_denominator(100)) for weight in weights)
        scaled = [[weight * entry for entry in row] for weight, row in zip(weights, values)]
        scaled_vectors = [self.vector(row, look.value) for row in scaled]
        mixture_vector = self.vector(mixture, look.output)
        for column in range(len(mixture)):
            self.shown_sum([vector[1 + 2 * column] for vector in scaled_vectors], mixture_vector[1 + 2 * column])
        lines = VGroup(
            self.line("scores", self.vector(scores, look.text), "= (0, ln 3)"),
            self.line("exponentials", self.vector(exps, look.text)),
            self.line("sum", exp_labels[0], "+", exp_labels[1], "=", total),
            self.line("weights", self.vector(weights, look.text), f"= ({fractions})"),
            self.line("mixture", number(weights[0], WORK_SIZE, look.text), "·", self.vector(values[0], look.value), "+",
                      number(weights[1], WORK_SIZE, look.text), "·", self.vector(values[1], look.value)),
            self.line("", "=", scaled_vectors[0], "+", scaled_vectors[1], "=", mixture_vector),
        ).arrange(DOWN, buff=0.35, aligned_edge=LEFT)
        return lines
