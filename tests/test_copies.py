"""A text copied fast (scenes/copies.py) is the copy Manim's deepcopy makes: every attribute
of it and of each glyph the same, nothing shared that deepcopy would copy, shared objects copied once."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from manim import Mobject, Rectangle

from blockviz.scenes.colour_bar import ColourBar, ShownScale
from blockviz.scenes.copies import copied, copy_of
from blockviz.scenes.look import look
from blockviz.scenes.text import PangoText, number, text


def attributes(mobject) -> list:
    """Each member of ``mobject``'s family: its class and every attribute but ``original_id``,
    arrays with their memory layout, mobjects by their place in the family."""
    family = mobject.get_family()
    place = {id(member): k for k, member in enumerate(family)}
    found = []
    for member in family:
        described = {}
        for name, value in member.__dict__.items():
            if name == "original_id":
                continue
            if isinstance(value, np.ndarray):
                described[name] = (value.tolist(), value.strides, value.dtype.str)
            elif isinstance(value, Mobject):
                described[name] = ("mobject", [place.get(id(part)) for part in value.get_family()])
            elif isinstance(value, list) and value and isinstance(value[0], Mobject):
                described[name] = ("mobjects", [place.get(id(part)) for part in value])
            else:
                described[name] = (type(value).__name__, repr(value))
        found.append((type(member).__name__, sorted(described.items())))
    return found


@pytest.mark.parametrize(
    "made",
    [
        lambda: text("the chicken didn't", 20, "#ff0000"),
        lambda: text("Σ x", 30, "#00ff00", bold=True),
        lambda: number(-0.25, source=("constant", -0.25)),
    ],
    ids=["words", "bold", "number"],
)
def test_a_fast_copy_is_the_copy_deepcopy_makes(made):
    original = made()
    assert type(original) is PangoText and len(original.submobjects) > 1
    manims = Mobject.__deepcopy__(original, {})  # Manim's own: every attribute through deepcopy
    fast = original.copy()
    assert attributes(fast) == attributes(manims) == attributes(original)
    assert fast.original_id == str(id(original))
    assert [id(glyph) for glyph in fast.chars] == [
        id(glyph) for glyph in fast.submobjects
    ]  # shared once, as in the original
    assert not set(map(id, fast.get_family())) & set(map(id, original.get_family()))
    fast.submobjects[0].points[0, 0] += 1.0  # the copy's arrays are its own
    fast.submobjects[0].set_fill("#0000ff")
    assert attributes(original) == attributes(manims)


def test_what_is_shared_is_what_no_one_changes_in_place():
    glyph = text("a", 20).submobjects[0]
    glyph.mutable = {"k": [1]}
    glyph.tags = [1, 2]
    glyph.same_array = glyph.points
    twin = copied(glyph, {})
    assert (
        twin.mutable == {"k": [1]} and twin.mutable is not glyph.mutable and twin.mutable["k"] is not glyph.mutable["k"]
    )
    assert twin.tags == [1, 2] and twin.tags is not glyph.tags
    assert twin.same_array is twin.points and twin.points is not glyph.points  # one array met twice: copied once
    assert twin.background_stroke_color is glyph.background_stroke_color  # a ManimColor: shared
    memo: dict = {}  # a glyph met twice in one copy (a text's chars and its submobjects): copied once
    assert copy.deepcopy(glyph, memo) is copy.deepcopy(glyph, memo) is not glyph


def test_a_cell_and_a_colour_bar_copied_fast_are_the_copies_deepcopy_makes():
    cell = Rectangle(width=0.3, height=0.2, stroke_width=0).set_fill("#123456", 1)
    assert attributes(copy_of(cell)) == attributes(Mobject.__deepcopy__(cell, {})) == attributes(cell)
    bar = ColourBar(ShownScale("signed", 2.5, ("residual",)), look("dark"), True, 1.2)
    fast, manims = bar.copy(), Mobject.__deepcopy__(bar, {})
    assert attributes(fast) == attributes(manims) and len(attributes(fast)) > 30
    assert [label.shown for label in fast.numbers] == ["−2.50", "2.50"]
    assert all(label in fast.get_family() and label not in bar.get_family() for label in fast.numbers)  # its own
