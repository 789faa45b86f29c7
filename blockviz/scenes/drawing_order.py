"""Drawing the still part of a play once.

Manim's Cairo renderer draws, in every frame of a play, each mobject from the first moving one
in the scene's drawing order onwards; everything before it goes into one still image drawn once.
A text that merely comes later in the order than a moving cell is redrawn in every frame, though
it never touches what moves. :func:`still_first` reorders the scene's mobjects so that every
still mobject clear of what moves (and of what it must stay above) comes first: the frames are
the same, pixel for pixel, and fewer shapes are drawn per frame.

What moves is bounded by the box around where each animated mobject starts, is and ends (its
points travel in straight lines for a rate function that stays within 0–1). Animations whose
path cannot be bounded so (an arc, an overshooting rate function, an unknown kind) keep the
order as it is.
"""

from __future__ import annotations

import numpy as np
from manim import Transform, Wait
from manim.animation.creation import ShowPartial

from blockviz.scenes.animation_tree import groups, leaves
from blockviz.scenes.grids import HighlightJump

MARGIN = 0.1
"""Frame units added around every box: half a stroke (4 px wide at most, 0.02 units) plus
anti-aliasing (a pixel is 0.017 units at 854 × 480)."""

Box = tuple[float, float, float, float]


def still_first(mobjects: list, animations: list) -> list:
    """``mobjects`` (the scene's drawing order) with the still ones clear of every later-drawn
    region they overlap moved to the front. Two mobjects that overlap keep their order.

    ``animations`` are the play's animations, begun (their start and end copies exist).
    Returns ``mobjects`` unchanged when a moving region cannot be bounded (an arc, a rate
    function leaving 0–1, an animation of an unknown kind, an updater).
    """
    played = [leaf for animation in animations for leaf in leaves(animation)]
    swept = [_swept_box(leaf) for leaf in played]
    nested = [group for animation in animations for group in groups(animation)]
    if any(box is False for box in swept) or not all(_stays_within_its_ends(group.rate_func) for group in nested):
        return mobjects
    moving_ids = {id(member) for leaf in played if leaf.mobject is not None for member in leaf.mobject.get_family()}
    first, later, later_boxes = [], [], []
    for mobject in mobjects:
        family = mobject.get_family()
        if any(member.updaters for member in family):
            return mobjects  # what an updater does is not known in advance
        moving = any(id(member) in moving_ids for member in family)
        box = _box(family)
        if not moving and (box is None or not any(_overlap(box, other) for other in later_boxes)):
            first.append(mobject)
            continue
        later.append(mobject)
        if moving:
            later_boxes.extend(
                region for leaf, region in zip(played, swept) if region is not None and _inside(leaf, family)
            )
        if box is not None:
            later_boxes.append(box)
    return first + later


def _swept_box(animation) -> Box | None | bool:
    """The box the animation's mobject stays in while it plays; ``None`` if it draws nothing;
    ``False`` if it cannot be bounded."""
    if isinstance(animation, Wait):
        return None
    if not _stays_within_its_ends(animation.rate_func):
        return False
    if getattr(animation, "copy_free", False):  # a fade here: the mobject, shifted at most by its shift
        box = _box(animation.mobject.get_family())
        return box and _union([box, _shifted(box, animation.shift_vector), _shifted(box, -animation.shift_vector)])
    if isinstance(animation, Transform):
        if animation.path_arc:
            return False
        families = [
            animation.mobject.get_family(),
            animation.starting_mobject.get_family(),
            animation.target_copy.get_family(),
        ]
        return _union([_box(family) for family in families])
    if isinstance(animation, ShowPartial):  # draws a part of its own points
        return _box(animation.mobject.get_family())
    if isinstance(animation, HighlightJump):
        width, height, centre = animation.goal
        goal = (centre[0] - width / 2, centre[1] - height / 2, centre[0] + width / 2, centre[1] + height / 2)
        return _union([_box(animation.mobject.get_family()), goal])
    return False


def _stays_within_its_ends(rate_func) -> bool:
    values = np.array([rate_func(t) for t in np.linspace(0, 1, 41)])
    return bool(np.all(values >= -1e-9) and np.all(values <= 1 + 1e-9))


def _inside(animation, family: list) -> bool:
    return animation.mobject is not None and any(member is animation.mobject for member in family)


def _box(family: list) -> Box | None:
    points = [member.points for member in family if len(member.points)]
    if not points:
        return None
    every = np.concatenate(points)
    low, high = every.min(axis=0), every.max(axis=0)
    return (low[0] - MARGIN, low[1] - MARGIN, high[0] + MARGIN, high[1] + MARGIN)


def _union(boxes: list) -> Box | None:
    boxes = [box for box in boxes if box is not None]
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _shifted(box: Box, by) -> Box:
    return (box[0] + by[0], box[1] + by[1], box[2] + by[0], box[3] + by[1])


def _overlap(one: Box, other: Box) -> bool:
    return one[0] < other[2] and other[0] < one[2] and one[1] < other[3] and other[1] < one[3]


__all__ = ["still_first", "MARGIN"]
