"""Fades that never show a text on half a background.

A text is coloured for what lies behind it (a cell, a chip); faded in together with that cell,
it would spend half the fade on a see-through cell over the page, below 4.5:1 contrast. So:

* :class:`Reveal` — a ``FadeIn`` in two halves: the shapes first (cells, chips, rules), then the
  texts on them. A grid in it (anything with ``arrival_parts()``, as
  :class:`~blockviz.scenes.grids.NumberGrid`; or named in ``grids=`` when only some of its
  groups are revealed) arrives cell after cell, each cell in two halves.
* :class:`Conceal` — a ``FadeOut`` in two halves: the texts first, then the shapes under them;
  a grid in it leaves cell after cell.
* :func:`lagged_windows`, :func:`within` — the stretches of a play that the parts of a cascade
  take (cells of a grid arriving one after another, as Manim's ``LaggedStart``), and a rate
  function run inside one of them.
* :class:`FadeIn`, :class:`FadeOut` — Manim's, drawn the same, without copies: Manim's fade
  copies its mobject twice when it begins (to fade from and to) and interpolates every point of
  every frame; these scale the opacities the mobject has and move it by the ``shift``. A fade
  with a ``scale`` or a ``target_position`` is Manim's own.

Positions (a ``shift``) move over the whole run time; only the opacities are staged. A fade
without a shift or scale never moves its mobject, wherever an earlier animation put it.
"""

from __future__ import annotations

import operator

import manim
import numpy as np
from manim import SVGMobject, Text, VMobject


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


class _CopyFree:
    """Shared by the fades here: at each moment a part's fill, stroke and background-stroke
    opacities are its own times the share of it shown, and the mobject sits where the ``shift``
    has taken it so far. The same frames as Manim's fade (which interpolates between the mobject
    and a copy faded to 0 and shifted), without the copies."""

    fading_in = True

    @property
    def copy_free(self) -> bool:
        return self.scale_factor == 1 and not self.point_target and self.lag_ratio == 0

    def begin(self) -> None:
        if not self.copy_free:
            super().begin()
            return
        self.parts = [
            member for member in self.mobject.get_family() if isinstance(member, VMobject) and member.has_points()
        ]
        for member in self.parts:  # its own arrays: opacities are written in place
            for name in RGBAS:
                setattr(member, name, getattr(member, name).copy())
        self.opacities = [tuple(getattr(member, name)[:, 3].copy() for name in RGBAS) for member in self.parts]
        self.shown = [None] * len(self.parts)  # each part's share shown in the frame before, and its arrays
        self.applied = np.zeros(3)
        if self.suspend_mobject_updating:
            self.mobject.suspend_updating()
        self.interpolate(0)

    def get_all_mobjects(self):
        return [self.mobject] if self.copy_free else super().get_all_mobjects()

    def interpolate_mobject(self, alpha: float) -> None:
        if not self.copy_free:
            super().interpolate_mobject(alpha)
            return
        done = self.rate_func(alpha)
        for index, (member, opacities) in enumerate(zip(self.parts, self.opacities)):
            faded = self.faded(member, done)
            shown = faded if self.fading_in else 1 - faded
            arrays = [getattr(member, name) for name in RGBAS]
            written = self.shown[index]
            if written is not None and written[0] == shown and all(map(operator.is_, written[1], arrays)):
                continue  # as written in the frame before, into the same arrays: a part outside its stretch
            for array, opacity in zip(arrays, opacities):
                array[:, 3] = opacity * shown
            self.shown[index] = (shown, arrays)
        if np.any(self.shift_vector):
            offset = -(1 - done) * self.shift_vector if self.fading_in else done * self.shift_vector
            self.mobject.shift(offset - self.applied)
            self.applied = offset

    def faded(self, member, done: float) -> float:
        """How far (0–1) ``member``'s own fade has gone when ``done`` of the whole has run."""
        return done


LAG_RATIO = 0.5
"""How far into one part's stretch the next part of a cascade begins (Manim's ``lag_ratio``):
two parts in flight at once, the second half of one with the first half of the next, so a
frame changes about one part's worth of pixels."""


