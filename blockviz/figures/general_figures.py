"""The figures of any block's record: post-norm or pre-norm, LayerNorm or RMSNorm, added or
rotary positions, plain or gated FFN, every head its own key/value head or shared (a trained
model's layer, :func:`blockviz.models.record_layer`).

Each draws the record's own architecture (:mod:`blockviz.figures.architecture`), reads only
the fields the record holds (``rec.fields``), elides wide rows legibly
(:mod:`blockviz.figures.elision`: the first and last columns and the largest, ⋯ and a note of
how many are hidden; panels of one equation share their columns) and writes each number to fit
its cell. Every written equation adds up: a hidden part of a sum is one explicit term.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import architecture as arch
from blockviz.figures import formulas
from blockviz.figures.elision import (GAP, ROW_EDGE_COLUMNS, ROW_GAP, ROW_LARGEST_COLUMNS, Columns, choose_columns, elided_matrix_piece, elided_piece,
                                      hidden_note, numbers_flow)
from blockviz.figures.heatmap import record_scale, weights_scale
from blockviz.figures.labels import text_size_in, token_label
from blockviz.figures.layout import Flow, TextLine, build_figure, fixed_piece, text_slot
from blockviz.figures.parts import as_array, colorbar_line, feature_labels, heading, legend_lines, note, operator, rows_of
from blockviz.figures.request import FigureRequest
from blockviz.record_fields import field
from blockviz.style import format_number

MONO = "monospace"
WRITTEN_TERMS = 8
"""Up to this many entries a mean is written term by term; past it, the shown columns' entries
and one term for the others."""


# -- pieces ---------------------------------------------------------------------------------

def _columns_labels(rec, name: str) -> list[str]:
    dimension = field(name).shape[-1]
    return feature_labels(dimension, field(name).sizes(rec.n, rec.config)[-1])


def _panel(request: FigureRequest, name: str, columns: Columns, title: str, values=None, role: str | None = None, key: str | None = None,
           scale=None, rows: bool = True):
    """Field ``name`` (or ``values`` of its shape) as an elided panel, on its family's one colour scale."""
    rec = request.record
    values = as_array(rec.tensors[name]) if values is None else values
    return elided_piece(values, columns, rows_of(rec.tokens) if rows else None, _columns_labels(rec, name),
                        scale or record_scale(rec, name), request.theme, request.page, key or name, request.decimals,
                        title=title, title_color=request.theme.roles[role] if role else None)


def _notes(page, columns: list[tuple[Columns, str]]) -> list:
    text = hidden_note(columns)
    return [note(page, text)] if text else []


def _row_columns(arrays, total: int, page=None, label_width: float = 0.0, decimals: int = 2) -> Columns:
    """Columns of stacked single rows (one token's): more of them fit than of token panels, as
    many of the largest as the page has room for beside the rows' labels."""
    columns = choose_columns(arrays, total, edges=ROW_EDGE_COLUMNS, largest=ROW_LARGEST_COLUMNS)
    if page is None or page.width is None:
        return columns
    from blockviz.figures.elision import FittedSpec
    from blockviz.figures.panels import _readable_cell

    values = np.concatenate([np.asarray(array, dtype=float).reshape(-1) for array in arrays])
    cell = _readable_cell(FittedSpec(values[None, :], None, []).widest_number(decimals), page) * 1.02
    room = page.content_width - label_width - page.gap - 0.1
    for edges in (ROW_EDGE_COLUMNS, 1):
        for largest in range(ROW_LARGEST_COLUMNS, -1, -1):
            if len(columns.layout) * cell <= room:
                return columns
            columns = choose_columns(arrays, total, max_columns=0, edges=edges, largest=largest)
    return columns


def _choose(rec, names, width_field: str | None = None, rows=None) -> Columns:
    """Columns shared by the fields ``names`` (rows ``rows`` only, if given)."""
    arrays = [as_array(rec.tensors[name]) for name in names]
    if rows is not None:
        arrays = [array[rows] for array in arrays]
    return choose_columns(arrays, arrays[0].shape[-1])


