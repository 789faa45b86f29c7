"""The prediction of a block with an unembedding (the trained toy model): one row's next-token
probabilities, the largest ones by word and the rest as one "+ others" term."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures.heatmap import weights_scale
from blockviz.figures.labels import token_label, token_named
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import colorbar_line, heading, note, source_line, titled, work_line
from blockviz.figures.request import FigureRequest
from blockviz.prediction import OTHERS, prediction_of
from blockviz.style import WEIGHTS_SCALE_NAME, format_number


def probability_scale():
    """The weights' colour scale (0–1 by √, :func:`~blockviz.figures.heatmap.weights_scale`),
    its colour bar labelled "probability": both are shares of 1."""
    return replace(weights_scale(), label=f"probability ({WEIGHTS_SCALE_NAME})")


TITLE_WORDS = 3
"""The title names at most this many of the likeliest words, those that do not round to 0."""


def prediction(request: FigureRequest) -> Figure:
    """Figure: after the query token (``--token``, default the last word), the next-token
    probabilities ``probs[i]`` ``(n_vocab,)`` = softmax of the logits ``ln_f · W_U`` — the
    :data:`blockviz.prediction.TOP_WORDS` largest by word, then "+ others" (the remaining words' probabilities
    summed), on the weights' 0–1 colour scale, and the written sum of the shown terms ("≈" when
    the rounded terms do not add up to the rounded total exactly)."""
    rec, page, decimals = request.record, request.page, request.decimals
    guess = prediction_of(rec, request.query)
    token, named_token = token_label(rec.tokens[guess.row], 24), token_named(rec.tokens[guess.row])
    likeliest = [
        (word, shown)
        for word, value in zip(guess.words, guess.probabilities)
        if (shown := format_number(float(value), decimals)) != format_number(0.0, decimals)
    ][:TITLE_WORDS] or [(guess.words[0], format_number(float(guess.probabilities[0]), decimals))]
    named = ", ".join(f"{word!r} {shown}" for word, shown in likeliest)
    lines = heading(
        page,
        titled("prediction", f"after {named_token}, the block predicts {named}, \u2026"),
        r"$p = \mathrm{softmax}(\mathrm{LN}_f(y)\, W_U)$",
    )
    values = np.append(guess.probabilities, guess.others)[None, :]
    columns = [token_label(word) for word in guess.words] + [OTHERS]
    spec = MatrixSpec(
        values,
        [token],
        columns,
        title=f"next-token probabilities after {named_token} (position {guess.row})",
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
            f"the record's probabilities for the next token after token {guess.row}; others: the {guess.hidden} other words' probabilities summed; "
            f"each number is rounded on its own (\u2248 where they then do not add up); {source_line(rec)}",
        )
    )
    return build_figure(lines, page)[0]
