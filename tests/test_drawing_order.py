"""scenes/drawing_order.py: still mobjects clear of what moves are drawn once, and the frames
stay what Manim's own order draws."""

from __future__ import annotations

import pytest
from manim import DOWN, LEFT, RIGHT, UP, Circle, Scene, Square, Text
from manim.animation.animation import prepare_animation
from support import frame_hashes, named_record, writing_frames

from blockviz.scenes import drawing_order
from blockviz.scenes.base import RecordScene
from blockviz.scenes.catalog import lookup
from blockviz.scenes.fades import FadeIn


def begun(*animations):
    prepared = [prepare_animation(animation) for animation in animations]
    for animation in prepared:
        animation.begin()
    return prepared


def test_a_still_text_clear_of_a_move_comes_first_and_one_in_its_way_keeps_its_place():
    moving = Square(side_length=1).move_to(LEFT * 3)
    far, in_the_way, under = (
        Text("far").move_to(UP * 3),
        Text("on the path").move_to(LEFT * 1.5),
        Square(side_length=0.5).move_to(RIGHT * 2),
    )
    animations = begun(moving.animate.move_to(RIGHT * 0.5))
    order = drawing_order.still_first([under, moving, in_the_way, far], animations)
    assert order == [under, far, moving, in_the_way]  # the path runs from x = -3.5 to 1: through "on the path"


def test_a_still_text_clear_of_a_move_stays_above_the_cell_under_it():
    cell, text = Square(side_length=2), Text("0.25")  # the cell is in the circle's way; the text on it is not
    moving = Circle(radius=0.3).move_to(LEFT * 1.2)
    animations = begun(moving.animate.shift(UP))
    assert drawing_order.still_first([moving, cell, text], animations) == [moving, cell, text]


def test_an_unbounded_animation_keeps_the_order():
    moving, far = Square(), Text("far").move_to(UP * 3)
    animations = begun(moving.animate(path_arc=1.0).shift(RIGHT))
    assert drawing_order.still_first([moving, far], animations) == [moving, far]


def test_an_overshooting_group_or_an_updater_keeps_the_order():
    from manim import AnimationGroup, there_and_back_with_pause
    from manim.utils.rate_functions import ease_out_back

    moving, far = Square(), Text("far").move_to(UP * 3)
    overshooting = begun(AnimationGroup(moving.animate.shift(RIGHT), rate_func=ease_out_back))
    assert drawing_order.still_first([moving, far], overshooting) == [moving, far]
    within = begun(AnimationGroup(moving.animate.shift(RIGHT), rate_func=there_and_back_with_pause))
    assert drawing_order.still_first([moving, far], within) == [far, moving]
    far.add_updater(lambda mobject: mobject)
    assert drawing_order.still_first([moving, far], within) == [moving, far]


def test_a_fade_in_is_bounded_by_where_its_shift_takes_it():
    arriving, beside, below = (
        Text("x").move_to(LEFT * 2),
        Text("beside").move_to(RIGHT * 3),
        Text("below").move_to(LEFT * 2 + DOWN * 0.6),
    )
    animations = begun(FadeIn(arriving, shift=UP * 0.5))  # from 0.5 below its place
    assert drawing_order.still_first([arriving, beside, below], animations) == [beside, arriving, below]


@pytest.mark.parametrize("scene_name", ["softmax", "multi-head"])
def test_a_scene_drawn_with_still_mobjects_first_has_the_frames_of_manims_order(scene_name):
    (entry,) = lookup([scene_name])
    scene_class = entry.scene_class()

    class ManimsOrder(scene_class):
        begin_animations = Scene.begin_animations

    rec = named_record("13 tokens")
    ours, manims = frame_hashes(scene_class, rec), frame_hashes(ManimsOrder, rec)
    assert len(ours) == len(manims) > 30
    assert ours == manims
    assert RecordScene.begin_animations is not Scene.begin_animations


def test_a_plays_tree_gives_its_leaves_in_order_and_its_groups_outermost_first():
    from manim import AnimationGroup, LaggedStart

    from blockviz.scenes.animation_tree import groups, leaves

    a, b, c = (FadeIn(Square()) for _ in range(3))
    inner = AnimationGroup(a, b)
    outer = LaggedStart(inner, c)
    assert leaves(outer) == [a, b, c] and leaves(a) == [a]
    assert groups(outer) == [outer, inner] and groups(a) == []


def test_an_updater_is_still_called_in_every_frame_of_a_play():
    calls = []

    class Updated(RecordScene):
        def construct(self):
            self.add(Square().add_updater(lambda mobject, dt: calls.append(dt)))
            self.play(FadeIn(Text("far").move_to(UP * 3)), run_time=1)

    frames = []
    with writing_frames(lambda pixels, repeat: frames.append(repeat)):
        Updated(record=named_record("13 tokens")).render()
    assert len(frames) == 6 and len(calls) >= 6  # one call per frame at 6 fps, and Manim's own at the end
