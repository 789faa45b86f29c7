"""The logit lens: a row's next-token prediction after each block of a stack, through the model's
final norm and unembedding (nostalgebraist 2020, "interpreting GPT: the logit lens").

For blockviz's toy models the record holds it whole: each block's view has its own ``probs``
(:mod:`blockviz.block_record`), read row by row by :func:`blockviz.prediction.lens_rows`. A
trained model's record of several layers (:func:`blockviz.models.recording.record_layers`)
holds, computed when it was recorded, each block's top :data:`TOP_WORDS` next tokens of every
row with their probabilities and the rest's sum (:class:`LogitLens`): the whole distribution
over SmolLM2's 49,152 tokens for 30 layers would take 77 MB. An encoder (BERT, MiniLM)
predicts no next token: it has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blockviz.errors import BlockvizError

TOP_WORDS = 5
"""Next words shown by name in a prediction (:data:`blockviz.prediction.TOP_WORDS` is this one);
the others are one term. Here, without matplotlib, so that a record loads without it."""

SUM_TOLERANCE = 1e-4
"""How far a lens row's probabilities (top words and the rest) may add up from 1: float32 softmax rounding."""


@dataclass(frozen=True)
class LogitLens:
    """Every block's next-token prediction of some rows, its largest terms: ``words[k][j]`` the
    :data:`~blockviz.prediction.TOP_WORDS` most probable next tokens after token ``rows[j]``,
    after block k, largest first (readable, as :mod:`blockviz.models.tokens` names tokens);
    ``probs[k][j]`` their probabilities; ``others[k][j]`` the sum of every other token's. Each
    row adds up to 1. ``rows`` ``None``: every token's row, ``j`` is the token (a record saved
    before the lens held chosen rows).

    Raises
    ------
    BlockvizError
        For words and numbers of other shapes than (blocks, rows, 5), rows that are not
        increasing positions, one per row of words, a probability outside [0, 1], terms not in
        decreasing order, or a row that does not add up to 1 (within :data:`SUM_TOLERANCE`).
    """

    words: tuple[tuple[tuple[str, ...], ...], ...]
    probs: tuple[tuple[tuple[float, ...], ...], ...]
    others: tuple[tuple[float, ...], ...]
    rows: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.rows is not None:
            rows = self.rows
            if (
                not isinstance(rows, (list, tuple))
                or not all(isinstance(row, int) and not isinstance(row, bool) and row >= 0 for row in rows)
                or list(rows) != sorted(set(rows))
            ):
                raise BlockvizError("the record's logit lens must name its rows as increasing token positions")
            object.__setattr__(self, "rows", tuple(rows))
        try:
            words = tuple(tuple(tuple(str(word) for word in row) for row in block) for block in self.words)
            probs = np.asarray(self.probs, dtype=np.float64)
            others = np.asarray(self.others, dtype=np.float64)
        except (TypeError, ValueError):
            raise BlockvizError("the record's logit lens must hold lists of words and of numbers") from None
        blocks = len(words)
        shape = (blocks, len(words[0]) if blocks else 0, TOP_WORDS)
        if (
            not blocks
            or probs.shape != shape
            or others.shape != shape[:2]
            or any(len(row) != TOP_WORDS for block in words for row in block)
            or any(len(block) != shape[1] for block in words)
        ):
            raise BlockvizError(f"the record's logit lens must hold {TOP_WORDS} words and numbers per row and block")
        if self.rows is not None and len(self.rows) != shape[1]:
            raise BlockvizError(f"the record's logit lens names {len(self.rows)} rows but holds {shape[1]}")
        if not (np.isfinite(probs).all() and np.isfinite(others).all()):
            raise BlockvizError("the record's logit lens holds a number that is not finite")
        if (probs < 0).any() or (probs > 1).any() or (others < 0).any() or (np.diff(probs, axis=-1) > 0).any():
            raise BlockvizError("the record's logit lens is not a prediction: probabilities in [0, 1], largest first")
        sums = probs.sum(-1) + others
        if (np.abs(sums - 1) > SUM_TOLERANCE).any():
            raise BlockvizError("the record's logit lens does not add up to 1 in every row (the file was edited)")
        object.__setattr__(self, "words", words)
        object.__setattr__(
            self, "probs", tuple(tuple(tuple(float(p) for p in row) for row in block) for block in probs)
        )
        object.__setattr__(self, "others", tuple(tuple(float(value) for value in block) for block in others))

    @property
    def n_blocks(self) -> int:
        return len(self.words)

    def holds(self, n: int) -> tuple[int, ...]:
        """The token positions it holds, of a record of ``n`` tokens."""
        return tuple(range(n)) if self.rows is None else self.rows

    def index_of(self, row: int) -> int | None:
        """Where token ``row``'s prediction is in ``words[k]``, ``probs[k]``, ``others[k]``; ``None`` if not held."""
        if self.rows is None:
            return row if 0 <= row < len(self.words[0]) else None
        return self.rows.index(row) if row in self.rows else None

    def to_dict(self) -> dict:
        """As a record's header holds it (JSON)."""
        data = {"words": [list(map(list, block)) for block in self.words], "probs": self.probs, "others": self.others}
        if self.rows is not None:
            data["rows"] = list(self.rows)
        return data

    @classmethod
    def from_dict(cls, data) -> LogitLens:
        """The lens a header holds (:meth:`to_dict`).

        Raises :class:`BlockvizError` for anything else.
        """
        if not isinstance(data, dict) or set(data) - {"rows"} != {"words", "probs", "others"}:
            raise BlockvizError("the record's logit lens must be an object of words, probs and others (and rows)")
        rows = data.get("rows")
        if isinstance(rows, list) and all(isinstance(row, float) and row.is_integer() for row in rows):
            rows = [int(row) for row in rows]  # a JSON header's numbers are read as floats
        return cls(data["words"], data["probs"], data["others"], rows)


