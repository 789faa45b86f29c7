"""Pieces every figure uses: its heading, operators between panels, notes, colour-bar lines,
axis labels, arrays; panels of record fields with wide rows elided, labelled rows of one token,
and written work lines (sums term by term)."""

from __future__ import annotations

import numpy as np
from matplotlib.cbook import is_math_text
from matplotlib.patches import Rectangle

from blockviz.figures.architecture import norm_name
from blockviz.figures.elision import (
    ROW_EDGE_COLUMNS,
    ROW_LARGEST_COLUMNS,
    Columns,
    FittedSpec,
    choose_columns,
    elided_piece,
    hidden_note,
)
from blockviz.figures.heatmap import ColourScale, blocked_patch_style, record_scale
from blockviz.figures.labels import record_token_labels
from blockviz.figures.layout import Flow, Piece, Slot, TextLine, fixed_piece, operator_piece, paragraph_row, text_slot
from blockviz.figures.page import Page
from blockviz.figures.panels import colorbar_pieces, readable_cell
from blockviz.figures.registry import figure_title
from blockviz.record_fields import axis_labels, field
from blockviz.style import BLOCKED_SCORE_LABEL, NEG_INF_LABEL

FORMULA_JOINER = ",   "
"""Between the parts of a formula written on one line (a formula wraps between its parts)."""


def as_array(tensor) -> np.ndarray:
    """A record tensor as a float64 NumPy array (values unchanged)."""
    return np.asarray(tensor, dtype=float)


def titled(name: str, detail: str) -> str:
    """A heading for figure ``name``: its title in the registry (:attr:`FigureSpec.title`), a colon, then ``detail``."""
    return f"{figure_title(name)}: {detail}"


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
    swatch_in = 0.16

    def draw(figure, rect):
        x0, y0, w, h = rect
        patch = Rectangle((x0, y0), w, h, transform=figure.transFigure, **blocked_patch_style(theme))
        figure.add_artist(patch)
        return patch

    room = page.content_width - swatch_in - page.gap
    text_line = TextLine([text], page.note, key="legend")
    narrow = Page(**{**page.__dict__, "width": room + 2 * page.margin}) if page.width is not None else page
    ((text_slot_,),) = text_line.arrange(narrow)
    swatch = Slot(swatch_in, swatch_in * 0.7, draw, axes=False)
    return [paragraph_row([swatch, text_slot_])]


BLOCKED_SCORE_TEXT = f"{BLOCKED_SCORE_LABEL}: blocked by the mask M (a key after its query); its weight is exactly 0"
"""The legend of the scores' blocked cells (``legend_lines(…, filled=True)``)."""
BLOCKED_WEIGHT_TEXT = f"0: blocked by the mask (M = {NEG_INF_LABEL}), weight exactly 0"
"""The legend of the weights' blocked cells (``legend_lines(…, filled=False)``)."""


def rows_of(rec) -> list[str]:
    """Row labels for a record's token rows (:func:`~blockviz.figures.labels.record_token_labels`)."""
    return record_token_labels(rec)


def columns_of(rec, name: str) -> list[str]:
    """Column labels of record field ``name``'s last axis (:func:`blockviz.record_fields.axis_labels`):
    ``d0…`` for d_model and d_head, ``f0…`` for d_ff, the tokens for key positions."""
    dimension = field(name).shape[-1]
    return (
        record_token_labels(rec)
        if dimension == "n"
        else feature_labels(dimension, field(name).sizes(rec.n, rec.config)[-1])
    )


def feature_labels(dimension: str, size: int) -> list[str]:
    """Labels of a feature axis (``"d_model"``, ``"d_head"``, ``"d_ff"``): ``d0…`` or ``f0…``."""
    return axis_labels(dimension, [], size)


MONO = "monospace"
"""The family of written work (sums, products): every character one width, so that terms line up."""


# -- panels of record fields ----------------------------------------------------------------


