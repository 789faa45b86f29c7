"""Shared helpers of the scene tests in motion: each play sampled part-way (several interpolation
points of its animations, render-free) with what a frame may not show then — text under 4.5:1
against what is composited behind it, a highlight edge through a text, a number morphing into
another — and the end state a scene's last frame draws."""

from __future__ import annotations

import functools

import numpy as np
from manim import SVGMobject, Text
from manim.animation.fading import _Fade
from manim.animation.transform import Transform
from support import (
    box,
    build_watched,
    centre,
    highlight_crossings,
    named_record,
    visible_texts,
    watching,
    writing_frames,
)

from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.catalog import lookup
from blockviz.scenes.look import MIN_CONTRAST, contrast

ALPHAS = (0.1, 0.25, 0.5, 0.75, 0.9)
"""Where each play is sampled, as shares of its run time (its end is checked by test_scenes.py)."""
BACKDROPS = ("Rectangle", "RoundedRectangle", "Square")
"""The shapes that make what is behind a text: cells, chips, panels."""


def composited(scene, point, before: int, shapes: Backdrops) -> str:
    """The colour drawn at ``point`` (x, y) under the member drawn ``before``-th: the page, then
    every backdrop shape drawn earlier there, each blended in at its present fill opacity."""
    page = scene.camera.background_color
    color = np.array(page.to_rgb() if hasattr(page, "to_rgb") else _rgb(str(page)))
    for k in np.nonzero(shapes.under(point) & (shapes.order < before))[0]:  # in drawing order
        color = color * (1 - shapes.opacity[k]) + shapes.rgb[k] * shapes.opacity[k]
    return "#" + "".join(f"{round(channel * 255):02x}" for channel in np.clip(color, 0, 1))


def _rgb(hex_color: str) -> list[float]:
    hex_color = hex_color.lstrip("#")
    return [int(hex_color[k : k + 2], 16) / 255 for k in (0, 2, 4)]


class Backdrops:
    """The shapes that make what is behind a text now (:data:`BACKDROPS` with some fill), in
    drawing order, as arrays: ``order`` (n,) their places among the scene's family members,
    ``boxes`` (n, 4) left, bottom, right, top, ``rgb`` (n, 3), ``opacity`` (n,)."""

    def __init__(self, members: list) -> None:
        shapes = [
            (k, m)
            for k, m in enumerate(members)
            if type(m).__name__ in BACKDROPS and len(m.points) and m.get_fill_opacity() > 0.01
        ]
        self.order = np.array([k for k, _ in shapes], dtype=int)
        self.boxes = np.array([box(m) for _, m in shapes]).reshape(-1, 4)
        self.rgb = np.array([m.get_fill_color().to_rgb() for _, m in shapes]).reshape(-1, 3)
        self.opacity = np.array([m.get_fill_opacity() for _, m in shapes])

    def under(self, point) -> np.ndarray:
        """``(n,)``: whether each shape's box holds ``point`` (x, y), edges excluded."""
        x, y = point
        left, bottom, right, top = self.boxes.T
        return (left < x) & (x < right) & (bottom < y) & (y < top)


def low_contrast_in_motion(scene, texts: list, members=None) -> list[str]:
    """Texts (drawn at any opacity, not covered by an opaque shape drawn later) whose colour has
    under 4.5:1 against the colour composited behind their centre at this moment. ``members``:
    the scene's ``get_mobject_family_members()`` if the caller has them already."""
    members = scene.get_mobject_family_members() if members is None else members
    order = {id(member): k for k, member in enumerate(members)}
    shapes = Backdrops(members)
    found = []
    for label in texts:
        at, point = order.get(id(label), len(order)), centre(box(label))
        if np.any(shapes.under(point) & (shapes.order > at) & (shapes.opacity > 0.99)):
            continue  # covered: a chip travelling over it hides it
        backdrop = composited(scene, point, at, shapes)
        ratio = contrast(label.get_fill_color().to_hex(), backdrop)
        if ratio < MIN_CONTRAST - 0.05:
            found.append(f"{label.shown!r} {ratio:.2f}:1 on {backdrop}")
    return found