def of_model(outputs, final_norm, unembedding, decode, rows: tuple[int, ...] | None = None) -> LogitLens:
    """The lens of a trained model's blocks: each block's output ``outputs[k]`` ``(r, d_model)``
    (the rows of token positions ``rows``; ``None``: every row) through the model's own
    ``final_norm`` (a module taking ``(1, r, d_model)``) and ``unembedding`` ``(d_model,
    n_vocab)``, softmax; its top words (``decode``: id → readable word) with their
    probabilities, and the others' sum."""
    import torch

    with torch.no_grad():
        normed = torch.stack([final_norm(output[None].to(unembedding.dtype))[0] for output in outputs])
        blocks, n, width = normed.shape
        # one product for every block and row: (blocks · n, d_model) @ (d_model, n_vocab)
        probabilities = torch.softmax(normed.reshape(blocks * n, width) @ unembedding, dim=-1)
        top = torch.topk(probabilities, TOP_WORDS, dim=-1)
        rest = (probabilities.sum(-1, dtype=torch.float64) - top.values.sum(-1, dtype=torch.float64)).clamp(min=0)
    indices = top.indices.reshape(blocks, n, TOP_WORDS).tolist()
    words = [[[decode(index) for index in row] for row in block] for block in indices]
    probs = top.values.reshape(blocks, n, TOP_WORDS).tolist()
    others = rest.reshape(blocks, n).tolist()
    return LogitLens(words, probs, others, rows)


def missing_lens(rec, row: int | None = None) -> str:
    """One line on why ``rec`` has no logit lens (after token ``row``, when given)."""
    if rec.lens is not None and row is not None:
        held = " and ".join(f"{rec.tokens[index]!r} ({index})" for index in rec.lens.holds(rec.n))
        return (
            f"no logit lens after token {rec.tokens[row]!r} ({row}): the record holds it after {held}: "
            f"choose one of those with --token, or record the layers again with --token {row} (in Python lens_rows=[{row}])"
        )
    if rec.source.is_model and not rec.config.causal:
        return f"no logit lens: {rec.source.model} is an encoder (bidirectional, no unembedding): it predicts no next token"
    if rec.source.is_model and len(rec.blocks) == 1:
        return "no logit lens: record every layer (--layer all, or a range A-B) to see the prediction after each"
    if rec.source.is_model:
        return "no logit lens: the model's folder holds no unembedding (lm_head) blockviz reads"
    return "no logit lens: blockviz's seeded block has no unembedding; the toy model's has (--model toy)"
