"""Placing mobjects in the frame: shrink to a width, fit a band, stack in a column.

Positions are relative to the frame (``config.frame_width`` / ``frame_height``) and to other
mobjects, never magic coordinates.
"""

from __future__ import annotations

from typing import Iterable

from manim import DOWN, LEFT, Mobject, VGroup, config

from blockviz.scenes.look import FRAME_MARGIN


def fit_width(mobject: Mobject, width: float) -> Mobject:
    """Shrink ``mobject`` (never grow it) so it is at most ``width`` wide."""
    if mobject.width > width:
        mobject.scale_to_fit_width(width)
    return mobject


def fit_between(mobject: Mobject, top: float, bottom: float, grow: float = 1.5, margin: float = FRAME_MARGIN) -> Mobject:
    """Scale ``mobject`` to the largest size (at most ``grow`` ×) that fits the frame's width and
    the band between heights ``top`` and ``bottom``, and centre it in that band."""
    scale = min((config.frame_width - 2 * margin) / mobject.width, (top - bottom) / mobject.height, grow)
    mobject.scale(scale)
    return mobject.move_to([0, (top + bottom) / 2, 0])


def column_of(mobjects: Iterable[Mobject], buff: float = 0.15) -> VGroup:
    """Mobjects one under the other, left-aligned."""
    return VGroup(*mobjects).arrange(DOWN, buff=buff, aligned_edge=LEFT)


def frame_text_width() -> float:
    """The widest a line of text may be: the frame less its margins."""
    return config.frame_width - 2 * FRAME_MARGIN


__all__ = ["fit_width", "fit_between", "column_of", "frame_text_width"]
