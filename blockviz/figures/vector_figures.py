"""Figures of row vectors: the token grid, queries/keys/values, the FFN and the residual stream.

Each row is one token; every number is read from the record.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.heatmap import signed_scale
from blockviz.figures.layout import build_figure, cell_size
from blockviz.figures.panels import MatrixSpec, colorbar_slot, matrix_slot
from blockviz.figures.parts import as_array, dimensions, heading, line_columns, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.style import FFN_COLOR, KEY_COLOR, OUTPUT_COLOR, QUERY_COLOR, RESIDUAL_COLOR, VALUE_COLOR


def token_grid(request: FigureRequest) -> Figure:
    """Figure 1: ``embed`` + ``pos_embed`` = ``resid_pre``, each ``(n, d_model)``, rows = tokens."""
    rec = request.record
    arrays = {name: as_array(getattr(rec, name)) for name in ("embed", "pos_embed", "resid_pre")}
    titles = {"embed": "token embedding", "pos_embed": f"position ({rec.config.positional})", "resid_pre": "x = resid_pre"}
    return _equation_figure(request, "Token grid: one row of d_model numbers per token", formulas.TOKEN_GRID,
                            arrays, titles, ["+", "="], prefix="d",
                            footnote=f"n × d_model = {rec.n} × {rec.config.d_model}")


def residual_stream(request: FigureRequest) -> Figure:
    """Figure 10: ``resid_pre`` + ``attn_out`` = ``resid_mid``; + ``ffn_out`` = ``resid_post``, each ``(n, d_model)``."""
    rec = request.record
    names = ("resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post")
    arrays = {name: as_array(getattr(rec, name)) for name in names}
    titles = {"resid_pre": "resid_pre (input)", "attn_out": "attention output", "resid_mid": "resid_mid",
              "ffn_out": "FFN output", "resid_post": "resid_post (output)"}
    colours = {"resid_pre": RESIDUAL_COLOR, "attn_out": OUTPUT_COLOR, "resid_mid": RESIDUAL_COLOR, "ffn_out": FFN_COLOR, "resid_post": RESIDUAL_COLOR}
    return _equation_figure(request, "Residual stream: each sublayer adds to it", formulas.RESIDUAL,
                            arrays, titles, ["+", "=", "+", "="], prefix="d", colours=colours,
                            footnote=f"every panel is n × d_model = {rec.n} × {rec.config.d_model}")


def ffn(request: FigureRequest) -> Figure:
    """Figure 9: ``ln2`` ``(n, d_model)`` → ``ffn_pre`` ``(n, d_ff)`` → ``ffn_post`` ``(n, d_ff)`` → ``ffn_out`` ``(n, d_model)``."""
    rec = request.record
    activation = rec.config.activation.upper() if rec.config.activation == "gelu" else "ReLU"
    arrays = {name: as_array(getattr(rec, name)) for name in ("ln2", "ffn_pre", "ffn_post", "ffn_out")}
    titles = {"ln2": "ln2 = LayerNorm(resid_mid)", "ffn_pre": "ffn_pre", "ffn_post": f"ffn_post = {activation}(ffn_pre)", "ffn_out": "ffn_out"}
    operators = [r"$\cdot W_{in} + b_{in}$", f"{activation} \u2192", r"$\cdot W_{out} + b_{out}$"]
    prefixes = {"ln2": "d", "ffn_pre": "h", "ffn_post": "h", "ffn_out": "d"}
    colours = {name: FFN_COLOR for name in arrays}
    n, d, f = rec.n, rec.config.d_model, rec.config.d_ff
    return _equation_figure(request, "Feed-forward network: widen, activate, narrow, row by row", formulas.FFN,
                            arrays, titles, operators, prefix=prefixes, colours=colours,
                            footnote=f"{n} × {d} \u2192 {n} × {f} \u2192 {n} × {f} \u2192 {n} × {d}  (n × d_model \u2192 n × d_ff \u2192 n × d_model)")


def queries_keys_values(request: FigureRequest) -> Figure:
    """Figure 2: each head's query, key and value, ``(n, d_head)`` each, side by side."""
    rec = request.record
    heads = request.heads
    arrays = {name: as_array(getattr(rec, name)) for name in ("query", "key", "value")}
    scale = signed_scale(*(arrays[name][heads] for name in arrays))
    d_head = rec.config.d_head
    cell = cell_size(rec.n, line_columns([d_head] * 3, colorbar=True))
    colours = {"query": QUERY_COLOR, "key": KEY_COLOR, "value": VALUE_COLOR}
    letters = {"query": "q", "key": "k", "value": "v"}
    lines = heading("Queries, keys and values: one row per token, per head", formulas.QKV)
    for head in heads:
        line = []
        for column, name in enumerate(arrays):
            spec = MatrixSpec(arrays[name][head], rows_of(rec.tokens) if column == 0 else None, dimensions(letters[name], d_head),
                              title=f"{name} {letters[name].upper()}, head {head}", title_color=colours[name])
            line.append(matrix_slot(spec, scale, request.theme, cell, key=f"{name}[{head}]", decimals=request.decimals))
        line.append(colorbar_slot(scale, rec.n * cell))
        lines.append(line)
    lines.append([note(f"n × d_head = {rec.n} × {d_head} each; d_head = d_model / n_heads = {rec.config.d_model} / {rec.config.n_heads}")])
    figure, _ = build_figure(lines)
    return figure


def _equation_figure(request, title, formula, arrays, titles, operators, prefix, colours=None, footnote=None) -> Figure:
    rec = request.record
    scale = signed_scale(*arrays.values())
    columns = [array.shape[1] for array in arrays.values()]
    cell = cell_size(rec.n, line_columns(columns, operators=len(operators), colorbar=True))
    line = []
    for index, (name, array) in enumerate(arrays.items()):
        if index:
            symbol = operators[index - 1]
            line.append(operator(symbol, math=symbol.startswith("$"), size=15.0 if len(symbol) == 1 else 10.0))
        letter = prefix[name] if isinstance(prefix, dict) else prefix
        spec = MatrixSpec(array, rows_of(rec.tokens) if index == 0 else None, dimensions(letter, array.shape[1]),
                          title=titles[name], title_color=(colours or {}).get(name))
        line.append(matrix_slot(spec, scale, request.theme, cell, key=name, decimals=request.decimals))
    line.append(colorbar_slot(scale, rec.n * cell))
    lines = heading(title, formula) + [line]
    if footnote:
        lines.append([note(footnote)])
    figure, _ = build_figure(lines)
    return figure
