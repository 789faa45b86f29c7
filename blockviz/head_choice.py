"""Which head a command shows: a number, or the one ``--head auto`` finds in the record.

``--head auto`` (:data:`blockviz.selection.AUTO`) picks the head with the largest weight above its
baseline from the focus token (:func:`blockviz.models.evidence.answering_head`), narrowed to one
key by ``--to``; :func:`blockviz.selection.default_head` says when it is the default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blockviz.errors import BlockvizError
from blockviz.selection import AUTO, select_head, select_token


@dataclass(frozen=True)
class HeadChoice:
    """The head a command shows and the key it follows: ``head`` (0-based); ``key`` the token
    position ``--to`` names or ``auto`` picked (``None``: none); ``auto`` whether the head was
    picked by :func:`choose_head`'s rule, then ``weight`` (the head's weight from the query on
    ``key``) and ``baseline`` (its mean weight on ``key`` from the other queries that see it,
    :func:`blockviz.models.evidence.baselines`), both read from the record's weights."""

    head: int
    key: int | None = None
    auto: bool = False
    weight: float | None = None
    baseline: float | None = None


def choose_head(record, head: int | str | None, query: int, to: str | int | None = None) -> HeadChoice:
    """The head shown for token ``query`` of ``record`` (a :class:`~blockviz.block_record.BlockRecord`):
    ``head`` a head number (:func:`~blockviz.selection.select_head`; ``None``: head 0), or :data:`~blockviz.selection.AUTO` — the head
    with the largest weight above its baseline from ``query`` (:func:`blockviz.models.evidence.answering_head`
    on ``record.weights`` ``(n_heads, n, n)``, the record's mask saying which keys the query
    sees), to the key ``to`` names (a word, ``word#k`` or a position, as :func:`~blockviz.selection.select_token`)
    or else to whichever key that margin is largest for.

    Raises
    ------
    BlockvizError
        For a head out of range or another word than ``auto``, a ``to`` that names no token,
        or a key a causal query cannot see.
    """
    key = None if to is None else select_token(record.tokens, to, record.special)
    if isinstance(head, str) and head.strip().lower() == AUTO:
        if isinstance(record.weights, np.ndarray):  # a record read without torch
            from blockviz.array_evidence import answering_head_of_arrays

            best = answering_head_of_arrays(record.weights, query, key, record.config.causal)
            return HeadChoice(best.head, best.key, True, best.weight, best.baseline)
        from blockviz.models.evidence import answering_head

        best = answering_head(record.weights[None], query, key, causal=record.config.causal)
        return HeadChoice(best.head, best.key, True, best.weight, best.baseline)
    if isinstance(head, str) and head.strip().isdecimal():
        head = int(head)
    if isinstance(head, str):
        raise BlockvizError(
            f"head {head!r} is neither a number nor auto: choose 0 … {record.config.n_heads - 1} or auto"
        )
    if key is not None and record.config.causal and key > query:
        raise BlockvizError(
            f"key {key} ({record.tokens[key]!r}) comes after query {query} ({record.tokens[query]!r}): a causal model hides it"
        )
    return HeadChoice(select_head(head, record.config.n_heads), key)


def choose_block(record, block: int | None, head: int | str | None, query: int, to: str | int | None = None) -> int:
    """The block of ``record`` (a :class:`~blockviz.block_record.BlockRecord`, one block or a
    stack) a command focuses on: ``block`` when given (checked, :meth:`~blockviz.block_record.BlockRecord.block`);
    else, for ``head`` :data:`~blockviz.selection.AUTO`, the block of the head that rule finds
    among every block's heads (:func:`blockviz.models.evidence.answering_head` on the blocks'
    weights ``(blocks, n_heads, n, n)`` from token ``query``, to the key ``to`` names if given);
    else the last block.

    Raises
    ------
    BlockvizError
        For a block out of range, a ``to`` that names no token, or a key a causal query cannot see.
    """
    views = record.blocks
    if block is not None:
        record.block(block)
        return block
    if not (isinstance(head, str) and head.strip().lower() == AUTO) or len(views) == 1:
        return len(views) - 1
    import torch

    from blockviz.models.evidence import answering_head

    key = None if to is None else select_token(record.tokens, to, record.special)
    weights = torch.stack([view.weights for view in views])
    return answering_head(weights, query, key, causal=record.config.causal).layer


__all__ = ["HeadChoice", "choose_block", "choose_head"]
