"""Figures of the attention step: scores, mask, weights, every head, causal vs bidirectional.

In every n × n panel rows are queries and columns keys, both labelled with the tokens.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.heatmap import blocked_legend_handle, record_scale, weights_scale
from blockviz.figures.labels import text_size_in
from blockviz.figures.layout import Slot, build_figure, cell_size
from blockviz.figures.panels import MatrixSpec, colorbar_slot, colorbar_slots, matrix_slot
from blockviz.figures.parts import NOTE_PT, as_array, columns_of, feature_labels, heading, line_columns, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import NEG_INF_LABEL, OUTPUT_COLOR, VALUE_COLOR, Theme

QUERY_AXIS = "query"
KEY_AXIS = "key"


def scores(request: FigureRequest) -> Figure:
    """Figure 3: per head, the dot products ``scores`` ``(n, n)`` and ``scaled_scores`` = scores / √d_k,
    each on its own quantity's colour scale."""
    rec = request.record
    raw, scaled = as_array(rec.scores), as_array(rec.scaled_scores)
    raw_scale, scaled_scale = record_scale(rec, "scores"), record_scale(rec, "scaled_scores")
    cell = cell_size(rec.n, line_columns([rec.n, rec.n], operators=1, colorbars=2))
    divide = rf"$\div\sqrt{{{rec.config.d_head}}}$"
    lines = heading("Scores: every query's dot product with every key, then scaled", formulas.ATTENTION, formulas.SCORES)
    for head in request.heads:
        lines.append([
            matrix_slot(_square(rec, raw[head], f"q\u00b7k, head {head}"), raw_scale, request.theme, cell, f"scores[{head}]", request.decimals),
            operator(divide, math=True, size=12.0),
            matrix_slot(_square(rec, scaled[head], f"q\u00b7k / \u221ad_k, head {head}", rows=False), scaled_scale, request.theme, cell, f"scaled_scores[{head}]", request.decimals),
            *colorbar_slots([raw_scale, scaled_scale], rec.n * cell),
        ])
    lines.append([note(f"d_k = d_head = {rec.config.d_head}: dividing by \u221ad_k keeps the scores' spread near 1 (Vaswani et al. 2017, \u00a73.2.1)")])
    return build_figure(lines)[0]


def mask(request: FigureRequest) -> Figure:
    """Figure 4: per head, ``scaled_scores`` + ``mask`` M = ``masked_scores``, each ``(n, n)``
    (M, the same for every head, drawn once); blocked cells are grey, hatched and read "−∞",
    outside the colour scale."""
    rec = request.record
    scaled, masked, m = as_array(rec.scaled_scores), as_array(rec.masked_scores), as_array(rec.mask)
    blocked = np.isneginf(m)
    scaled_scale, masked_scale, mask_scale = (record_scale(rec, name) for name in ("scaled_scores", "masked_scores", "mask"))
    cell = cell_size(rec.n, line_columns([rec.n] * 3, operators=2, colorbars=1))  # masked scores share the scaled scores' scale
    formula = formulas.MASKED_SCORES if rec.config.causal else formulas.OPEN_MASK
    lines = heading("Mask: blocked keys become " + NEG_INF_LABEL, formula)
    for index, head in enumerate(request.heads):
        if index == 0:
            add_mask = [operator("+"), matrix_slot(_square(rec, m, "mask M", rows=False, blocked=blocked), mask_scale, request.theme, cell, "mask", request.decimals), operator("=")]
        else:
            add_mask = [operator("+ M =")]
        lines.append([
            matrix_slot(_square(rec, scaled[head], f"scaled scores, head {head}"), scaled_scale, request.theme, cell, f"scaled_scores[{head}]", request.decimals),
            *add_mask,
            matrix_slot(_square(rec, masked[head], f"masked scores, head {head}", rows=False, blocked=blocked), masked_scale, request.theme, cell, f"masked_scores[{head}]", request.decimals),
            *colorbar_slots([scaled_scale, masked_scale], rec.n * cell),
        ])
    if blocked.any():
        lines.append([legend_slot([blocked_legend_handle(request.theme)], request.theme)])
    else:
        lines.append([note("bidirectional: M is 0 everywhere, no key is blocked")])
    return build_figure(lines)[0]


