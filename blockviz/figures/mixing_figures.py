"""Value mixing written out: one query's weighted sum of value vectors, from the record, and
the hand-worked example it generalises."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.attention_figures import legend_slot, zero_weight_handle
from blockviz.figures.heatmap import record_scale, signed_scale, weights_scale
from blockviz.figures.labels import POINTS_PER_INCH, text_size_in, token_label, widest_in
from blockviz.figures.layout import Slot, build_figure, cell_size, text_slot
from blockviz.figures.panels import MatrixSpec, matrix_slot
from blockviz.figures.parts import as_array, columns_of, feature_labels, heading, line_columns, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import OUTPUT_COLOR, VALUE_COLOR, Theme, format_number, signed_limit
from blockviz.worked_example import worked_example as worked_numbers

MONO = "monospace"
ONE_LINE_TERMS = 4
"""Up to this many terms the sum is also written on one line."""


def value_mixing(request: FigureRequest) -> Figure:
    """Figure 6: for one query i and head h, ``weights[h, i, :]`` ``(n,)`` times the values
    ``value[h]`` ``(n, d_head)``: each term with its product (:meth:`BlockRecord.weighted_values`)
    on its key's row, and their sum ``head_outputs[h, i]``."""
    rec = request.record
    head, query = request.mixing_head, request.query
    row_weights = as_array(rec.weights)[head, query]
    values = as_array(rec.value)[head]
    products = as_array(rec.weighted_values(head, query))
    mixture = as_array(rec.head_outputs)[head, query]
    blocked = np.isneginf(as_array(rec.mask)[query])
    allowed = [index for index in range(rec.n) if not blocked[index]]
    terms = formulas.product_terms(row_weights[allowed], values[allowed], products[allowed], request.decimals)
    cell = cell_size(rec.n, line_columns([1, rec.config.d_head, 20], operators=2))
    lines = heading(f"Value mixing: query {token_label(rec.tokens[query], 24)!r} (position {query}), head {head}", formulas.MIXING)
    lines.append([
        matrix_slot(MatrixSpec(row_weights[:, None], rows_of(rec.tokens), ["w"], title="weight", ylabel="key",
                               blocked=blocked[:, None] if blocked.any() else None, blocked_filled=False),
                    weights_scale(), request.theme, cell, "mixing_weights", request.decimals),
        operator("\u00b7"),
        matrix_slot(MatrixSpec(values, None, columns_of(rec, "value"), title=f"value v, head {head}", title_color=VALUE_COLOR),
                    record_scale(rec, "value"), request.theme, cell, "mixing_values", request.decimals),
        operator("\u2192", size=12.0),
        _equation_slot(rec.n, cell, allowed, terms, "z = " + formulas.vector_text(mixture, request.decimals), request.theme),
    ])
    if len(terms) <= ONE_LINE_TERMS:
        lines.append([_mono_slot(formulas.mixture_equation(row_weights[allowed], values[allowed], mixture, request.decimals), 10.0, "mixing_one_line")])
    if blocked.any():
        lines.append([legend_slot([zero_weight_handle(request.theme)], request.theme)])
    lines.append([note(f"z = head_outputs[{head}, {query}], the sum of the weighted values: {len(allowed)} allowed key{'s' if len(allowed) > 1 else ''}, "
                       f"weights summing to 1; d_head = {rec.config.d_head}")])
    return build_figure(lines)[0]


