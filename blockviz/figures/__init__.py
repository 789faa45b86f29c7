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

from blockviz.figures.registry import FIGURE_NAMES, FIGURES, FigureSpec, figure_spec

__all__ = ["FIGURES", "FIGURE_NAMES", "FigureSpec", "figure_spec", "FigureRequest", "draw_figure", "write_figures", "save_figure", "MissingGlyphWarning"]


def __getattr__(name: str):
    # Lazy, so that listing the figures does not import matplotlib's drawing code or torch.
    if name == "FigureRequest":
        from blockviz.figures.request import FigureRequest

        return FigureRequest
    if name in ("draw_figure", "write_figures"):
        from blockviz.figures import writing

        return getattr(writing, name)
    if name == "save_figure":
        from blockviz.figures.saving import save_figure

        return save_figure
    if name == "MissingGlyphWarning":
        from blockviz.figures.glyphs import MissingGlyphWarning

        return MissingGlyphWarning
    raise AttributeError(f"module 'blockviz.figures' has no attribute {name!r}")
