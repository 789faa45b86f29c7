"""Pieces every figure uses: its heading, operators between panels, axis labels, arrays."""

from __future__ import annotations

import numpy as np

from blockviz.figures.labels import token_labels
from blockviz.figures.layout import Slot, text_slot
from blockviz.record_fields import axis_labels, field

HEADING_PT = 12.0
FORMULA_PT = 11.0
OPERATOR_PT = 15.0
NOTE_PT = 8.5
OPERATOR_COLUMNS = 1.6
"""Width of an operator between panels, counted in cells, when sizing cells to a line."""
LABEL_COLUMNS = 3.0


def as_array(tensor) -> np.ndarray:
    """A record tensor as a float64 NumPy array (values unchanged)."""
    return np.asarray(tensor, dtype=float)


def heading(title: str, *formulas: str) -> list[list[Slot]]:
    """The lines at the top of a figure: its title, and mathtext formulas under it."""
    lines = [[text_slot(title, HEADING_PT, key="heading", fontweight="bold")]]
    for index, formula in enumerate(formulas):
        lines.append([text_slot(formula, FORMULA_PT, key=f"formula{index or ''}", math=True)])
    return lines


def operator(symbol: str, math: bool = False, size: float = OPERATOR_PT) -> Slot:
    """An operator between two panels: "+", "=", "→", or a mathtext step such as ÷√d_k."""
    return text_slot(symbol, size, math=math)


def note(text: str, key: str | None = None, math: bool = False) -> Slot:
    """A line of explanation in small type."""
    return text_slot(text, NOTE_PT, key=key, math=math)


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


def line_columns(panel_columns: list[int], operators: int = 0, colorbars: int = 0) -> float:
    """A line's width counted in cells, to size cells so the line fits the page."""
    return sum(panel_columns) + operators * OPERATOR_COLUMNS + LABEL_COLUMNS + 2.0 * colorbars
