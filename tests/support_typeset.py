"""Shared helpers of the typeset-names tests (issue 24): finding a record's code names in a shown
text and measuring the smallest sub- or superscript a scene draws, after every play
(:class:`Reader`), on the builds the scene tests share."""

from __future__ import annotations

import re

from manim import Text, config
from support import visible_texts

from blockviz.scenes.look import ASCENDER
from blockviz.scenes.text import script_sizes

CODE_NAME = re.compile(
    r"[A-Za-z0-9]_[A-Za-z]"  # an underscore between letters: resid_pre, W_V, b_O, ln_f
    r"|\.(weight|bias)\b|\bresid_|attn_out|\bffn_|\bln[12f]\b|_norm\b"
)
STANDARD_TERMS = re.compile(r"\b(d_model|d_head|d_ff|d_k|n_heads|n_kv_heads|n_vocab)\b")
"""The field's names of a block's sizes (``HELPERS.md``: "use the field's standard terms"),
written as the papers' d_model: allowed in words."""
UNICODE_SUBSCRIPTS = re.compile("[\u2080-\u209c]")
"""Subscript characters (₀…₉, ₐ…ₜ): DejaVu draws them at ~0.6 of the text, under 11 px."""
SMALLEST = {480: 11.0, 720: 16.0}
"""The smallest sub- or superscript, ascender to baseline, in pixels at each frame height."""


def code_names_in(shown: str) -> list[str]:
    """The code names written in ``shown`` (the standard size terms left out)."""
    return [match.group(0) for match in CODE_NAME.finditer(STANDARD_TERMS.sub("", shown))]


def script_pixels(size: float, pixel_height: int) -> float:
    """A glyph of font ``size`` in pixels (ascender to baseline) on a frame ``pixel_height`` tall."""
    return size * ASCENDER * pixel_height / config.frame_height


class Reader:
    """Called after every play: keeps the code names and subscript characters seen in texts and
    the smallest sub- or superscript drawn (its font size and formula)."""

    def __init__(self) -> None:
        self.code_names: set[str] = set()
        self.smallest: tuple[float, str] = (float("inf"), "")
        self.unmeasured: set[str] = set()  # formulas with a glyph whose size was not read from the SVG

    def __call__(self, scene) -> None:
        for shown in visible_texts(scene):
            if isinstance(shown, Text):
                words = getattr(shown, "shown", "")
                if code_names_in(words) or UNICODE_SUBSCRIPTS.search(words):
                    self.code_names.add(words)
            if hasattr(shown, "full_size"):  # a formula: each glyph's size was read from its SVG
                if not all(hasattr(glyph, "glyph_scale") for glyph in shown.submobjects):
                    self.unmeasured.add(shown.shown)
            for size in script_sizes(shown):
                if size < self.smallest[0]:
                    self.smallest = (size, shown.shown)


def check(reader: Reader) -> None:
    """Every formula's glyph sizes read from its SVG, no code name on screen, and every script
    at least :data:`SMALLEST` tall at each frame height."""
    assert reader.unmeasured == set(), "formulas whose glyph sizes were not read"
    assert reader.code_names == set(), "code names on screen"
    size, shown = reader.smallest
    for height, smallest in SMALLEST.items():
        assert script_pixels(size, height) >= smallest - 0.05, f"{shown}: a script {script_pixels(size, height):.1f} px"