def digits_of(mobject) -> list[str]:
    """The shown strings with a digit among ``mobject``'s texts."""
    return sorted(
        member.shown
        for member in mobject.get_family()
        if isinstance(member, (Text, SVGMobject)) and any(char.isdigit() for char in getattr(member, "shown", ""))
    )


def texts_of(mobject) -> list[str]:
    """The shown strings of ``mobject``'s texts."""
    return sorted(
        member.shown
        for member in mobject.get_family()
        if isinstance(member, (Text, SVGMobject)) and hasattr(member, "shown")
    )


def garbles(animations) -> list[str]:
    """Transforms (not fades) between texts that show different strings: in flight their glyphs
    are neither word (a token label garbled for 0.4 s, "grandmother")."""
    return _changed_by_transforms(animations, texts_of)


def morphs(animations) -> list[str]:
    """Transforms (not fades, not moves) whose texts with digits change what they show."""
    return _changed_by_transforms(animations, digits_of)


def _changed_by_transforms(animations, read) -> list[str]:
    """ "before → after" for each transform (not a fade) whose mobject and target ``read``
    (a mobject → its texts) differently."""
    found = []
    for leaf in (leaf for animation in animations for leaf in leaves(animation)):
        if isinstance(leaf, Transform) and not isinstance(leaf, _Fade):
            before, after = read(leaf.mobject), read(leaf.target_mobject)
            if before and after and before != after:
                found.append(f"{' '.join(before)} → {' '.join(after)}")
    return found


def drawn_opacity(label) -> float:
    """How opaque the glyphs of ``label`` are now (a fade changes its glyphs, not the ``Text`` itself)."""
    return max((member.get_fill_opacity() for member in label.family_members_with_points()), default=0.0)


def texts_drawn(scene) -> list:
    """The texts of ``support.visible_texts`` whose glyphs are drawn now."""
    return [label for label in visible_texts(scene) if drawn_opacity(label) > 0.01]


class MotionInspector:
    """Called at each of :data:`ALPHAS` of every play: notes what breaks a bar part-way."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.lowest = float("inf")
        self.plays = 0

    def before(self, scene) -> None:
        self.plays += 1
        self.parameter_opacities = {id(member): drawn_opacity(member) for member in parameter_numbers(scene)}
        for morph in morphs(scene.animations):
            self.problems.append(f"play {self.plays}: digits morph {morph}")
        for garble in garbles(scene.animations):
            self.problems.append(f"play {self.plays}: a text garbles in flight {garble}")

    def __call__(self, scene, alpha: float) -> None:
        texts, members = texts_drawn(scene), scene.get_mobject_family_members()
        where = f"play {self.plays} at {alpha:.2f}"
        for shown in low_contrast_in_motion(scene, texts, members):
            self.problems.append(f"{where}: {shown}")
        for shown in highlight_crossings(scene, texts, members=members):
            self.problems.append(f"{where}: a highlight's edge crosses {shown!r}")
        for shown in leaving_while_named(scene, self.parameter_opacities, members):
            self.problems.append(f"{where}: {shown}")


def parameter_name(label) -> str | None:
    """The name a caption gives the parameter whose entry ``label`` shows ("W_O" for
    ``("params", "attn.W_O", …)``), or ``None`` for a number of no parameter."""
    source = getattr(label, "source", None)
    return source[1].split(".")[-1] if isinstance(source, tuple) and source[0] == "params" else None


def parameter_numbers(scene, members=None) -> list:
    """The number labels in the scene (among ``members``, its family members if given) that show a parameter's entry."""
    members = scene.get_mobject_family_members() if members is None else members
    return [member for member in members if parameter_name(member) is not None]