def _source_line(rec) -> str:
    return rec.source.describe() if rec.source.is_model else f"{rec.config.norm_placement}-norm {arch.norm_name(rec)} block, {rec.source.describe()}"


# -- token grid -----------------------------------------------------------------------------

def token_grid(request: FigureRequest) -> Figure:
    """The layer's input: ``embed`` (+ ``pos_embed``) and ``resid_pre``, each ``(n, d_model)``;
    for a trained model's layer resid_pre is its hidden state, not their sum."""
    rec, page = request.record, request.page
    added = arch.has(rec, "pos_embed")
    names = ["embed", "pos_embed", "resid_pre"] if added else ["embed", "resid_pre"]
    columns = _choose(rec, names)
    titles = {"embed": "token embedding", "pos_embed": "position (learned)" if rec.config.positional == "learned" else "position", "resid_pre": "x = resid_pre"}
    # a model's layer input is its hidden state; only layer 0 of GPT-2 (wte + wpe) and Llama (the token embedding) is the embeddings' sum itself
    model = rec.source.is_model and not (rec.source.layer == 0 and rec.source.family in ("gpt2", "llama"))
    pieces = [_panel(request, "embed", columns, titles["embed"])]
    if added:
        pieces += [operator(page, "+"), _panel(request, "pos_embed", columns, titles["pos_embed"])]
    if model:
        layer = rec.source.layer
        through = f"\u2192 layers 0\u2013{layer - 1} \u2192" if layer > 1 else ("\u2192 layer 0 \u2192" if layer == 1 else "\u2192 embedding step \u2192")
        pieces += [operator(page, through, scale=0.6), _panel(request, "resid_pre", columns, titles["resid_pre"], role="residual")]
        formula = r"$x = h_{" + str(rec.source.layer) + r"}$: the model's hidden state entering this layer"
    else:
        pieces += [operator(page, "="), _panel(request, "resid_pre", columns, titles["resid_pre"], role="residual")]
        formula = formulas.TOKEN_GRID if added else r"$x = \mathrm{embedding}$ (rotary positions turn q and k instead)"
    lines = heading(page, "Token grid: one row of d_model numbers per token", formula)
    lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([record_scale(rec, name) for name in names], page))
    lines += _notes(page, [(columns, "d_model")])
    if model:
        lines.append(note(page, f"{_source_line(rec)}. resid_pre is the real input of layer {rec.source.layer}: the embeddings after the model's "
                                f"embedding step{' and layers before it' if rec.source.layer else ''}, so it is not embed + position"))
    if not added:
        lines.append(note(page, "rotary positions: nothing is added to the embeddings; q and k are rotated by each position's angle (see qkv)"))
    lines.append(note(page, f"n × d_model = {rec.n} × {rec.config.d_model}" + (f"; {_source_line(rec)}" if rec.source.is_model and not model else "")))
    return build_figure(lines, page)[0]


# -- normalisation --------------------------------------------------------------------------

