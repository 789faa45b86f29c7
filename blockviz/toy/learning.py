"""Learning, read from a trained toy model's checkpoints (``checkpoints.safetensors`` in the
folder ``blockviz train`` wrote, :func:`blockviz.toy.folder.read_checkpoints`): the loss and the
attention of the head that links "it" to its subject in the lesson sentence, at each training
checkpoint. The training figure and the learning scene show these numbers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blockviz.errors import BlockvizError
from blockviz.tokens import tokenize

LESSON = "chicken_tired"
"""The lesson sentence whose attention the figure follows."""
QUERY, KEY = "it", "chicken"


@dataclass(frozen=True)
class Learning:
    """What the checkpoints say: ``steps``, the ``losses`` at them (``None`` where not recorded,
    e.g. step 0), the lesson ``sentence`` and its ``words``, the ``head`` whose ``QUERY`` → ``KEY``
    weight is largest at the last step, that head's weight at every step (``weights``) and its
    whole weights row from ``query`` at every step (``rows``, each ``(n,)``, adding up to 1)."""

    steps: list[int]
    losses: list[float | None]
    sentence: str
    head: int
    query: int
    key: int
    weights: list[float]
    words: list[str]
    rows: list[list[float]]

    @property
    def formed(self) -> bool:
        """Whether the checkpoints show the head forming (the one rule the learning scene and the
        training figure both say): its last weight on ``key`` is at least
        :data:`~blockviz.models.evidence.LEARNED_MARGIN` above its first and is the largest of its
        last row. A model whose weight fell (0.084 → 0.053) did not form the head.

        >>> Learning([0, 9], [None, 1.0], "", 0, 1, 0, [0.5, 0.9], ["a", "b"], [[0.5, 0.5], [0.9, 0.1]]).formed
        True
        >>> Learning([0, 9], [None, 1.0], "", 0, 1, 0, [0.5, 0.55], ["a", "b"], [[0.5, 0.5], [0.55, 0.45]]).formed
        False
        """
        from blockviz.models.evidence_types import LEARNED_MARGIN

        last = self.rows[-1]
        return self.weights[-1] - self.weights[0] >= LEARNED_MARGIN and max(last) == last[self.key]


def learning_of(folder: str | Path) -> Learning:
    """The :class:`Learning` of the toy model in ``folder``, every number read from its
    checkpoints file (attention weights ``(n_heads, n, n)`` per lesson and step).

    Raises
    ------
    BlockvizError
        If the file is missing, unreadable or damaged
        (:func:`~blockviz.toy.folder.read_checkpoints`), or lacks the lesson sentence, its words
        or its weights at a step.
    """
    from blockviz.toy.folder import read_checkpoints

    checkpoints = read_checkpoints(folder)
    sentence = checkpoints.get("lessons", {}).get(LESSON)
    if sentence is None:
        raise BlockvizError(
            f"the checkpoints in {str(folder)!r} hold no {LESSON!r} lesson: write the folder again with blockviz train -o DIR"
        )
    words = [token.lower() for token in tokenize(sentence)]
    if QUERY not in words or KEY not in words:
        raise BlockvizError(
            f"the lesson {sentence!r} in {str(folder)!r} lacks {QUERY!r} or {KEY!r}: write the folder again with blockviz train -o DIR"
        )
    query, key = words.index(QUERY), words.index(KEY)
    steps = checkpoints["steps"]
    queries = np.stack(
        [_lesson_weights(checkpoints["weights"][step], step, len(words), folder)[:, query, :] for step in steps]
    )  # (steps, n_heads, n)
    head = int(np.argmax(queries[-1, :, key]))
    return Learning(
        steps,
        list(checkpoints.get("losses") or [None] * len(steps)),
        sentence,
        head,
        query,
        key,
        [float(value) for value in queries[:, head, key]],
        list(tokenize(sentence)),
        [[float(value) for value in row] for row in queries[:, head, :]],
    )


def _lesson_weights(by_lesson: dict, step: int, n: int, folder) -> np.ndarray:
    """The lesson's attention weights ``(n_heads, n, n)`` at ``step``, checked for its ``n`` words."""
    weights = by_lesson.get(LESSON)
    if weights is None or tuple(weights.shape[1:]) != (n, n):
        raise BlockvizError(
            f"the checkpoints in {str(folder)!r} hold no {n}-word {LESSON!r} lesson at step {step}: "
            "write the folder again with blockviz train -o DIR"
        )
    return np.asarray(weights, dtype=float)
