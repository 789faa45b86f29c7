"""Figures drawn once per test session, for the figure tests that only read them.

The figure tests read the same figures again and again (every figure at 1, 3, 13 and 64 tokens,
at 3.3 in, 6.5 in and natural size); :func:`drawn` draws each (figure, sentence, width) once for
the whole session, so the test files share their drawings. A test that changes a figure (sets a
text, moves an artist) draws its own with :func:`blockviz.figures.draw_figure`.
"""

from __future__ import annotations

import functools

from blockviz.block_record import record
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.page import DEFAULT_WIDTH


@functools.cache
def sentence_record(sentence: str):
    """The record of ``sentence`` with the default config, recorded once per session."""
    return record(sentence)


@functools.cache
def drawn(name: str, sentence: str, width: float | None = DEFAULT_WIDTH):
    """Figure ``name`` of ``sentence``'s record at page ``width`` (``None``: natural size), with
    the default token, head and theme; drawn once per session. Read it, do not change it."""
    return draw_figure(name, FigureRequest(sentence_record(sentence), width=width))