def layer_norm(request: FigureRequest) -> Figure:
    """The record's two normalisations on the chosen token's row, step by step: LayerNorm
    (mean, subtract, variance, ÷ √(σ² + ε), × γ, + β) or RMSNorm (mean of squares, ÷ √(· + ε),
    × γ; no mean subtracted), of each sublayer's input (pre-norm) or of each sum (post-norm)."""
    from blockviz.figures.norm_figure import _label_slot, scale_terms

    rec, page, theme, decimals = request.record, request.page, request.theme, request.decimals
    i = request.query
    rms = rec.config.norm == "rmsnorm"
    kind = arch.norm_name(rec)
    residual = record_scale(rec, "resid_pre")
    parameters = record_scale(rec, "ln1.weight", label="\u03b3, \u03b2" if "ln1.bias" in rec.params else "\u03b3")
    d = rec.config.d_model
    labels = feature_labels("d_model", d)
    bias = "ln1.bias" in rec.params
    lines = heading(page, f"{kind}: token {token_label(rec.tokens[i], 24)!r} (position {i}), one row, step by step", arch.norm_formula(rec, bias))
    step_labels = ["x", "x \u2212 \u03bc", "\u00f7 \u221a(\u03c3\u00b2 + \u03b5)", "\u00f7 \u221a(ms + \u03b5)", "\u00d7 \u03b3", "+ \u03b2",
                   *(f"= {norm.output}" for norm in arch.norms(rec))]
    steps_width = max(text_size_in(label, page.note)[0] for label in step_labels) * 1.06 + 0.05
    noted: list = []
    for norm in arch.norms(rec):
        name = norm.prefix
        x = as_array(rec.tensors[norm.source])[i]
        normed, out = as_array(rec.tensors[f"{name}_norm"])[i], as_array(rec.tensors[norm.output])[i]
        gamma = as_array(rec.params[f"{name}.weight"])
        beta = as_array(rec.params[f"{name}.bias"]) if f"{name}.bias" in rec.params else None
        rows = [x, normed, out] + ([as_array(rec.tensors[f"{name}_centred"])[i]] if not rms else [])
        columns = _row_columns([np.stack(rows)], d, page, steps_width, decimals)
        noted.append((columns, "d_model"))
        lines.append(TextLine([_norm_title(page, f"{name}: {kind} {norm.where}, x = {norm.source}[{i}] \u2192 {norm.output}",
                                           f"{name}: x = {norm.source}[{i}] \u2192 {norm.output}")],
                              page.title, key=f"{name}_title", options={"fontweight": "bold"}))

        def row(label: str, values, key: str, colour_scale=residual, labelled: bool = False) -> Flow:
            piece = elided_piece(np.asarray(values)[None, :], columns, None, labels if labelled else [], colour_scale, theme, page, key, decimals,
                                 token_rows=False)
            return _labelled_row(_label_slot(label, steps_width, page.note), piece, tight=not labelled)

        lines.append(row("x", x, f"{name}_x", labelled=True))
        if rms:
            mean_sq = float(rec.tensors[f"{name}_mean_sq"][i])
            lines.append(_work(page, f"{name}_mean_sq", square_mean_terms(x, mean_sq, columns, decimals, "mean(x\u00b2)")))
            lines.append(_work(page, f"{name}_scale", [part.replace("\u03c3\u00b2", "mean(x\u00b2)") for part in
                                                      scale_terms(mean_sq, rec.config.ln_eps, math.sqrt(mean_sq + rec.config.ln_eps), decimals)]))
            lines.append(row("\u00f7 \u221a(ms + \u03b5)", normed, f"{name}_norm"))
        else:
            mean, var = float(rec.tensors[f"{name}_mean"][i]), float(rec.tensors[f"{name}_var"][i])
            centred = as_array(rec.tensors[f"{name}_centred"])[i]
            lines.append(_work(page, f"{name}_mean", mean_terms(x, mean, columns, decimals)))
            lines.append(row("x \u2212 \u03bc", centred, f"{name}_centred"))
            lines.append(_work(page, f"{name}_var", square_mean_terms(centred, var, columns, decimals, "\u03c3\u00b2", centred=True)))
            lines.append(_work(page, f"{name}_scale", scale_terms(var, rec.config.ln_eps, math.sqrt(var + rec.config.ln_eps), decimals)))
            lines.append(row("\u00f7 \u221a(\u03c3\u00b2 + \u03b5)", normed, f"{name}_norm"))
        lines.append(row("\u00d7 \u03b3", gamma, f"{name}_gamma", parameters))
        if beta is not None:
            lines.append(row("+ \u03b2", beta, f"{name}_beta", parameters))
        lines.append(row(f"= {norm.output}", out, norm.output))
    lines.append(colorbar_line([residual, parameters], page))
    lines += _notes(page, noted)
    what = ("RMSNorm divides each row by its root mean square: no mean is subtracted, no β; ms = mean(x\u00b2)" if rms else
            "the variance divides by d_model (as torch.nn.LayerNorm)")
    placement = "post-norm: each sum (resid_mid, resid_post) is normalised" if rec.config.norm_placement == "post" else "pre-norm: each sublayer's input is normalised"
    lines.append(note(page, f"{placement}; {what}; d_model = {d}; \u03b5 = {rec.config.ln_eps:g}; work lines carry one more decimal than the grids"))
    return build_figure(lines, page)[0]


