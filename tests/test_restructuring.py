"""Taking mobjects out of a scene's list (scenes/restructuring.py) gives Manim's list, in its order."""

from __future__ import annotations

import itertools
import random

from manim import Circle, Dot, Scene, Square, VGroup

from blockviz.scenes.restructuring import restructured


def manims(mobjects, to_remove):
    return Scene.get_restructured_mobject_list(None, mobjects, to_remove)  # uses nothing of its scene


def nested_scene():
    """Top-level mobjects with groups three deep, a mobject under two groups, and a lone shape."""
    dots = [Dot() for _ in range(6)]
    shared = Square()
    inner = VGroup(dots[0], dots[1], shared)
    middle = VGroup(inner, dots[2])
    other = VGroup(dots[3], shared, VGroup(dots[4]))
    lone = Circle()
    everything = [middle, inner, other, lone, dots[5], *dots[:5], shared]
    return [middle, other, lone, dots[5]], everything


def test_every_choice_of_up_to_three_to_take_out_gives_manims_list():
    top, everything = nested_scene()
    for count in range(4):
        for to_remove in itertools.combinations(everything, count):
            assert restructured(top, to_remove) == manims(top, to_remove)


def test_a_group_holding_a_removed_mobject_gives_way_to_its_other_parts_in_order():
    top, everything = nested_scene()
    middle, other, lone, last = top
    shared = everything[-1]
    kept = restructured(top, [shared])
    inner = middle.submobjects[0]
    assert kept == [inner.submobjects[0], inner.submobjects[1], middle.submobjects[1], other.submobjects[0]] + [
        other.submobjects[2],
        lone,
        last,
    ]


def test_random_trees_and_removals_give_manims_list():
    chooser = random.Random(7)
    for _ in range(200):
        shapes = [Dot() for _ in range(12)]
        groups = []
        for _ in range(6):
            members = chooser.sample(shapes + groups, chooser.randint(1, 4))
            groups.append(VGroup(*members))
        top = chooser.sample(shapes + groups, 5)
        to_remove = chooser.sample(shapes + groups, chooser.randint(0, 4))
        assert restructured(top, to_remove) == manims(top, to_remove)
