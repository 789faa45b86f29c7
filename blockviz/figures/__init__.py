"""Static figures of every step of the block, drawn with matplotlib from a record.

Figures read a :class:`~blockviz.block_record.BlockRecord`; they never recompute a number
(the causal-vs-bidirectional figure asks :func:`blockviz.record` for the other mask). They use
matplotlib's object interface only (no pyplot) and the colours of :mod:`blockviz.style`.

>>> from blockviz import record
>>> from blockviz.figures import FigureRequest, draw_figure, write_figures
>>> figure = draw_figure("weights", FigureRequest(record("the cat sat")))
>>> paths = list(write_figures(FigureRequest(record("the cat sat")), "out", formats=["svg"]))
"""

from __future__ import annotations

import importlib

from blockviz.figures.registry import FIGURE_NAMES, FIGURES, FigureSpec, figure_spec

__all__ = ["FIGURES", "FIGURE_NAMES", "FigureSpec", "figure_spec", "FigureRequest", "draw_figure", "write_figures", "save_figure", "MissingGlyphWarning"]


_LAZY = {
    "FigureRequest": "blockviz.figures.request",
    "draw_figure": "blockviz.figures.writing",
    "write_figures": "blockviz.figures.writing",
    "save_figure": "blockviz.figures.saving",
    "MissingGlyphWarning": "blockviz.figures.glyphs",
}
"""Names imported on first use, so that listing the figures imports neither torch nor drawing code."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'blockviz.figures' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
