"""Pango's SVG of a text read into Manim's glyph shapes, without svgelements.

Manim builds a ``Text`` by having Pango draw it into an SVG file — one symbol per glyph, one
``use`` placing a glyph per character — then parsing that file with svgelements and turning each
placed glyph's path into a shape, curve by curve, in Python: about 1.4 ms a character, a third of
a scene's building when its texts are made from nothing. The file is plain: absolute ``M``,
``L``, ``C`` and ``Z`` commands, and ``use`` elements with an ``x`` and a ``y``. Here it is read
with regular expressions, and each glyph's points are computed with numpy from the same numbers,
by the same operations in the same order as svgelements (``x·1 + y·0 + e`` for the placement)
and Manim's ``VMobjectFromSVGPath`` (a line as a cubic with handles at its thirds, a path closed
by a line when it ends more than 10⁻⁴ from its start): the same points, bit for bit
(``tests/test_pango_svg.py`` compares them). A file with anything else — another command, a
transform, a style but Pango's plain white fill — is left to Manim: :func:`glyph_points` says
``None``.
"""

from __future__ import annotations

import functools
import re

import numpy as np

_SYMBOL = re.compile(r'<symbol overflow="visible" id="([^"]+)">\s*<path style="stroke:none;" d="([^"]*)"/>\s*</symbol>')
_USE = re.compile(r'<use xlink:href="#([^"]+)" x="([^"]+)" y="([^"]+)"/>')
_BODY = '<g id="surface"><g style="fill:rgb(100%,100%,100%);fill-opacity:1;"></g></g></svg>'
"""What the drawing part of Pango's file holds around its ``use`` elements (white text, no stroke;
the surface's number left out: Cairo counts its surfaces)."""
_TOKEN = re.compile(r"[MLCZ]|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_ARGUMENTS = {"M": 2, "L": 2, "C": 6, "Z": 0}
CLOSE_GAP = 0.0001
"""Manim closes a glyph's path with a line when its end is farther than this from its start."""


def glyph_points(svg: str) -> list[np.ndarray] | None:
    """The points (``(4k, 3)``, SVG units, y down) of each placed glyph with an outline, in the
    order of the file, as Manim's ``SVGMobject`` makes them from Pango's ``svg``; ``None`` when
    the file holds anything this reader does not know (Manim then reads it)."""
    head, _, body = svg.partition("</defs>")
    if not body or re.sub(r"\s+|(?<=surface)\d+", "", _USE.sub("", body)) != _BODY.replace(" ", ""):
        return None
    outlines = {}
    for name, path in _SYMBOL.findall(head):
        segments = _segments(path)
        if segments is None:
            return None
        outlines[name] = segments
    placed = []
    for name, x, y in _USE.findall(body):
        if name not in outlines:
            return None
        points = _placed(outlines[name], float(x), float(y))
        if len(points):
            placed.append(points)
    return placed


@functools.lru_cache(maxsize=4096)
def _segments(path: str) -> tuple | None:
    """A path's commands as ``(letter, numbers)`` pairs, absolute; ``None`` if it has another
    command, a number in the wrong place, or anything else."""
    tokens = _TOKEN.findall(path)
    if "".join(tokens) != re.sub(r"[\s,]+", "", path):
        return None
    segments, index = [], 0
    while index < len(tokens):
        letter = tokens[index]
        count = _ARGUMENTS.get(letter)
        numbers = tokens[index + 1 : index + 1 + count] if count is not None else None
        if numbers is None or len(numbers) != count or any(number in _ARGUMENTS for number in numbers):
            return None
        segments.append((letter, tuple(float(number) for number in numbers)))
        index += 1 + count
    if segments and segments[0][0] != "M":
        return None
    return tuple(segments)


def _placed(segments: tuple, x: float, y: float) -> np.ndarray:
    """The glyph's points where ``use`` puts it: svgelements' ``translate(x, y)`` applied to
    every coordinate (``u·a + v·c + 1·e``, ``u·b + v·d + 1·f``), then Manim's curves."""
    a, b, c, d = 1.0, 0.0, 0.0, 1.0

    def point(u: float, v: float) -> np.ndarray:
        return np.array([u * a + v * c + 1 * x, u * b + v * d + 1 * y, 0.0])

    points: list[np.ndarray] = []
    last_move = start = None
    for letter, numbers in segments:
        if letter == "M":
            last_move = start = point(*numbers)
        elif letter == "L":
            end = point(*numbers)
            points += _line(last_move, end)
            last_move = end
        elif letter == "C":
            control, other, end = point(*numbers[0:2]), point(*numbers[2:4]), point(*numbers[4:6])
            points += [last_move, control, other, end]
            last_move = end
        elif abs(np.linalg.norm(last_move - start)) > CLOSE_GAP:  # Z
            points += _line(last_move, start)
            last_move = start
    return np.array(points, ndmin=2, dtype="float64") if points else np.zeros((0, 3))


def _line(start: np.ndarray, end: np.ndarray) -> list[np.ndarray]:
    """A straight segment as Manim's cubic: its handles at a third and two thirds."""
    return [start, (start + start + end) / 3, (start + end + end) / 3, end]


__all__ = ["glyph_points", "CLOSE_GAP"]
