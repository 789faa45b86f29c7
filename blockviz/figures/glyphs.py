"""One clear warning for tokens the figure font cannot draw (CJK, emoji…), instead of a crash
or one matplotlib warning per glyph."""

from __future__ import annotations

import unicodedata
import warnings
from functools import lru_cache

from matplotlib.font_manager import FontProperties, findfont, get_font

from blockviz.figures.context import FONT_FAMILY
from blockviz.tokens import display_token


class MissingGlyphWarning(UserWarning):
    """Some tokens hold characters the figure font has no glyph for; they show as empty boxes."""


@lru_cache(maxsize=1)
def _font_characters() -> frozenset[int]:
    path = findfont(FontProperties(family=FONT_FAMILY), fallback_to_default=True)
    return frozenset(get_font(path).get_charmap())


def missing_characters(text: str) -> str:
    """The characters of ``text`` that the figure font cannot draw, in order, each once.

    Invisible format characters (zero-width joiners, variation selectors) are not counted.
    """
    known = _font_characters()
    missing = []
    for character in text:
        if ord(character) in known or unicodedata.category(character) == "Cf" or 0xFE00 <= ord(character) <= 0xFE0F:
            continue
        if character not in missing:
            missing.append(character)
    return "".join(missing)


def warn_missing_glyphs(tokens: list[str]) -> None:
    """Warn once (:class:`MissingGlyphWarning`) if any token, as drawn
    (:func:`~blockviz.tokens.display_token`), has characters the font lacks."""
    affected = [shown for shown in dict.fromkeys(display_token(token) for token in tokens) if missing_characters(shown)]
    if affected:
        shown = ", ".join(repr(token) for token in affected[:5]) + (" …" if len(affected) > 5 else "")
        warnings.warn(
            MissingGlyphWarning(
                f"font {FONT_FAMILY} has no glyphs for some characters of {shown}: they show as empty boxes; "
                "the numbers are unaffected (install a font with these characters to see them)"
            ),
            stacklevel=2,
        )
