"""Static figures of every step of the block, drawn with matplotlib from a record.

Figures read a :class:`~blockviz.block_record.BlockRecord` and compute no number (the
causal-vs-bidirectional figure asks :meth:`BlockRecord.counterpart` for the other mask; the
worked example reads :func:`blockviz.worked_example.worked_example`). Each quantity has one
colour scale per record (:meth:`BlockRecord.scale_limit`), the same as in the videos. They use
matplotlib's object interface only (no pyplot) and the colours of :mod:`blockviz.style`, and are
laid out for a page width (``FigureRequest.width``, :mod:`blockviz.figures.page`): 6.5 in by
default, type never under 6 pt.

>>> import tempfile
>>> from blockviz import record
>>> from blockviz.figures import FigureRequest, draw_figure, write_figures
>>> request = FigureRequest(record("the cat sat"), token="cat", head=1)
>>> figure = draw_figure("weights", request)
>>> with tempfile.TemporaryDirectory() as folder:
...     [path.name for path in write_figures(request, folder, ["weights"], formats=["svg"])]
['weights.svg']
"""

from __future__ import annotations

import importlib

from blockviz.figures.registry import FIGURE_NAMES, FIGURES, FigureSpec, figure_spec

__all__ = [
    "FIGURES",
    "FIGURE_NAMES",
    "FigureSpec",
    "figure_spec",
    "FigureRequest",
    "draw_figure",
    "write_figures",
    "save_figure",
    "MissingGlyphWarning",
]


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
