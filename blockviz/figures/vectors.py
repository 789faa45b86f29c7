"""Figures of row vectors: the token grid, queries/keys/values, the FFN and the residual stream,
of any block's record: added or rotary positions, plain or gated FFN, pre-norm or post-norm,
every head its own key/value head or shared.

Each row is one token; every number is read from the record, every panel is coloured on its
quantity's one colour scale (:func:`~blockviz.figures.heatmap.record_scale`), and wide rows are
elided legibly (:mod:`blockviz.figures.elision`; panels of one equation share their columns).
"""

from __future__ import annotations

import numpy as np
from matplotlib.cbook import is_math_text
from matplotlib.figure import Figure

from blockviz.figures import architecture as arch
from blockviz.figures import formulas
from blockviz.figures.elision import Columns, choose_columns, elided_piece, numbers_flow
from blockviz.figures.heatmap import drawn_scale, record_scale
from blockviz.figures.labels import text_size_in, token_named
from blockviz.figures.layout import build_figure
from blockviz.figures.parts import (
    as_array,
    colorbar_line,
    feature_labels,
    field_panel,
    heading,
    hidden_notes,
    label_slot,
    labelled_row,
    note,
    operator,
    row_columns,
    shared_columns,
    source_line,
    titled,
)
from blockviz.figures.request import FigureRequest
from blockviz.symbols import bare, symbol


def token_grid(request: FigureRequest) -> Figure:
    """The layer's input: ``embed`` (+ ``pos_embed``) and ``resid_pre``, each ``(n, d_model)``;
    for a trained model's layer resid_pre is its hidden state, not their sum."""
    rec, page = request.record, request.page
    added = arch.has(rec, "pos_embed")
    names = ["embed", "pos_embed", "resid_pre"] if added else ["embed", "resid_pre"]
    columns = shared_columns(rec, names)
    titles = {
        "embed": "token embedding",
        "pos_embed": f"position ({rec.config.positional})",
        "resid_pre": f"{symbol('resid_pre', rec)} (residual stream)",
    }
    # a model's layer input is its hidden state; only layer 0 of GPT-2 (wte + wpe) and Llama (the token embedding) is the embeddings' sum itself
    model = rec.source.is_model and not (rec.source.layer == 0 and rec.source.family in ("gpt2", "llama"))
    scale = drawn_scale(rec, "resid_pre", [rec.tensors[name] for name in names], columns.shown)
    pieces = [field_panel(request, "embed", columns, titles["embed"], scale=scale)]
    if added:
        pieces += [operator(page, "+"), field_panel(request, "pos_embed", columns, titles["pos_embed"], scale=scale)]
    if model:
        layer = rec.source.layer
        through = (
            f"\u2192 layers 0\u2013{layer - 1} \u2192"
            if layer > 1
            else ("\u2192 layer 0 \u2192" if layer == 1 else "\u2192 embedding step \u2192")
        )
        pieces += [
            operator(page, through, scale=0.6),
            field_panel(request, "resid_pre", columns, titles["resid_pre"], role="residual", scale=scale),
        ]
        formula = r"$x = h_{" + str(rec.source.layer) + r"}$: the model's hidden state entering this layer"
    else:
        pieces += [
            operator(page, "="),
            field_panel(request, "resid_pre", columns, titles["resid_pre"], role="residual", scale=scale),
        ]
        formula = formulas.TOKEN_GRID if added else r"$x = \mathrm{embedding}$ (rotary positions turn q and k instead)"
    lines = heading(page, titled("token-grid", "one row of numbers per token, as wide as the residual stream"), formula)
    lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([scale], page))
    lines += hidden_notes(page, [(columns, "d_model")])
    if model:
        lines.append(
            note(
                page,
                f"{source_line(rec)}. $x$ is the real input of layer {rec.source.layer}: the embeddings after the model's "
                f"embedding step{' and layers before it' if rec.source.layer else ''}, so it is not embed + position",
                math=True,
            )
        )
    if not added:
        lines.append(
            note(
                page,
                "rotary positions: nothing is added to the embeddings; q and k are rotated by each position's angle (see qkv)",
            )
        )
    lines.append(
        note(
            page,
            f"{rec.n} tokens × a width of {rec.config.d_model} numbers"
            + (f"; {source_line(rec)}" if rec.source.is_model and not model else ""),
        )
    )
    return build_figure(lines, page)[0]


