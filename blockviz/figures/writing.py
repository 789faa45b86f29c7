"""Drawing figures from a record and writing them to a folder, one file per figure and format."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from matplotlib.figure import Figure

from blockviz.figures.context import figure_context
from blockviz.figures.glyphs import warn_missing_glyphs
from blockviz.figures.registry import FIGURE_NAMES, figure_spec
from blockviz.figures.request import FigureRequest
from blockviz.figures.saving import DEFAULT_DPI, FORMATS, save_figure


def draw_figure(name: str, request: FigureRequest) -> Figure:
    """The figure called ``name`` (see :data:`~blockviz.figures.registry.FIGURES`) for ``request``.

    Raises
    ------
    BlockvizError
        For an unknown name.
    """
    spec = figure_spec(name)
    with figure_context(request.theme):
        return spec.draw(request)


def write_figures(request: FigureRequest, folder: str | Path, names: Iterable[str] = FIGURE_NAMES,
                  formats: Iterable[str] = ("png", "svg"), dpi: int = DEFAULT_DPI) -> Iterator[Path]:
    """Draw each figure in ``names`` and write ``folder/<name>.<format>`` for each format,
    yielding each path once it is written. Warns once (:class:`MissingGlyphWarning`) if the
    font lacks characters of some token.

    Raises
    ------
    BlockvizError
        For an unknown figure name or format, or an unwritable folder (before drawing anything).
    """
    names, formats = list(names), list(formats)
    for name in names:
        figure_spec(name)
    for fmt in formats:
        if fmt not in FORMATS:
            from blockviz.errors import BlockvizError

            raise BlockvizError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    folder = Path(folder)
    warn_missing_glyphs(request.record.tokens)
    for name in names:
        figure = draw_figure(name, request)
        for fmt in formats:
            yield save_figure(figure, folder / f"{name}.{fmt}", fmt, dpi, title=f"blockviz {name}")
