"""Pieces every figure uses: its heading, operators between panels, notes, colour-bar lines,
axis labels, arrays."""

from __future__ import annotations

import numpy as np

from blockviz.figures.heatmap import ColourScale
from blockviz.figures.labels import token_labels
from blockviz.figures.layout import Flow, Piece, Slot, TextLine, operator_piece, paragraph_row
from blockviz.figures.page import Page
from blockviz.figures.panels import colorbar_pieces
from blockviz.record_fields import axis_labels, field

FORMULA_JOINER = ",   "
"""Between the parts of a formula written on one line (a formula wraps between its parts)."""


def as_array(tensor) -> np.ndarray:
    """A record tensor as a float64 NumPy array (values unchanged)."""
    return np.asarray(tensor, dtype=float)


def heading(page: Page, title: str, *formulas) -> list:
    """The lines at the top of a figure: its title, and mathtext formulas under it (each a
    string, or a tuple of parts that may go on lines of their own)."""
    lines: list = [TextLine([title], page.heading, key="heading", options={"fontweight": "bold"})]
    for index, formula in enumerate(formulas):
        parts = [formula] if isinstance(formula, str) else list(formula)
        lines.append(TextLine(parts, page.formula, key=f"formula{index or ''}", math=True, joiner=FORMULA_JOINER))
    return lines


def operator(page: Page, symbol: str, math: bool = False, scale: float = 1.0, hug: bool = False) -> Piece:
    """An operator between two panels: "+", "=", "→", or a mathtext step such as ÷√d_k;
    ``scale`` < 1 for a wordy one; ``hug``: close to its operands."""
    return operator_piece(symbol, max(page.note, page.operator * scale), math=math, hug=hug)


def note(page: Page, text: str, key: str | None = None, math: bool = False) -> TextLine:
    """A line of explanation in small type, wrapped to the page."""
    return TextLine([text], page.note, key=key, math=math, paragraph=True)


def colorbar_line(scales: list[ColourScale], page: Page) -> Flow | None:
    """The figure's colour bars side by side (wrapped as the page needs), one per distinct scale."""
    pieces = colorbar_pieces(scales, page)
    return Flow(pieces, row_gap=COLORBAR_ROW_GAP_IN) if pieces else None


COLORBAR_ROW_GAP_IN = 0.05
"""Between rows of colour bars (each bar's title stands above it)."""


def legend_lines(page: Page, theme, text: str, filled: bool) -> list:
    """A legend of the blocked-cell style: a swatch, then ``text`` (wrapped to the page);
    ``filled`` is the scores' legend (−∞), otherwise the weights' (0)."""
    from matplotlib.patches import Rectangle

    from blockviz.figures.heatmap import blocked_patch_style

    swatch_in = 0.16

    def draw(figure, rect):
        x0, y0, w, h = rect
        patch = Rectangle((x0, y0), w, h, transform=figure.transFigure, **blocked_patch_style(theme))
        figure.add_artist(patch)
        return patch

    room = page.content_width - swatch_in - page.gap
    text_line = TextLine([text], page.note, key="legend")
    narrow = Page(**{**page.__dict__, "width": room + 2 * page.margin}) if page.width is not None else page
    (text_slot_,), = text_line.arrange(narrow)
    swatch = Slot(swatch_in, swatch_in * 0.7, draw, axes=False)
    return [paragraph_row([swatch, text_slot_])]


def rows_of(tokens: list[str]) -> list[str]:
    """Row labels for token rows."""
    return token_labels(tokens)


def columns_of(rec, name: str) -> list[str]:
    """Column labels of record field ``name``'s last axis (:func:`blockviz.record_fields.axis_labels`):
    ``d0…`` for d_model and d_head, ``f0…`` for d_ff, the tokens for key positions."""
    dimension = field(name).shape[-1]
    return token_labels(rec.tokens) if dimension == "n" else feature_labels(dimension, field(name).sizes(rec.n, rec.config)[-1])


def feature_labels(dimension: str, size: int) -> list[str]:
    """Labels of a feature axis (``"d_model"``, ``"d_head"``, ``"d_ff"``): ``d0…`` or ``f0…``."""
    return axis_labels(dimension, [], size)
