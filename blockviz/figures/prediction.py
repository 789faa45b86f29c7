"""The prediction of a block with an unembedding (the trained toy model): one row's next-token
probabilities, the largest ones by word and the rest as one "+ others" term."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures.labels import token_label, token_named
from blockviz.figures.layout import Flow, Slot, build_figure, fixed_piece, text_slot
from blockviz.figures.parts import heading, note, source_line, titled, work_line
from blockviz.figures.request import FigureRequest
from blockviz.prediction import OTHERS, others_phrase, prediction_of
from blockviz.style import format_number

BAR_WIDTH_IN = 2.4
"""The length of a probability's bar at probability 1 (inches)."""
ROW_IN = 0.22
"""From one word's bar to the next (inches)."""


def probability_bars(words: list[str], values: list[float], theme, page, decimals: int) -> Slot:
    """The words one under another, each with a horizontal bar as long as its probability and the
    probability written after it (as Transformer Explainer draws them): the Axes is labelled
    ``"prediction"``, the words ``"prediction:col"``, the numbers ``"prediction:cell"``. No colour
    scale: a bar's length is its number."""
    word_width = max(text_slot(word, page.tick).width for word in words)
    number_width = text_slot(format_number(1.0, decimals), page.number).width

    def draw(ax):
        ax.set_label("prediction")
        figure = ax.figure
        ax.barh(range(len(values)), values, height=0.62, color=theme.query)
        ax.set_xlim(0, 1)
        ax.set_ylim(len(values) - 0.5, -0.5)
        ax.axis("off")
        for k, (word, value) in enumerate(zip(words, values)):
            colour = theme.muted_text if word == OTHERS else theme.text
            figure.text(
                -0.03,
                k,
                word,
                transform=ax.transData,
                ha="right",
                va="center",
                fontsize=page.tick,
                color=colour,
                label="prediction:col",
            )
            figure.text(
                value + 0.02,
                k,
                format_number(value, decimals),
                transform=ax.transData,
                ha="left",
                va="center",
                fontsize=page.number,
                color=theme.text,
                label="prediction:cell",
            )

    room = page.content_width - word_width - number_width - 0.1
    return Slot(
        min(BAR_WIDTH_IN, room), ROW_IN * len(values), draw, key="prediction", left=word_width, right=number_width
    )


TITLE_WORDS = 3
"""The title names at most this many of the likeliest words, those that do not round to 0."""


def prediction(request: FigureRequest) -> Figure:
    """Figure: after the query token (``--token``, default the last word), the next-token
    probabilities ``probs[i]`` ``(n_vocab,)`` = softmax of the logits ``ln_f · W_U`` — the
    :data:`blockviz.prediction.TOP_WORDS` largest by word, then "+ others" (the remaining words' probabilities
    summed), as horizontal bars of their length (:func:`probability_bars`), and the written sum of the shown terms ("≈" when
    the rounded terms do not add up to the rounded total exactly)."""
    rec, page, decimals = request.record, request.page, request.decimals
    guess = prediction_of(rec, request.query)
    named_token = token_named(rec.tokens[guess.row])
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
    values = [float(value) for value in np.append(guess.probabilities, guess.others)]
    words = [token_label(word) for word in guess.words] + [OTHERS]
    lines.append(Flow([fixed_piece(probability_bars(words, values, request.theme, page, decimals))], rows=1))
    terms = guess.terms(decimals)
    lines.append(
        work_line(
            page,
            "prediction_sum",
            [" + ".join(terms), f"{guess.sign(decimals)} {format_number(guess.total, decimals)}"],
        )
    )
    lines.append(
        note(
            page,
            f"the record's probabilities for the next token after token {guess.row}; others: {others_phrase(guess, rec.source.vocabulary)}, their probabilities summed; "
            f"each number is rounded on its own (\u2248 where they then do not add up); {source_line(rec)}",
        )
    )
    return build_figure(lines, page)[0]
