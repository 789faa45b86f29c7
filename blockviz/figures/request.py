"""What a figure is asked to show: the record, the theme, the chosen query token and head."""

from __future__ import annotations

import dataclasses
from functools import cached_property

from blockviz.block_record import BlockRecord, record
from blockviz.errors import BlockvizError
from blockviz.style import LIGHT, Theme


@dataclasses.dataclass
class FigureRequest:
    """A record and the choices that shape its figures.

    ``token`` is the query position the value-mixing figure writes out (``None``: the last);
    ``head`` limits per-head figures to one head (``None``: every head; value mixing uses head 0).

    Raises
    ------
    BlockvizError
        If ``token`` or ``head`` is outside the record.
    """

    record: BlockRecord
    theme: Theme = LIGHT
    token: int | None = None
    head: int | None = None
    decimals: int = 2

    def __post_init__(self) -> None:
        if self.head is not None:
            check_head(self.head, self.record.config.n_heads)
        if self.token is not None and not 0 <= self.token < self.record.n:
            raise BlockvizError(f"token index {self.token} is outside the sentence: {describe_tokens(self.record.tokens)}")

    @property
    def heads(self) -> list[int]:
        """The heads per-head figures show."""
        return list(range(self.record.config.n_heads)) if self.head is None else [self.head]

    @property
    def query(self) -> int:
        """The query position written out in the value-mixing figure."""
        return self.record.n - 1 if self.token is None else self.token

    @property
    def mixing_head(self) -> int:
        """The head written out in the value-mixing figure."""
        return self.head or 0

    @cached_property
    def other_mask_record(self) -> BlockRecord:
        """The same sentence, config and parameters with the other mask (causal ↔ bidirectional)."""
        return other_mask_record(self.record)


def check_head(head: int, n_heads: int) -> None:
    """Raise :class:`BlockvizError` unless ``0 ≤ head < n_heads``."""
    if not 0 <= head < n_heads:
        raise BlockvizError(f"head {head} does not exist: this block has {n_heads} head{'s' if n_heads > 1 else ''}, numbered 0 to {n_heads - 1}")


def describe_tokens(tokens: list[str]) -> str:
    """``"choose one of 0 'the', 1 'cat', 2 'sat' (a token or its index)"``."""
    listed = ", ".join(f"{index} {token!r}" for index, token in enumerate(tokens))
    return f"choose one of {listed} (a token or its index)"


def resolve_token(tokens: list[str], choice: str | int | None) -> int | None:
    """The position named by ``choice``: an index (negative counts from the end), or a token's
    text (its first occurrence, case-sensitive, then case-insensitive). ``None`` stays ``None``.

    Raises
    ------
    BlockvizError
        If no token matches; the message lists the tokens with their indices.
    """
    if choice is None:
        return None
    text = str(choice).strip()
    if text.lstrip("-").isdigit():
        index = int(text)
        if -len(tokens) <= index < len(tokens):
            return index % len(tokens)
        raise BlockvizError(f"token index {index} is outside the sentence of {len(tokens)} tokens: {describe_tokens(tokens)}")
    for candidates in (tokens, [token.lower() for token in tokens]):
        wanted = text if candidates is tokens else text.lower()
        if wanted in candidates:
            return candidates.index(wanted)
    raise BlockvizError(f"token {text!r} is not in the sentence: {describe_tokens(tokens)}")


def other_mask_record(rec: BlockRecord) -> BlockRecord:
    """``rec``'s sentence through the same block with the other mask, computed by
    :func:`blockviz.block_record.record` with ``rec``'s own parameters.

    Raises
    ------
    BlockvizError
        If the sentence no longer splits into the record's tokens.
    """
    config = dataclasses.replace(rec.config, causal=not rec.config.causal)
    other = record(rec.sentence, config, weights=rec.params)
    if other.tokens != rec.tokens:
        raise BlockvizError("the record's sentence does not split into its tokens: save the record again with this version of blockviz")
    return other