def _norm_title(page, full: str, short: str) -> str:
    """A normalisation's title: ``full`` if it fits one line of the page, else ``short`` (the
    figure's last note says where each normalisation stands)."""
    from blockviz.figures.layout import TEXT_PAD_IN, TEXT_SLACK

    return full if text_size_in(full, page.title, weight="bold")[0] * TEXT_SLACK + TEXT_PAD_IN <= page.content_width else short


def _labelled_row(label_slot, piece, tight: bool = False) -> Flow:
    """One row of numbers after its label (kept beside it), cells no larger than the numbers need;
    ``tight``: close under the row before it (a stack of steps)."""
    return Flow([fixed_piece(label_slot, glue=True), piece], rows=1, largest_cell=piece.readable * 1.15, tight=tight)


def _work(page, key: str, parts: list[str]) -> TextLine:
    """A written step, wrapped between its terms (at " + " and " − ") and "=" if the page is narrow."""
    pieces: list[str] = []
    for part in parts:
        for index, term in enumerate(part.replace(" \u2212 ", " + \u2212 ").split(" + ")):
            if index == 0:
                pieces.append(term)
            else:
                pieces.append(("\u2212 " + term[2:]) if term.startswith("\u2212 ") else "+ " + term)
    return TextLine(pieces, page.number, key=key, family=MONO, words=False, tight=True)


def _signed(numbers: list[str]) -> str:
    text = numbers[0]
    for number in numbers[1:]:
        text += f" \u2212 {number[1:]}" if number.startswith("\u2212") else f" + {number}"
    return text


def mean_terms(x, mean: float, columns: Columns, decimals: int) -> list[str]:
    """``μ = (x₀ + x₁ + … + [k others: s]) / d = m``: the shown columns' entries and one term,
    the sum of the hidden ones (each number one more decimal than the grids)."""
    work = decimals + formulas.WORK_DECIMALS
    d = len(x)
    shown = list(columns.shown) if columns.hidden else list(range(d))
    numbers = [format_number(float(x[j]), work) for j in shown]
    if columns.hidden:
        hidden = [j for j in range(d) if j not in set(shown)]
        numbers.append(f"[{len(hidden)} others: {format_number(float(np.sum(x[hidden])), work)}]")
    return [f"\u03bc = ({_signed(numbers)}) / {d}", f"= {format_number(mean, work)}"]


def square_mean_terms(values, result: float, columns: Columns, decimals: int, name: str, centred: bool = False) -> list[str]:
    """``name = (v₀² + v₁² + … + [k others: s]) / d = r``, each shown entry written with enough
    decimals that the written squares and the hidden term add up to r within one unit of its last
    decimal (work decimals: one more than the grids)."""
    work = decimals + formulas.WORK_DECIMALS
    d = len(values)
    shown = list(columns.shown) if columns.hidden else list(range(d))
    hidden = [j for j in range(d) if j not in set(shown)]
    rest = float(np.sum(np.asarray(values)[hidden] ** 2)) if hidden else 0.0
    target = formulas.shown(result, work)
    for entry_decimals in range(work, formulas.LARGEST_WORK_DECIMALS + 1):
        total = sum(formulas.shown(values[j], entry_decimals) ** 2 for j in shown) + (formulas.shown(rest, work) if hidden else 0.0)
        if abs(total / d - target) <= 10 ** -work:
            break
    squares = [f"({format_number(float(values[j]), entry_decimals)})\u00b2" if values[j] < 0 else f"{format_number(float(values[j]), entry_decimals)}\u00b2"
               for j in shown]
    if hidden:
        squares.append(f"[{len(hidden)} others: {format_number(rest, work)}]")
    return [f"{name} = ({' + '.join(squares)}) / {d}", f"= {format_number(result, work)}"]


