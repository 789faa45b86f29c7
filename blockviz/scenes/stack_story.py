"""What the stack's scenes read of a record of several blocks, without Manim: the previous-token
head of a block, the repeated word an induction head works on, and the source of a number of
block k (``("block", k, field, *index)``: ``record.block(k).tensors[field][index]``)."""

from __future__ import annotations


def in_block(k: int, *source) -> tuple:
    """The source of a number of block ``k``'s view (:func:`blockviz.scenes.text.number`'s forms)."""
    return ("block", k, *source)


def previous_token_head(view) -> int:
    """The head of block ``view`` whose weights from each token to the one before it add up to
    the most (``weights[h, i, i − 1]`` over i ≥ 1; head 0 for one token)."""
    weights = view.weights
    if view.n < 2:
        return 0
    totals = [float(weights[h].diagonal(-1).sum()) for h in range(weights.shape[0])]
    return max(range(len(totals)), key=lambda h: (totals[h], -h))


def repeat_of(tokens, focus: int) -> tuple[int, int] | None:
    """``(query, key)`` for an induction head: ``query`` a token seen before (the ``focus`` if it
    is one, else the last such token), ``key`` the token after that word's first occurrence;
    ``None`` if no token repeats an earlier one (case-insensitively, as the toy's vocabulary reads them)."""
    words = [token.lower() for token in tokens]
    repeats = [i for i in range(1, len(words)) if words[i] in words[:i] and words.index(words[i]) + 1 < i]
    if not repeats:
        return None
    query = focus if focus in repeats else repeats[-1]
    return query, words.index(words[query]) + 1


def induction_head(view, query: int, key: int) -> int:
    """The head of block ``view`` that puts the most weight from ``query`` on ``key``."""
    weights = view.weights[:, query, key]
    return max(range(weights.shape[0]), key=lambda h: (float(weights[h]), -h))


STACK_SENTENCE = "cat river lamp dog cat river"
"""What a stack's scene records when built without a record (plain ``manim``, no
``$BLOCKVIZ_RECORD``): words of the toy's vocabulary with a phrase repeated, through ``--model copy``."""


class CopyModelRecord:
    """Mixed into a stack's scene before :class:`~blockviz.scenes.base.RecordScene`: built without
    a record, it records :data:`STACK_SENTENCE` with the copy model (the seeded block is one block)."""

    @property
    def record(self):
        import os

        from blockviz.scenes.shown import RECORD_ENVIRONMENT_VARIABLE

        if self._record is None and not os.environ.get(RECORD_ENVIRONMENT_VARIABLE):
            from blockviz.toy.recording import record_toy

            self._record = record_toy(STACK_SENTENCE, "copy")
        return super().record


def block_name(rec, k: int) -> str:
    """Block ``k`` of ``rec`` as captions name it: "block k", or a trained model's "layer L"."""
    view = rec.block(k)
    return f"layer {view.source.layer}" if view.source.is_model and view.source.layer is not None else f"block {k}"
