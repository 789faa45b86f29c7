"""The token axis of a scene's grids, without Manim: which positions an elided axis draws and how
its tokens are named.

* :func:`token_face` — a token as grids and captions draw it: punctuation in quotes (“.”);
* :class:`KeptName` — a header never cut with "…" (the focus and its top keys);
* :func:`visible_slots` — which rows/columns of a long axis to draw, with ``None`` for ⋯;
* :func:`slots_between` — the slots for chosen positions, ``None`` for every run skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from blockviz.scenes.look import MAX_SLOTS
from blockviz.tokens import display_token, without_glyph


def token_face(token: str) -> str:
    """A token as drawn in grids, chips and captions: :func:`blockviz.tokens.display_token`, and a
    token with no letter, digit or symbol glyph of its own — punctuation, spaces, joiners, such
    as "." — in quotes (“.”), so it is never a lone dot."""
    shown = display_token(token)
    return f"\u201c{shown}\u201d" if without_glyph(shown) else shown


class KeptName(str):
    """A header never cut with "…": the focus token's and its top keys' names
    (:attr:`blockviz.scenes.shown.Shown.token_names`). A kept column header takes its whole
    width, its neighbours on the axis are shortened further to make room, and cells widen only
    when two kept names side by side need it.

    ``short`` is what a column header draws instead when the whole name is wider than its
    column: a word read as the unknown token without its mark ("she" for "she (<unk>)", which
    the row header and the captions still write whole), so no neighbour gives way to it."""

    short: str

    def __new__(cls, shown: str, short: str | None = None) -> KeptName:
        name = super().__new__(cls, shown)
        name.short = str(shown) if short is None else short
        return name


def visible_slots(n: int, focus: int, limit: int = MAX_SLOTS, keep: Sequence[int] = ()) -> list[int | None]:
    """The positions of an axis of length ``n`` to draw: at most ``limit`` slots, ``None`` = ⋯.

    All positions if ``n <= limit``; otherwise ``focus``, the first position and the positions
    of ``keep`` (in their order, e.g. the keys the focus attends to most) are never left out,
    then ``focus``'s neighbours fill the slots left, nearest first; ⋯ stands wherever positions
    are left out (a gap of one position is drawn instead: it costs the same slot).
    ``visible_slots(13, 6)`` → ``[0, None, 4, 5, 6, 7, 8, None]``;
    ``visible_slots(13, 7, keep=[1, 5])`` → ``[0, 1, None, 5, 6, 7, 8, None]``.
    """
    if n <= limit:
        return list(range(n))
    focus = min(max(focus, 0), n - 1)
    chosen: set[int] = set()
    for position in dict.fromkeys([focus, 0, *(p for p in keep if 0 <= p < n)]):
        if len(slots_between(n, chosen | {position})) <= limit:
            chosen = _filled(n, chosen | {position})
    for distance in range(1, n):
        for position in (focus - distance, focus + distance):
            if 0 <= position < n and position not in chosen and len(slots_between(n, chosen | {position})) <= limit:
                chosen = _filled(n, chosen | {position})
    return slots_between(n, chosen)


def _filled(n: int, chosen: set[int]) -> set[int]:
    """``chosen`` with every gap of a single position filled (it takes the ⋯'s slot)."""
    ordered = sorted(chosen)
    singles = {low + 1 for low, high in zip(ordered, ordered[1:]) if high - low == 2}
    if ordered and ordered[-1] == n - 2:
        singles.add(n - 1)
    return chosen | singles


def slots_between(n: int, chosen: set[int]) -> list[int | None]:
    """Grid slots for the positions ``chosen`` of ``n``: ``None`` (⋯) for every run skipped, at the end too."""
    slots: list[int | None] = []
    previous = -1
    for position in sorted(chosen):
        if position > previous + 1:
            slots.append(None)
        slots.append(position)
        previous = position
    if previous < n - 1:
        slots.append(None)
    return slots


__all__ = ["token_face", "KeptName", "visible_slots", "slots_between"]
