"""Labels that stay legible: ellipsised tokens, measured text and font sizes that fit a cell."""

from __future__ import annotations

import math
import os
from functools import cache, lru_cache

from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

from blockviz.figures.context import font_families
from blockviz.figures.page import MIN_PT
from blockviz.tokens import display_token, marked_unknown, unknown_tokens, without_glyph

MAX_LABEL_CHARS = 12
"""Longest token label; longer tokens are cut to this many characters, ending in "…"."""
ELLIPSIS = "\u2026"

POINTS_PER_INCH = 72.0
TICK_SHARE = 0.75
"""A tick label is at most this share of the distance between ticks tall (in points), so labels never touch."""
LINE_SPACING = 1.4
"""Distance between lines of multi-line text, in font sizes (matplotlib's default is 1.2 × line height)."""


def ellipsize(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``max_chars`` characters, the last one "…", if longer.

    ``ellipsize("internationalisation")`` → ``"internation…"`` (12 characters).
    """
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + ELLIPSIS


def token_label(token: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    """A token as drawn: :func:`blockviz.tokens.display_token` (control characters and lone
    surrogates as ``U+XXXX``, so every file format can hold it), ellipsised; a token with no
    glyph of its own (punctuation such as ".", spaces: :func:`blockviz.tokens.without_glyph`)
    in quotes, “.”, as the videos draw it, never a lone dot."""
    shown = display_token(token)
    if without_glyph(shown):
        return f"\u201c{ellipsize(shown, max_chars - 2)}\u201d"
    return ellipsize(shown, max_chars)


def token_named(token: str, max_chars: int = 24) -> str:
    """A token named in a title or a sentence, quoted once: ``'it'``, and a token drawn quoted
    (:func:`token_label`) as it is drawn, ``“.”``."""
    label = token_label(token, max_chars)
    return label if without_glyph(display_token(token)) else repr(label)


def level_label(label: str, cell: float, size_pt: float) -> bool:
    """Whether a column label stays level on an axis whose labels are turned: a quoted token
    with no glyph of its own (:func:`token_label`'s “.”, “,”), whose quotes and dot turned on
    their side read as stray marks, when it fits the ``cell`` (inches) level at ``size_pt``."""
    quoted = len(label) > 2 and label[0] == "\u201c" and label[-1] == "\u201d"
    return quoted and without_glyph(label[1:-1]) and text_size_in(label, size_pt)[0] <= 0.9 * cell


def token_labels(tokens: list[str]) -> list[str]:
    """Tick labels for tokens (:func:`token_label` of each)."""
    return [token_label(token) for token in tokens]


def record_token_labels(rec) -> list[str]:
    """Tick labels for a record's tokens (:func:`token_label` of each), a word a toy model read
    as its unknown token marked so, "zebra (<unk>)" (:func:`blockviz.tokens.marked_unknown`)."""
    vocabulary = rec.source.vocabulary
    return [
        marked_unknown(label, vocabulary) if unknown else label
        for label, unknown in zip(token_labels(list(rec.tokens)), unknown_tokens(list(rec.tokens), vocabulary))
    ]


def text_size_in(
    text: str, size_pt: float, family: str = "sans-serif", math: bool = False, weight: str = "normal"
) -> tuple[float, float]:
    """Width and height (ascent + descent) of ``text`` at ``size_pt``, in inches, measured from
    the font's outlines (no renderer needed). Outlines scale with the size, so each text is
    measured once, at :data:`REFERENCE_PT`."""
    if "\n" in text and not math:
        sizes = [text_size_in(line, size_pt, family, weight=weight) for line in text.split("\n")]
        return max(width for width, _ in sizes), LINE_SPACING * size_pt / POINTS_PER_INCH * (len(sizes) - 1) + sizes[
            -1
        ][1]
    reference = MATH_REFERENCE_PT if math else REFERENCE_PT
    width, height = _size(text, reference, family, math, weight)
    return width * size_pt / reference, height * size_pt / reference


REFERENCE_PT = 10.0
MATH_REFERENCE_PT = float(TextToPath.FONT_SCALE)
"""Formulas are measured at the size matplotlib's TextPath lays them out at, so that drawing
them as outlines (:func:`blockviz.figures.layout.math_patches`) reuses that one parse."""


@lru_cache(maxsize=8192)
def _size(text: str, size_pt: float, family: str, math: bool, weight: str) -> tuple[float, float]:
    properties = FontProperties(
        family=list(font_families(family)), size=size_pt, weight=weight
    )  # the fonts it is drawn with, fallbacks included
    width, height, _ = text_paths().get_text_width_height_descent(text, properties, ismath=math)
    return float(width) / POINTS_PER_INCH, float(height) / POINTS_PER_INCH


def text_paths() -> TextToPath:
    """This process's :class:`matplotlib.textpath.TextToPath`, which lays out and outlines the
    figures' texts and formulas without a renderer.

    A forked process (a figure worker, :mod:`blockviz.figures.writing`) makes its own: the
    parent's caches its formulas' layouts (mathtext parses) with the FreeType fonts they were
    laid out in, and FreeType fonts "cannot be used across fork()s" (matplotlib's font manager
    drops only its own font cache at a fork): two workers reading glyphs through the parent's
    fonts at once failed now and then with FreeType's "too many hints". Its own instance's parses
    use the fonts the worker loads itself."""
    return _text_paths(os.getpid())


@cache
def _text_paths(pid: int) -> TextToPath:
    return TextToPath()


def widest_in(texts, size_pt: float, family: str = "sans-serif") -> float:
    """Width in inches of the widest of ``texts`` at ``size_pt`` (0 for none).

    Widths scale with the size, so the widest of a set of texts is found once, at
    :data:`REFERENCE_PT` (layouts ask for the same labels at many sizes)."""
    return _widest(frozenset(texts), family) * size_pt / REFERENCE_PT


@lru_cache(maxsize=4096)
def _widest(texts: frozenset, family: str) -> float:
    return max((text_size_in(text, REFERENCE_PT, family)[0] for text in texts), default=0.0)


def tick_size(cell_in: float, largest_pt: float) -> tuple[float, int]:
    """Font size (pt) of tick labels one per cell ``cell_in`` apart, and the step between labelled
    ticks: 1 (every cell) unless cells are too close for :data:`~blockviz.figures.page.MIN_PT`
    type, then every ``step``-th cell is labelled, so that labels never touch."""
    fitting = TICK_SHARE * cell_in * POINTS_PER_INCH
    if fitting >= MIN_PT:
        return round(min(largest_pt, fitting), 2), 1
    return MIN_PT, math.ceil(MIN_PT / fitting)
