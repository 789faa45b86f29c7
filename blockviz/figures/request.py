"""What a figure is asked to show: the record, the theme, the chosen query token and head."""

from __future__ import annotations

import dataclasses
from functools import cached_property

from blockviz.block_record import BlockRecord
from blockviz.figures.page import DEFAULT_WIDTH, Page, page
from blockviz.selection import select_head, select_token
from blockviz.style import LIGHT, Theme


@dataclasses.dataclass
class FigureRequest:
    """A record and the choices that shape its figures.

    ``token`` is the query the value-mixing figure writes out, named as
    :func:`blockviz.selection.select_token` takes it (a word, ``word#k`` or a 0-based position;
    ``None``: the last word token, not punctuation) and kept as its position; ``head`` limits per-head figures to one
    head (``None``: every head; value mixing uses head 0); ``width`` is the page width in
    inches the figures are laid out for (``None``: each at its natural size). A trained model's
    layer shows one head by default (``head``, else head 0); blockviz's own blocks (seeded, or its
    trained toys) every head; ``all_heads`` shows every head. ``stack``: the record of several blocks
    ``record`` is one block of (``--block K``; ``None``: ``record`` is the whole record), which the
    figures of every block read (:attr:`whole`).

    Raises
    ------
    BlockvizError
        If ``token`` or ``head`` is not in the record (the message lists the choices), or
        ``width`` is not from 2 to 40 inches.
    """

    record: BlockRecord
    theme: Theme = LIGHT
    token: int | str | None = None
    head: int | None = None
    decimals: int = 2
    width: float | None = DEFAULT_WIDTH
    all_heads: bool = False
    stack: BlockRecord | None = None

    def __post_init__(self) -> None:
        self.page  # checks the width
        if self.head is not None:
            select_head(self.head, self.record.config.n_heads)
        if self.token is not None:
            self.token = select_token(self.record.tokens, self.token, self.record.special)

    @cached_property
    def page(self) -> Page:
        """The page the figures are laid out for."""
        return page(self.width)

    @property
    def heads(self) -> list[int]:
        """The heads per-head figures show."""
        if self.all_heads:
            return list(range(self.record.config.n_heads))
        if self.head is None:  # a trained model's layer: one head; blockviz's blocks, seeded or its toys: every head
            return [0] if self.record.source.is_model else list(range(self.record.config.n_heads))
        return [self.head]

    @property
    def whole(self) -> BlockRecord:
        """The whole record, every block (``rec.blocks``), whichever block ``record`` is."""
        return self.stack if self.stack is not None else self.record

    @property
    def query(self) -> int:
        """The query position written out in the value-mixing figure (default: the last word token, not punctuation)."""
        return select_token(self.record.tokens, self.token, self.record.special)

    @property
    def mixing_head(self) -> int:
        """The head written out in the value-mixing figure (default: head 0)."""
        return select_head(self.head, self.record.config.n_heads)

    @cached_property
    def other_mask_record(self) -> BlockRecord:
        """The same sentence and parameters with the other mask (causal ↔ bidirectional):
        :meth:`BlockRecord.counterpart`."""
        return self.record.counterpart(causal=not self.record.config.causal)