def queries_keys_values(request: FigureRequest) -> Figure:
    """Per head shown: its query, key and value ``(n, d_head)``; with rotary positions the query
    and key before and after rotation; with shared key/value heads, which one the head reads."""
    rec, page = request.record, request.page
    rotary = arch.has(rec, "query_rot", "key_rot")
    c = rec.config
    shared = c.kv_heads != c.n_heads
    lines = heading(
        page,
        titled("qkv", "one row per token, per head"),
        arch.qkv_formula(rec) + ((arch.ROTARY_FORMULA,) if rotary else ()),
    )
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
            columns = _with_column(
                choose_columns(arrays, c.d_head, largest=max(0, len(columns.largest) - 1)), most_turned
            )
            turned_notes.append(f"d{most_turned}" + (f" of head {head}" if len(request.heads) > 1 else ""))
        noted.append((columns, "d_head"))
        kv = f"kv head {g}" if shared else f"head {head}"

        def panel(name, title, role):
            return field_panel(
                request,
                name,
                columns,
                title,
                values=as_array(rec.tensors[name])[head],
                role=role,
                key=f"{name}[{head}]",
                scale=scale,
            )

        pieces = [panel("query", f"query Q, head {head}", "query")]
        if rotary:
            pieces += [operator(page, "rotary \u2192", scale=0.6), panel("query_rot", "Q rotated", "query")]
        pieces.append(panel("key", f"key K, {kv}", "key"))
        if rotary:
            pieces += [operator(page, "rotary \u2192", scale=0.6), panel("key_rot", "K rotated", "key")]
        pieces.append(panel("value", f"value V, {kv}", "value"))
        lines += numbers_flow(pieces, rec.n, page)
    lines.append(colorbar_line([scale], page))
    lines += hidden_notes(page, noted)
    if rotary:
        lines.append(
            note(
                page,
                "rotary positions: each feature pair (k, k + d_head/2) of q and k is turned by an angle that grows with the position; "
                "the scores are Q rotated \u00b7 K rotated; V is not rotated"
                + (
                    f"; of the columns of largest |value| one gives way to the column the rotation changes most ({', '.join(turned_notes)})"
                    if turned_notes
                    else ""
                ),
            )
        )
    if shared:
        lines.append(
            note(
                page,
                f"grouped-query attention: {c.n_heads} query heads share {c.kv_heads} key/value heads "
                f"({c.n_heads // c.kv_heads} query heads each); head h reads kv head h // {c.n_heads // c.kv_heads}",
            )
        )
    lines.append(
        note(
            page,
            f"{rec.n} × {c.d_head} each: {rec.n} tokens × each head's width, {c.d_head} numbers = the width / the heads = {c.d_model} / {c.n_heads}; {source_line(rec)}",
        )
    )
    return build_figure(lines, page)[0]


def _with_column(columns: Columns, index: int) -> Columns:
    """``columns`` and column ``index`` (counted among the largest)."""
    if index in columns.shown:
        return columns
    return Columns(
        tuple(sorted(columns.shown + (index,))), columns.total, tuple(sorted(columns.largest + (index,))), columns.edges
    )


def ffn(request: FigureRequest) -> Figure:
    """The FFN of the record: plain (widen, activate, narrow) or gated (gate and up, the
    activated gate times up, narrow), its input LN₂(h) (pre-norm) or h (post-norm), named as in
    the scenes (:mod:`blockviz.symbols`)."""
    rec, page = request.record, request.page
    c = rec.config
    x = arch.ffn_input(rec)
    act = arch.activation_name(rec)
    bias = c.bias
    model_columns = shared_columns(rec, [x])
    out_columns = shared_columns(rec, ["ffn_out"])
    lines = heading(page, titled("ffn", "widen, activate, narrow, row by row"), arch.ffn_formula(rec))
    x_title = f"{symbol(x, rec)} = {arch.norm_name(rec)}({symbol('resid_mid', rec)})"
    u = bare(symbol(x, rec))  # the FFN's input in formulas
    plus = (lambda kind: rf" + b_{{{kind}}}") if bias else (lambda kind: "")
    pieces = [field_panel(request, x, model_columns, x_title, role="residual")]
    if c.ffn == "gated":
        hidden = shared_columns(rec, ["ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post"])
        pieces += [
            operator(page, rf"$\cdot W_{{gate}}{plus('gate')}$", math=True, scale=0.7),
            field_panel(request, "ffn_gate", hidden, symbol("ffn_gate", rec), role="ffn"),
            operator(page, f"{act} \u2192", scale=0.7),
            field_panel(request, "ffn_gate_act", hidden, symbol("ffn_gate_act", rec), role="ffn"),
            operator(page, "\u2299"),
            field_panel(request, "ffn_up", hidden, rf"$u = {u}\, W_{{up}}{plus('up')}$", role="ffn"),
            operator(page, "="),
            field_panel(request, "ffn_post", hidden, symbol("ffn_post", rec), role="ffn"),
        ]
        names = [x, "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out"]
        shapes = f"{rec.n} × {c.d_model} \u2192 gate, up: {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_model}"
    else:
        hidden = shared_columns(rec, ["ffn_pre", "ffn_post"])
        pieces += [
            operator(page, rf"$\cdot W_{{in}}{plus('in')}$", math=True, scale=0.7),
            field_panel(request, "ffn_pre", hidden, symbol("ffn_pre", rec), role="ffn"),
            operator(page, f"{act} \u2192", scale=0.7),
            field_panel(request, "ffn_post", hidden, symbol("ffn_post", rec), role="ffn"),
        ]
        names = [x, "ffn_pre", "ffn_post", "ffn_out"]
        shapes = (
            f"{rec.n} × {c.d_model} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_ff} \u2192 {rec.n} × {c.d_model}"
        )
    pieces += [
        operator(page, rf"$\cdot W_{{out}}{plus('out')}$", math=True, scale=0.7),
        field_panel(request, "ffn_out", out_columns, symbol("ffn_out", rec), role="ffn"),
    ]
    lines += numbers_flow(pieces, rec.n, page)
    lines.append(
        colorbar_line(
            [record_scale(rec, name) for name in names],
            page,
        )
    )
    lines += hidden_notes(page, [(model_columns, "d_model"), (hidden, "d_ff"), (out_columns, "d_model")])
    gate = (
        f"; gated: {symbol('ffn_post', rec)}, cell by cell (the d_ff panels show the same columns)"
        if c.ffn == "gated"
        else ""
    )
    lines.append(
        note(
            page,
            f"{shapes}  (tokens × the width \u2192 tokens × the FFN's hidden width \u2192 tokens × the width){gate}",
            math=bool(gate),
        )
    )
    return build_figure(lines, page)[0]


