"""Value mixing written out: one query's weighted sum of value vectors, from the record, and
the hand-worked example it generalises."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import formulas, general_figures
from blockviz.figures.architecture import is_general
from blockviz.figures.attention_figures import BLOCKED_WEIGHT_TEXT
from blockviz.figures.context import font_families
from blockviz.figures.heatmap import record_scale, signed_scale, weights_scale
from blockviz.figures.labels import POINTS_PER_INCH, text_size_in, token_label
from blockviz.figures.layout import Flow, Piece, Slot, TextLine, build_figure, fixed_piece
from blockviz.figures.page import MIN_PT
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, columns_of, feature_labels, heading, legend_lines, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import Theme, format_number, signed_limit
from blockviz.worked_example import worked_example as worked_numbers

MONO = "monospace"
ONE_LINE_TERMS = 4
"""Up to this many terms the sum is also written on one line."""


def value_mixing(request: FigureRequest) -> Figure:
    """Figure 6: for one query i and head h, ``weights[h, i, :]`` ``(n,)`` times the values
    ``value[h]`` ``(n, d_head)``: each term ``w·v`` with its product (:meth:`BlockRecord.weighted_values`),
    and their sum ``head_outputs[h, i]``.

    The work lines write one more decimal than the grids, so the products add up to the sum
    (within one unit of its last decimal); past :data:`MAX_TERMS` allowed keys, the keys of
    largest weight are written out and the others are one term, the sum of their products.
    """
    rec, page = request.record, request.page
    head, query = request.mixing_head, request.query
    row_weights = as_array(rec.weights)[head, query]
    values = as_array(rec.value)[head]
    products = as_array(rec.weighted_values(head, query))
    mixture = as_array(rec.head_outputs)[head, query]
    blocked = np.isneginf(as_array(rec.mask)[query])
    allowed = [index for index in range(rec.n) if not blocked[index]]
    written = allowed if len(allowed) <= MAX_TERMS + 1 else sorted(sorted(allowed, key=lambda j: -row_weights[j])[:MAX_TERMS])
    hidden = [j for j in allowed if j not in written]
    terms = [MixingTerm(token_label(rec.tokens[j]), row_weights[j], values[j], products[j], j) for j in written]
    hidden_sum = products[hidden].sum(axis=0) if hidden else None
    lines = heading(page, f"Value mixing: query {token_label(rec.tokens[query], 24)!r} (position {query}), head {head}", formulas.MIXING)
    lines.append(Flow([
        matrix_piece(MatrixSpec(row_weights[:, None], rows_of(rec.tokens), ["w"], title="weight", ylabel="key",
                                blocked=blocked[:, None] if blocked.any() else None, blocked_filled=False),
                     weights_scale(), request.theme, page, "mixing_weights", request.decimals),
        operator(page, "\u00b7"),
        (matrix_piece(MatrixSpec(values, rows_of(rec.tokens), columns_of(rec, "value"), title=f"value v, head {head}", title_color=request.theme.value),
                      record_scale(rec, "value"), request.theme, page, "mixing_values", request.decimals) if not is_general(rec) else
         general_figures.mixing_values_piece(request, values, head)),
        operator(page, "\u2192"),
        _equation_piece(page, terms, len(hidden), hidden_sum, mixture, request.decimals, request.theme),
    ], rows=rec.n))
    lines.append(colorbar_line([weights_scale(), record_scale(rec, "value")], page))
    if is_general(rec):
        lines += general_figures.mixing_notes(request, values)
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    others = f"; {len(hidden)} keys of smaller weight are one term, the sum of their products" if hidden else ""
    lines.append(note(page, f"z = head_outputs[{head}, {query}], the sum of the weighted values of {len(allowed)} allowed key{'s' if len(allowed) > 1 else ''} "
                            f"(weights summing to 1){others}; work lines carry one more decimal than the grids; d_head = {rec.config.d_head}"))
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


def _equation_piece(page, terms: list[MixingTerm], hidden: int, hidden_sum, total, decimals: int, theme: Theme) -> Piece:
    """The sum written out, one line per term: ``key  w·(v) = (w·v)``, then ``+ k other keys = (…)``
    and the total ``z = (…)``; every line a Text labelled ``mixing_term:<key position>``,
    ``mixing_hidden`` or ``mixing_total``."""
    work = decimals + formulas.WORK_DECIMALS
    room = (page.content_width - 0.4) / 1.02  # beside the arrow before it
    for max_items, size in [(6, page.number), (6, MIN_PT), (4, MIN_PT), (2, MIN_PT)]:
        lines = _equation_lines(terms, hidden, hidden_sum, total, decimals, work, max_items)
        widths = [text_size_in(text, size if key != "mixing_total" else size * 1.1, MONO, weight="bold" if key == "mixing_total" else "normal")[0] for key, text in lines]
        if max(widths) <= room:
            break
    if max(widths) > room:  # still too wide (a narrow page, many decimals): each term's product on a line of its own
        lines = [(key, text if key == "mixing_total" else text.replace(" = ", "\n    = ", 1)) for key, text in lines]
        widths = [text_size_in(text, size if key != "mixing_total" else size * 1.1, MONO, weight="bold" if key == "mixing_total" else "normal")[0] for key, text in lines]
    width = max(widths) * 1.02 + 0.05
    pitch = size * 1.5 / POINTS_PER_INCH
    counts = [text.count("\n") + 1 for _, text in lines]
    height = pitch * sum(counts)

    def draw(figure, rect):
        x0, y0, w, h = rect
        figure_height = figure.get_size_inches()[1]
        step = pitch / figure_height
        texts = []
        above = 0
        for (key, text), count in zip(lines, counts):
            total_line = key == "mixing_total"
            texts.append(figure.text(x0, y0 + h - (above + count / 2) * step, text, ha="left", va="center", family=list(font_families(MONO)), parse_math=False,
                                     fontsize=size * (1.1 if total_line else 1.0), fontweight="bold" if total_line else "normal",
                                     color=theme.output if total_line else theme.text, label=key, linespacing=1.25))
            above += count
        return texts

    return fixed_piece(Slot(width, height, draw, key="mixing_equation", axes=False))


def _equation_lines(terms, hidden: int, hidden_sum, total, decimals: int, work: int, max_items: int) -> list[tuple[str, str]]:
    """(label, text) of each line of the written sum, aligned in columns (monospace)."""
    label_width = max([len(term.label) for term in terms] + [1])
    lefts, rights, keys = [], [], []
    for index, term in enumerate(terms):
        factor_decimals = formulas.product_decimals(term.weight, term.value, term.product, work)
        lefts.append(f"{'+' if index else ' '} {term.label:<{label_width}}  {format_number(term.weight, factor_decimals)}"
                     f"\u00b7{formulas.vector_text(term.value, factor_decimals, max_items)}")
        rights.append(formulas.vector_text(term.product, work, max_items))
        keys.append(f"mixing_term:{term.position}")
    if hidden:
        lefts.append(f"+ {hidden} other key{'s' if hidden > 1 else ''}")
        rights.append(formulas.vector_text(hidden_sum, work, max_items))
        keys.append("mixing_hidden")
    left_width = max(len(left) for left in lefts)
    lines = [(key, f"{left:<{left_width}} = {right}") for key, left, right in zip(keys, lefts, rights)]
    lines.append(("mixing_total", f"z = {formulas.vector_text(total, decimals, max_items)}"))
    return lines


def worked_example(request: FigureRequest) -> Figure:
    """Figure 12: scores (0, ln 3) → exp(s − max) (⅓, 1) → ÷ their sum 4/3 → weights (¼, ¾);
    ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Every number is :func:`blockviz.worked_example.worked_example`'s,
    computed by the block's own softmax (Vaswani et al. 2017, Eq. 1, one query, two keys)."""
    example = worked_numbers()
    scores, exp_scores, weights, values, products, mixture = (
        as_array(tensor) for tensor in (example.scores, example.exp_scores, example.weights, example.values, example.weighted_values, example.mixture))
    row_max, exp_sum = float(example.row_max), float(example.exp_sum)
    theme, decimals, page = request.theme, request.decimals, request.page
    signed = signed_scale(signed_limit([*scores, *exp_scores, *values.ravel(), *mixture]), label="scores, exp, values")
    keys = ["key 1", "key 2"]
    entries = feature_labels("d_head", values.shape[1])
    largest = 0.55 if page.width is None else page.largest_cell * 1.3
    softmax = TextLine([r"$\mathrm{softmax}(0,\ \ln 3) = \left(\frac{e^0}{e^0 + e^{\ln 3}},\ \frac{e^{\ln 3}}{e^0 + e^{\ln 3}}\right)$",
                        r"$= \left(\frac{1}{4},\ \frac{3}{4}\right)$"], page.formula, key="formula", math=True, joiner=" ")
    lines = heading(page, "Worked example: one query, two keys") + [softmax]
    lines.append(Flow([
        matrix_piece(MatrixSpec(scores[None, :], ["query"], keys, title="scores (0, ln 3)"), signed, theme, page, "example_scores", decimals),
        operator(page, f"\u2212 max {format_number(row_max, decimals)}, exp \u2192", scale=0.7),
        matrix_piece(MatrixSpec(exp_scores[None, :], ["query"], keys, title="exp(s \u2212 max)"), signed, theme, page, "example_exp_scores", decimals),
        operator(page, f"\u00f7 sum {format_number(exp_sum, decimals)} \u2192", scale=0.7),
        matrix_piece(MatrixSpec(weights[None, :], ["query"], keys, title="weights"), weights_scale(), theme, page, "example_weights", decimals),
    ], rows=1, largest_cell=largest))
    lines.append(Flow([
        matrix_piece(MatrixSpec(weights[None, :], ["query"], keys, title="weights", token_rows=False), weights_scale(), theme, page, "example_weights_again", decimals),
        operator(page, "\u00b7"),
        matrix_piece(MatrixSpec(values, keys, entries, title="values", title_color=theme.value, token_rows=False), signed, theme, page, "example_values", decimals),
        operator(page, "="),
        matrix_piece(MatrixSpec(mixture[None, :], ["query"], entries, title="mixture", title_color=theme.output, token_rows=False), signed, theme, page, "example_mixture", decimals),
    ], rows=2, largest_cell=largest))
    equation = formulas.mixture_equation(weights, values, mixture, decimals, products=products)
    first, *rest = equation.split(" = ")
    lines.append(TextLine([first] + ["= " + part for part in rest], page.number + 1, key="example_equation", family=MONO, words=False))
    lines.append(TextLine([r"$\frac{1}{4}\cdot(2,\ 0) + \frac{3}{4}\cdot(0,\ 4) = (0.5,\ 3)$"], page.formula + 1, math=True))
    lines.append(colorbar_line([signed, weights_scale()], page))
    lines.append(note(page, r"the larger score takes the larger share: $e^{\ln 3} = 3$ times $e^{0} = 1$; subtracting the max first changes no weight", math=True))
    return build_figure(lines, page)[0]
