"""Manim-specific styling: fonts, sizes and the colours of one theme, taken from ``blockviz.style``.

``blockviz.style`` is the one look shared with the figures; this module only turns it into what
Manim needs (hex strings, font sizes in Manim units, cell sizes).
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz import style

FONT = "DejaVu Sans"
"""A font every Debian machine has; it holds −, ∞, ⋯, √ and Σ."""

TITLE_SIZE = 30
CAPTION_SIZE = 24
HEADER_SIZE = 20
NUMBER_SIZE = 20
WORK_SIZE = 22
NOTE_SIZE = 19
"""Font sizes as built (Manim units of ``Text(font_size=…)``); a layout may scale them."""

MIN_TEXT_PIXELS = 11
"""No text is drawn smaller than this (ascender to baseline) at 854 × 480, i.e. 16 px at 1280 × 720."""
ASCENDER = 0.01075
"""DejaVu Sans's ascender-to-baseline height ("d") per unit of font size, in frame units."""
MIN_FONT_SIZE = MIN_TEXT_PIXELS / 60 / ASCENDER
"""The smallest font size a text may have once placed: 11 px at 480 px per 8 frame units (≈ 17.1)."""

MIN_LABEL_GAP_PIXELS = 4
"""No two labels stacked one above the other stand closer than this at 854 × 480 (issue 36)."""
LINE_GAP = 0.1
"""The room left between two stacked labels, in frame units as built: 6 px at 854 × 480, still
:data:`MIN_LABEL_GAP_PIXELS` when a layout shrinks it to two thirds."""

CELL_WIDTH = 0.92
CELL_HEIGHT = 0.46
MAX_SLOTS = 8
"""At most this many rows (or columns) of a grid are drawn; beyond it, ⋯ stands for the rest."""

HOLD = 2.5
"""Seconds the picture holds still after a step without a caption (a step with one holds as long as it
takes to read: :func:`blockviz.scenes.captions.reading_hold`); frozen frames cost almost nothing."""

FRAME_MARGIN = 0.25

MIN_CONTRAST = 4.5
"""WCAG AA: the least contrast any text has against what is drawn behind it."""


def contrast(one: str, two: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours, 1 to 21."""

    def luminance(color: str) -> float:
        channels = [int(color.lstrip("#")[k : k + 2], 16) / 255 for k in (0, 2, 4)]
        red, green, blue = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    lighter, darker = sorted((luminance(one), luminance(two)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


CELL_EDGES = {"dark": ("#334155", 1.0), "light": ("#8b929c", 1.5)}
"""Colour and Manim stroke width of a grid cell's edge on each theme's page: on white the theme's
faint grid line (1.5:1) lets a 0.00 cell (white) vanish, so the light page draws a grey edge at
3.1:1 (WCAG's 3:1 for graphics) and a little wider; on the dark page the grid line is enough (a
white cell stands out)."""

HIGHLIGHTS = {"dark": "#facc15", "light": "#b45309"}
"""The highlight's colour on each theme's page (yellow, 10.7:1 on the dark page; amber, 5.0:1 on white)."""


def tinted(fill: str, opacity: float, page: str) -> str:
    """The ``#rrggbb`` drawn where ``fill`` lies at ``opacity`` over ``page`` (sRGB blending, as Cairo does)."""
    mixed = [
        opacity * int(fill.lstrip("#")[k : k + 2], 16) + (1 - opacity) * int(page.lstrip("#")[k : k + 2], 16)
        for k in (0, 2, 4)
    ]
    return "#" + "".join(f"{round(channel):02x}" for channel in mixed)


@dataclass(frozen=True)
class Look:
    """The colours a scene draws with: the page and the role colours of one
    :class:`blockviz.style.Theme` (the light theme's roles are darker, 4.5:1 on white)."""

    theme: style.Theme

    @property
    def background(self) -> str:
        return self.theme.background

    @property
    def text(self) -> str:
        return self.theme.text

    @property
    def muted(self) -> str:
        return self.theme.muted_text

    @property
    def grid(self) -> str:
        return self.theme.grid

    @property
    def cell_edge(self) -> str:
        """The edge of a grid cell (and of a colour bar's strip): :data:`CELL_EDGES`."""
        return CELL_EDGES[self.theme.name][0]

    @property
    def cell_edge_width(self) -> float:
        """The Manim stroke width of :attr:`cell_edge`."""
        return CELL_EDGES[self.theme.name][1]

    @property
    def blocked(self) -> str:
        return self.theme.blocked

    @property
    def query(self) -> str:
        return self.theme.query

    @property
    def key(self) -> str:
        return self.theme.key

    @property
    def value(self) -> str:
        return self.theme.value

    @property
    def output(self) -> str:
        """Head outputs and the attention output."""
        return self.theme.output

    @property
    def ffn(self) -> str:
        return self.theme.ffn

    @property
    def residual(self) -> str:
        return self.theme.residual

    def muted_on(self, fill: str, opacity: float) -> str:
        """The muted text colour if it keeps :data:`MIN_CONTRAST` on ``fill`` laid at ``opacity``
        over the page (a tinted box), else the text colour: grey on a grey tint of the light page
        is 3.4:1."""
        return self.muted if contrast(self.muted, tinted(fill, opacity, self.background)) >= MIN_CONTRAST else self.text

    @property
    def highlight(self) -> str:
        """The one moving highlight (a frame, dots, the rotary angle): yellow on the dark page,
        amber on the light one, where yellow would be 1.5:1."""
        return HIGHLIGHTS[self.theme.name]


SUM_COLUMNS = 4
"""Columns drawn of each residual addition in the block-flow scenes (three entries and ⋯ for a wider d_model)."""


def look(theme_name: str = "dark") -> Look:
    """The :class:`Look` of the theme called ``theme_name`` ("dark" for videos by default)."""
    return Look(style.theme(theme_name))
