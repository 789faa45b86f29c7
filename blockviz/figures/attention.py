"""Figures of the attention step: scores, mask, weights, every head with the output
projection, causal vs bidirectional.

In every n × n panel rows are queries and columns keys, both labelled with the tokens.
blockviz's own block keeps each panel's numbers (the lesson's hand-checkable arithmetic); a
trained model's layer (16+ tokens, scores to ±60) or a block of another architecture keeps
square-ish cells, colour alone when its numbers would not fit (:func:`_square`).
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePath

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import architecture as arch
from blockviz.figures import formulas
from blockviz.figures.elision import (
    GAP,
    ROW_GAP,
    choose_columns,
    elided_matrix_piece,
    elided_piece,
    fitted_piece,
    numbers_flow,
)
from blockviz.figures.heatmap import record_scale, shown_scale, weights_scale
from blockviz.figures.labels import token_named
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.page import DEFAULT_WIDTH
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import (
    BLOCKED_SCORE_TEXT,
    BLOCKED_WEIGHT_TEXT,
    as_array,
    colorbar_line,
    feature_labels,
    field_panel,
    heading,
    hidden_notes,
    legend_lines,
    note,
    operator,
    rows_of,
    shared_columns,
    titled,
)
from blockviz.figures.request import FigureRequest
from blockviz.style import NEG_INF_LABEL
from blockviz.symbols import symbol

QUERY_AXIS = "query"
KEY_AXIS = "key"


def scores(request: FigureRequest) -> Figure:
    """Figure 3: per head, the dot products ``scores`` ``(n, n)`` and ``scaled_scores`` = scores / √d_k,
    on the scores' one colour scale."""
    rec, page = request.record, request.page
    raw, scaled = as_array(rec.scores), as_array(rec.scaled_scores)
    heads, open_cells = list(request.heads), as_array(rec.mask) == 0
    raw_scale = shown_scale("scores", raw[heads], rec=rec)
    # the cells the mask lets through
    scaled_scale = shown_scale("scaled_scores", scaled[heads][:, open_cells], rec=rec)
    divide = rf"$\div\sqrt{{{rec.config.d_head}}}$"
    lines = heading(
        page,
        titled("scores", "every query's dot product with every key, then scaled"),
        formulas.ATTENTION,
        formulas.SCORES,
    )
    for head in request.heads:
        lines.append(
            Flow(
                [
                    fitted_piece(
                        _square(rec, raw[head], f"q\u00b7k, head {head}"),
                        raw_scale,
                        request.theme,
                        page,
                        f"scores[{head}]",
                        request.decimals,
                    ),
                    operator(page, divide, math=True, scale=0.8),
                    fitted_piece(
                        _square(rec, scaled[head], f"q\u00b7k / \u221a{rec.config.d_head}, head {head}"),
                        scaled_scale,
                        request.theme,
                        page,
                        f"scaled_scores[{head}]",
                        request.decimals,
                    ),
                ],
                rows=rec.n,
                share="scores",
            )
        )
    lines.append(colorbar_line([raw_scale, scaled_scale], page))
    lines.append(
        note(
            page,
            f"each head's width is {rec.config.d_head}: dividing by its root keeps the scores' spread near 1 (Vaswani et al. 2017, \u00a73.2.1)",
        )
    )
    return build_figure(lines, page)[0]