def named_in_captions(scene, numbers=None) -> list[str]:
    """The parameters (their names as captions write them, "W_O") that a caption drawn now names
    (of ``numbers``, the scene's :func:`parameter_numbers` if given)."""
    captions = [
        mobject.shown
        for mobject in scene.mobjects
        if getattr(mobject, "is_caption", False) and drawn_opacity(mobject) > 0.01
    ]
    numbers = parameter_numbers(scene) if numbers is None else numbers
    names = {parameter_name(member) for member in numbers}
    return [name for name in names if any(name in caption for caption in captions)]


def leaving_while_named(scene, at_start: dict, members=None) -> list[str]:
    """Parameter numbers drawn less than at the start of the play (``at_start``: id → drawn
    opacity) while a caption that names their parameter is drawn: numbers leave only after the
    caption that names them. ``members``: the scene's family members if the caller has them."""
    numbers = parameter_numbers(scene, members)
    named = set(named_in_captions(scene, numbers))
    return [
        f"{member.shown!r} of {parameter_name(member)} leaves while a caption names it"
        for member in numbers
        if parameter_name(member) in named and drawn_opacity(member) < at_start.get(id(member), 0.0) - 0.01
    ]


def build_in_motion(scene_class, rec, **options):
    """Build the scene (``support.build``, without its end-of-play :class:`~support.Inspector`),
    sampling every play at :data:`ALPHAS` before it ends."""
    inspector = MotionInspector()

    class Sampled(watching(scene_class)):
        settles_skipped_plays = False  # through Manim's play, which interpolates

        def play_internal(self, skip_rendering: bool = False) -> None:
            inspector.before(self)
            duration = self.get_run_time(self.animations)
            for alpha in ALPHAS:
                self.update_to_time(alpha * duration)
                inspector(self, alpha)
            super().play_internal(skip_rendering)

    return build_watched(Sampled, rec, lambda scene: None, **options), inspector


@functools.cache
def built_in_motion(scene_name: str, record_name: str, theme: str = "dark"):
    (entry,) = lookup([scene_name])
    return build_in_motion(entry.scene_class(), named_record(record_name), theme=theme)


def end_state(scene) -> list[tuple]:
    """What the last frame draws: every drawn member of the scene, with its kind, its text, its
    corners and its fill and stroke colours (the order in which they are drawn aside:
    ``scenes/drawing_order.py`` may change it where nothing overlaps, and
    ``tests/test_drawing_order.py`` checks that the frames stay the same)."""
    state = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            if member.has_points():
                corners = np.concatenate([member.get_corner([-1, -1, 0]), member.get_corner([1, 1, 0])])
                colours = np.concatenate([np.ravel(member.get_fill_rgbas()), np.ravel(member.get_stroke_rgbas())])
                state.append((type(member).__name__, getattr(member, "shown", None) or "", corners, colours))
    return sorted(state, key=lambda part: (part[0], part[1], *np.round(part[2], 6), *np.round(part[3], 6)))


def assert_same_end(one, other) -> None:
    assert len(one) == len(other)
    for (kind, shown, corners, colours), (other_kind, other_shown, other_corners, other_colours) in zip(one, other):
        assert (kind, shown) == (other_kind, other_shown)
        np.testing.assert_allclose(corners, other_corners, atol=1e-6)
        np.testing.assert_allclose(colours, other_colours, atol=1e-6)


# -- frames as drawn ---------------------------------------------------------------------------------
CHANGE_LEVEL = 24
"""A pixel changes between two frames when one of its channels moves by more than this (of 255):
a step the eye sees, above the rounding of a smooth fade's colours."""
TINY = {"pixel_width": 160, "pixel_height": 90, "frame_rate": 15}
"""The size frames are drawn at to measure them: -ql's frame rate (the fewest frames a video has,
so the largest change between two), at a tenth of its width."""