def field_panel(
    request,
    name: str,
    columns: Columns,
    title: str,
    values=None,
    role: str | None = None,
    key: str | None = None,
    scale: ColourScale | None = None,
    rows: bool = True,
) -> Piece:
    """Record field ``name`` ``(n, width)`` (or ``values`` of that shape, e.g. one head's) as a
    panel showing ``columns`` (:func:`~blockviz.figures.elision.elided_piece`: ⋯ where columns
    are hidden), on its family's one colour scale unless ``scale`` is given; ``role`` colours the
    title (``"query"``, ``"residual"``…), ``rows`` labels the token rows; keyed ``key`` or ``name``.
    A title with ``$…$`` (a typeset name, :mod:`blockviz.symbols`) is drawn as mathtext."""
    rec = request.record
    values = as_array(rec.tensors[name]) if values is None else values
    return elided_piece(
        values,
        columns,
        rows_of(rec) if rows else None,
        columns_of(rec, name),
        scale or record_scale(rec, name),
        request.theme,
        request.page,
        key or name,
        request.decimals,
        title=title,
        title_math=is_math_text(title),
        title_color=request.theme.roles[role] if role else None,
    )


def shared_columns(rec, names: list[str]) -> Columns:
    """The columns shown of the fields ``names`` (panels of one equation), chosen over all of them."""
    arrays = [as_array(rec.tensors[name]) for name in names]
    return choose_columns(arrays, arrays[0].shape[-1])


def row_columns(arrays, total: int, page: Page | None = None, label_width: float = 0.0, decimals: int = 2) -> Columns:
    """The columns shown of stacked single rows (one token's): more fit than of token panels, as
    many of the largest as the page has room for beside the rows' labels (``label_width`` inches)."""
    columns = choose_columns(arrays, total, edges=ROW_EDGE_COLUMNS, largest=ROW_LARGEST_COLUMNS)
    if page is None or page.width is None:
        return columns
    values = np.concatenate([np.asarray(array, dtype=float).reshape(-1) for array in arrays])
    cell = readable_cell(FittedSpec(values[None, :], None, []).widest_number(decimals), page) * 1.02
    room = page.content_width - label_width - page.gap - 0.1
    for edges in (ROW_EDGE_COLUMNS, 1):
        for largest in range(ROW_LARGEST_COLUMNS, -1, -1):
            if len(columns.layout) * cell <= room:
                return columns
            columns = choose_columns(arrays, total, max_columns=0, edges=edges, largest=largest)
    return columns


def hidden_notes(page: Page, columns: list[tuple[Columns, str]]) -> list[TextLine]:
    """A note of how many columns are hidden and which are shown (:func:`~blockviz.figures.elision.hidden_note`), if any are."""
    text = hidden_note(columns)
    return [note(page, text)] if text else []


def source_line(rec) -> str:
    """Where the record's block comes from: "minilm (bert), layer 3 of 0–5 …" (a record of
    several layers: "layers 0–5 of 0–5"), or "pre-norm LayerNorm block, seeded random weights"."""
    return (
        rec.source.describe(rec.blocks[0].source.layer)
        if rec.source.is_model
        else f"{rec.architecture.norm_placement}-norm {norm_name(rec)} block, {rec.source.describe()}"
    )


# -- rows of one token, written work --------------------------------------------------------


def label_slot(label: str, width: float, size: float) -> Slot:
    """A row's label, right-aligned in ``width`` inches against the row's panel; mathtext if it
    holds ``$…$``."""
    slot = text_slot(label, size, math=is_math_text(label))
    slot.left = max(0.0, width - slot.width)
    return slot


def labelled_row(label: Slot, piece: Piece, tight: bool = False) -> Flow:
    """One row of numbers after its label (kept beside it), cells no larger than the numbers need;
    ``tight``: close under the row before it (a stack of steps)."""
    return Flow([fixed_piece(label, glue=True), piece], rows=1, largest_cell=piece.readable * 1.15, tight=tight)


def work_line(page: Page, key: str, parts: list[str]) -> TextLine:
    """A written step in monospace, wrapped between its terms (at " + " and " − ") and "=" if the page is narrow."""
    pieces: list[str] = []
    for part in parts:
        for index, term in enumerate(part.replace(" \u2212 ", " + \u2212 ").split(" + ")):
            if index == 0:
                pieces.append(term)
            else:
                pieces.append(("\u2212 " + term[2:]) if term.startswith("\u2212 ") else "+ " + term)
    return TextLine(pieces, page.number, key=key, family=MONO, words=False, tight=True)


def signed_sum(numbers: list[str]) -> str:
    """``["0.5", "−1.2", "3"]`` → ``"0.5 − 1.2 + 3"``."""
    text = numbers[0]
    for number in numbers[1:]:
        text += f" \u2212 {number[1:]}" if number.startswith("\u2212") else f" + {number}"
    return text
