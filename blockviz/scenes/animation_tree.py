"""A play's animations as a tree: groups (``AnimationGroup``, ``LaggedStart``…) hold animations."""

from __future__ import annotations

from manim import AnimationGroup


def leaves(animation) -> list:
    """The animations inside ``animation`` that are no group, in order (itself if it is none)."""
    if isinstance(animation, AnimationGroup):
        return [leaf for inner in animation.animations for leaf in leaves(inner)]
    return [animation]


def groups(animation) -> list:
    """``animation`` and every group inside it, outermost first (none if it is no group)."""
    if not isinstance(animation, AnimationGroup):
        return []
    return [animation, *(group for inner in animation.animations for group in groups(inner))]


__all__ = ["leaves", "groups"]
