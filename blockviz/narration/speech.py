"""What the voice says for a caption: the caption's own words, with its maths read as words.

Written from the same text as the burned-in caption, so the two agree by construction. Numbers
are read as they are written on screen ("−2.02" is "minus 2.02": the voice reads the digits);
symbols become the words a teacher says: "3 × 8" is "3 by 8", "d_k" is "d k", "√4" is "the square
root of 4", "exp(−∞) = 0" is "exp of minus infinity equals 0", a "…" that carries a sentence
over to the next caption is a pause. A character the voice has no word for (an emoji, a CJK
token) is said as "a token" inside quotes and left out elsewhere; :func:`unspeakable` names
them, for one warning.

>>> spoken("subtract m, then exponentiate: every exp is ≤ 1, and exp(−∞) = 0")
'subtract m, then exponentiate: every exp is at most 1, and exp of minus infinity equals 0'
>>> spoken("the scaled scores: each one ÷ √4")
'the scaled scores: each one divided by the square root of 4'
>>> spoken("every row alike: attn_out is 3 × 8, as wide as the residual stream")
'every row alike: attn out is 3 by 8, as wide as the residual stream'
"""

from __future__ import annotations

import re
import unicodedata

WORDS = [  # (pattern, words): applied in order
    (r"√\(([^)]*)\)", r" the square root of \1 "),
    (r"√", " the square root of "),
    (r"exp\(([^)]*)\)", r"exp of \1"),
    (r"σ²", " sigma squared "),
    (r"²", " squared "),
    (r"(?<=\d) ?× ?(?=\d)", " by "),
    (r"×", " times "),
    (r"÷", " divided by "),
    (r"≤", " at most "),
    (r"≥", " at least "),
    (r"≈", " about "),
    (r"≠", " is not "),
    (r"→", " to "),
    (r"(?<![\w)])[−-](?=∞|\d)", " minus "),
    (r"[−]", " minus "),
    (r"∞", " infinity "),
    (r"\+", " plus "),
    (r"=", " equals "),
    (r"(?<=\d)/(?=\d)", " over "),
    (r"⅓", " a third "),
    (r"¼", " a quarter "),
    (r"¾", " three quarters "),
    (r"½", " a half "),
    (r"Σ", " the sum "),
    (r"μ", " mu "),
    (r"σ", " sigma "),
    (r"ε", " epsilon "),
    (r"γ", " gamma "),
    (r"β", " beta "),
    (r"·", " dot "),
    (r"(?<=\w)_(?=\w)", " "),
    (r"…", " "),
    (r"[“”\"]", ""),
    (r"[()]", ", "),
]
"""The maths in blockviz's captions, as words; the rest of a caption is already words."""
TOKEN_WORDS = "a token"
"""What the voice says for a quoted token it cannot read."""


def spoken(caption: str) -> str:
    """The words the voice says for ``caption`` (see the module docstring): symbols as words,
    quotes dropped, unspeakable quoted tokens as :data:`TOKEN_WORDS`, others left out; one line."""
    text = re.sub(r"“([^”]*)”", lambda m: f"“{m.group(1)}”" if _speakable(m.group(1)) else TOKEN_WORDS, caption)
    for pattern, words in WORDS:
        text = re.sub(pattern, words, text)
    text = "".join(ch for ch in text if _speakable(ch))
    text = re.sub(r"\s+([,:;.])", r"\1", " ".join(text.split()))
    return re.sub(r"([,:;])(?:\s*[,:;])+", r"\1", text).strip(" ,")


def unspeakable(caption: str) -> list[str]:
    """The characters of ``caption`` the voice has no word for (left out or said as "a token")."""
    text = caption
    for pattern, _ in WORDS:
        text = re.sub(pattern, " ", text)
    return sorted({ch for ch in text if not _speakable(ch)})


def _speakable(text: str) -> bool:
    """Whether every character of ``text`` is one an English voice reads: Latin letters, digits,
    spaces and ASCII punctuation."""
    return all(ch.isascii() or unicodedata.category(ch).startswith("Z") or _latin(ch) for ch in text)


def _latin(ch: str) -> bool:
    return unicodedata.category(ch).startswith("L") and "LATIN" in unicodedata.name(ch, "")