# -- queries, keys, values ------------------------------------------------------------------

def queries_keys_values(request: FigureRequest) -> Figure:
    """Per head shown: its query, key and value ``(n, d_head)``; with rotary positions the query
    and key before and after rotation; with shared key/value heads, which one the head reads."""
    rec, page = request.record, request.page
    rotary = arch.has(rec, "query_rot", "key_rot")
    c = rec.config
    shared = c.kv_heads != c.n_heads
    lines = heading(page, "Queries, keys and values: one row per token, per head", arch.qkv_formula(rec) + ((arch.ROTARY_FORMULA,) if rotary else ()))
    names = ["query", "key", "value"] + (["query_rot", "key_rot"] if rotary else [])
    scale = record_scale(rec, "query")
    noted, turned_notes = [], []
    for head in request.heads:
        g = c.kv_head_of(head)
        arrays = [as_array(rec.tensors[name])[head] for name in names]
        columns = choose_columns(arrays, c.d_head)
        if rotary and columns.hidden:  # one of the largest columns gives way to the one the rotation changes most
            turned = np.abs(arrays[3] - arrays[0]).max(axis=0) + np.abs(arrays[4] - arrays[1]).max(axis=0)
            most_turned = int(turned.argmax())
            columns = _with_column(choose_columns(arrays, c.d_head, largest=max(0, len(columns.largest) - 1)), most_turned)
            turned_notes.append(f"d{most_turned}" + (f" of head {head}" if len(request.heads) > 1 else ""))
        noted.append((columns, "d_head"))
        kv = f"kv head {g}" if shared else f"head {head}"

        def panel(name, title, role):
            return _panel(request, name, columns, title, values=as_array(rec.tensors[name])[head], role=role, key=f"{name}[{head}]", scale=scale)

        pieces = [panel("query", f"query Q, head {head}", "query")]
        if rotary:
            pieces += [operator(page, "rotary \u2192", scale=0.6), panel("query_rot", "Q rotated", "query")]
        pieces.append(panel("key", f"key K, {kv}", "key"))
        if rotary:
            pieces += [operator(page, "rotary \u2192", scale=0.6), panel("key_rot", "K rotated", "key")]
        pieces.append(panel("value", f"value V, {kv}", "value"))
        lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([scale], page))
    lines += _notes(page, noted)
    if rotary:
        lines.append(note(page, "rotary positions: each feature pair (k, k + d_head/2) of q and k is turned by an angle that grows with the position; "
                                "the scores are Q rotated \u00b7 K rotated; V is not rotated"
                                + (f"; of the columns of largest |value| one gives way to the column the rotation changes most ({', '.join(turned_notes)})" if turned_notes else "")))
    if shared:
        lines.append(note(page, f"grouped-query attention: {c.n_heads} query heads share {c.kv_heads} key/value heads "
                                f"({c.n_heads // c.kv_heads} query heads each); head h reads kv head h // {c.n_heads // c.kv_heads}"))
    lines.append(note(page, f"n × d_head = {rec.n} × {c.d_head} each; d_head = d_model / n_heads = {c.d_model} / {c.n_heads}; {_source_line(rec)}"))
    return build_figure(lines, page)[0]


def _with_column(columns: Columns, index: int) -> Columns:
    """``columns`` and column ``index`` (counted among the largest)."""
    if index in columns.shown:
        return columns
    return Columns(tuple(sorted(columns.shown + (index,))), columns.total, tuple(sorted(columns.largest + (index,))), columns.edges)


# -- FFN ------------------------------------------------------------------------------------

