"""Choosing what a scene looks at: the focus token and the head. No Manim here, so the CLI can
check these before anything is rendered."""

from __future__ import annotations

from blockviz.errors import BlockvizError


def focus_index(tokens: list[str], token: str | None) -> int:
    """Position of ``token`` in ``tokens`` (its first occurrence); the last token if ``None``.

    An exact match wins; otherwise the first case-insensitive match.

    Raises
    ------
    BlockvizError
        If ``token`` is not one of the sentence's tokens.
    """
    if token is None:
        return len(tokens) - 1
    if token in tokens:
        return tokens.index(token)
    folded = [candidate.casefold() for candidate in tokens]
    if token.casefold() in folded:
        return folded.index(token.casefold())
    shown = ", ".join(repr(candidate) for candidate in tokens[:16]) + (", …" if len(tokens) > 16 else "")
    raise BlockvizError(f"token {token!r} is not in the sentence: choose one of {shown}")


def check_head(head: int, n_heads: int) -> int:
    """``head`` if it is a head of the block (0 ≤ head < n_heads).

    Raises
    ------
    BlockvizError
        If ``head`` is out of range.
    """
    if not 0 <= head < n_heads:
        raise BlockvizError(f"head {head} is out of range: the block has {n_heads} heads, choose 0 to {n_heads - 1}")
    return head
