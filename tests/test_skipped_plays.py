"""A play whose frames are skipped (``--format png``, the scene builds of the tests) goes straight
to its end (scenes/skipped_plays.py): every catalogued scene must end exactly where Manim's own
play, interpolated frame by frame, ends it."""

from __future__ import annotations

import numpy as np
import pytest
from manim import RIGHT, UP, Circle, FadeIn, FadeOut, Square, VGroup
from support import RECORDS, build, built, shows
from support_motion import assert_same_end, built_in_motion, end_state

from blockviz.scenes.base import RecordScene
from blockviz.scenes.catalog import entries


@pytest.mark.parametrize(
    ("scene_name", "record_name"),
    [(entry.name, name) for entry in entries() for name in RECORDS if shows(entry, name)],
    ids=[f"{entry.name}/{name}" for entry in entries() for name in RECORDS if shows(entry, name)],
)
def test_a_scene_built_with_skipped_plays_ends_as_it_ends_in_manims_play(scene_name, record_name):
    settled, _ = built(scene_name, record_name)
    played, _ = built_in_motion(scene_name, record_name)
    assert settled.renderer.time == pytest.approx(played.renderer.time)
    assert [shown for _, shown in settled.captions] == [shown for _, shown in played.captions]
    assert_same_end(end_state(settled), end_state(played))


class FadesAndMoves(RecordScene):
    """A fade in and out beside a move, in one play and in a group."""

    def construct(self):
        square, circle = Square(), Circle()
        self.add(square)
        self.play(FadeIn(circle, shift=UP), square.animate.shift(2 * RIGHT))
        self.play(VGroup(square).animate.scale(0.5), FadeOut(circle, shift=RIGHT))
        self.ends = (square.get_center().copy(), square.width, circle in self.mobjects)


class FadesAndMovesPlayed(FadesAndMoves):
    settles_skipped_plays = False


def test_fades_are_settled_without_being_played_and_moves_are_played():
    settled, _ = build(FadesAndMoves, None)
    played, _ = build(FadesAndMovesPlayed, None)
    assert np.allclose(settled.ends[0], [2, 0, 0])  # shifted by 2, then scaled about its centre
    assert settled.ends[1] == pytest.approx(1.0)  # a side of 2, halved
    assert settled.ends[2] is False  # faded out: removed
    assert_same_end(end_state(settled), end_state(played))