def ffn(request: FigureRequest) -> Figure:
    """The FFN of the record: plain (widen, activate, narrow) or gated (gate and up, the
    activated gate times up, narrow), its input ln2 (pre-norm) or resid_mid_norm (post-norm)."""
    rec, page = request.record, request.page
    c = rec.config
    x = arch.ffn_input(rec)
    act = arch.activation_name(rec)
    bias = c.bias
    model_columns = _choose(rec, [x])
    out_columns = _choose(rec, ["ffn_out"])
    lines = heading(page, "Feed-forward network: widen, activate, narrow, row by row", arch.ffn_formula(rec))
    x_title = f"{x} = {arch.norm_name(rec)}(resid_mid)"
    plus = (lambda kind: rf" + b_{{{kind}}}") if bias else (lambda kind: "")
    pieces = [_panel(request, x, model_columns, x_title, role="residual")]
    if c.ffn == "gated":
        hidden = _choose(rec, ["ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post"])
        pieces += [operator(page, rf"$\cdot W_{{gate}}{plus('gate')}$", math=True, scale=0.7), _panel(request, "ffn_gate", hidden, "ffn_gate", role="ffn"),
                   operator(page, f"{act} \u2192", scale=0.7), _panel(request, "ffn_gate_act", hidden, f"{act}(ffn_gate)", role="ffn"),
                   operator(page, "\u2299"), _panel(request, "ffn_up", hidden, f"ffn_up = {x} \u00b7 W_up" + (" + b_up" if bias else ""), role="ffn"),
                   operator(page, "="), _panel(request, "ffn_post", hidden, "ffn_post", role="ffn")]
        names = [x, "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out"]
        shapes = f"{rec.n} × {c.d_model} \u2192 gate, up: {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_model}"
    else:
        hidden = _choose(rec, ["ffn_pre", "ffn_post"])
        pieces += [operator(page, rf"$\cdot W_{{in}}{plus('in')}$", math=True, scale=0.7), _panel(request, "ffn_pre", hidden, "ffn_pre", role="ffn"),
                   operator(page, f"{act} \u2192", scale=0.7), _panel(request, "ffn_post", hidden, f"ffn_post = {act}(ffn_pre)", role="ffn")]
        names = [x, "ffn_pre", "ffn_post", "ffn_out"]
        shapes = f"{rec.n} × {c.d_model} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_model}"
    pieces += [operator(page, rf"$\cdot W_{{out}}{plus('out')}$", math=True, scale=0.7), _panel(request, "ffn_out", out_columns, "ffn_out", role="ffn")]
    lines += numbers_flow(pieces, rec.n, page)
    hidden_label = "ffn_gate, ffn_up, ffn_post" if c.ffn == "gated" else None
    lines.append(colorbar_line([record_scale(rec, name, label=hidden_label if name.startswith("ffn_") and name != "ffn_out" else None) for name in names], page))
    lines += _notes(page, [(model_columns, "d_model"), (hidden, "d_ff"), (out_columns, "d_model")])
    gate = f"; gated: ffn_post = {act}(ffn_gate) \u2299 ffn_up, cell by cell (the d_ff panels show the same columns)" if c.ffn == "gated" else ""
    lines.append(note(page, f"{shapes}  (n × d_model \u2192 n × d_ff \u2192 n × d_model){gate}"))
    return build_figure(lines, page)[0]


# -- residual stream ------------------------------------------------------------------------