def mask(request: FigureRequest) -> Figure:
    """Figure 4: per head, ``scaled_scores`` + ``mask`` M = ``masked_scores``, each ``(n, n)``
    (M, the same for every head, drawn once); blocked cells are the blocked style and read "−∞",
    outside the colour scale."""
    rec, page = request.record, request.page
    scaled, masked, m = as_array(rec.scaled_scores), as_array(rec.masked_scores), as_array(rec.mask)
    blocked = np.isneginf(m)
    heads = list(request.heads)
    # the blocked cells are drawn as blocked
    scaled_scale = shown_scale("scaled_scores", scaled[heads][:, ~blocked], rec=rec)
    masked_scale, mask_scale = scaled_scale, record_scale(rec, "mask")
    if rec.config.causal:
        lines = heading(page, titled("mask", f"blocked keys become {NEG_INF_LABEL}"), formulas.MASKED_SCORES)
        mask_title = "mask M"
    else:
        lines = heading(page, f"No mask: every key is visible ({_unmasked_kind(rec)})", formulas.OPEN_MASK)
        mask_title = "M = 0: no key blocked"
    for index, head in enumerate(request.heads):
        if index == 0:
            mask_piece = fitted_piece(
                _square(rec, m, mask_title, blocked=blocked), mask_scale, request.theme, page, "mask", request.decimals
            )
            if not rec.config.causal:
                mask_piece = _smaller(mask_piece, ZEROS_SHARE)
            add_mask = [operator(page, "+"), mask_piece, operator(page, "=")]
        else:
            add_mask = [operator(page, "+ M =", scale=0.8)]
        lines.append(
            Flow(
                [
                    fitted_piece(
                        _square(rec, scaled[head], f"scaled scores, head {head}"),
                        scaled_scale,
                        request.theme,
                        page,
                        f"scaled_scores[{head}]",
                        request.decimals,
                    ),
                    *add_mask,
                    fitted_piece(
                        _square(rec, masked[head], f"masked scores, head {head}", blocked=blocked),
                        masked_scale,
                        request.theme,
                        page,
                        f"masked_scores[{head}]",
                        request.decimals,
                    ),
                ],
                rows=rec.n,
                share="scores",
            )
        )
    lines.append(colorbar_line([scaled_scale], page))  # one scale: the masked scores are the scaled ones M lets through
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_SCORE_TEXT, filled=True)
    elif rec.config.causal:
        lines.append(note(page, "one token: its only key is itself, so the causal mask blocks nothing (M is 0)"))
    else:
        lines.append(
            note(
                page,
                f"{_unmasked_kind(rec)}: M is 0 everywhere, so the masked scores equal the scaled scores; "
                "a decoder's causal mask would make every key after its query " + NEG_INF_LABEL,
            )
        )
    return build_figure(lines, page)[0]


ZEROS_SHARE = 0.5
"""An all-zero mask M (no mask) is drawn with cells this share of the scores' size: it says only "0"."""


def _smaller(piece, share: float):
    """``piece`` with cells ``share`` of the size its flow gives the others (rows ``share`` as far apart: cells of the same shape)."""
    make = piece.make
    return dataclasses.replace(
        piece, make=lambda cell, first, pitch: make(cell * share, first, pitch * share), columns=piece.columns * share
    )


def _unmasked_kind(rec) -> str:
    """What a record without a mask is: "bidirectional encoder" for a trained encoder's layer."""
    return "bidirectional encoder" if rec.source.is_model else "bidirectional"