def worked_example(request: FigureRequest) -> Figure:
    """Figure 12: scores (0, ln 3) → exp(s − max) (⅓, 1) → ÷ their sum 4/3 → weights (¼, ¾);
    ¼·(2, 0) + ¾·(0, 4) = (0.5, 3). Every number is :func:`blockviz.worked_example.worked_example`'s,
    computed by the block's own softmax (Vaswani et al. 2017, Eq. 1, one query, two keys)."""
    example = worked_numbers()
    scores, exp_scores, weights, values, products, mixture = (
        as_array(tensor) for tensor in (example.scores, example.exp_scores, example.weights, example.values, example.weighted_values, example.mixture))
    row_max, exp_sum = float(example.row_max), float(example.exp_sum)
    theme, decimals = request.theme, request.decimals
    signed = signed_scale(signed_limit([*scores, *exp_scores, *values.ravel(), *mixture]))
    keys = ["key 1", "key 2"]
    entries = feature_labels("d_head", values.shape[1])
    cell = 0.55
    lines = heading("Worked example: one query, two keys", r"$\mathrm{softmax}(0,\ \ln 3) = \left(\frac{e^0}{e^0 + e^{\ln 3}},\ \frac{e^{\ln 3}}{e^0 + e^{\ln 3}}\right) = \left(\frac{1}{4},\ \frac{3}{4}\right)$")
    lines.append([
        matrix_slot(MatrixSpec(scores[None, :], ["query"], keys, title="scores (0, ln 3)"), signed, theme, cell, "example_scores", decimals),
        operator(f"\u2212 max {format_number(row_max, decimals)}, exp \u2192", size=10.0),
        matrix_slot(MatrixSpec(exp_scores[None, :], None, keys, title="exp(s \u2212 max)"), signed, theme, cell, "example_exp_scores", decimals),
        operator(f"\u00f7 sum {format_number(exp_sum, decimals)} \u2192", size=10.0),
        matrix_slot(MatrixSpec(weights[None, :], None, keys, title="weights"), weights_scale(), theme, cell, "example_weights", decimals),
    ])
    lines.append([
        matrix_slot(MatrixSpec(weights[None, :], ["query"], keys, title="weights"), weights_scale(), theme, cell, "example_weights_again", decimals),
        operator("\u00b7"),
        matrix_slot(MatrixSpec(values, keys, entries, title="values", title_color=VALUE_COLOR), signed, theme, cell, "example_values", decimals),
        operator("="),
        matrix_slot(MatrixSpec(mixture[None, :], ["query"], entries, title="mixture", title_color=OUTPUT_COLOR), signed, theme, cell, "example_mixture", decimals),
    ])
    lines.append([_mono_slot(formulas.mixture_equation(weights, values, mixture, decimals, products=products), 11.0, "example_equation")])
    lines.append([operator(r"$\frac{1}{4}\cdot(2,\ 0) + \frac{3}{4}\cdot(0,\ 4) = (0.5,\ 3)$", math=True, size=12.0)])
    lines.append([note(r"the larger score takes the larger share: $e^{\ln 3} = 3$ times $e^{0} = 1$; subtracting the max first changes no weight", math=True)])
    return build_figure(lines)[0]


def _equation_slot(n: int, cell: float, allowed: list[int], terms: list[str], total: str, theme: Theme) -> Slot:
    """The sum written one term per allowed key, each on its key's row, then the total below."""
    size = round(min(9.0, 0.62 * cell * POINTS_PER_INCH), 2)
    lines = {row: ("  " if index == 0 else "+ ") + term for index, (row, term) in enumerate(zip(allowed, terms))}
    result = total
    width = widest_in(list(lines.values()) + [result], size, MONO) + 0.1
    line_height = text_size_in("Ag", size, MONO)[1]

    def draw(ax: Axes):
        ax.set_label("mixing_equation")
        ax.set_axis_off()
        ax.set_xlim(0, 1)
        ax.set_ylim(n - 0.5, -0.5)
        texts = [ax.text(0.0, row, text, ha="left", va="center", fontsize=size, family=MONO, parse_math=False) for row, text in lines.items()]
        for row in range(n):
            if row not in lines:
                texts.append(ax.text(0.0, row, "  blocked: weight 0", ha="left", va="center", fontsize=size, family=MONO, color=theme.muted_text, parse_math=False))
        texts.append(ax.text(0.0, n - 0.5 + max(0.6, 1.5 * line_height / cell), result, ha="left", va="center", fontsize=size * 1.1,
                             family=MONO, fontweight="bold", color=OUTPUT_COLOR, parse_math=False, clip_on=False))
        return texts

    return Slot(width * 1.1, n * cell, draw, key="mixing_equation", bottom=max(0.6 * cell, 1.5 * line_height) + line_height)


def _mono_slot(text: str, size: float, key: str) -> Slot:
    return text_slot(text, size, key=key, family=MONO)
