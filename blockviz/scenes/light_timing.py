"""When a highlight is drawn around numbers that are carried across its edge.

:func:`blockviz.scenes.choreography.carry` and ``gather`` run in thirds of their play: the
copies move (on their chips), leave, then the targets arrive. A highlight framing the row they
leave, or the row they land in, would have its edge cross them on the way; so it is gone before
they move and back once they have landed:

* :func:`aside_while_carried` — the rate function of a ``HighlightJump`` (``highlight.over``)
  played with a carry: out in the first moments, around its target from the landing on;
* :func:`after_the_carry` — the rate function of a ``FadeIn`` of a highlight played with a carry;
* :func:`out_before_the_move` — the rate function of a ``FadeOut`` of a highlight played with one.

A caption changes early in its step's play, so it is read with the motion it describes:

* :func:`caption_out` — the old caption's ``FadeOut``: out by :data:`CAPTION_OUT`;
* :func:`caption_in` — the new one's ``FadeIn``: from then, in by :data:`CAPTION_IN` (the two
  never share the frame);
* :func:`after_the_caption` — the ``FadeOut`` of numbers the old caption names: from its end.
"""

from __future__ import annotations

from manim.utils.rate_functions import smooth

LANDED = 1 / 3
"""The share of a carry's play by which the carried numbers have landed (the end of its moves)."""
LEAVES = 0.04
"""The share of a carry's play in which a highlight fades out: its moves have then gone 1 % of the way."""


CAPTION_OUT = 0.2
"""The share of a step's play by which the old caption is gone."""
CAPTION_IN = 0.5
"""The share of a step's play by which the new caption is in."""


def caption_out(t: float) -> float:
    """The old caption's ``FadeOut`` progress at ``t`` (0–1): out by :data:`CAPTION_OUT`."""
    return smooth(min(1.0, t / CAPTION_OUT))


def caption_in(t: float) -> float:
    """The new caption's ``FadeIn`` progress at ``t`` (0–1): nothing until :data:`CAPTION_OUT`,
    then in by :data:`CAPTION_IN`."""
    return smooth(min(1.0, max(0.0, (t - CAPTION_OUT) / (CAPTION_IN - CAPTION_OUT))))


def after_the_caption(t: float) -> float:
    """A ``FadeOut``'s progress at ``t`` (0–1) of what the old caption names (its numbers): nothing
    until the old caption is out (:data:`CAPTION_OUT`), then out by the middle of the play."""
    return smooth(min(1.0, max(0.0, (t - CAPTION_OUT) / (0.5 - CAPTION_OUT))))


def aside_while_carried(t: float) -> float:
    """A ``HighlightJump``'s progress at ``t`` (0–1): fading where it is until :data:`LEAVES`
    (0 → ½, out), out until :data:`LANDED` (½, already at its target), then in (½ → 1)."""
    if t < LEAVES:
        return 0.5 * smooth(t / LEAVES)
    if t < LANDED:
        return 0.5
    return 0.5 + 0.5 * smooth((t - LANDED) / (1 - LANDED))


def after_the_carry(t: float) -> float:
    """A ``FadeIn``'s progress at ``t`` (0–1): nothing until :data:`LANDED`, then in."""
    return 0.0 if t < LANDED else smooth((t - LANDED) / (1 - LANDED))


def out_before_the_move(t: float) -> float:
    """A ``FadeOut``'s progress at ``t`` (0–1) of a highlight played with a carry or a send: out
    by :data:`LEAVES`, before the numbers leave the row it frames."""
    return smooth(min(1.0, t / LEAVES))


__all__ = [
    "aside_while_carried",
    "after_the_carry",
    "out_before_the_move",
    "after_the_caption",
    "caption_in",
    "caption_out",
    "LANDED",
    "LEAVES",
    "CAPTION_IN",
    "CAPTION_OUT",
]