def residual_stream(request: FigureRequest) -> Figure:
    """Each sublayer's output added to the stream, on the chosen token's row (``--token``),
    stacked so that each column adds up down the page: pre-norm x + attn(x) = h, + FFN(h) = y;
    post-norm normalises each sum (into h, then y) and the FFN adds to the normalised one. Rows
    are named as in the scenes (:mod:`blockviz.symbols`)."""
    rec, page, theme = request.record, request.page, request.theme
    post = rec.architecture.post_norm
    kind = arch.norm_name(rec)
    i = request.query
    d = rec.config.d_model
    names = (
        ["resid_pre", "attn_out", "resid_mid", "resid_mid_norm", "ffn_out", "resid_post", "resid_post_norm"]
        if post
        else ["resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post"]
    )
    signs = {"attn_out": "+ ", "ffn_out": "+ ", "resid_mid": "= ", "resid_post": "= "}
    signs.update({"resid_mid_norm": f"{kind} \u2192 ", "resid_post_norm": f"{kind} \u2192 "})
    steps = [(name, signs.get(name, "") + symbol(name, rec)) for name in names]
    rows = {name: as_array(rec.tensors[name])[i] for name, _ in steps}
    steps = approximate_sums(steps, rows, request.decimals)
    width = max(text_size_in(label, page.note, math=is_math_text(label))[0] for _, label in steps) * 1.06 + 0.05
    columns = row_columns([np.stack(list(rows.values()))], d, page, width, request.decimals)
    labels = feature_labels("d_model", d)
    lines = heading(
        page,
        titled("residual-stream", f"each sublayer adds to it; token {token_named(rec.tokens[i])} (position {i})"),
        arch.residual_formula(rec),
    )
    scale = drawn_scale(rec, "resid_pre", list(rows.values()), columns.shown)
    for index, (name, label) in enumerate(steps):
        piece = elided_piece(
            rows[name][None, :],
            columns,
            None,
            labels if index == 0 else [],
            scale,
            theme,
            page,
            name,
            request.decimals,
            token_rows=False,
        )
        lines.append(labelled_row(label_slot(label, width, page.note), piece))
        if post and name == "resid_mid_norm":
            lines.append(
                note(page, f"the FFN reads {symbol(name, rec)} and adds to it:", key="residual_between", math=True)
            )
    lines.append(colorbar_line([scale], page))
    lines += hidden_notes(page, [(columns, "d_model")])
    what = (
        f"post-norm: each sum is normalised ({kind}) and the FFN adds to the normalised {symbol('resid_mid_norm', rec)}"
        if post
        else "pre-norm: the sublayers read a normalised copy; the stream itself is only added to"
    )
    adds_up = "each column adds up down the page" + (
        "" if all(not label.startswith("≈") for _, label in steps) else " (≈: each number is rounded on its own)"
    )
    lines.append(
        note(
            page,
            f"{what}; {adds_up}; every field is {rec.n} × {d}, tokens × the width (this is row {i}); {source_line(rec)}",
            math=post,
        )
    )
    return build_figure(lines, page)[0]


def approximate_sums(steps: list[tuple[str, str]], rows: dict, decimals: int) -> list[tuple[str, str]]:
    """``steps`` with each "= sum" label written "≈ sum" where, in some column, the two numbers
    above it, each rounded to ``decimals`` as drawn, do not add up to the sum as drawn."""
    written = []
    for index, (name, label) in enumerate(steps):
        if label.startswith("= "):
            base, addend = rows[steps[index - 2][0]], rows[steps[index - 1][0]]
            shown = np.round(base, decimals) + np.round(addend, decimals)
            if not np.allclose(
                np.round(shown, decimals), np.round(rows[name], decimals), rtol=0, atol=0.5 * 10.0**-decimals
            ):
                label = "≈ " + label[2:]
        written.append((name, label))
    return written