def changed_share(one: np.ndarray, other: np.ndarray, level: int = CHANGE_LEVEL) -> float:
    """The share (0–1) of the pixels of two frames ``(height, width, channels)`` that differ by
    more than ``level`` in some channel."""
    difference = np.abs(one.astype(np.int16) - other.astype(np.int16))[..., :3].max(axis=-1)
    return float((difference > level).mean())


def planning(scene) -> bool:
    """Whether ``scene`` is the dry build that plans a scene's colour scales
    (``RecordScene._planned_scales`` builds the scene's class once more, ``plans_scales`` off):
    its plays draw no frame of the video, so they are not counted."""
    return not getattr(scene, "plans_scales", True)


def frames_by_play(scene_class, rec, **options) -> list[tuple[int, np.ndarray]]:
    """Every frame the scene draws at :data:`TINY` size, with the number (1-based) of the play that
    drew it (0: before the first), repeats written once: what the video writer is handed."""
    frames: list[tuple[int, np.ndarray]] = []
    plays = [0]

    class Counted(watching(scene_class)):
        def play(self, *animations, **kwargs):
            plays[0] += not planning(self)
            super().play(*animations, **kwargs)

    with writing_frames(lambda pixels, repeat: frames.append((plays[0], np.array(pixels))), **TINY):
        Counted(record=rec, **options).render()
    return frames


def largest_changes(frames: list[tuple[int, np.ndarray]]) -> dict[int, float]:
    """play → the largest :func:`changed_share` between two frames it draws one after the other."""
    largest: dict[int, float] = {}
    for (play, one), (next_play, other) in zip(frames, frames[1:]):
        if play == next_play:
            largest[play] = max(largest.get(play, 0.0), changed_share(one, other))
    return largest


# -- motion per play, as shared/measure/motion.py measures a video ----------------------------------
SEEN_LEVEL = 40
"""A pixel counts as changed by a play when a channel moves by more than this (of 255), as
``shared/measure/motion.py`` counts it."""
CAPTION_TOP = 0.89
"""The caption band is the frame's bottom 0.11: what changes there is not counted."""
LEAST_MOTION = 0.005
"""The least share of the picture above the caption band a play changes (issue 36)."""


def frames_by_run(scene_class, rec, size: dict = TINY, **options) -> list[tuple[int, np.ndarray]]:
    """Every frame the scene draws at ``size``, with the number (1-based) of its *run*: plays that
    follow one another with no hold between are one run, as a video shows them (a hold is one
    long frame there); frames of holds are left out."""
    frames: list[tuple[int, np.ndarray]] = []
    state = {"run": 0, "holding": True, "play_holds": True}

    class Counted(watching(scene_class)):
        def play(self, *animations, **kwargs):
            from manim import Wait
            from manim.animation.animation import prepare_animation

            if planning(self):
                return super().play(*animations, **kwargs)
            holds = all(isinstance(prepare_animation(animation), Wait) for animation in animations)
            if not holds and state["holding"]:
                state["run"] += 1
            state["holding"] = state["play_holds"] = holds
            super().play(*animations, **kwargs)

    def keep(pixels, repeat):
        if not state["play_holds"]:
            frames.append((state["run"], np.array(pixels)))

    with writing_frames(keep, **size):
        Counted(record=rec, **options).render()
    return frames


def motion_by_run(frames: list[tuple[int, np.ndarray]]) -> dict[int, float]:
    """run → the share of the picture above the caption band that differs between the frame
    before the run (its own first, for the first run) and its last frame (``motion.py``'s
    "picture changed")."""
    top = int(frames[0][1].shape[0] * CAPTION_TOP)
    before, last = {}, {}
    previous = frames[0][1]
    for run, pixels in frames:
        before.setdefault(run, previous)
        last[run] = previous = pixels
    return {run: changed_share(before[run][:top], last[run][:top], SEEN_LEVEL) for run in last}
