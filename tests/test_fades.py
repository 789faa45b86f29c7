"""scenes/fades.py's FadeIn and FadeOut draw what Manim's do, at every moment, without copies;
Reveal and Conceal stage texts against shapes."""

from __future__ import annotations

import manim
import numpy as np
import pytest
from manim import DOWN, UP, Rectangle, Text, VGroup, linear

from blockviz.scenes import fades


def picture() -> VGroup:
    """A half-transparent cell with a text on it and an outline: fill, stroke and glyphs."""
    cell = Rectangle(width=2, height=1).set_fill("#336699", opacity=0.6).set_stroke("#ffcc00", width=3, opacity=0.8)
    return VGroup(cell, Text("0.25", font_size=30, color="#ffffff"))


def state(mobject) -> list[np.ndarray]:
    """Every part's points and colour arrays (fill, stroke, background stroke)."""
    return [
        array
        for member in mobject.get_family()
        for array in (member.points, member.fill_rgbas, member.stroke_rgbas, member.background_stroke_rgbas)
    ]


@pytest.mark.parametrize("ours, manims", [(fades.FadeIn, manim.FadeIn), (fades.FadeOut, manim.FadeOut)])
@pytest.mark.parametrize("shift", [None, UP * 0.2, DOWN + 0.5 * UP])
def test_a_fade_is_drawn_as_manims_at_every_moment(ours, manims, shift, monkeypatch):
    mine, reference = picture(), picture()
    options = {} if shift is None else {"shift": shift}
    fade, manims_fade = ours(mine, **options), manims(reference, **options)
    manims_fade.begin()
    copies = []
    monkeypatch.setattr(manim.Mobject, "copy", lambda self, *args: copies.append(self))
    fade.begin()
    assert copies == []
    monkeypatch.undo()
    for alpha in (0.0, 0.1, 0.5, 0.9, 1.0):
        fade.interpolate(alpha), manims_fade.interpolate(alpha)
        for array, expected in zip(state(mine), state(reference), strict=True):
            np.testing.assert_allclose(array, expected, atol=1e-12)
    fade.finish(), manims_fade.finish()
    for array, expected in zip(state(mine), state(reference), strict=True):
        np.testing.assert_allclose(array, expected, atol=1e-12)


def test_a_fade_that_scales_is_manims_own():
    mine, reference = picture(), picture()
    fade, manims_fade = fades.FadeIn(mine, scale=0.5), manim.FadeIn(reference, scale=0.5)
    fade.begin(), manims_fade.begin()
    fade.interpolate(0.5), manims_fade.interpolate(0.5)
    assert mine.width == pytest.approx(reference.width) and mine.width < picture().width


def test_a_fade_keeps_a_move_another_animation_made():
    """Begun together with a move of the same mobject, the fade does not put it back."""
    mine = picture()
    move, fade = mine.animate.shift(UP * 2).build(), fades.FadeIn(mine)
    group = manim.AnimationGroup(move, fade)
    group.begin()
    group.finish()
    assert mine.get_center()[1] == pytest.approx(2.0)
    assert mine[0].get_fill_opacity() == pytest.approx(0.6)


def test_reveal_shows_the_shapes_then_the_texts_and_conceal_the_reverse():
    shown, hidden = picture(), picture()
    reveal = fades.Reveal(shown, rate_func=linear)
    conceal = fades.Conceal(hidden, rate_func=linear)
    reveal.begin(), conceal.begin()
    reveal.interpolate(0.25), conceal.interpolate(0.25)
    glyph = lambda group: group[1].family_members_with_points()[0]  # noqa: E731
    assert (
        shown[0].get_fill_opacity() == pytest.approx(0.3) and glyph(shown).get_fill_opacity() == 0
    )  # cell half in, text not yet
    assert hidden[0].get_fill_opacity() == pytest.approx(0.6) and glyph(hidden).get_fill_opacity() == pytest.approx(
        0.5
    )  # text half out first
    reveal.interpolate(0.75), conceal.interpolate(0.75)
    assert shown[0].get_fill_opacity() == pytest.approx(0.6) and glyph(shown).get_fill_opacity() == pytest.approx(0.5)
    assert hidden[0].get_fill_opacity() == pytest.approx(0.3) and glyph(hidden).get_fill_opacity() == 0
