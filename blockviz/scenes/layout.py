"""Placing mobjects in the frame: shrink to a width, fit a band, stack in a column.

Positions are relative to the frame (``config.frame_width`` / ``frame_height``) and to other
mobjects, never magic coordinates.
"""

from __future__ import annotations

from collections.abc import Iterable

from manim import DOWN, LEFT, UP, Mobject, VGroup, config

from blockviz.scenes.look import FRAME_MARGIN


def fit_width(mobject: Mobject, width: float) -> Mobject:
    """Shrink ``mobject`` (never grow it) so it is at most ``width`` wide."""
    if mobject.width > width:
        mobject.scale_to_fit_width(width)
    return mobject


def fit_between(
    mobject: Mobject, top: float, bottom: float, grow: float = 1.5, margin: float = FRAME_MARGIN
) -> Mobject:
    """Scale ``mobject`` to the largest size (at most ``grow`` ×) that fits the frame's width and
    the band between heights ``top`` and ``bottom``, and centre it in that band."""
    scale, centre = fitting(mobject, top, bottom, grow, margin)
    mobject.scale(scale)
    return mobject.move_to(centre)


def fitting(
    mobject: Mobject, top: float, bottom: float, grow: float = 1.5, margin: float = FRAME_MARGIN
) -> tuple[float, list[float]]:
    """The scale and centre :func:`fit_between` would give ``mobject`` (without moving it)."""
    scale = min((config.frame_width - 2 * margin) / mobject.width, (top - bottom) / mobject.height, grow)
    return scale, [0, (top + bottom) / 2, 0]


def legible_note(note: Mobject) -> Mobject:
    """Grow ``note`` (a footnote under a picture that :func:`fit_between` shrank), about its
    top left corner, until its smallest text is :data:`~blockviz.scenes.look.MIN_FONT_SIZE`
    (11 px at 854 × 480); a note already that large stays as it is."""
    from blockviz.scenes.look import MIN_FONT_SIZE

    smallest = smallest_font_size(note)
    if smallest < MIN_FONT_SIZE * 1.01:
        corner = note.get_corner(UP + LEFT)
        note.scale(MIN_FONT_SIZE * 1.01 / smallest, about_point=corner)
    return note


def column_of(mobjects: Iterable[Mobject], buff: float = 0.15) -> VGroup:
    """Mobjects one under the other, left-aligned."""
    return VGroup(*mobjects).arrange(DOWN, buff=buff, aligned_edge=LEFT)


def wrapped(shown: str, font_size: float, color: str, width: float, max_lines: int = 2) -> Mobject:
    """``shown`` as centred lines of :func:`~blockviz.scenes.text.text` at ``font_size``, broken
    between words so each line is at most ``width`` wide (at most ``max_lines`` lines; only if
    even those do not fit is it shrunk). ``.shown`` is the whole string."""
    from blockviz.scenes.text import text

    whole = text(shown, font_size, color)
    if whole.width <= width:
        return whole
    words = shown.split(" ")
    lines = [shown]
    for count in range(2, max_lines + 1):
        lines = _balanced(words, count)
        built = [text(line, font_size, color) for line in lines]
        if all(line.width <= width for line in built) or count == max_lines:
            break
    group = fit_width(VGroup(*built).arrange(DOWN, buff=0.1), width)
    group.shown = shown
    return group


def _balanced(words: list[str], count: int) -> list[str]:
    """``words`` in ``count`` lines of nearly equal length (in characters)."""
    total = sum(len(word) + 1 for word in words)
    lines, current, used = [], [], 0
    for index, word in enumerate(words):
        left = len(words) - index
        if (
            current
            and used + len(word) > total * (len(lines) + 1) / count
            and len(lines) < count - 1
            and left >= count - 1 - len(lines)
        ):
            lines.append(" ".join(current))
            current, used = [], used
        current.append(word)
        used += len(word) + 1
    lines.append(" ".join(current))
    return lines


def row_height(rows: int, height: float = 3.6, most: float = 1.2, least: float | None = None) -> float:
    """Cell height for a grid of ``rows`` drawn rows: taller cells when there are few rows (a
    3-token grid fills the frame as an 8-row one does), never below ``least`` (the standard
    height by default)."""
    from blockviz.scenes.look import CELL_HEIGHT

    return min(most, max(CELL_HEIGHT if least is None else least, height / max(rows, 1)))


def column_width(columns: int, width: float = 5.6, most: float = 1.6) -> float:
    """Cell width for a grid of ``columns`` drawn columns: wider cells when there are few."""
    from blockviz.scenes.look import CELL_WIDTH

    return min(most, max(CELL_WIDTH, width / max(columns, 1)))


def smallest_font_size(group: Mobject) -> float:
    """The smallest font size a text (a ``Text``, a formula) of ``group`` is drawn at now
    (:func:`~blockviz.scenes.text.font_size_of`); infinity if it holds none."""
    from manim import SVGMobject, Text

    from blockviz.scenes.text import font_size_of

    sizes = [
        font_size_of(member)
        for member in group.get_family()
        if isinstance(member, Text) or (isinstance(member, SVGMobject) and hasattr(member, "shown"))
    ]
    return min(sizes, default=float("inf"))


def frame_text_width() -> float:
    """The widest a line of text may be: the frame less its margins."""
    return config.frame_width - 2 * FRAME_MARGIN


__all__ = [
    "fit_width",
    "fit_between",
    "fitting",
    "column_of",
    "frame_text_width",
    "wrapped",
    "row_height",
    "column_width",
    "smallest_font_size",
    "legible_note",
]
