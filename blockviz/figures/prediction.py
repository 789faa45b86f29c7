"""The prediction of a block with an unembedding (the trained toy model): one row's next-token
probabilities, the largest ones by word and the rest as one "+ others" term."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures.heatmap import weights_scale
from blockviz.figures.labels import token_label
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, heading, note, source_line, titled, work_line
from blockviz.figures.request import FigureRequest
from blockviz.style import WEIGHTS_SCALE_NAME, format_number

TOP_WORDS = 5
"""Next words shown by name; the others are one term."""
OTHERS = "+ others"


def probability_scale():
    """The weights' colour scale (0–1 by √, :func:`~blockviz.figures.heatmap.weights_scale`),
    its colour bar labelled "probability": both are shares of 1."""
    return replace(weights_scale(), label=f"probability ({WEIGHTS_SCALE_NAME})")


@dataclass(frozen=True)
class Prediction:
    """Row ``row``'s shown terms: ``words`` with their recorded ``probabilities`` (largest first),
    then the remaining words' recorded probabilities summed (``others``, ``hidden`` words), and
    the row's recorded ``total``."""

    row: int
    words: list[str]
    probabilities: np.ndarray
    others: float
    hidden: int
    total: float

    def terms(self, decimals: int) -> list[str]:
        return [format_number(float(value), decimals) for value in [*self.probabilities, self.others]]

    def sign(self, decimals: int) -> str:
        """ "=" when the shown terms add up to the shown total exactly, else "≈" (each is rounded on its own)."""
        written = sum(float(term) for term in self.terms(decimals))
        return "=" if abs(written - float(format_number(self.total, decimals))) < 0.5 * 10**-decimals else "\u2248"


def prediction_of(rec, row: int, top: int = TOP_WORDS) -> Prediction:
    """The ``top`` largest of ``rec.probs[row]`` ``(n_vocab,)`` by word (``rec.source.vocabulary``,
    ties by word id) and the sum of the others, every number read from the record."""
    probabilities = as_array(rec.probs)[row]
    order = np.argsort(-probabilities, kind="stable")
    shown, rest = order[:top], order[top:]
    vocabulary = rec.source.vocabulary or tuple(str(index) for index in range(len(probabilities)))
    return Prediction(
        row,
        [vocabulary[index] for index in shown],
        probabilities[shown],
        float(probabilities[rest].sum()),
        len(rest),
        float(probabilities.sum()),
    )


def prediction(request: FigureRequest) -> Figure:
    """Figure: after the query token (``--token``, default the last word), the next-token
    probabilities ``probs[i]`` ``(n_vocab,)`` = softmax of the logits ``ln_f · W_U`` — the
    :data:`TOP_WORDS` largest by word, then "+ others" (the remaining words' probabilities
    summed), on the weights' 0–1 colour scale, and the written sum of the shown terms ("≈" when
    the rounded terms do not add up to the rounded total exactly)."""
    rec, page, decimals = request.record, request.page, request.decimals
    guess = prediction_of(rec, request.query)
    token = token_label(rec.tokens[guess.row], 24)
    named = ", ".join(
        f"{word!r} {format_number(float(value), decimals)}" for word, value in zip(guess.words, guess.probabilities)
    )
    lines = heading(
        page,
        titled("prediction", f"after {token!r}, the block predicts {named}, \u2026"),
        r"$p = \mathrm{softmax}(\mathrm{LN}_f(x_{out})\, W_U)$",
    )
    values = np.append(guess.probabilities, guess.others)[None, :]
    columns = [token_label(word) for word in guess.words] + [OTHERS]
    spec = MatrixSpec(
        values,
        [token],
        columns,
        title=f"next-token probabilities after {token!r} (position {guess.row})",
        xlabel="next word",
    )
    lines.append(Flow([matrix_piece(spec, probability_scale(), request.theme, page, "prediction", decimals)], rows=1))
    terms = guess.terms(decimals)
    lines.append(
        work_line(
            page,
            "prediction_sum",
            [" + ".join(terms), f"{guess.sign(decimals)} {format_number(guess.total, decimals)}"],
        )
    )
    lines.append(colorbar_line([probability_scale()], page))
    lines.append(
        note(
            page,
            f"probs[{guess.row}] of the record; others: the {guess.hidden} other words' probabilities summed; "
            f"each number is rounded on its own (\u2248 where they then do not add up); {source_line(rec)}",
        )
    )
    return build_figure(lines, page)[0]
