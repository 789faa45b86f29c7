"""Figures of the attention step: scores, mask, weights, every head, causal vs bidirectional.

In every n × n panel rows are queries and columns keys, both labelled with the tokens.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.architecture import is_general
from blockviz.figures.heatmap import record_scale, weights_scale
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.page import DEFAULT_WIDTH
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, columns_of, feature_labels, heading, legend_lines, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import BLOCKED_SCORE_LABEL, NEG_INF_LABEL

QUERY_AXIS = "query"
KEY_AXIS = "key"


def scores(request: FigureRequest) -> Figure:
    """Figure 3: per head, the dot products ``scores`` ``(n, n)`` and ``scaled_scores`` = scores / √d_k,
    on the scores' one colour scale."""
    rec, page = request.record, request.page
    raw, scaled = as_array(rec.scores), as_array(rec.scaled_scores)
    raw_scale, scaled_scale = record_scale(rec, "scores"), record_scale(rec, "scaled_scores")
    divide = rf"$\div\sqrt{{{rec.config.d_head}}}$"
    lines = heading(page, "Scores: every query's dot product with every key, then scaled", formulas.ATTENTION, formulas.SCORES)
    for head in request.heads:
        lines.append(Flow([
            _matrix_piece(rec, _square(rec, raw[head], f"q\u00b7k, head {head}"), raw_scale, request.theme, page, f"scores[{head}]", request.decimals),
            operator(page, divide, math=True, scale=0.8),
            _matrix_piece(rec, _square(rec, scaled[head], f"q\u00b7k / \u221ad_k, head {head}"), scaled_scale, request.theme, page, f"scaled_scores[{head}]", request.decimals),
        ], rows=rec.n, share="scores"))
    lines.append(colorbar_line([raw_scale, scaled_scale], page))
    lines.append(note(page, f"d_k = d_head = {rec.config.d_head}: dividing by \u221ad_k keeps the scores' spread near 1 (Vaswani et al. 2017, \u00a73.2.1)"))
    return build_figure(lines, page)[0]


