"""scenes/path_cache.py: a shape's path is traced again only when its points change, and the
frames are Manim's camera's, pixel for pixel."""

from __future__ import annotations

import numpy as np
import pytest
from manim import RIGHT, Camera, Square, Text
from support import frame_hashes, named_record

from blockviz.scenes.catalog import lookup
from blockviz.scenes.path_cache import PathCachingCamera


def drawn(camera, *mobjects) -> np.ndarray:
    camera.reset()
    camera.capture_mobjects(list(mobjects))
    return np.array(camera.get_image())


def test_a_shape_is_traced_again_only_when_its_points_change(monkeypatch):
    traced = []
    original = Camera.set_cairo_context_path
    monkeypatch.setattr(
        Camera,
        "set_cairo_context_path",
        lambda self, ctx, vmobject: traced.append(vmobject) or original(self, ctx, vmobject),
    )
    camera, square = PathCachingCamera(), Square().set_fill("#336699", opacity=1)
    drawn(camera, square)
    square.set_fill("#cc6677", opacity=0.5)  # a new colour, the same points
    drawn(camera, square)
    assert traced == [square]
    square.shift(RIGHT * 0.25)
    drawn(camera, square)
    assert traced == [square, square]


def test_a_shape_that_shows_nothing_is_not_drawn_and_changes_no_pixel(monkeypatch):
    traced = []
    original = Camera.set_cairo_context_path
    monkeypatch.setattr(
        Camera,
        "set_cairo_context_path",
        lambda self, ctx, vmobject: traced.append(vmobject) or original(self, ctx, vmobject),
    )
    hidden = Square().set_fill("#336699", opacity=0).set_stroke("#ffffff", width=4, opacity=0)
    outlined = Square().set_fill("#336699", opacity=0).set_stroke("#ffffff", width=4, opacity=0.5)
    ours, manims = PathCachingCamera(), Camera()
    assert np.array_equal(drawn(ours, hidden), drawn(manims, hidden))
    assert traced == [hidden]  # Manim's camera traced it; ours did not
    assert np.array_equal(drawn(ours, outlined), drawn(manims, outlined))
    assert traced == [hidden, outlined, outlined]
    manims.reset()
    assert np.array_equal(drawn(ours, hidden), np.array(manims.get_image()))  # the background, untouched


def test_a_plays_families_are_listed_once_and_a_frame_leaves_out_shapes_without_points(monkeypatch):
    from blockviz.scenes import path_cache

    listed = []
    original = path_cache.extract_mobject_family_members
    monkeypatch.setattr(
        path_cache, "extract_mobject_family_members", lambda *a, **k: listed.append(1) or original(*a, **k)
    )
    camera, text, square = PathCachingCamera(), Text("ab"), Square()
    moving = [text, square]
    first = camera.get_mobjects_to_display(moving)
    assert first == [*text.family_members_with_points(), square] and len(listed) == 1
    square.points = square.points[:0]  # a shape that has lost its points is left out, from the same list
    assert camera.get_mobjects_to_display(moving) == first[:-1] and len(listed) == 1
    camera.get_mobjects_to_display([text])  # another play's list
    assert len(listed) == 2
    text.add_updater(lambda mobject: mobject)  # an updater may change the family: listed each time
    camera.get_mobjects_to_display(moving)
    camera.get_mobjects_to_display(moving)
    assert len(listed) == 4


def test_the_pictures_are_manims():
    shapes = [Square().set_fill("#336699", opacity=1), Text("0.25", font_size=40)]
    ours, manims = PathCachingCamera(), Camera()
    first = drawn(ours, *shapes)
    again = drawn(ours, *shapes)  # from the kept paths
    assert np.array_equal(first, drawn(manims, *shapes))
    assert np.array_equal(again, first)
    assert np.count_nonzero(first) > 0


@pytest.mark.parametrize("scene_name", ["dot-products"])
def test_a_scene_through_the_path_cache_has_the_frames_of_manims_camera(scene_name):
    (entry,) = lookup([scene_name])
    scene_class = entry.scene_class()

    class ManimsCamera(scene_class):
        def __init__(self, **options):
            super().__init__(camera_class=Camera, **options)

    rec = named_record("13 tokens")
    ours, manims = frame_hashes(scene_class, rec), frame_hashes(ManimsCamera, rec)
    assert len(ours) == len(manims) > 30
    assert ours == manims
