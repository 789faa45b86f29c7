"""Characters no font on this machine can draw in a scene, for one warning before rendering.

Pango draws the scenes' text in :data:`~blockviz.scenes.look.FONT` and, for a character that
font lacks, falls back through fontconfig to any installed font that has it; a character no
installed font has (CJK without a CJK font, …) shows as an empty box. fontconfig is asked with
``fc-list`` (one question per character not in ASCII, answers kept); without it nothing is
reported. The figures say the same of their own fonts (:mod:`blockviz.figures.glyphs`).
Importing this module imports no Manim.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from functools import lru_cache

from blockviz.errors import quoted
from blockviz.tokens import display_token


def missing_characters(text: str) -> str:
    """The characters of ``text`` that no installed font has a glyph for, in order, each once
    (ASCII and invisible format characters are never counted; ``""`` where fontconfig's
    ``fc-list`` is missing).

    >>> missing_characters("the cat sat")
    ''
    """
    missing = []
    for character in dict.fromkeys(text):
        if character.isascii() or unicodedata.category(character) == "Cf" or 0xFE00 <= ord(character) <= 0xFE0F:
            continue
        if not _some_font_has(character):
            missing.append(character)
    return "".join(missing)


@lru_cache(maxsize=1024)
def _some_font_has(character: str) -> bool:
    command = shutil.which("fc-list")
    if command is None:
        return True  # cannot tell: say nothing
    try:
        found = subprocess.run(
            [command, "--format=%{file}\\n", f":charset={ord(character):x}"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return True
    return found.returncode != 0 or bool(found.stdout.strip())


def missing_glyphs_warning(tokens) -> str | None:
    """The one warning for ``tokens`` (as the scenes show them, :func:`~blockviz.tokens.display_token`)
    holding characters no installed font can draw, naming up to five such tokens; ``None`` if
    every character can be drawn."""
    affected = [shown for shown in dict.fromkeys(display_token(token) for token in tokens) if missing_characters(shown)]
    if not affected:
        return None
    named = ", ".join(quoted(token) for token in affected[:5]) + (" …" if len(affected) > 5 else "")
    return (
        f"no font on this machine has glyphs for some characters of {named}: they show as empty boxes in the scenes; "
        "the numbers are unaffected (install a font with these characters to see them)"
    )
