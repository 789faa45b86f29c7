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
CAPTION_SIZE = 22
HEADER_SIZE = 16
NUMBER_SIZE = 16
WORK_SIZE = 20

CELL_WIDTH = 0.78
CELL_HEIGHT = 0.42
MAX_SLOTS = 8
"""At most this many rows (or columns) of a grid are drawn; beyond it, ⋯ stands for the rest."""

FRAME_MARGIN = 0.25


@dataclass(frozen=True)
class Look:
    """The colours a scene draws with: the page of a :class:`blockviz.style.Theme` plus role colours."""

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
    def blocked(self) -> str:
        return self.theme.blocked

    query = style.QUERY_COLOR
    key = style.KEY_COLOR
    value = style.VALUE_COLOR
    output = style.OUTPUT_COLOR
    residual = style.RESIDUAL_COLOR
    highlight = "#facc15"  # yellow: the one moving highlight


def look(theme_name: str = "dark") -> Look:
    """The :class:`Look` of the theme called ``theme_name`` ("dark" for videos by default)."""
    return Look(style.theme(theme_name))
