"""Figures of row vectors: the token grid, queries/keys/values, the FFN and the residual stream.

Each row is one token; every number is read from the record, and every panel is coloured on
its quantity's one colour scale (:func:`~blockviz.figures.heatmap.record_scale`).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from blockviz.figures import formulas, general_figures
from blockviz.figures.architecture import is_general
from blockviz.figures.heatmap import record_scale
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, columns_of, heading, note, operator, rows_of
from blockviz.figures.request import FigureRequest


def token_grid(request: FigureRequest) -> Figure:
    """Figure 1: ``embed`` + ``pos_embed`` = ``resid_pre``, each ``(n, d_model)``, rows = tokens."""
    if is_general(request.record):
        return general_figures.token_grid(request)
    rec = request.record
    titles = {"embed": "token embedding", "pos_embed": f"position ({rec.config.positional})", "resid_pre": "x = resid_pre"}
    return _equation_figure(request, "Token grid: one row of d_model numbers per token", formulas.TOKEN_GRID,
                            [["embed", "+", "pos_embed", "=", "resid_pre"]], titles, footnote=f"n × d_model = {rec.n} × {rec.config.d_model}")


def residual_stream(request: FigureRequest) -> Figure:
    """Figure 10: ``resid_pre`` + ``attn_out`` = ``resid_mid``; ``resid_mid`` + ``ffn_out`` = ``resid_post``, each ``(n, d_model)``."""
    if is_general(request.record):
        return general_figures.residual_stream(request)
    rec = request.record
    titles = {"resid_pre": "resid_pre (input)", "attn_out": "attn_out (attention)", "resid_mid": "resid_mid",
              "ffn_out": "ffn_out (FFN)", "resid_post": "resid_post (output)"}
    colours = {"resid_pre": "residual", "attn_out": "output", "resid_mid": "residual", "ffn_out": "ffn", "resid_post": "residual"}
    return _equation_figure(request, "Residual stream: each sublayer adds to it", formulas.RESIDUAL,
                            [["resid_pre", "+", "attn_out", "=", "resid_mid"], ["resid_mid", "+", "ffn_out", "=", "resid_post"]],
                            titles, colours=colours, footnote=f"every panel is n × d_model = {rec.n} × {rec.config.d_model}")


def ffn(request: FigureRequest) -> Figure:
    """Figure 9: ``ln2`` ``(n, d_model)`` → ``ffn_pre`` ``(n, d_ff)`` → ``ffn_post`` ``(n, d_ff)`` → ``ffn_out`` ``(n, d_model)``."""
    if is_general(request.record):
        return general_figures.ffn(request)
    rec = request.record
    activation = rec.config.activation_name
    titles = {"ln2": "ln2 = LayerNorm(resid_mid)", "ffn_pre": "ffn_pre", "ffn_post": f"ffn_post = {activation}(ffn_pre)", "ffn_out": "ffn_out"}
    equation = ["ln2", r"$\cdot W_{in} + b_{in}$", "ffn_pre", f"{activation} \u2192", "ffn_post", r"$\cdot W_{out} + b_{out}$", "ffn_out"]
    n, d, f = rec.n, rec.config.d_model, rec.config.d_ff
    return _equation_figure(request, "Feed-forward network: widen, activate, narrow, row by row", formulas.FFN,
                            [equation], titles, colours={name: "ffn" for name in titles},
                            footnote=f"{n} × {d} \u2192 {n} × {f} \u2192 {n} × {f} \u2192 {n} × {d}  (n × d_model \u2192 n × d_ff \u2192 n × d_model)")


def queries_keys_values(request: FigureRequest) -> Figure:
    """Figure 2: each head's query, key and value, ``(n, d_head)`` each, side by side."""
    if is_general(request.record):
        return general_figures.queries_keys_values(request)
    rec, page = request.record, request.page
    names = ("query", "key", "value")
    arrays = {name: as_array(rec.tensors[name]) for name in names}
    scales = [record_scale(rec, name) for name in names]
    d_head = rec.config.d_head
    colours = request.theme.roles
    lines = heading(page, "Queries, keys and values: one row per token, per head", formulas.QKV)
    for head in request.heads:
        pieces = []
        for name, scale in zip(names, scales):
            spec = MatrixSpec(arrays[name][head], rows_of(rec.tokens), columns_of(rec, name),
                              title=f"{name} {name[0].upper()}, head {head}", title_color=colours[name])
            pieces.append(matrix_piece(spec, scale, request.theme, page, key=f"{name}[{head}]", decimals=request.decimals))
        lines.append(Flow(pieces, rows=rec.n))
    lines.append(colorbar_line(scales, page))
    lines.append(note(page, f"n × d_head = {rec.n} × {d_head} each; d_head = d_model / n_heads = {rec.config.d_model} / {rec.config.n_heads}"))
    return build_figure(lines, page)[0]


def _equation_figure(request: FigureRequest, title: str, formula, equations: list[list[str]], titles: dict[str, str],
                     colours: dict[str, str] | None = None, footnote: str | None = None) -> Figure:
    """Lines of record fields (the keys of ``titles``, each ``(n, …)``) and the operators between
    them, one line per equation, then one colour bar per colour scale used. A field shown a
    second time is keyed ``name:again``."""
    rec, page = request.record, request.page
    scales = {name: record_scale(rec, name) for name in titles}
    lines = heading(page, title, formula)
    drawn: set[str] = set()
    for equation in equations:
        pieces = []
        for index, item in enumerate(equation):
            if index % 2:
                pieces.append(operator(page, item, math=item.startswith("$"), scale=1.0 if len(item) == 1 else 0.7))
                continue
            spec = MatrixSpec(as_array(rec.tensors[item]), rows_of(rec.tokens), columns_of(rec, item), title=titles[item],
                              title_color=request.theme.roles[colours[item]] if colours and item in colours else None)
            pieces.append(matrix_piece(spec, scales[item], request.theme, page, key=item + (":again" if item in drawn else ""), decimals=request.decimals))
            drawn.add(item)
        lines.append(Flow(pieces, rows=rec.n))
    lines.append(colorbar_line(list(scales.values()), page))
    if footnote:
        lines.append(note(page, footnote))
    return build_figure(lines, page)[0]