def weights(request: FigureRequest) -> Figure:
    """Figure 5: per head, the softmax ``weights`` ``(n, n)`` on the fixed scale 0–1; blocked
    cells are hatched and read 0."""
    rec = request.record
    values = as_array(rec.weights)
    blocked = np.isneginf(as_array(rec.mask))
    cell = cell_size(rec.n, line_columns([rec.n] * len(request.heads), colorbars=1))
    lines = heading("Weights: softmax of each row of masked scores", formulas.WEIGHTS)
    lines.append(_weights_line(request, values, blocked, cell, "weights"))
    if blocked.any():
        lines.append([legend_slot([zero_weight_handle(request.theme)], request.theme)])
    return build_figure(lines)[0]


def multi_head(request: FigureRequest) -> Figure:
    """Figure 7: every head's ``weights`` ``(n, n)``; their outputs ``head_outputs`` ``(n, d_head)``
    side by side as ``concat`` ``(n, d_model)``, times ``W_O`` ``(d_model, d_model)`` plus ``b_O``,
    giving ``attn_out`` ``(n, d_model)``."""
    rec = request.record
    config = rec.config
    heads = list(range(config.n_heads))
    blocked = np.isneginf(as_array(rec.mask))
    top_cell = cell_size(rec.n, line_columns([rec.n] * len(heads), colorbars=1))
    lines = heading(f"Multi-head attention: {config.n_heads} heads side by side, then one output projection", formulas.MULTI_HEAD)
    lines.append(_weights_line(FigureRequest(rec, request.theme, decimals=request.decimals), as_array(rec.weights), blocked, top_cell, "weights"))
    outputs, concat = as_array(rec.head_outputs), as_array(rec.concat)
    w_o, b_o, attn_out = as_array(rec.params["attn.W_O"]), as_array(rec.params["attn.b_O"])[None, :], as_array(rec.attn_out)
    output_scale, w_o_scale, b_o_scale, attn_out_scale = (
        record_scale(rec, "head_outputs", label="z, concat"), record_scale(rec, "attn.W_O", label="W_O"),
        record_scale(rec, "attn.b_O", label="b_O"), record_scale(rec, "attn_out"))
    d, e = config.d_model, config.d_head
    model_columns = feature_labels("d_model", d)
    columns = [e] * len(heads) + [d, d, d, d]
    scales = [output_scale, w_o_scale, b_o_scale, attn_out_scale]
    cell = cell_size(max(rec.n, d), line_columns(columns, operators=len(heads) + 3, colorbars=sum(not scale.all_zero for scale in scales)))
    line: list[Slot] = []
    for head in heads:
        spec = MatrixSpec(outputs[head], rows_of(rec.tokens) if head == 0 else None, columns_of(rec, "head_outputs"), title=f"z, head {head}", title_color=VALUE_COLOR)
        line += [matrix_slot(spec, output_scale, request.theme, cell, f"head_outputs[{head}]", request.decimals), operator("," if head < heads[-1] else "\u2192", size=12.0)]
    line.append(matrix_slot(MatrixSpec(concat, rows_of(rec.tokens), columns_of(rec, "concat"), title="concat"), output_scale, request.theme, cell, "concat", request.decimals))
    line.append(operator("\u00b7"))
    line.append(matrix_slot(MatrixSpec(w_o, model_columns, model_columns, title="W_O"), w_o_scale, request.theme, cell, "W_O", request.decimals))
    line.append(operator("+"))
    line.append(matrix_slot(MatrixSpec(b_o, None, model_columns, title="b_O"), b_o_scale, request.theme, cell, "b_O", request.decimals))
    line.append(operator("="))
    line.append(matrix_slot(MatrixSpec(attn_out, None, columns_of(rec, "attn_out"), title="attn_out", title_color=OUTPUT_COLOR), attn_out_scale, request.theme, cell, "attn_out", request.decimals))
    line += colorbar_slots(scales, max(rec.n, d) * cell)
    lines.append(line)
    lines.append([note(f"z_h = weights_h \u00b7 V_h is n × d_head = {rec.n} × {e}; concat is n × d_model = {rec.n} × {d}; W_O is d_model × d_model = {d} × {d}")])
    return build_figure(lines)[0]


