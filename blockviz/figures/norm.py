"""The record's two normalisations on one token's row, step by step, from the record's own
statistics: LayerNorm (Ba et al. 2016: mean, subtract it, variance, divide by √(σ² + ε), × γ,
+ β) or RMSNorm (Zhang & Sennrich 2019: mean of squares, divide by √(· + ε), × γ), of each
sublayer's input (pre-norm) or of each sum (post-norm).

The work lines (mean, variance, scale) carry one more decimal than the grids so that they add
up; a wide row's hidden columns are one term of each sum.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.cbook import is_math_text
from matplotlib.figure import Figure

from blockviz.figures import architecture as arch
from blockviz.figures import formulas
from blockviz.figures.elision import Columns, elided_piece
from blockviz.figures.heatmap import drawn_scale
from blockviz.figures.labels import text_size_in, token_named
from blockviz.figures.layout import TEXT_PAD_IN, TEXT_SLACK, Flow, TextLine, build_figure
from blockviz.figures.parts import (
    as_array,
    colorbar_line,
    feature_labels,
    heading,
    hidden_notes,
    label_slot,
    labelled_row,
    note,
    row_columns,
    signed_sum,
    work_line,
)
from blockviz.figures.request import FigureRequest
from blockviz.style import format_number
from blockviz.symbols import symbol


def layer_norm(request: FigureRequest) -> Figure:
    """The record's two normalisations on the chosen token's row, step by step: LayerNorm
    (mean, subtract, variance, ÷ √(σ² + ε), × γ, + β) or RMSNorm (mean of squares, ÷ √(· + ε),
    × γ; no mean subtracted), of each sublayer's input (pre-norm) or of each sum (post-norm)."""
    rec, page, theme, decimals = request.record, request.page, request.theme, request.decimals
    i = request.query
    rms = not rec.architecture.has_centring
    kind = arch.norm_name(rec)
    residual = drawn_scale(rec, "resid_pre", *_residual_rows(rec, i))
    drawn_norms = [f"{norm.prefix}.{kind}" for norm in arch.norms(rec) for kind in ("weight", "bias")]
    norm_parameters = [rec.params[name] for name in drawn_norms if name in rec.params]
    parameters = drawn_scale(
        rec,
        "ln1.weight",
        norm_parameters,
        tuple(range(rec.config.d_model)),
        label="\u03b3, \u03b2" if "ln1.bias" in rec.params else "\u03b3",
    )
    d = rec.config.d_model
    labels = feature_labels("d_model", d)
    bias = "ln1.bias" in rec.params
    lines = heading(
        page,
        f"{kind}: token {token_named(rec.tokens[i])} (position {i}), one row, step by step",
        arch.norm_formula(rec, bias),
    )
    step_labels = [
        "x",
        "x \u2212 \u03bc",
        "\u00f7 \u221a(\u03c3\u00b2 + \u03b5)",
        "\u00f7 \u221a(ms + \u03b5)",
        "\u00d7 \u03b3",
        "+ \u03b2",
        *(f"= {symbol(norm.output, rec)}" for norm in arch.norms(rec)),
    ]
    steps_width = (
        max(text_size_in(label, page.note, math=is_math_text(label))[0] for label in step_labels) * 1.06 + 0.05
    )
    noted: list = []
    for norm in arch.norms(rec):
        name = norm.prefix
        x = as_array(rec.tensors[norm.source])[i]
        normed, out = as_array(rec.tensors[f"{name}_norm"])[i], as_array(rec.tensors[norm.output])[i]
        gamma = as_array(rec.params[f"{name}.weight"])
        beta = as_array(rec.params[f"{name}.bias"]) if f"{name}.bias" in rec.params else None
        rows = [x, normed, out] + ([as_array(rec.tensors[f"{name}_centred"])[i]] if not rms else [])
        columns = row_columns([np.stack(rows)], d, page, steps_width, decimals)
        noted.append((columns, "d_model"))
        named = rf"$\mathrm{{LN}}_{name[-1]}$: "  # ln1 → LN₁, as the scenes write it
        source, output = symbol(norm.source, rec), symbol(norm.output, rec)
        lines.append(
            TextLine(
                [
                    _norm_title(
                        page,
                        f"{named}{kind} {norm.where}, row {i} of {source} \u2192 {output}",
                        f"{named}row {i} of {source} \u2192 {output}",
                    )
                ],
                page.title,
                key=f"{name}_title",
                math=True,
                options={"fontweight": "bold"},
            )
        )

        def row(label: str, values, key: str, colour_scale=residual, labelled: bool = False) -> Flow:
            piece = elided_piece(
                np.asarray(values)[None, :],
                columns,
                None,
                labels if labelled else [],
                colour_scale,
                theme,
                page,
                key,
                decimals,
                token_rows=False,
            )
            return labelled_row(label_slot(label, steps_width, page.note), piece, tight=not labelled)

        lines.append(row("x", x, f"{name}_x", labelled=True))
        if rms:
            mean_sq = float(rec.tensors[f"{name}_mean_sq"][i])
            lines.append(
                work_line(page, f"{name}_mean_sq", square_mean_terms(x, mean_sq, columns, decimals, "mean(x\u00b2)"))
            )
            lines.append(
                work_line(
                    page,
                    f"{name}_scale",
                    [
                        part.replace("\u03c3\u00b2", "mean(x\u00b2)")
                        for part in scale_terms(
                            mean_sq, rec.config.ln_eps, math.sqrt(mean_sq + rec.config.ln_eps), decimals
                        )
                    ],
                )
            )
            lines.append(row("\u00f7 \u221a(ms + \u03b5)", normed, f"{name}_norm"))
        else:
            mean, var = float(rec.tensors[f"{name}_mean"][i]), float(rec.tensors[f"{name}_var"][i])
            centred = as_array(rec.tensors[f"{name}_centred"])[i]
            lines.append(work_line(page, f"{name}_mean", mean_terms(x, mean, columns, decimals)))
            lines.append(row("x \u2212 \u03bc", centred, f"{name}_centred"))
            lines.append(
                work_line(page, f"{name}_var", square_mean_terms(centred, var, columns, decimals, "\u03c3\u00b2"))
            )
            lines.append(
                work_line(
                    page,
                    f"{name}_scale",
                    scale_terms(var, rec.config.ln_eps, math.sqrt(var + rec.config.ln_eps), decimals),
                )
            )
            lines.append(row("\u00f7 \u221a(\u03c3\u00b2 + \u03b5)", normed, f"{name}_norm"))
        lines.append(row("\u00d7 \u03b3", gamma, f"{name}_gamma", parameters))
        if beta is not None:
            lines.append(row("+ \u03b2", beta, f"{name}_beta", parameters))
        lines.append(row(f"= {output}", out, norm.output))
    lines.append(colorbar_line([residual, parameters], page))
    lines += hidden_notes(page, noted)
    what = (
        "RMSNorm divides each row by its root mean square: no mean is subtracted, no β; ms = mean(x\u00b2)"
        if rms
        else "the variance divides by the width (as torch.nn.LayerNorm)"
    )
    placement = (
        "post-norm: each sum (the titles name them) is normalised"
        if rec.architecture.post_norm
        else "pre-norm: each sublayer's input is normalised"
    )
    lines.append(
        note(
            page,
            f"{placement}; {what}; the width, {d} numbers; \u03b5 = {rec.config.ln_eps:g}; work lines carry one more decimal than the grids",
        )
    )
    return build_figure(lines, page)[0]


