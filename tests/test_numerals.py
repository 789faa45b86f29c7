"""A number drawn from cached digit glyphs (scenes/text.py :func:`numeral`): each digit placed
where Manim's own bounds put it."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Square

from blockviz.scenes import text as scene_text
from blockviz.scenes.text import layout_key, numeral


def placed_by_manims_bounds(shown: str, size: float):
    """The glyphs of ``shown`` as its "0…" template with each digit moved in, placed by
    ``get_left`` and ``get_bottom`` of the template's glyph and of the digit's."""
    layout = layout_key()
    template = "".join("0" if char.isdigit() else char for char in shown)
    glyphs = [glyph.copy() for glyph in scene_text._text_prototype(template, size, "#ffffff", "NORMAL", layout)]
    digits, offsets, _ = scene_text._digit_glyphs(size, "#ffffff", layout)
    for glyph, char in zip(glyphs, shown.replace(" ", "")):
        if char.isdigit() and char != "0":
            source = digits[int(char)]
            shift = np.array(
                [
                    glyph.get_left()[0] + offsets[int(char)][0] - source.get_left()[0],
                    glyph.get_bottom()[1] + offsets[int(char)][1] - source.get_bottom()[1],
                    0.0,
                ]
            )
            glyph.set_points(source.points + shift)
    return glyphs


@pytest.mark.parametrize("shown", ["0.25", "-13.07", "987654321", "1,234.5"])
def test_a_numeral_places_each_digit_where_manims_bounds_put_it(shown):
    drawn, reference = numeral(shown, 20), placed_by_manims_bounds(shown, 20)
    assert drawn.shown == shown and len(drawn.submobjects) == len(reference)
    for glyph, expected in zip(drawn.submobjects, reference):
        assert np.array_equal(glyph.points, expected.points)  # the same numbers, bit for bit


def test_a_glyphs_left_and_bottom_are_manims_left_and_bottom_exactly():
    glyph = scene_text.text("7", 20).submobjects[0].shift([0.3, -1.2, 0])
    assert scene_text._left_and_bottom(glyph) == (glyph.get_left()[0], glyph.get_bottom()[1])
    square = Square(side_length=2).move_to([1, 1, 0])
    assert scene_text._left_and_bottom(square) == (0.0, 0.0)  # a square's left edge at x 0, its bottom at y 0