def weights(request: FigureRequest) -> Figure:
    """Figure 5: per head, the softmax ``weights`` ``(n, n)`` on the fixed scale 0–1 (coloured by √weight); blocked
    cells are the blocked grey and read 0."""
    rec, page = request.record, request.page
    values = as_array(rec.weights)
    blocked = np.isneginf(as_array(rec.mask))
    lines = heading(page, titled("weights", "softmax of each row of masked scores"), formulas.WEIGHTS)
    lines.append(_weights_flow(request, values, blocked, "weights"))
    lines.append(colorbar_line([weights_scale()], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    return build_figure(lines, page)[0]


def multi_head(request: FigureRequest) -> Figure:
    """The heads' weights (the chosen ones; every head on request), each head's output z, the
    concatenation ``(n, d_model)``, and the output projection to ``attn_out``."""
    rec, page = request.record, request.page
    c = rec.config
    heads = request.heads
    blocked = np.isneginf(as_array(rec.mask))
    together = (
        "side by side"
        if len(heads) == c.n_heads
        else f"(head {heads[0]} shown)"
        if len(heads) == 1
        else f"(heads {', '.join(map(str, heads))} shown)"
    )
    lines = heading(
        page,
        titled("multi-head", f"{c.n_heads} heads {together}, then one output projection"),
        arch.multi_head_formula(rec),
    )
    weights_flow = _weights_flow(request, as_array(rec.weights), blocked, "weights")
    weights_flow.largest_cell = (
        (0.16 if len(heads) <= 3 else 0.08) if page.width is not None else None
    )  # colour alone here: the weights figure writes them out
    lines.append(weights_flow)
    output_scale = record_scale(rec, "head_outputs")
    small = c.d_model <= 12  # W_O whole, on the line of z and concat
    hug = (
        small and page.width is not None and page.width < DEFAULT_WIDTH
    )  # operators stand close: z, z → concat share a row, so do W_O and + b_O
    pieces = []
    noted = []
    z_heads = heads if len(heads) <= 3 else heads[:1]  # every head's z is in concat
    for index, head in enumerate(z_heads):
        z = as_array(rec.head_outputs)[head]
        columns = choose_columns([z], c.d_head)
        noted.append((columns, "d_head"))
        if index:
            pieces.append(operator(page, ",", hug=hug))
        pieces.append(
            field_panel(
                request,
                "head_outputs",
                columns,
                f"z, head {head}",
                values=z,
                role="output",
                key=f"head_outputs[{head}]",
                scale=output_scale,
            )
        )
    concat_columns = shared_columns(rec, ["concat"])
    out_columns = shared_columns(rec, ["attn_out"])
    pieces += [
        operator(page, "\u2192", hug=hug),
        field_panel(request, "concat", concat_columns, "concat", role="output"),
    ]
    bias = "attn.b_O" in rec.params
    w_o_scale = record_scale(rec, "attn.W_O", label="W_O, b_O" if bias else "W_O")
    if small:
        model_columns = feature_labels("d_model", c.d_model)
        pieces += [
            operator(page, "\u00b7", hug=hug),
            matrix_piece(
                MatrixSpec(
                    as_array(rec.params["attn.W_O"]), model_columns, model_columns, title="W_O", token_rows=False
                ),
                w_o_scale,
                request.theme,
                page,
                "W_O",
                request.decimals,
            ),
        ]
        if bias:
            pieces += [
                operator(page, "+", hug=hug),
                matrix_piece(
                    MatrixSpec(
                        as_array(rec.params["attn.b_O"])[None, :], None, model_columns, title="b_O", token_rows=False
                    ),
                    w_o_scale,
                    request.theme,
                    page,
                    "b_O",
                    request.decimals,
                ),
            ]
        pieces.append(operator(page, "=", hug=hug))
    else:  # wide: z → concat on one line, the projection on the next, W_O at concat's columns (its rows) and the output's
        lines += numbers_flow(pieces, rec.n, page)
        labels = feature_labels("d_model", c.d_model)
        pieces = [
            operator(page, "concat \u00b7", scale=0.7),
            elided_matrix_piece(
                as_array(rec.params["attn.W_O"]),
                concat_columns,
                out_columns,
                labels,
                labels,
                w_o_scale,
                request.theme,
                page,
                "W_O",
                request.decimals,
                title="W_O",
            ),
        ]
        if bias:
            pieces += [
                operator(page, "+"),
                elided_piece(
                    as_array(rec.params["attn.b_O"])[None, :],
                    out_columns,
                    None,
                    labels,
                    w_o_scale,
                    request.theme,
                    page,
                    "b_O",
                    request.decimals,
                    title="b_O",
                    token_rows=False,
                ),
            ]
        pieces.append(operator(page, "="))
    pieces.append(field_panel(request, "attn_out", out_columns, symbol("attn_out", rec), role="output"))
    if small:
        lines.append(Flow(pieces, rows=max(rec.n, c.d_model)))
    else:
        lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([weights_scale(), output_scale, record_scale(rec, "attn_out"), w_o_scale], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    lines += hidden_notes(page, noted + [(concat_columns, "d_model")])
    rest = (
        ""
        if small
        else (
            f"; the output weights are {c.d_model} × {c.d_model}, the width × the width: their rows shown are concat's columns, their columns the output's "
            f"({c.d_model - len(concat_columns.shown)} rows and {c.d_model - len(out_columns.shown)} columns hidden, "
            f"{ROW_GAP} and {GAP})"
        )
    )
    if len(z_heads) < len(heads):
        rest += f"; z of head {z_heads[0]} drawn, every head's z is in concat"
    lines.append(
        note(
            page,
            f"each head's z (its weights times its values) is {rec.n} × {c.d_head}, tokens × each head's width; concat is {rec.n} × {c.d_model}, tokens × the width: "
            f"head h's z is its columns h\u00b7{c.d_head} \u2026 h\u00b7{c.d_head} + {c.d_head - 1}{rest}; "
            "--all-heads draws every head's weights",
        )
    )
    return build_figure(lines, page)[0]


def causal_vs_bidirectional(request: FigureRequest) -> Figure:
    """Figure 11: per head, the weights ``(n, n)`` of the same sentence and parameters with the
    causal mask and without it (the second record computed by :func:`blockviz.record`)."""
    rec, page = request.record, request.page
    other = request.other_mask_record
    causal, bidirectional = (rec, other) if rec.config.causal else (other, rec)
    blocked = np.isneginf(as_array(causal.mask))
    scale = weights_scale()
    lines = heading(
        page, titled("causal-vs-bidirectional", "the same sentence, with and without the mask"), formulas.WEIGHTS
    )
    causal_weights, open_weights = as_array(causal.weights), as_array(bidirectional.weights)
    trained = rec.source.is_model
    causal_what = "decoder" if rec.config.causal or not trained else HYPOTHETICAL
    open_what = "encoder" if not rec.config.causal or not trained else HYPOTHETICAL
    for head in request.heads:
        lines.append(
            Flow(
                [
                    matrix_piece(
                        _square(
                            rec,
                            causal_weights[head],
                            f"causal ({causal_what}), head {head}",
                            blocked=blocked,
                            filled=False,
                        ),
                        scale,
                        request.theme,
                        page,
                        f"causal[{head}]",
                        request.decimals,
                    ),
                    matrix_piece(
                        _square(rec, open_weights[head], f"bidirectional ({open_what}), head {head}"),
                        scale,
                        request.theme,
                        page,
                        f"bidirectional[{head}]",
                        request.decimals,
                    ),
                ],
                rows=rec.n,
                share="weights",
            )
        )
    lines.append(colorbar_line([scale], page))
    lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    if trained:
        lines.append(note(page, hypothetical_note(rec), key="hypothetical"))
    lines.append(
        note(
            page,
            "without the mask every token can also attend to the tokens after it"
            + ("" if trained else unmasked_rows_phrase(rec, open_weights, request.heads)),
        )
    )
    return build_figure(lines, page)[0]


def rows_reaching_later(open_weights: np.ndarray, heads: list[int]) -> list[int]:
    """The queries whose unmasked weights ``(n_heads, n, n)`` put weight above 0 on a key after
    them in one of ``heads``: the rows the mask changes (``Σ_{j > i} weights[h, i, j] > 0``).
    The last token has no key after it: its row is the same either way."""
    n = open_weights.shape[-1]
    later = np.triu(np.ones((n, n), dtype=bool), k=1)
    reaching = (np.where(later, open_weights[list(heads)], 0.0) > 0).any(axis=(0, 2))
    return [int(i) for i in np.flatnonzero(reaching)]


def unmasked_rows_phrase(rec, open_weights: np.ndarray, heads: list[int]) -> str:
    """The end of the note on the unmasked panel: which rows the numbers show spreading to later
    keys (:func:`rows_reaching_later`), the last token's named as the same either way; ``""``
    when none does."""
    rows = rows_reaching_later(open_weights, heads)
    if not rows:
        return ""
    if rows == list(range(rec.n - 1)):
        last = token_named(rec.tokens[-1])
        return f", so every row but the last spreads its weights further ({last} sees every key either way)"
    named = ", ".join(token_named(rec.tokens[i]) for i in rows)
    return f", so the rows of {named} spread their weights further"


HYPOTHETICAL = "hypothetical"
"""How the title of a trained model's other-mask panel marks it: not how the model was trained."""


def hypothetical_note(rec) -> str:
    """What the other-mask half of a trained model's layer is: the same weights with the mask it
    was not trained with."""
    name = model_name(rec)
    if rec.config.causal:
        return (
            f"bidirectional ({HYPOTHETICAL}): what the same weights would give without the mask \u2014 {name} was trained causal "
            "(a decoder), so only the causal half is the model's own attention"
        )
    return (
        f"causal ({HYPOTHETICAL}): what the same weights would give with a causal mask \u2014 {name} was trained bidirectional "
        "(an encoder), so only the bidirectional half is the model's own attention"
    )


PACKAGED_NAMES = {"minilm": "MiniLM", "smollm2": "SmolLM2"}
"""How the packaged models are named in figures."""


def model_name(rec) -> str:
    """The trained model a record's layer comes from, as a reader knows it ("MiniLM", a folder's name)."""
    model = rec.source.model or "the model"
    return PACKAGED_NAMES.get(model, PurePath(model).name or model)


def _weights_flow(request: FigureRequest, values: np.ndarray, blocked: np.ndarray, name: str) -> Flow:
    rec, page = request.record, request.page
    scale = weights_scale()
    return Flow(
        [
            matrix_piece(
                _square(
                    rec, values[head], f"weights, head {head}", blocked=blocked if blocked.any() else None, filled=False
                ),
                scale,
                request.theme,
                page,
                f"{name}[{head}]",
                request.decimals,
            )
            for head in request.heads
        ],
        rows=rec.n,
    )


def _square(rec, values, title: str, blocked=None, filled: bool = True) -> MatrixSpec:
    """An n × n panel of queries × keys. Blockviz's own block keeps its numbers (the lesson's
    hand-checkable arithmetic) in cells up to a table's shape; a trained model's layer (16+
    tokens, scores to ±60) keeps square-ish cells with every row named, colour alone when its
    numbers would need strips."""
    labels = rows_of(rec)
    return MatrixSpec(
        values,
        labels,
        labels,
        title=title,
        xlabel=KEY_AXIS,
        ylabel=QUERY_AXIS,
        blocked=blocked,
        blocked_filled=filled,
        square_cells=True,
        numbers_first=not arch.is_general(rec),
    )