def residual_stream(request: FigureRequest) -> Figure:
    """Each sublayer's output added to the stream, on the chosen token's row (``--token``),
    stacked so that each column adds up down the page: pre-norm resid_pre + attn_out = resid_mid,
    + ffn_out = resid_post; post-norm normalises each sum (resid_mid_norm, resid_post_norm) and
    the FFN adds to the normalised one. Narrow records keep blockviz's panels of every token."""
    from blockviz.figures.norm_figure import _label_slot

    rec, page, theme = request.record, request.page, request.theme
    post = rec.config.norm_placement == "post"
    kind = arch.norm_name(rec)
    i = request.query
    d = rec.config.d_model
    steps = ([("resid_pre", "resid_pre"), ("attn_out", "+ attn_out"), ("resid_mid", "= resid_mid"), ("resid_mid_norm", f"{kind} \u2192 resid_mid_norm"),
              ("ffn_out", "+ ffn_out"), ("resid_post", "= resid_post"), ("resid_post_norm", f"{kind} \u2192 resid_post_norm")] if post else
             [("resid_pre", "resid_pre"), ("attn_out", "+ attn_out"), ("resid_mid", "= resid_mid"), ("ffn_out", "+ ffn_out"), ("resid_post", "= resid_post")])
    rows = {name: as_array(rec.tensors[name])[i] for name, _ in steps}
    width = max(text_size_in(label, page.note)[0] for _, label in steps) * 1.06 + 0.05
    columns = _row_columns([np.stack(list(rows.values()))], d, page, width, request.decimals)
    labels = feature_labels("d_model", d)
    lines = heading(page, f"Residual stream: each sublayer adds to it; token {token_label(rec.tokens[i], 24)!r} (position {i})", arch.residual_formula(rec))
    width = max(text_size_in(label, page.note)[0] for _, label in steps) * 1.06 + 0.05
    scale = record_scale(rec, "resid_pre")
    for index, (name, label) in enumerate(steps):
        piece = elided_piece(rows[name][None, :], columns, None, labels if index == 0 else [], scale, theme, page, name, request.decimals, token_rows=False)
        lines.append(_labelled_row(_label_slot(label, width, page.note), piece))
        if post and name == "resid_mid_norm":
            lines.append(note(page, "the FFN reads resid_mid_norm and adds to it:", key="residual_between"))
    lines.append(colorbar_line([scale], page))
    lines += _notes(page, [(columns, "d_model")])
    what = (f"post-norm: each sum is normalised ({kind}) and the FFN adds to the normalised resid_mid_norm" if post else
            "pre-norm: the sublayers read a normalised copy; the stream itself is only added to")
    lines.append(note(page, f"{what}; each column adds up down the page; every field is n × d_model = {rec.n} × {d} (this is row {i}); {_source_line(rec)}"))
    return build_figure(lines, page)[0]


# -- multi-head -----------------------------------------------------------------------------

