"""Characters of tokens that no figure font can draw: emoji and symbols fall back to Symbola
(:func:`blockviz.figures.context.font_families`); what is left (CJK without a CJK font, …)
gets one clear warning, instead of a crash or one matplotlib warning per glyph."""

from __future__ import annotations

import unicodedata
import warnings
from functools import lru_cache

from matplotlib.font_manager import FontProperties, findfont, get_font

from blockviz.figures.context import font_families
from blockviz.tokens import display_token


class MissingGlyphWarning(UserWarning):
    """Some tokens hold characters no figure font has a glyph for; they show as empty boxes."""


@lru_cache(maxsize=1)
def _font_characters() -> frozenset[int]:
    """Every character some font of the figures' fallback list can draw."""
    characters: set[int] = set()
    for family in font_families():
        path = findfont(FontProperties(family=family), fallback_to_default=True)
        characters.update(get_font(path).get_charmap())
    return frozenset(characters)


def missing_characters(text: str) -> str:
    """The characters of ``text`` that no figure font can draw, in order, each once.

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
                f"fonts {', '.join(font_families())} have no glyphs for some characters of {shown}: they show as empty boxes; "
                "the numbers are unaffected (install a font with these characters to see them)"
            ),
            stacklevel=2,
        )