def lagged_windows(count: int, lag_ratio: float = LAG_RATIO) -> list[tuple[float, float]]:
    """The stretches ``(start, end)``, as shares (0–1) of a play, of ``count`` parts that start
    one after another ``lag_ratio`` of a stretch apart and all end by the play's end, as Manim's
    ``LaggedStart(..., lag_ratio=lag_ratio)`` times them: each lasts 1 / (1 + (count − 1) · lag_ratio).
    ``lagged_windows(3, 0.5)`` → ``[(0, 0.5), (0.25, 0.75), (0.5, 1)]``; one part takes the whole play."""
    if count < 1:
        return []
    length = 1 / (1 + (count - 1) * lag_ratio)
    return [(k * lag_ratio * length, k * lag_ratio * length + length) for k in range(count)]


def within(rate_func, start: float, end: float):
    """A rate function running ``rate_func`` over the stretch ``start``–``end`` (shares of a play):
    ``rate_func(0)`` before it, ``rate_func(1)`` after."""

    def stretched(t: float) -> float:
        return rate_func(min(1.0, max(0.0, (t - start) / (end - start))))

    return stretched


def cascade_windows(*mobjects) -> dict[int, tuple[float, float]]:
    """The stretch of a fade (:func:`lagged_windows`) each part of every grid in the ``mobjects``'
    families takes, by id of every member of the part: the grids' ``arrival_parts()`` (cell after
    cell) one after another, grid after grid. Members of no part are not
    in it (they take the whole fade)."""
    grids = [member for mobject in mobjects for member in mobject.get_family() if hasattr(member, "arrival_parts")]
    parts = [part for grid in dict.fromkeys(grids) for part in grid.arrival_parts()]
    windows: dict[int, tuple[float, float]] = {}
    for part, window in zip(parts, lagged_windows(len(parts))):
        windows.update((id(member), window) for piece in part for member in piece.get_family())
    return windows


RGBAS = ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas")
"""A part's colour arrays (one RGBA per row) whose opacities a fade scales."""


class FadeIn(_CopyFree, manim.FadeIn):
    """Manim's ``FadeIn`` (same arguments, same frames), without copying the mobject."""


class FadeOut(_CopyFree, manim.FadeOut):
    """Manim's ``FadeOut`` (same arguments, same frames), without copying the mobject."""

    fading_in = False


class _Staged(_CopyFree):
    """Shared by :class:`Reveal` and :class:`Conceal`: the opacities of texts and of shapes
    each follow one half of the fade, positions the whole of it."""

    texts_first = False

    def __init__(self, *mobjects, grids=(), **kwargs) -> None:
        self.grids = list(grids)  # grids whose parts (not the grids themselves) are in mobjects
        super().__init__(*mobjects, **kwargs)

    def begin(self) -> None:
        self.texts = text_members(self.mobject)
        self.windows = cascade_windows(self.mobject, *self.grids)
        super().begin()

    def faded(self, member, done: float) -> float:
        start, end = self.windows.get(id(member), (0.0, 1.0))
        return staged(within(lambda t: t, start, end)(done), first=(id(member) in self.texts) == self.texts_first)

    @property
    def moves(self) -> bool:
        """Whether the fade shifts or scales. A fade that doesn't leaves the points alone: begun
        inside a group before an earlier animation moved the mobject (a carry's copy, faded
        where it landed), it would otherwise put the mobject back where it was at the start."""
        return bool(np.any(self.shift_vector)) or self.scale_factor != 1

    def interpolate_submobject(self, submobject, starting_submobject, target_copy, alpha: float):
        """Manim's interpolation with staged opacities (a fade that scales: not copy-free)."""
        if self.moves:
            submobject.interpolate(starting_submobject, target_copy, alpha, self.path_func)
        if isinstance(submobject, VMobject):
            submobject.interpolate_color(starting_submobject, target_copy, self.faded(submobject, alpha))
        return self


class Reveal(_Staged, manim.FadeIn):
    """Fade ``mobjects`` in: their shapes over the first half, their texts over the second."""


class Conceal(_Staged, manim.FadeOut):
    """Fade ``mobjects`` out: their texts over the first half, their shapes over the second."""

    texts_first = True
    fading_in = False


__all__ = [
    "FadeIn",
    "FadeOut",
    "Reveal",
    "Conceal",
    "staged",
    "text_members",
    "lagged_windows",
    "within",
    "cascade_windows",
]
