"""Fades that never show a text on half a background.

A text is coloured for what lies behind it (a cell, a chip); faded in together with that cell,
it would spend half the fade on a see-through cell over the page, below 4.5:1 contrast. So:

* :class:`Reveal` — a ``FadeIn`` in two halves: the shapes first (cells, chips, rules), then the
  texts on them.
* :class:`Conceal` — a ``FadeOut`` in two halves: the texts first, then the shapes under them.

Positions (a ``shift``) move over the whole run time; only the opacities are staged. A fade
without a shift or scale never moves its mobject, wherever an earlier animation put it.
"""

from __future__ import annotations

import numpy as np
from manim import FadeIn, FadeOut, SVGMobject, Text, VMobject


def text_members(mobject) -> set[int]:
    """The ids of every part of every text (a ``Text``, a formula) in ``mobject``'s family."""
    found: set[int] = set()
    for member in mobject.get_family():
        if isinstance(member, Text) or (isinstance(member, SVGMobject) and hasattr(member, "shown")):
            found.update(id(part) for part in member.get_family())
    return found


def staged(alpha: float, first: bool) -> float:
    """The share of a fade done at ``alpha`` (0–1) by the half that goes ``first`` or second."""
    return min(1.0, 2 * alpha) if first else max(0.0, 2 * alpha - 1)


class _Staged:
    """Shared by :class:`Reveal` and :class:`Conceal`: positions follow the whole fade, the
    opacities of texts and of shapes each one half of it."""

    texts_first = False

    def begin(self) -> None:
        self.texts = text_members(self.mobject)
        super().begin()

    @property
    def moves(self) -> bool:
        """Whether the fade shifts or scales. A fade that doesn't leaves the points alone: begun
        inside a group before an earlier animation moved the mobject (a carry's copy, faded
        where it landed), it would otherwise put the mobject back where it was at the start."""
        return bool(np.any(self.shift_vector)) or self.scale_factor != 1

    def interpolate_submobject(self, submobject, starting_submobject, target_copy, alpha: float):
        if self.moves:
            submobject.interpolate(starting_submobject, target_copy, alpha, self.path_func)
        if isinstance(submobject, VMobject):
            is_text = id(submobject) in self.texts
            submobject.interpolate_color(starting_submobject, target_copy, staged(alpha, first=is_text == self.texts_first))
        return self


class Reveal(_Staged, FadeIn):
    """Fade ``mobjects`` in: their shapes over the first half, their texts over the second."""


class Conceal(_Staged, FadeOut):
    """Fade ``mobjects`` out: their texts over the first half, their shapes over the second."""

    texts_first = True


__all__ = ["Reveal", "Conceal", "staged", "text_members"]
