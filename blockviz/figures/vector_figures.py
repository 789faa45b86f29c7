"""Figures of row vectors: the token grid, queries/keys/values, the FFN and the residual stream.

Each row is one token; every number is read from the record, and every panel is coloured on
its quantity's one colour scale (:func:`~blockviz.figures.heatmap.record_scale`).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.heatmap import record_scale, scale_family
from blockviz.figures.layout import build_figure, cell_size
from blockviz.figures.panels import MatrixSpec, colorbar_slots, matrix_slot
from blockviz.figures.parts import as_array, columns_of, heading, line_columns, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import FFN_COLOR, KEY_COLOR, OUTPUT_COLOR, QUERY_COLOR, RESIDUAL_COLOR, VALUE_COLOR


def token_grid(request: FigureRequest) -> Figure:
    """Figure 1: ``embed`` + ``pos_embed`` = ``resid_pre``, each ``(n, d_model)``, rows = tokens."""
    rec = request.record
    titles = {"embed": "token embedding", "pos_embed": f"position ({rec.config.positional})", "resid_pre": "x = resid_pre"}
    return _equation_figure(request, "Token grid: one row of d_model numbers per token", formulas.TOKEN_GRID,
                            titles, ["+", "="], footnote=f"n × d_model = {rec.n} × {rec.config.d_model}")


def residual_stream(request: FigureRequest) -> Figure:
    """Figure 10: ``resid_pre`` + ``attn_out`` = ``resid_mid``; + ``ffn_out`` = ``resid_post``, each ``(n, d_model)``."""
    rec = request.record
    titles = {"resid_pre": "resid_pre (input)", "attn_out": "attn_out (attention)", "resid_mid": "resid_mid",
              "ffn_out": "ffn_out (FFN)", "resid_post": "resid_post (output)"}
    colours = {"resid_pre": RESIDUAL_COLOR, "attn_out": OUTPUT_COLOR, "resid_mid": RESIDUAL_COLOR, "ffn_out": FFN_COLOR, "resid_post": RESIDUAL_COLOR}
    return _equation_figure(request, "Residual stream: each sublayer adds to it", formulas.RESIDUAL,
                            titles, ["+", "=", "+", "="], colours=colours,
                            footnote=f"every panel is n × d_model = {rec.n} × {rec.config.d_model}")


def ffn(request: FigureRequest) -> Figure:
    """Figure 9: ``ln2`` ``(n, d_model)`` → ``ffn_pre`` ``(n, d_ff)`` → ``ffn_post`` ``(n, d_ff)`` → ``ffn_out`` ``(n, d_model)``."""
    rec = request.record
    activation = rec.config.activation_name
    titles = {"ln2": "ln2 = LayerNorm(resid_mid)", "ffn_pre": "ffn_pre", "ffn_post": f"ffn_post = {activation}(ffn_pre)", "ffn_out": "ffn_out"}
    operators = [r"$\cdot W_{in} + b_{in}$", f"{activation} \u2192", r"$\cdot W_{out} + b_{out}$"]
    n, d, f = rec.n, rec.config.d_model, rec.config.d_ff
    return _equation_figure(request, "Feed-forward network: widen, activate, narrow, row by row", formulas.FFN,
                            titles, operators, colours={name: FFN_COLOR for name in titles},
                            footnote=f"{n} × {d} \u2192 {n} × {f} \u2192 {n} × {f} \u2192 {n} × {d}  (n × d_model \u2192 n × d_ff \u2192 n × d_model)")


def queries_keys_values(request: FigureRequest) -> Figure:
    """Figure 2: each head's query, key and value, ``(n, d_head)`` each, side by side."""
    rec = request.record
    names = ("query", "key", "value")
    arrays = {name: as_array(rec.tensors[name]) for name in names}
    scales = [record_scale(rec, name) for name in names]
    d_head = rec.config.d_head
    cell = cell_size(rec.n, line_columns([d_head] * 3, colorbars=len(scales)))
    colours = {"query": QUERY_COLOR, "key": KEY_COLOR, "value": VALUE_COLOR}
    lines = heading("Queries, keys and values: one row per token, per head", formulas.QKV)
    for head in request.heads:
        line = []
        for column, (name, scale) in enumerate(zip(names, scales)):
            spec = MatrixSpec(arrays[name][head], rows_of(rec.tokens) if column == 0 else None, columns_of(rec, name),
                              title=f"{name} {name[0].upper()}, head {head}", title_color=colours[name])
            line.append(matrix_slot(spec, scale, request.theme, cell, key=f"{name}[{head}]", decimals=request.decimals))
        line += colorbar_slots(scales, rec.n * cell)
        lines.append(line)
    lines.append([note(f"n × d_head = {rec.n} × {d_head} each; d_head = d_model / n_heads = {rec.config.d_model} / {rec.config.n_heads}")])
    figure, _ = build_figure(lines)
    return figure


def _equation_figure(request: FigureRequest, title: str, formula: str, titles: dict[str, str], operators: list[str],
                     colours: dict[str, str] | None = None, footnote: str | None = None) -> Figure:
    """One line of record fields (the keys of ``titles``, each ``(n, …)``) joined by ``operators``,
    then one colour bar per colour scale used."""
    rec = request.record
    arrays = {name: as_array(rec.tensors[name]) for name in titles}
    scales = {name: record_scale(rec, name, _bar_label(name, list(titles))) for name in titles}
    bars = len({scale.label for scale in scales.values()})
    cell = cell_size(rec.n, line_columns([array.shape[1] for array in arrays.values()], operators=len(operators), colorbars=bars))
    line = []
    for index, (name, array) in enumerate(arrays.items()):
        if index:
            symbol = operators[index - 1]
            line.append(operator(symbol, math=symbol.startswith("$"), size=15.0 if len(symbol) == 1 else 10.0))
        spec = MatrixSpec(array, rows_of(rec.tokens) if index == 0 else None, columns_of(rec, name),
                          title=titles[name], title_color=(colours or {}).get(name))
        line.append(matrix_slot(spec, scales[name], request.theme, cell, key=name, decimals=request.decimals))
    line += colorbar_slots(list(scales.values()), rec.n * cell)
    lines = heading(title, formula) + [line]
    if footnote:
        lines.append([note(footnote)])
    figure, _ = build_figure(lines)
    return figure


def _bar_label(name: str, names: list[str]) -> str:
    """The label of ``name``'s colour bar in a line of ``names``: the fields it colours if one or
    two (``"ffn_pre, ffn_post"``), otherwise their colour-scale family (``"residual"``)."""
    sharing = [other for other in names if scale_family(other) == scale_family(name)]
    return ", ".join(sharing) if len(sharing) <= 2 else scale_family(name)