def causal_vs_bidirectional(request: FigureRequest) -> Figure:
    """Figure 11: per head, the weights ``(n, n)`` of the same sentence and parameters with the
    causal mask and without it (the second record computed by :func:`blockviz.record`)."""
    rec = request.record
    other = request.other_mask_record
    causal, bidirectional = (rec, other) if rec.config.causal else (other, rec)
    blocked = np.isneginf(as_array(causal.mask))
    cell = cell_size(rec.n, line_columns([rec.n] * 2, operators=0, colorbars=1))
    scale = weights_scale()
    lines = heading("Causal vs bidirectional: the same sentence, with and without the mask", formulas.WEIGHTS)
    causal_weights, open_weights = as_array(causal.weights), as_array(bidirectional.weights)
    for head in request.heads:
        lines.append([
            matrix_slot(_square(rec, causal_weights[head], f"causal (decoder), head {head}", blocked=blocked, filled=False), scale, request.theme, cell, f"causal[{head}]", request.decimals),
            matrix_slot(_square(rec, open_weights[head], f"bidirectional (encoder), head {head}", rows=False), scale, request.theme, cell, f"bidirectional[{head}]", request.decimals),
            colorbar_slot(scale, rec.n * cell),
        ])
    lines.append([legend_slot([zero_weight_handle(request.theme)], request.theme)])
    lines.append([note("without the mask every token also attends to the tokens after it, so every row's weights spread further")])
    return build_figure(lines)[0]


def zero_weight_handle(theme: Theme):
    """Legend entry for hatched weights: blocked by the mask, exactly 0."""
    from matplotlib.patches import Patch

    from blockviz.figures.heatmap import BLOCKED_HATCH

    return Patch(facecolor="none", edgecolor=theme.blocked_hatch, hatch=BLOCKED_HATCH, linewidth=0.0,
                 label=f"blocked by the mask (M = {NEG_INF_LABEL}): weight exactly 0")


def legend_slot(handles, theme: Theme) -> Slot:
    """A line holding a legend explaining ``handles``, drawn on the figure itself."""
    width = max(text_size_in(handle.get_label(), NOTE_PT)[0] for handle in handles) + 0.6
    height = 0.22 * len(handles) + 0.05

    def draw(figure, rect):
        x0, y0, w, h = rect
        return figure.legend(handles=handles, loc="center", bbox_to_anchor=(x0 + w / 2, y0 + h / 2), frameon=False,
                             fontsize=NOTE_PT, handlelength=2.2, handleheight=1.2, borderaxespad=0.0, borderpad=0.0)

    return Slot(width, height, draw, key="legend", axes=False)


def _weights_line(request: FigureRequest, values: np.ndarray, blocked: np.ndarray, cell: float, name: str) -> list[Slot]:
    rec = request.record
    scale = weights_scale()
    line = [
        matrix_slot(_square(rec, values[head], f"weights, head {head}", rows=index == 0, blocked=blocked if blocked.any() else None, filled=False),
                    scale, request.theme, cell, f"{name}[{head}]", request.decimals)
        for index, head in enumerate(request.heads)
    ]
    line.append(colorbar_slot(scale, rec.n * cell))
    return line


def _square(rec, values, title: str, rows: bool = True, blocked=None, filled: bool = True) -> MatrixSpec:
    labels = rows_of(rec.tokens)
    return MatrixSpec(values, labels if rows else None, labels, title=title, xlabel=KEY_AXIS,
                      ylabel=QUERY_AXIS if rows else "", blocked=blocked, blocked_filled=filled)
