"""One look for figures and videos: palette, colour maps, themes and the number format.

Figures (matplotlib) and scenes (Manim) both take their colours from here, so a cell has the
same colour on paper and on screen. Colour maps are matplotlib's; nothing here imports pyplot.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from matplotlib import colormaps
from matplotlib.colors import Normalize, PowerNorm, to_hex, to_rgba

SIGNED_CMAP = "RdBu_r"
"""Diverging map for signed values (embeddings, q, k, v, scores…): blue < 0 < red, white at 0,
each quantity on its record's one scale (:meth:`BlockRecord.scale_limit`)."""
WEIGHTS_CMAP = "Purples"
"""Sequential map for attention weights, always on the fixed scale 0–1 (see :data:`WEIGHTS_GAMMA`)."""
WEIGHTS_GAMMA = 0.5
"""Weights are coloured by √weight (a power normalisation, ``PowerNorm(0.5)`` on 0–1): with 45–64
tokens most weights are 0.02–0.2, which a linear map leaves almost white; √ spreads them over
the lower half of the map while 0 stays white and 1 darkest."""
WEIGHTS_SCALE_NAME = "\u221a scale"
"""How colour bars of weights name the normalisation: "weight (√ scale)"."""

ROLES = ("query", "key", "value", "output", "ffn", "residual")
"""What the role colours mark: the query, key and value of attention, head outputs and the
attention output, the feed-forward network, and the residual stream."""

MINUS = "\u2212"
NEG_INF_LABEL = MINUS + "\u221e"  # −∞
BLOCKED_SCORE_LABEL = NEG_INF_LABEL
"""A blocked cell of masked scores reads "−∞"."""
BLOCKED_WEIGHT_LABEL = "0"
"""A blocked cell of weights reads "0" (exactly 0, so no decimals)."""


@dataclass(frozen=True)
class Theme:
    """Colours of the page: background, text, faint lines, blocked cells, and the role colours.

    Blocked cells (a key the mask hides: −∞ scores, 0 weights) have one style in figures, scenes
    and the explorer: filled with ``blocked``, labelled :data:`BLOCKED_SCORE_LABEL` or
    :data:`BLOCKED_WEIGHT_LABEL` in :func:`text_color_on` of it, outside every colour scale.

    Role colours (:data:`ROLES`) are Okabe & Ito's colour-blind-safe hues (blue, orange, bluish
    green, reddish purple, vermillion, grey), darker on the light page and lighter on the dark
    one, so that text in them is at least 4.5:1 against the background and every two roles stay
    apart (CAM02-UCS ΔE ≥ 10) with deuteranopia and protanopia too (``tests/test_style.py``).
    The dark theme's query and FFN colours are lighter than 4.5:1 needs (5.65 and 5.90): H.264's
    4:2:0 chroma washes thin strokes towards the page, and decoded at 480p they read 5.0:1 and
    5.4:1 (``tests/test_dark_contrast.py``; 4.3 and 4.2 before).
    """

    name: str
    background: str
    text: str
    muted_text: str
    grid: str
    blocked: str
    blocked_hatch: str
    query: str = "#0874b5"
    key: str = "#946d28"
    value: str = "#278362"
    output: str = "#a2467d"
    ffn: str = "#824117"
    residual: str = "#505051"

    @property
    def roles(self) -> dict[str, str]:
        """The role colours by role name (:data:`ROLES`)."""
        return {role: getattr(self, role) for role in ROLES}


LIGHT = Theme(
    "light",
    background="#ffffff",
    text="#111827",
    muted_text="#6b7280",
    grid="#d1d5db",
    blocked="#9ca3af",
    blocked_hatch="#6b7280",
)
DARK = Theme(
    "dark",
    background="#0f172a",
    text="#f1f5f9",
    muted_text="#94a3b8",
    grid="#334155",
    blocked="#475569",
    blocked_hatch="#94a3b8",
    query="#3e93f1",
    key="#eaa308",
    value="#41bf92",
    output="#e28cbb",
    ffn="#e97240",
    residual="#8a8a8a",
)
THEMES = {"light": LIGHT, "dark": DARK}

QUERY_COLOR = DARK.query
KEY_COLOR = DARK.key
VALUE_COLOR = DARK.value
OUTPUT_COLOR = DARK.output  # head outputs, attention output
RESIDUAL_COLOR = DARK.residual
FFN_COLOR = DARK.ffn
"""The role colours of the dark theme (the videos' default), kept by these names for older
code; scenes take their theme's from their ``Look`` (``look.query`` …), and on a light page
:func:`role_color` (or ``theme.query`` …) gives colours that keep 4.5:1 there."""


def role_color(role: str, theme: Theme) -> str:
    """The colour of ``role`` (one of :data:`ROLES`) on ``theme``'s page."""
    return theme.roles[role]


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
    return _colormap(SIGNED_CMAP)(Normalize(-limit, limit, clip=True)(value))


def weights_norm() -> PowerNorm:
    """The normalisation of weights: fixed 0–1, by √weight (:data:`WEIGHTS_GAMMA`)."""
    return PowerNorm(WEIGHTS_GAMMA, 0.0, 1.0, clip=True)


def weight_color(value: float) -> tuple[float, float, float, float]:
    """RGBA of an attention weight on the fixed 0–1 map, normalised by :func:`weights_norm`."""
    return _colormap(WEIGHTS_CMAP)(weights_norm()(value))


def text_color_on(background) -> str:
    """Black or white, whichever stays readable on ``background`` (WCAG relative luminance)."""
    red, green, blue, _ = to_rgba(background)
    luminance = 0.2126 * _linear(red) + 0.7152 * _linear(green) + 0.0722 * _linear(blue)
    return "#000000" if luminance > 0.179 else "#ffffff"


def hex_color(rgba) -> str:
    """``"#rrggbb"`` for any matplotlib colour (Manim takes hex strings)."""
    return to_hex(rgba)


@functools.cache
def _colormap(name: str):
    """The registered colormap ``name``, fetched once: matplotlib's registry hands out a new copy
    on every access, which builds its lookup table again on its first use (scenes colour
    thousands of cells one at a time)."""
    return colormaps[name]


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4


def _flat(values):
    if hasattr(values, "flatten"):
        return values.flatten().tolist()
    return values
