"""The page a figure is laid out for: its width in inches and the type sizes that go with it.

``--width 6.5`` (a text column, the default) and ``--width 3.3`` (one column of a two-column
paper) give figures exactly that wide, with type sized to be read at that size (never under
:data:`MIN_PT`); ``--width auto`` (``width=None``) gives each figure its natural size, as wide as
its panels need at their largest cells.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from blockviz.errors import BlockvizError

MIN_PT = 6.0
"""The smallest type on any figure at its target width; a number that would be smaller is not
written (its cell shows colour alone)."""
DEFAULT_WIDTH = 6.5
"""Inches: the text column of a US-letter or A4 page."""
NARROW_WIDTH = 3.3
"""Inches: one column of a two-column paper."""
WIDTH_LIMITS = (2.0, 40.0)
"""The widths a page may have, in inches."""


@dataclass(frozen=True)
class Page:
    """A page width (``None``: natural size) and the type sizes, in points, of what is drawn on it.

    ``largest_cell`` is the side of a heatmap cell in inches when nothing forces it smaller;
    ``max_height`` the height in inches a figure keeps to by shrinking its cells (``None``: no
    limit), unless its panels would then no longer fit the width.
    """

    width: float | None
    heading: float
    formula: float
    title: float
    axis: float
    tick: float
    number: float
    note: float
    operator: float
    bar_tick: float
    largest_cell: float
    max_height: float | None
    margin: float = 0.08
    gap: float = 0.1
    colorbar_width: float = 1.5

    @property
    def content_width(self) -> float:
        """Inches available to the figure's lines (``inf`` at natural size)."""
        return math.inf if self.width is None else self.width - 2 * self.margin


NATURAL = Page(
    None,
    heading=12.0,
    formula=11.0,
    title=9.5,
    axis=8.0,
    tick=9.0,
    number=9.0,
    note=8.5,
    operator=15.0,
    bar_tick=7.0,
    largest_cell=0.5,
    max_height=None,
    margin=0.12,
    gap=0.12,
    colorbar_width=1.8,
)
"""``--width auto``: today's natural sizes."""

_COLUMN = dict(
    heading=10.0,
    formula=9.0,
    title=8.0,
    axis=7.0,
    tick=7.5,
    number=8.0,
    note=7.0,
    operator=11.0,
    bar_tick=6.5,
    largest_cell=0.42,
    max_height=8.5,
    colorbar_width=1.5,
)
"""Sizes at 6.5 in."""
_NARROW = dict(
    heading=8.0,
    formula=7.5,
    title=7.0,
    axis=6.5,
    tick=6.5,
    number=7.0,
    note=6.5,
    operator=9.0,
    bar_tick=6.0,
    largest_cell=0.34,
    max_height=8.0,
    colorbar_width=1.2,
)
"""Sizes at 3.3 in."""


def page(width: float | None) -> Page:
    """The page ``width`` inches wide (``None``: natural size), type interpolated between the
    3.3 in and 6.5 in sizes and growing slowly (as √width) past 6.5 in.

    >>> page(6.5).heading, page(3.3).note, page(None).width
    (10.0, 6.5, None)

    Raises :class:`BlockvizError` for a width outside :data:`WIDTH_LIMITS`.
    """
    if width is None:
        return NATURAL
    width = check_width(width)
    if width <= NARROW_WIDTH:
        sizes = dict(_NARROW)
    elif width <= DEFAULT_WIDTH:
        share = (width - NARROW_WIDTH) / (DEFAULT_WIDTH - NARROW_WIDTH)
        sizes = {name: _NARROW[name] + share * (_COLUMN[name] - _NARROW[name]) for name in _COLUMN}
    else:
        grow = min(2.0, math.sqrt(width / DEFAULT_WIDTH))
        sizes = {name: value * grow for name, value in _COLUMN.items()}
        sizes["max_height"] = width * _COLUMN["max_height"] / DEFAULT_WIDTH
    sizes = {
        name: round(max(value, MIN_PT), 2) if name not in ("largest_cell", "max_height", "colorbar_width") else value
        for name, value in sizes.items()
    }
    return Page(width, **sizes)


def check_width(width) -> float:
    """``width`` as inches, if it is a number from 2 to 40.

    Raises :class:`BlockvizError` naming the limits otherwise.
    """
    low, high = WIDTH_LIMITS
    try:
        inches = float(width)
    except (TypeError, ValueError):
        raise BlockvizError(
            f"width must be a number of inches from {low:g} to {high:g}, or auto; got {width!r}"
        ) from None
    if not (low <= inches <= high):
        raise BlockvizError(f"width must be from {low:g} to {high:g} inches (or auto), not {inches:g}")
    return inches