def multi_head(request: FigureRequest) -> Figure:
    """The heads' weights (the chosen ones; every head on request), each head's output z, the
    concatenation ``(n, d_model)``, and the output projection to ``attn_out``."""
    from blockviz.figures.attention_figures import BLOCKED_WEIGHT_TEXT, _weights_flow
    from blockviz.figures.panels import MatrixSpec, matrix_piece

    rec, page = request.record, request.page
    c = rec.config
    heads = request.heads
    blocked = np.isneginf(as_array(rec.mask))
    shown = "every head" if len(heads) == c.n_heads else (f"head {heads[0]}" if len(heads) == 1 else f"heads {', '.join(map(str, heads))}")
    lines = heading(page, f"Multi-head attention: {c.n_heads} heads side by side ({shown} shown), then one output projection", arch.multi_head_formula(rec))
    weights_flow = _weights_flow(request, as_array(rec.weights), blocked, "weights")
    weights_flow.largest_cell = (0.16 if len(heads) <= 3 else 0.08) if page.width is not None else None  # colour alone here: the weights figure writes them out
    lines.append(weights_flow)
    output_scale = record_scale(rec, "head_outputs")
    pieces = []
    noted = []
    z_heads = heads if len(heads) <= 3 else heads[:1]  # every head's z is in concat
    for index, head in enumerate(z_heads):
        z = as_array(rec.head_outputs)[head]
        columns = choose_columns([z], c.d_head)
        noted.append((columns, "d_head"))
        if index:
            pieces.append(operator(page, ","))
        pieces.append(_panel(request, "head_outputs", columns, f"z, head {head}", values=z, role="output", key=f"head_outputs[{head}]", scale=output_scale))
    concat_columns = _choose(rec, ["concat"])
    out_columns = _choose(rec, ["attn_out"])
    pieces += [operator(page, "\u2192"), _panel(request, "concat", concat_columns, "concat", role="output")]
    small = c.d_model <= 12
    bias = "attn.b_O" in rec.params
    w_o_scale = record_scale(rec, "attn.W_O", label="W_O, b_O" if bias else "W_O")
    if small:
        model_columns = feature_labels("d_model", c.d_model)
        pieces += [operator(page, "\u00b7"), matrix_piece(MatrixSpec(as_array(rec.params["attn.W_O"]), model_columns, model_columns, title="W_O", token_rows=False),
                                                          w_o_scale, request.theme, page, "W_O", request.decimals)]
        if bias:
            pieces += [operator(page, "+"), matrix_piece(MatrixSpec(as_array(rec.params["attn.b_O"])[None, :], None, model_columns, title="b_O", token_rows=False),
                                                         w_o_scale, request.theme, page, "b_O", request.decimals)]
        pieces.append(operator(page, "="))
    else:  # wide: z → concat on one line, the projection on the next, W_O at concat's columns (its rows) and attn_out's
        lines += numbers_flow(pieces, rec.n, page)
        labels = feature_labels("d_model", c.d_model)
        pieces = [operator(page, "concat \u00b7", scale=0.7),
                  elided_matrix_piece(as_array(rec.params["attn.W_O"]), concat_columns, out_columns, labels, labels, w_o_scale, request.theme, page, "W_O",
                                      request.decimals, title="W_O")]
        if bias:
            pieces += [operator(page, "+"), elided_piece(as_array(rec.params["attn.b_O"])[None, :], out_columns, None, labels, w_o_scale, request.theme, page,
                                                         "b_O", request.decimals, title="b_O", token_rows=False)]
        pieces.append(operator(page, "="))
    pieces.append(_panel(request, "attn_out", out_columns, "attn_out", role="output"))
    if small:
        lines.append(Flow(pieces, rows=max(rec.n, c.d_model)))
    else:
        lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([weights_scale(), output_scale, w_o_scale], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_WEIGHT_TEXT, filled=False)
    lines += _notes(page, noted + [(concat_columns, "d_model")])
    rest = "" if small else (f"; W_O is d_model × d_model = {c.d_model} × {c.d_model}: its rows shown are concat's columns, its columns attn_out's "
                             f"({c.d_model - len(concat_columns.shown)} rows and {c.d_model - len(out_columns.shown)} columns hidden, "
                             f"{ROW_GAP} and {GAP})")
    if len(z_heads) < len(heads):
        rest += f"; z of head {z_heads[0]} drawn, every head's z is in concat"
    lines.append(note(page, f"z_h = weights_h \u00b7 V_h is n × d_head = {rec.n} × {c.d_head}; concat is n × d_model = {rec.n} × {c.d_model}: "
                            f"head h's z is its columns h\u00b7{c.d_head} \u2026 h\u00b7{c.d_head} + {c.d_head - 1}{rest}; "
                            "--all-heads draws every head's weights"))
    return build_figure(lines, page)[0]


# -- value mixing ---------------------------------------------------------------------------

def mixing_values_piece(request: FigureRequest, values: np.ndarray, head: int, columns: Columns):
    """The value panel of value mixing, ``(n, d_head)``, at ``columns`` (the written sum's)."""
    rec = request.record
    c = rec.config
    kv = f", kv head {c.kv_head_of(head)}" if c.kv_heads != c.n_heads else ""
    return _panel(request, "value", columns, f"value v, head {head}{kv}", values=values, role="value", key="mixing_values")


def mixing_notes(request: FigureRequest, columns: Columns) -> list:
    rec = request.record
    hidden = hidden_note([(columns, "d_head")])
    return [note(request.page, (hidden + "; the work lines write the same columns" if hidden else "") + ("; " if hidden else "") + _source_line(rec))]
