"""One look for figures and videos: palette, colour maps, themes and the number format.

Figures (matplotlib) and scenes (Manim) both take their colours from here, so a cell has the
same colour on paper and on screen. Colour maps are matplotlib's; nothing here imports pyplot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib import colormaps
from matplotlib.colors import Normalize, to_hex, to_rgba

SIGNED_CMAP = "RdBu_r"
"""Diverging map for signed values (embeddings, q, k, v, scores…): blue < 0 < red, white at 0."""
WEIGHTS_CMAP = "Purples"
"""Sequential map for attention weights, always on the fixed scale 0–1."""

QUERY_COLOR = "#2563eb"  # blue
KEY_COLOR = "#ea580c"  # orange
VALUE_COLOR = "#059669"  # green
OUTPUT_COLOR = "#7c3aed"  # violet: head outputs, attention output
RESIDUAL_COLOR = "#6b7280"  # grey: the residual stream
FFN_COLOR = "#db2777"  # pink: the feed-forward network

MINUS = "\u2212"
NEG_INF_LABEL = MINUS + "\u221e"  # −∞


@dataclass(frozen=True)
class Theme:
    """Colours of the page: background, text, faint lines, and blocked (−∞) cells."""

    name: str
    background: str
    text: str
    muted_text: str
    grid: str
    blocked: str
    blocked_hatch: str


LIGHT = Theme("light", background="#ffffff", text="#111827", muted_text="#6b7280", grid="#d1d5db", blocked="#9ca3af", blocked_hatch="#6b7280")
DARK = Theme("dark", background="#0f172a", text="#f1f5f9", muted_text="#94a3b8", grid="#334155", blocked="#475569", blocked_hatch="#94a3b8")
THEMES = {"light": LIGHT, "dark": DARK}


def theme(name: str) -> Theme:
    """The theme called ``name`` ("light" for documents, "dark" for videos)."""
    from blockviz.errors import BlockvizError

    if name not in THEMES:
        raise BlockvizError(f"theme must be one of {', '.join(THEMES)}, got {name!r}")
    return THEMES[name]


def format_number(value: float, decimals: int = 2, unicode_minus: bool = True) -> str:
    """A value as shown everywhere: fixed decimals, no "-0.00", −∞ for a blocked cell.

    ``format_number(-0.004)`` → ``"0.00"``; ``format_number(-1.5)`` → ``"−1.50"``;
    ``format_number(float("-inf"))`` → ``"−∞"``.
    """
    minus = MINUS if unicode_minus else "-"
    if value == -math.inf:
        return minus + "\u221e" if unicode_minus else "-inf"
    if value == math.inf:
        return "\u221e" if unicode_minus else "inf"
    if math.isnan(value):
        return "NaN"
    text = f"{value:.{decimals}f}"
    if text.startswith("-"):
        text = text[1:] if float(text) == 0 else minus + text[1:]
    return text


def signed_limit(values) -> float:
    """Half-width of a colour scale centred on 0 that holds every finite value (at least 1e-9)."""
    finite = [abs(float(v)) for v in _flat(values) if math.isfinite(float(v))]
    return max(finite + [1e-9])


def signed_color(value: float, limit: float) -> tuple[float, float, float, float]:
    """RGBA of a signed value on the diverging map scaled to ``[-limit, limit]``."""
    return colormaps[SIGNED_CMAP](Normalize(-limit, limit, clip=True)(value))


def weight_color(value: float) -> tuple[float, float, float, float]:
    """RGBA of an attention weight on the fixed 0–1 map."""
    return colormaps[WEIGHTS_CMAP](Normalize(0.0, 1.0, clip=True)(value))


def text_color_on(background) -> str:
    """Black or white, whichever stays readable on ``background`` (WCAG relative luminance)."""
    red, green, blue, _ = to_rgba(background)
    luminance = 0.2126 * _linear(red) + 0.7152 * _linear(green) + 0.0722 * _linear(blue)
    return "#000000" if luminance > 0.179 else "#ffffff"


def hex_color(rgba) -> str:
    """``"#rrggbb"`` for any matplotlib colour (Manim takes hex strings)."""
    return to_hex(rgba)


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4


def _flat(values):
    if hasattr(values, "flatten"):
        return values.flatten().tolist()
    return values
