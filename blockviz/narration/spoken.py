"""Captions as a voice reads them: the same sentence, its symbols and maths in words.

The words are chosen to be read as a teacher reads the screen aloud: "×" is "times", "√d_k"
"the square root of d k", "q · k" "q dot k", "≈" "about", "−0.45" "minus 0.45" (numbers as
written on screen), a token in quotes its text. Characters a voice has no sound for (emoji, CJK)
are read as "a token"; :func:`unspeakable` names them so the caller can say so once.
"""

from __future__ import annotations

import re
import unicodedata

WORDS = (
    ("√d_k", " the square root of d k "),
    ("√d", " the square root of d "),
    ("√", " the square root of "),
    ("d_model", " d model "),
    ("d_head", " d head "),
    ("d_ff", " d f f "),
    ("d_k", " d k "),
    ("W_Q", " W Q "),
    ("W_K", " W K "),
    ("W_V", " W V "),
    ("W_O", " W O "),
    ("W_U", " W U "),
    ("W_E", " W E "),
    ("b_O", " b O "),
    ("ln_f", " the final LayerNorm "),
    ("exp(", " e to the ("),
    ("softmax", " soft max "),
    ("LayerNorm", " layer norm "),
    ("RMSNorm", " R M S norm "),
    ("FFN", " F F N "),
    ("GELU", " gelu "),
    ("ReLU", " relu "),
    ("≈", " about "),
    ("≤", " at most "),
    ("≥", " at least "),
    ("≠", " is not "),
    ("→", " to "),
    ("←", " from "),
    ("×", " times "),
    ("÷", " divided by "),
    ("·", " dot "),
    ("⊙", " times "),
    ("Σ", " the sum "),
    ("−∞", " minus infinity "),
    ("∞", " infinity "),
    ("γ", " gamma "),
    ("β", " beta "),
    ("ε", " epsilon "),
    ("μ", " mu "),
    ("σ", " sigma "),
    ("…", ", "),
    ("⋯", ", "),
    ("=", " equals "),
    ("+", " plus "),
)
"""Symbols and names as words, longest first where one contains another."""
SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
MINUS = re.compile(r"(?<![\w)])[\u2212-](?=\s?\d)")
"""A minus sign before a number (not a hyphen inside a word): read "minus"."""
NUMBERED_TOKEN = re.compile(r"(\w)#(\d+)")
QUOTES = str.maketrans("", "", '“”"‘’`')
SPEAKABLE_CATEGORIES = ("L", "N", "P", "Z", "S")


def spoken(caption: str) -> str:
    """``caption`` (as shown on screen) as the words a voice reads.

    >>> spoken("divide by √d_k: the scores, 13 × 13")
    'divide by the square root of d k: the scores, 13 times 13'
    >>> spoken("q₀ of “it” = −0.68 ≈ −0.7")
    'q0 of it equals minus 0.68 about minus 0.7'
    >>> spoken("the#2 puts its weight on “cat”")
    'the number 2 puts its weight on cat'
    """
    text = unicodedata.normalize("NFC", caption).translate(SUBSCRIPTS)
    text = NUMBERED_TOKEN.sub(r"\1 number \2", text)
    text = MINUS.sub(" minus ", text)
    for symbol, words in WORDS:
        text = text.replace(symbol, words)
    text = text.translate(QUOTES)
    text = "".join(" a token " if _unspeakable_character(char) else char for char in text)
    text = re.sub(r"\s+([,.:;!?)])", r"\1", text)
    text = re.sub(r"\(\s+", "(", text)
    return re.sub(r"\s+", " ", text).strip()


def unspeakable(caption: str) -> list[str]:
    """The characters of ``caption`` a voice has no sound for (read as "a token"), each once."""
    found: list[str] = []
    for char in caption:
        if _unspeakable_character(char) and char not in found:
            found.append(char)
    return found


def _unspeakable_character(char: str) -> bool:
    """Emoji, CJK ideographs and other letters outside the Latin, Greek and Cyrillic scripts, and
    symbols :data:`WORDS` does not name."""
    if char.isascii() or char in "“”‘’…⋯−∞·×÷√≈≤≥≠→←⊙Σγβεμσ₀₁₂₃₄₅₆₇₈₉":
        return False
    category = unicodedata.category(char)
    if category.startswith(("Z", "P")):
        return False
    if category.startswith("L"):
        name = unicodedata.name(char, "")
        return not name.startswith(("LATIN", "GREEK", "CYRILLIC"))
    return True
