"""scenes/pango_svg.py: Pango's SVG read without svgelements gives Manim's glyphs, point for point
and style for style; a file it does not know is left to Manim."""

import numpy as np
import pytest
from manim import Text

from blockviz.scenes.look import FONT
from blockviz.scenes.pango_svg import glyph_points
from blockviz.scenes.text import PangoText, layout_key, text_files_for

STRINGS = [
    "the cat sat",
    "Softmax, row by row (head 0)",
    "learned in training, not written in: \u201cit\u201d puts its largest weight on \u201cchicken\u201d",
    "\u22120.25 \u00f7 sum = exp(s \u2212 m)",
    "fi fl ffi  two  spaces",
    "\u22ef \u22ee \u03b3, \u03b2 \u2211",
    "[CLS] ##ing <|endoftext|>",
]
STYLE = ["fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "stroke_width", "background_stroke_width"]


def built(kind, shown: str, weight: str) -> Text:
    with text_files_for(layout_key()):
        return kind(shown, font=FONT, font_size=20, color="#ffffff", weight=weight)


@pytest.mark.parametrize("weight", ["NORMAL", "BOLD"])
def test_texts_read_here_are_manims_point_for_point(weight):
    for shown in STRINGS:
        ours, manims = built(PangoText, shown, weight), built(Text, shown, weight)
        assert glyph_points(ours.get_file_path().read_text(encoding="utf-8")) is not None, shown  # read here
        pairs = list(zip(ours.family_members_with_points(), manims.family_members_with_points(), strict=True))
        assert len(pairs) == len(manims.submobjects) > 0
        for mine, theirs in pairs:
            assert type(mine) is type(theirs) and np.array_equal(mine.points, theirs.points), shown
            for name in STYLE:
                assert np.array_equal(getattr(mine, name), getattr(theirs, name)), (shown, name)


def test_a_glyph_is_placed_where_its_use_puts_it_and_a_line_becomes_a_cubic_at_its_thirds():
    svg = (
        '<defs><g><symbol overflow="visible" id="g1"><path style="stroke:none;" d="M 0 0 L 3 0 L 3 -3 Z "/></symbol>'
        '<symbol overflow="visible" id="g2"><path style="stroke:none;" d=""/></symbol></g></defs>'
        '<g id="surface7"><g style="fill:rgb(100%,100%,100%);fill-opacity:1;">'
        '<use xlink:href="#g1" x="10" y="20"/><use xlink:href="#g2" x="13" y="20"/></g></g></svg>'
    )
    (points,) = glyph_points(svg)  # the empty glyph (a space) has no shape
    assert points[:4, :2].tolist() == [[10, 20], [11, 20], [12, 20], [13, 20]]
    assert points[-4:, :2].tolist() == [[13, 17], [12, 18], [11, 19], [10, 20]]  # closed by a line back to the start
    assert len(points) == 12


@pytest.mark.parametrize(
    "change",
    [
        ('d="M 0 0 L 3 0', 'd="M 0 0 Q 3 0 3 3'),  # a command Pango does not write
        ('<use xlink:href="#g1"', '<use transform="scale(2)" xlink:href="#g1"'),
        ("fill:rgb(100%,100%,100%)", "fill:rgb(50%,0%,0%)"),
    ],
)
def test_a_file_with_anything_else_is_left_to_manim(change):
    svg = (
        '<defs><g><symbol overflow="visible" id="g1"><path style="stroke:none;" d="M 0 0 L 3 0 L 3 -3 Z "/></symbol>'
        '</g></defs><g id="surface1"><g style="fill:rgb(100%,100%,100%);fill-opacity:1;">'
        '<use xlink:href="#g1" x="10" y="20"/></g></g></svg>'
    )
    assert glyph_points(svg) is not None
    assert glyph_points(svg.replace(*change)) is None