def mask(request: FigureRequest) -> Figure:
    """Figure 4: per head, ``scaled_scores`` + ``mask`` M = ``masked_scores``, each ``(n, n)``
    (M, the same for every head, drawn once); blocked cells are the blocked style and read "−∞",
    outside the colour scale."""
    rec, page = request.record, request.page
    scaled, masked, m = as_array(rec.scaled_scores), as_array(rec.masked_scores), as_array(rec.mask)
    blocked = np.isneginf(m)
    scaled_scale, masked_scale, mask_scale = (record_scale(rec, name) for name in ("scaled_scores", "masked_scores", "mask"))
    if rec.config.causal:
        lines = heading(page, "Mask: blocked keys become " + NEG_INF_LABEL, formulas.MASKED_SCORES)
        mask_title = "mask M"
    else:
        lines = heading(page, f"No mask: every key is visible ({_unmasked_kind(rec)})", formulas.OPEN_MASK)
        mask_title = "M = 0: no key blocked"
    for index, head in enumerate(request.heads):
        if index == 0:
            mask_piece = _matrix_piece(rec, _square(rec, m, mask_title, blocked=blocked), mask_scale, request.theme, page, "mask", request.decimals)
            if not rec.config.causal:
                mask_piece = _smaller(mask_piece, ZEROS_SHARE)
            add_mask = [operator(page, "+"), mask_piece, operator(page, "=")]
        else:
            add_mask = [operator(page, "+ M =", scale=0.8)]
        lines.append(Flow([
            _matrix_piece(rec, _square(rec, scaled[head], f"scaled scores, head {head}"), scaled_scale, request.theme, page, f"scaled_scores[{head}]", request.decimals),
            *add_mask,
            _matrix_piece(rec, _square(rec, masked[head], f"masked scores, head {head}", blocked=blocked), masked_scale, request.theme, page, f"masked_scores[{head}]", request.decimals),
        ], rows=rec.n, share="scores"))
    lines.append(colorbar_line([scaled_scale, masked_scale], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_SCORE_TEXT, filled=True)
    elif rec.config.causal:
        lines.append(note(page, "one token: its only key is itself, so the causal mask blocks nothing (M is 0)"))
    else:
        lines.append(note(page, f"{_unmasked_kind(rec)}: M is 0 everywhere, so the masked scores equal the scaled scores; "
                                "a decoder's causal mask would make every key after its query " + NEG_INF_LABEL))
    return build_figure(lines, page)[0]


ZEROS_SHARE = 0.5
"""An all-zero mask M (no mask) is drawn with cells this share of the scores' size: it says only "0"."""


def _smaller(piece, share: float):
    """``piece`` with cells ``share`` of the size its flow gives the others (rows ``share`` as far apart: cells of the same shape)."""
    import dataclasses

    make = piece.make
    return dataclasses.replace(piece, make=lambda cell, first, pitch: make(cell * share, first, pitch * share), columns=piece.columns * share)


def _unmasked_kind(rec) -> str:
    """What a record without a mask is: "bidirectional encoder" for a trained encoder's layer."""
    return "bidirectional encoder" if rec.source.is_model else "bidirectional"


def weights(request: FigureRequest) -> Figure:
    """Figure 5: per head, the softmax ``weights`` ``(n, n)`` on the fixed scale 0–1 (coloured by √weight); blocked
    cells are the blocked grey and read 0."""
    rec, page = request.record, request.page
    values = as_array(rec.weights)
    blocked = np.isneginf(as_array(rec.mask))
    lines = heading(page, "Weights: softmax of each row of masked scores", formulas.WEIGHTS)
    lines.append(_weights_flow(request, values, blocked, "weights"))
    lines.append(colorbar_line([weights_scale()], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    return build_figure(lines, page)[0]


def multi_head(request: FigureRequest) -> Figure:
    """Figure 7: every head's ``weights`` ``(n, n)``; their outputs ``head_outputs`` ``(n, d_head)``
    side by side as ``concat`` ``(n, d_model)``, times ``W_O`` ``(d_model, d_model)`` plus ``b_O``,
    giving ``attn_out`` ``(n, d_model)``."""
    if is_general(request.record):
        from blockviz.figures import general_figures

        return general_figures.multi_head(request)
    rec, page = request.record, request.page
    config = rec.config
    heads = list(range(config.n_heads))
    blocked = np.isneginf(as_array(rec.mask))
    lines = heading(page, f"Multi-head attention: {config.n_heads} heads side by side, then one output projection", formulas.MULTI_HEAD)
    everything = FigureRequest(rec, request.theme, decimals=request.decimals, width=request.width)
    lines.append(_weights_flow(everything, as_array(rec.weights), blocked, "weights"))
    outputs, concat = as_array(rec.head_outputs), as_array(rec.concat)
    w_o, b_o, attn_out = as_array(rec.params["attn.W_O"]), as_array(rec.params["attn.b_O"])[None, :], as_array(rec.attn_out)
    output_scale, w_o_scale, b_o_scale, attn_out_scale = (
        record_scale(rec, "head_outputs"), record_scale(rec, "attn.W_O", label="W_O, b_O"),
        record_scale(rec, "attn.b_O", label="W_O, b_O"), record_scale(rec, "attn_out"))
    d = config.d_model
    model_columns = feature_labels("d_model", d)
    narrow = page.width is not None and page.width < DEFAULT_WIDTH  # operators stand close: z, z → concat share a row, so do W_O and + b_O
    pieces = []
    for head in heads:
        spec = MatrixSpec(outputs[head], rows_of(rec.tokens), columns_of(rec, "head_outputs"), title=f"z, head {head}", title_color=request.theme.output)
        if head:
            pieces.append(operator(page, ",", hug=narrow))
        pieces.append(matrix_piece(spec, output_scale, request.theme, page, f"head_outputs[{head}]", request.decimals))
    pieces.append(operator(page, "\u2192", hug=narrow))
    pieces.append(matrix_piece(MatrixSpec(concat, rows_of(rec.tokens), columns_of(rec, "concat"), title="concat", title_color=request.theme.output),
                               output_scale, request.theme, page, "concat", request.decimals))
    pieces.append(operator(page, "\u00b7", hug=narrow))
    pieces.append(matrix_piece(MatrixSpec(w_o, model_columns, model_columns, title="W_O", token_rows=False), w_o_scale, request.theme, page, "W_O", request.decimals))
    pieces.append(operator(page, "+", hug=narrow))
    pieces.append(matrix_piece(MatrixSpec(b_o, None, model_columns, title="b_O", token_rows=False), b_o_scale, request.theme, page, "b_O", request.decimals))
    pieces.append(operator(page, "=", hug=narrow))
    pieces.append(matrix_piece(MatrixSpec(attn_out, rows_of(rec.tokens), columns_of(rec, "attn_out"), title="attn_out", title_color=request.theme.output),
                               attn_out_scale, request.theme, page, "attn_out", request.decimals))
    lines.append(Flow(pieces, rows=max(rec.n, d)))
    lines.append(colorbar_line([weights_scale(), output_scale, w_o_scale, b_o_scale, attn_out_scale], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    lines.append(note(page, f"z_h = weights_h \u00b7 V_h is n × d_head = {rec.n} × {config.d_head}; concat is n × d_model = {rec.n} × {d}; "
                            f"W_O is d_model × d_model = {d} × {d}"))
    return build_figure(lines, page)[0]


def causal_vs_bidirectional(request: FigureRequest) -> Figure:
    """Figure 11: per head, the weights ``(n, n)`` of the same sentence and parameters with the
    causal mask and without it (the second record computed by :func:`blockviz.record`)."""
    rec, page = request.record, request.page
    other = request.other_mask_record
    causal, bidirectional = (rec, other) if rec.config.causal else (other, rec)
    blocked = np.isneginf(as_array(causal.mask))
    scale = weights_scale()
    lines = heading(page, "Causal vs bidirectional: the same sentence, with and without the mask", formulas.WEIGHTS)
    causal_weights, open_weights = as_array(causal.weights), as_array(bidirectional.weights)
    trained = rec.source.is_model
    causal_what = "decoder" if rec.config.causal or not trained else HYPOTHETICAL
    open_what = "encoder" if not rec.config.causal or not trained else HYPOTHETICAL
    for head in request.heads:
        lines.append(Flow([
            matrix_piece(_square(rec, causal_weights[head], f"causal ({causal_what}), head {head}", blocked=blocked, filled=False), scale, request.theme, page, f"causal[{head}]", request.decimals),
            matrix_piece(_square(rec, open_weights[head], f"bidirectional ({open_what}), head {head}"), scale, request.theme, page, f"bidirectional[{head}]", request.decimals),
        ], rows=rec.n, share="weights"))
    lines.append(colorbar_line([scale], page))
    lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    if trained:
        lines.append(note(page, hypothetical_note(rec), key="hypothetical"))
    lines.append(note(page, "without the mask every token can also attend to the tokens after it" + ("" if trained else ", so every row's weights spread further")))
    return build_figure(lines, page)[0]


HYPOTHETICAL = "hypothetical"
"""How the title of a trained model's other-mask panel marks it: not how the model was trained."""


def hypothetical_note(rec) -> str:
    """What the other-mask half of a trained model's layer is: the same weights with the mask it
    was not trained with."""
    name = model_name(rec)
    if rec.config.causal:
        return (f"bidirectional ({HYPOTHETICAL}): what the same weights would give without the mask \u2014 {name} was trained causal "
                "(a decoder), so only the causal half is the model's own attention")
    return (f"causal ({HYPOTHETICAL}): what the same weights would give with a causal mask \u2014 {name} was trained bidirectional "
            "(an encoder), so only the bidirectional half is the model's own attention")


PACKAGED_NAMES = {"minilm": "MiniLM", "smollm2": "SmolLM2"}
"""How the packaged models are named in figures."""


def model_name(rec) -> str:
    """The trained model a record's layer comes from, as a reader knows it ("MiniLM", a folder's name)."""
    from pathlib import PurePath

    model = rec.source.model or "the model"
    return PACKAGED_NAMES.get(model, PurePath(model).name or model)


BLOCKED_SCORE_TEXT = f"{BLOCKED_SCORE_LABEL}: blocked by the mask M (a key after its query); its weight is exactly 0"
BLOCKED_WEIGHT_TEXT = f"0: blocked by the mask (M = {NEG_INF_LABEL}), weight exactly 0"


def _weights_flow(request: FigureRequest, values: np.ndarray, blocked: np.ndarray, name: str) -> Flow:
    rec, page = request.record, request.page
    scale = weights_scale()
    return Flow([
        matrix_piece(_square(rec, values[head], f"weights, head {head}", blocked=blocked if blocked.any() else None, filled=False),
                     scale, request.theme, page, f"{name}[{head}]", request.decimals)
        for head in request.heads
    ], rows=rec.n)


def _matrix_piece(rec, spec: MatrixSpec, *args):
    """:func:`matrix_piece`; another block's record writes each number to fit its cell
    (:func:`blockviz.figures.elision.fitted_piece`: a trained model's scores reach ±60)."""
    if is_general(rec):
        from blockviz.figures.elision import fitted_piece

        return fitted_piece(spec, *args)
    return matrix_piece(spec, *args)


def _square(rec, values, title: str, blocked=None, filled: bool = True) -> MatrixSpec:
    """An n × n panel of queries × keys. Blockviz's own block keeps its numbers (the lesson's
    hand-checkable arithmetic) in cells up to a table's shape; a trained model's layer (16+
    tokens, scores to ±60) keeps square-ish cells with every row named, colour alone when its
    numbers would need strips."""
    labels = rows_of(rec.tokens)
    return MatrixSpec(values, labels, labels, title=title, xlabel=KEY_AXIS, ylabel=QUERY_AXIS, blocked=blocked, blocked_filled=filled,
                      square_cells=True, numbers_first=not is_general(rec))