def _residual_rows(rec, i: int) -> tuple[list, tuple[int, ...]]:
    """The rows :func:`layer_norm` draws on the residual scale (each norm's input, centred,
    normalised and output rows of token ``i``) and the columns to read them at: all of them (each
    norm shows its own few)."""
    rows = []
    for norm in arch.norms(rec):
        names = [norm.source, f"{norm.prefix}_norm", norm.output]
        names += [f"{norm.prefix}_centred"] if rec.architecture.has_centring else []
        rows += [as_array(rec.tensors[name])[i] for name in names]
    return rows, tuple(range(rec.config.d_model))


def _norm_title(page, full: str, short: str) -> str:
    """A normalisation's title (mathtext): ``full`` if it fits one line of the page, else ``short``
    (the figure's last note says where each normalisation stands)."""
    return (
        full
        if text_size_in(full, page.title, math=True, weight="bold")[0] * TEXT_SLACK + TEXT_PAD_IN <= page.content_width
        else short
    )


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
    return [f"\u03bc = ({signed_sum(numbers)}) / {d}", f"= {format_number(mean, work)}"]


def square_mean_terms(values, result: float, columns: Columns, decimals: int, name: str) -> list[str]:
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
        total = sum(formulas.shown(values[j], entry_decimals) ** 2 for j in shown) + (
            formulas.shown(rest, work) if hidden else 0.0
        )
        if abs(total / d - target) <= 10**-work:
            break
    squares = [
        f"({format_number(float(values[j]), entry_decimals)})\u00b2"
        if values[j] < 0
        else f"{format_number(float(values[j]), entry_decimals)}\u00b2"
        for j in shown
    ]
    if hidden:
        squares.append(f"[{len(hidden)} others: {format_number(rest, work)}]")
    return [f"{name} = ({' + '.join(squares)}) / {d}", f"= {format_number(result, work)}"]


def scale_terms(var: float, eps: float, scale: float, decimals: int) -> list[str]:
    """``√(σ² + ε) = √(v + ε) = s``, σ² with enough decimals that its square root reads s."""
    work = decimals + formulas.WORK_DECIMALS
    shown_scale = formulas.shown(scale, work)
    for var_decimals in range(work, formulas.LARGEST_WORK_DECIMALS + 1):
        if abs(math.sqrt(formulas.shown(var, var_decimals) + eps) - shown_scale) <= 10**-work:
            break
    return [
        f"\u221a(\u03c3\u00b2 + \u03b5) = \u221a({format_number(var, var_decimals)} + {eps:g})",
        f"= {format_number(scale, work)}",
    ]
