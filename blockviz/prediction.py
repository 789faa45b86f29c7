"""The prediction of a block with an unembedding (the trained toy model), read from its record:
one row's next-token probabilities, the largest ones by word and the rest as one "+ others"
term, so every shown row adds up to its recorded total. The prediction figure, scene and the
explorer show these numbers; none recomputes them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blockviz.logit_lens import TOP_WORDS
from blockviz.style import format_number

OTHERS = "+ others"


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
        """Every shown term written with ``decimals`` decimals, the "+ others" sum last."""
        return [format_number(float(value), decimals) for value in [*self.probabilities, self.others]]

    def sign(self, decimals: int) -> str:
        """ "=" when the shown terms add up to the shown total exactly, else "≈" (each is rounded on its own)."""
        written = sum(float(term) for term in self.terms(decimals))
        return "=" if abs(written - float(format_number(self.total, decimals))) < 0.5 * 10**-decimals else "\u2248"


def vocabulary_phrase(vocabulary: tuple[str, ...]) -> str:
    """A toy model's vocabulary counted as a reader counts it: its words, then its unknown token
    (``vocabulary[0]``), which every word outside them is read as.

    >>> vocabulary_phrase(("<unk>", "the", "cat", "sat"))
    '3 words and <unk>'
    """
    return f"{len(vocabulary) - 1} words and {vocabulary[0]}"


def others_phrase(guess: Prediction, vocabulary: tuple[str, ...] | None) -> str:
    """What the "+ others" term of ``guess`` sums: "the 64 other words and <unk>" when the unknown
    token (``vocabulary[0]``) is among them, else "the 65 other words".

    >>> others_phrase(Prediction(0, ["the"], np.array([0.9]), 0.1, 3, 1.0), ("<unk>", "the", "cat", "sat"))
    'the 2 other words and <unk>'
    """
    if vocabulary and vocabulary[0] not in guess.words:
        return f"the {guess.hidden - 1} other words and {vocabulary[0]}"
    return f"the {guess.hidden} other words"


def prediction_of(rec, row: int, top: int = TOP_WORDS) -> Prediction:
    """The ``top`` largest of ``rec.probs[row]`` ``(n_vocab,)`` by word (``rec.source.vocabulary``,
    ties by word id) and the sum of the others, every number read from the record.

    Raises
    ------
    KeyError
        If the record has no ``probs`` (its block has no unembedding:
        :func:`blockviz.record_needs.unembedding_missing`).
    """
    probabilities = np.asarray(rec.probs, dtype=float)[row]
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


def lens_rows(rec, row: int) -> list[Prediction] | None:
    """Row ``row``'s prediction after each block of ``rec``, block 0 first (the last is the
    model's own prediction): a toy model's from each block's recorded ``probs``, a trained
    decoder's from its recorded logit lens (``rec.lens``, :class:`blockviz.logit_lens.LogitLens`;
    ``hidden`` −1: the number of other words is not recorded); ``None`` when the record has none
    for that row (:func:`blockviz.logit_lens.missing_lens` says why)."""
    if rec.architecture.unembedding:
        return [prediction_of(view, row) for view in rec.blocks]
    index = None if rec.lens is None else rec.lens.index_of(row)
    if index is None:
        return None
    predictions = []
    for block in range(rec.lens.n_blocks):
        probabilities = np.asarray(rec.lens.probs[block][index])
        others = rec.lens.others[block][index]
        predictions.append(
            Prediction(
                row, list(rec.lens.words[block][index]), probabilities, others, -1, float(probabilities.sum()) + others
            )
        )
    return predictions
