"""Value mixing written out: one query's weighted sum of value vectors, from the record, and
the hand-worked example it generalises (:func:`blockviz.worked_example.worked_example`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.context import font_families
from blockviz.figures.elision import GAP, LARGEST_COLUMNS, Columns, choose_columns, hidden_note
from blockviz.figures.heatmap import record_scale, signed_scale, weights_scale
from blockviz.figures.labels import POINTS_PER_INCH, text_size_in, token_named
from blockviz.figures.layout import Flow, Piece, Slot, TextLine, build_figure, fixed_piece
from blockviz.figures.page import MIN_PT
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import (
    BLOCKED_WEIGHT_TEXT,
    MONO,
    as_array,
    colorbar_line,
    feature_labels,
    field_panel,
    heading,
    legend_lines,
    note,
    operator,
    rows_of,
    source_line,
    titled,
)
from blockviz.figures.request import FigureRequest
from blockviz.style import Theme, format_number, signed_limit
from blockviz.worked_example import worked_example as worked_numbers


def value_mixing(request: FigureRequest) -> Figure:
    """Figure 6: for one query i and head h, ``weights[h, i, :]`` ``(n,)`` times the values
    ``value[h]`` ``(n, d_head)``: each term ``w·v`` with its product (:meth:`BlockRecord.weighted_values`),
    and their sum ``head_outputs[h, i]``.

    The work lines write the columns the value panel shows (⋯ where it hides some), every
    weight and value with one number of decimals and every product with one (one more than the
    grids, more for the factors where rounding needs it), so the products add up to the sum
    (within one unit of its last decimal); past :data:`MAX_TERMS` allowed keys, the keys of
    largest weight are written out and the others are one term, the sum of their products.
    Token labels are their own texts, so that the numbers line up whatever a token's glyphs.
    """
    rec, page = request.record, request.page
    head, query = request.mixing_head, request.query
    row_weights = as_array(rec.weights)[head, query]
    values = as_array(rec.value)[head]
    products = as_array(rec.weighted_values(head, query))
    mixture = as_array(rec.head_outputs)[head, query]
    blocked = np.isneginf(as_array(rec.mask)[query])
    allowed = [index for index in range(rec.n) if not blocked[index]]
    written = (
        allowed if len(allowed) <= MAX_TERMS + 1 else sorted(sorted(allowed, key=lambda j: -row_weights[j])[:MAX_TERMS])
    )
    hidden = [j for j in allowed if j not in written]
    labels = rows_of(rec)
    terms = [MixingTerm(labels[j], row_weights[j], values[j], products[j], j) for j in written]
    hidden_sum = products[hidden].sum(axis=0) if hidden else None
    columns, equation = _fitting_equation(
        page, values, terms, len(hidden), hidden_sum, mixture, request.decimals, request.theme
    )
    lines = heading(
        page,
        titled("value-mixing", f"query {token_named(rec.tokens[query])} (position {query}), head {head}"),
        formulas.MIXING,
    )
    panels = [
        matrix_piece(
            MatrixSpec(
                row_weights[:, None],
                labels,
                ["w"],
                title="weight",
                ylabel="key",
                blocked=blocked[:, None] if blocked.any() else None,
                blocked_filled=False,
            ),
            weights_scale(),
            request.theme,
            page,
            "mixing_weights",
            request.decimals,
        ),
        operator(page, "\u00b7"),
        _values_piece(request, values, head, columns),
    ]
    beside = Flow(panels + [operator(page, "\u2192"), equation], rows=rec.n)
    if page.width is None or len(beside.arrange(page, math.inf, page.gap)) == 1:
        lines.append(beside)
    else:  # the sum on a line of its own under the panels (an arrow before it would point at one of its terms)
        lines += [Flow(panels, rows=rec.n), [equation.make(0.0, False, math.inf)]]
    lines.append(colorbar_line([weights_scale(), record_scale(rec, "value")], page))
    hidden_columns = hidden_note([(columns, "d_head")])
    lines.append(
        note(
            page,
            f"{hidden_columns}; the work lines write the same columns; {source_line(rec)}"
            if hidden_columns
            else source_line(rec),
        )
    )
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    others = f"; {len(hidden)} keys of smaller weight are one term, the sum of their products" if hidden else ""
    work = request.decimals + formulas.WORK_DECIMALS
    factors = _factor_decimals(terms, columns, work)
    decimals_note = (
        "work lines carry one more decimal than the grids"
        if factors == work
        else f"work lines write weights and values with {factors} decimals and products with {work}, so that each product reads true"
    )
    lines.append(
        note(
            page,
            f"z, head {head}'s output for token {query}, is the sum of the weighted values of {len(allowed)} allowed key{'s' if len(allowed) > 1 else ''} "
            f"(weights summing to 1){others}; {decimals_note}; each head's width, {rec.config.d_head} numbers",
        )
    )
    return build_figure(lines, page)[0]


MAX_TERMS = 9
"""Keys written out one by one in value mixing when more are allowed (the rest are one term):
ten terms with one more decimal than their sum always add up to it within one unit of its last."""


@dataclass(frozen=True)
class MixingTerm:
    """One written term of value mixing: key ``label`` at ``position``, its weight, value and product."""

    label: str
    weight: float
    value: np.ndarray
    product: np.ndarray
    position: int


@dataclass(frozen=True)
class WorkLine:
    """One line of the written sum: ``label`` (the key, drawn as a text of its own), then ``left``
    (``w·(v)``, empty for the hidden keys' term) and ``right`` (the product), ``key`` the Text
    labels' suffix."""

    key: str
    label: str
    left: str
    right: str


def _values_piece(request: FigureRequest, values: np.ndarray, head: int, columns: Columns):
    """The value panel ``(n, d_head)`` of head ``head`` (its key/value head, if shared), at ``columns`` (the written sum's)."""
    c = request.record.config
    kv = f", kv head {c.kv_head_of(head)}" if c.kv_heads != c.n_heads else ""
    return field_panel(
        request, "value", columns, f"value v, head {head}{kv}", values=values, role="value", key="mixing_values"
    )


def _fitting_equation(
    page, values: np.ndarray, terms, hidden: int, hidden_sum, total, decimals: int, theme: Theme
) -> tuple[Columns, Piece]:
    """The value panel's columns and the written sum at those columns: the panel's usual columns
    (:func:`~blockviz.figures.elision.choose_columns`), fewer if the sum would not fit the page
    even with each product on a line of its own."""
    d_head = values.shape[1]
    choices = [choose_columns([values], d_head)] + [
        choose_columns([values], d_head, max_columns=0, edges=1, largest=largest) for largest in (LARGEST_COLUMNS, 1, 0)
    ]
    for columns in choices:
        if d_head <= 2 * len(columns.shown) - 1 and columns is not choices[0]:
            continue  # as many drawn columns (⋯ included) as the whole row: no saving
        piece, fits = _equation_piece(page, terms, hidden, hidden_sum, total, decimals, theme, columns)
        if fits:
            return columns, piece
    return columns, piece


def _equation_piece(
    page, terms: list[MixingTerm], hidden: int, hidden_sum, total, decimals: int, theme: Theme, columns: Columns
) -> tuple[Piece, bool]:
    """The sum written out, one line per term: ``key  w·(v) = (w·v)``, then ``+ k other keys = (…)``
    and the total ``z = (…)``, at ``columns`` (⋯ for each hidden run); and whether it fits the page.

    Each term is two Texts: its key (labelled ``mixing_key:<key position>``, ``mixing_key:hidden``)
    and its numbers (``mixing_term:<key position>``, ``mixing_hidden``), the numbers of every line
    starting at one x and in monospace, so that the "=" signs and the entries line up; the
    total is ``mixing_total``."""
    work = decimals + formulas.WORK_DECIMALS
    room = (page.content_width - 0.4) / 1.02  # beside the arrow before it
    lines, total_text = _work_lines(terms, hidden, hidden_sum, total, decimals, work, columns)
    split = False
    for size in (page.number, MIN_PT):
        label_width, line_width, total_width = _equation_widths(lines, total_text, size)
        if max(label_width + line_width, total_width) <= room:
            break
    else:  # still too wide: each term's product on a line of its own
        split = True
        label_width, line_width, total_width = _equation_widths(lines, total_text, size, split=True)
    fits = max(label_width + line_width, total_width) <= room
    pitch = size * 1.5 / POINTS_PER_INCH
    count = len(lines) * (2 if split else 1) + 1
    width = max(label_width + line_width, total_width) * 1.02 + 0.05
    families = list(font_families(MONO))

    def draw(figure, rect):
        x0, y0, w, h = rect
        figure_width, figure_height = figure.get_size_inches()
        step = pitch / figure_height
        numbers_x = x0 + label_width / figure_width
        space = text_size_in("0", size, MONO)[0] / figure_width  # one monospace character
        texts = []
        row = 0
        for line in lines:
            y = y0 + h - (row + 0.5) * step
            texts.append(
                figure.text(
                    x0,
                    y,
                    line.label,
                    ha="left",
                    va="center",
                    family=families,
                    parse_math=False,
                    fontsize=size,
                    color=theme.text,
                    label=f"mixing_key:{line.key}",
                )
            )
            if line.key == "hidden":  # no w·(v): its "=" where the others' stand
                x, y_numbers, numbers = (
                    numbers_x + space * (SPLIT_INDENT if split else len(line.left) + 1),
                    y - (step if split else 0.0),
                    f"= {line.right}",
                )
            else:
                x, y_numbers = numbers_x, y - (0.5 * step if split else 0.0)
                numbers = (
                    f"{line.left} = {line.right}" if not split else f"{line.left}\n{' ' * SPLIT_INDENT}= {line.right}"
                )
            texts.append(
                figure.text(
                    x,
                    y_numbers,
                    numbers,
                    ha="left",
                    va="center",
                    family=families,
                    parse_math=False,
                    fontsize=size,
                    color=theme.text,
                    label="mixing_hidden" if line.key == "hidden" else f"mixing_term:{line.key}",
                    linespacing=1.2,
                )
            )
            row += 2 if split else 1
        texts.append(
            figure.text(
                x0,
                y0 + h - (row + 0.5) * step,
                total_text,
                ha="left",
                va="center",
                family=families,
                parse_math=False,
                fontsize=size * TOTAL_SIZE,
                fontweight="bold",
                color=theme.output,
                label="mixing_total",
            )
        )
        return texts

    return fixed_piece(Slot(width, pitch * count, draw, key="mixing_equation", axes=False)), fits


SPLIT_INDENT = 4
"""Characters before the "=" of a product written on a line of its own."""
TOTAL_SIZE = 1.1
"""The total's type, as a multiple of the terms'."""


def _equation_widths(
    lines: list[WorkLine], total_text: str, size: float, split: bool = False
) -> tuple[float, float, float]:
    """Inches of the key column (the widest key and a space), of the numbers and of the total line."""
    space = text_size_in("0", size, MONO)[0]
    label_width = max(text_size_in(line.label, size, MONO)[0] for line in lines if line.key != "hidden") + 2 * space
    for line in lines:
        if line.key == "hidden":  # its key may reach into the blank left part of its line
            label_width = max(label_width, text_size_in(line.label, size, MONO)[0] + 2 * space - len(line.left) * space)
    numbers = (
        [f"{line.left} = {line.right}" for line in lines]
        if not split
        else [line.left for line in lines] + [f"{' ' * SPLIT_INDENT}= {line.right}" for line in lines]
    )
    line_width = max(text_size_in(text, size, MONO)[0] for text in numbers)
    total_width = text_size_in(total_text, size * TOTAL_SIZE, MONO, weight="bold")[0]
    return label_width, line_width, total_width


def _work_lines(
    terms, hidden: int, hidden_sum, total, decimals: int, work: int, columns: Columns
) -> tuple[list[WorkLine], str]:
    """The lines of the written sum (entries padded so that they line up, one number of decimals
    for the factors, the smallest that lets every term's factors multiply to its product), and the total's text."""
    shown = list(columns.shown)
    factor_decimals = _factor_decimals(terms, columns, work)
    entry_width = max(
        [len(format_number(float(term.value[j]), factor_decimals)) for term in terms for j in shown] + [1]
    )
    product_width = max(
        [
            len(format_number(float(vector[j]), work))
            for vector in [term.product for term in terms] + ([hidden_sum] if hidden else [])
            for j in shown
        ]
        + [1]
    )
    lines = []
    for index, term in enumerate(terms):
        left = f"{format_number(term.weight, factor_decimals)}\u00b7{_columns_text(term.value, columns, factor_decimals, entry_width)}"
        lines.append(
            WorkLine(
                str(term.position),
                f"{'+' if index else ' '} {term.label}",
                left,
                _columns_text(term.product, columns, work, product_width),
            )
        )
    left_width = max(len(line.left) for line in lines)
    lines = [WorkLine(line.key, line.label, line.left.ljust(left_width), line.right) for line in lines]
    if hidden:
        lines.append(
            WorkLine(
                "hidden",
                f"+ {hidden} other key{'s' if hidden > 1 else ''}",
                " " * left_width,
                _columns_text(hidden_sum, columns, work, product_width),
            )
        )
    return lines, f"z = {_columns_text(total, columns, decimals)}"


def _factor_decimals(terms, columns: Columns, work: int) -> int:
    """Decimals of every written weight and value: ``work``, or more where some term's rounded
    factors would not multiply to its written product (:func:`formulas.product_decimals`)."""
    shown = list(columns.shown)
    return max(
        [formulas.product_decimals(term.weight, term.value[shown], term.product[shown], work) for term in terms]
        + [work]
    )


def _columns_text(values, columns: Columns, decimals: int, width: int = 0) -> str:
    """``values`` at ``columns`` as a written vector, ``(0.50, ⋯, 3.00)``: each entry right-aligned
    in ``width`` characters, ⋯ for each run of hidden columns (as the panel draws them)."""
    entries = [
        GAP if index is None else format_number(float(values[index]), decimals).rjust(width) for index in columns.layout
    ]
    return "(" + ", ".join(entries) + ")"


def worked_example(request: FigureRequest) -> Figure:
    """Figure 12: scores (0, ln 3) → exp(s − max) (⅓, 1) → ÷ their sum 4/3 → weights (¼, ¾);
    ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Every number is :func:`blockviz.worked_example.worked_example`'s,
    computed by the block's own softmax (Vaswani et al. 2017, Eq. 1, one query, two keys)."""
    example = worked_numbers()
    scores, exp_scores, weights, values, products, mixture = (
        as_array(tensor)
        for tensor in (
            example.scores,
            example.exp_scores,
            example.weights,
            example.values,
            example.weighted_values,
            example.mixture,
        )
    )
    row_max, exp_sum = float(example.row_max), float(example.exp_sum)
    theme, decimals, page = request.theme, request.decimals, request.page
    signed = signed_scale(signed_limit([*scores, *exp_scores, *values.ravel(), *mixture]), label="scores, exp, values")
    keys = ["key 1", "key 2"]
    entries = feature_labels("d_head", values.shape[1])
    largest = 0.55 if page.width is None else page.largest_cell * 1.3
    softmax = TextLine(
        [
            r"$\mathrm{softmax}(0,\ \ln 3) = \left(\frac{e^0}{e^0 + e^{\ln 3}},\ \frac{e^{\ln 3}}{e^0 + e^{\ln 3}}\right)$",
            r"$= \left(\frac{1}{4},\ \frac{3}{4}\right)$",
        ],
        page.formula,
        key="formula",
        math=True,
        joiner=" ",
    )
    lines = heading(page, titled("worked-example", "one query, two keys")) + [softmax]
    lines.append(
        Flow(
            [
                matrix_piece(
                    MatrixSpec(scores[None, :], ["query"], keys, title="scores (0, ln 3)"),
                    signed,
                    theme,
                    page,
                    "example_scores",
                    decimals,
                ),
                operator(page, f"\u2212 max {format_number(row_max, decimals)}, exp \u2192", scale=0.7),
                matrix_piece(
                    MatrixSpec(exp_scores[None, :], ["query"], keys, title="exp(s \u2212 max)"),
                    signed,
                    theme,
                    page,
                    "example_exp_scores",
                    decimals,
                ),
                operator(page, f"\u00f7 sum {format_number(exp_sum, decimals)} \u2192", scale=0.7),
                matrix_piece(
                    MatrixSpec(weights[None, :], ["query"], keys, title="weights"),
                    weights_scale(),
                    theme,
                    page,
                    "example_weights",
                    decimals,
                ),
            ],
            rows=1,
            largest_cell=largest,
        )
    )
    lines.append(
        Flow(
            [
                matrix_piece(
                    MatrixSpec(weights[None, :], ["query"], keys, title="weights", token_rows=False),
                    weights_scale(),
                    theme,
                    page,
                    "example_weights_again",
                    decimals,
                ),
                operator(page, "\u00b7"),
                matrix_piece(
                    MatrixSpec(values, keys, entries, title="values", title_color=theme.value, token_rows=False),
                    signed,
                    theme,
                    page,
                    "example_values",
                    decimals,
                ),
                operator(page, "="),
                matrix_piece(
                    MatrixSpec(
                        mixture[None, :],
                        ["query"],
                        entries,
                        title="mixture",
                        title_color=theme.output,
                        token_rows=False,
                    ),
                    signed,
                    theme,
                    page,
                    "example_mixture",
                    decimals,
                ),
            ],
            rows=2,
            largest_cell=largest,
        )
    )
    equation = formulas.mixture_equation(weights, values, mixture, decimals, products=products)
    first, *rest = equation.split(" = ")
    lines.append(
        TextLine(
            [first] + ["= " + part for part in rest], page.number + 1, key="example_equation", family=MONO, words=False
        )
    )
    lines.append(
        TextLine([r"$\frac{1}{4}\cdot(2,\ 0) + \frac{3}{4}\cdot(0,\ 4) = (0.5,\ 3)$"], page.formula + 1, math=True)
    )
    lines.append(colorbar_line([signed, weights_scale()], page))
    lines.append(
        note(
            page,
            r"the larger score takes the larger share: $e^{\ln 3} = 3$ times $e^{0} = 1$; subtracting the max first changes no weight",
            math=True,
        )
    )
    return build_figure(lines, page)[0]
