"""LayerNorm on one row, step by step, from the record's LayerNorm statistics (Ba et al. 2016):
mean, subtract it, variance, divide by √(var + ε), × γ, + β; before attention (ln1) and before
the FFN (ln2)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from blockviz.figures import formulas
from blockviz.figures.architecture import is_general
from blockviz.figures.heatmap import record_scale
from blockviz.figures.labels import text_size_in, token_label
from blockviz.figures.layout import Flow, TextLine, build_figure, fixed_piece, text_slot
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, feature_labels, heading, note
from blockviz.figures.request import FigureRequest
from blockviz.style import format_number

MONO = "monospace"
WRITTEN_TERMS = 8
"""Up to this many entries (d_model) the mean and variance are written term by term."""
NORMS = (("ln1", "resid_pre", "before attention"), ("ln2", "resid_mid", "before the FFN"))


def layer_norm(request: FigureRequest) -> Figure:
    """Figure: for the chosen token (``--token``; default the last), each LayerNorm's row: its
    input x (``resid_pre``, ``resid_mid``), the mean μ (``ln1_mean``), x − μ (``ln1_centred``),
    the variance σ² (``ln1_var``), x̂ = (x − μ) / √(σ² + ε) (``ln1_norm``), × γ, + β = ``ln1``.

    The mean and variance are written out with one more decimal than the grids, so that they
    add up; √(σ² + ε) is the one number computed here (from the record's σ² and ε). Another
    block's record (post-norm, RMSNorm): :func:`blockviz.figures.general_figures.layer_norm`.
    """
    if is_general(request.record):
        from blockviz.figures import general_figures

        return general_figures.layer_norm(request)
    rec, page, theme, decimals = request.record, request.page, request.theme, request.decimals
    i = request.query
    residual = record_scale(rec, "ln1")
    parameters = record_scale(rec, "ln1.weight", label="\u03b3, \u03b2")
    d = rec.config.d_model
    columns = feature_labels("d_model", d)
    lines = heading(page, f"LayerNorm: token {token_label(rec.tokens[i], 24)!r} (position {i}), one row, step by step", formulas.LAYER_NORM)
    steps_width = max(text_size_in(label, page.note)[0] for label in STEP_LABELS) * 1.06 + 0.05
    for name, source, where in NORMS:
        x = as_array(rec.tensors[source])[i]
        mean, var = float(rec.tensors[f"{name}_mean"][i]), float(rec.tensors[f"{name}_var"][i])
        centred, norm, out = (as_array(rec.tensors[field])[i] for field in (f"{name}_centred", f"{name}_norm", name))
        gamma, beta = as_array(rec.params[f"{name}.weight"]), as_array(rec.params[f"{name}.bias"])
        scale = math.sqrt(var + rec.config.ln_eps)
        lines.append(TextLine([f"{name}: LayerNorm {where}, x = {source}[{i}]"], page.title, key=f"{name}_title", options={"fontweight": "bold"}))

        def row(label: str, values, key: str, colour_scale=residual, labelled: bool = False) -> Flow:
            spec = MatrixSpec(np.asarray(values)[None, :], None, columns if labelled else [], token_rows=False)
            return Flow([fixed_piece(_label_slot(label, steps_width, page.note)), matrix_piece(spec, colour_scale, theme, page, key, decimals)], rows=1,
                        tight=not labelled)  # the steps of one row stacked closely, as a table's rows

        lines.append(row("x", x, f"{name}_x", labelled=True))
        lines += _work_lines(page, f"{name}_mean", mean_terms(x, mean, decimals))
        lines.append(row("x \u2212 \u03bc", centred, f"{name}_centred"))
        lines += _work_lines(page, f"{name}_var", variance_terms(centred, var, decimals))
        lines += _work_lines(page, f"{name}_scale", scale_terms(var, rec.config.ln_eps, scale, decimals))
        lines.append(row("\u00f7 \u221a(\u03c3\u00b2 + \u03b5)", norm, f"{name}_norm"))
        lines.append(row("\u00d7 \u03b3", gamma, f"{name}_gamma", parameters))
        lines.append(row("+ \u03b2", beta, f"{name}_beta", parameters))
        lines.append(row(f"= {name}", out, name))
    lines.append(colorbar_line([residual, parameters], page))
    lines.append(note(page, f"d_model = {d}; ε = {rec.config.ln_eps:g}; the variance divides by d_model (as torch.nn.LayerNorm); "
                            "work lines carry one more decimal than the grids"))
    return build_figure(lines, page)[0]


STEP_LABELS = ("x", "x \u2212 \u03bc", "\u00f7 \u221a(\u03c3\u00b2 + \u03b5)", "\u00d7 \u03b3", "+ \u03b2", "= ln2")


def _label_slot(label: str, width: float, size: float):
    slot = text_slot(label, size)
    slot.left = max(0.0, width - slot.width)  # labels right-aligned against their panels
    return slot


def _work_lines(page, key: str, parts: list[str]) -> list:
    """A written step (mean, variance, scale), wrapped at its "=" signs if the page is narrow."""
    return [TextLine(parts, page.number, key=key, family=MONO, words=False, tight=True)]


def mean_terms(x, mean: float, decimals: int) -> list[str]:
    """``μ = (x₀ + x₁ + …) / d = m`` in parts (each written number one more decimal than the grids)."""
    work = decimals + formulas.WORK_DECIMALS
    d = len(x)
    if d > WRITTEN_TERMS:
        return [f"\u03bc = mean of the {d} entries of x", f"= {format_number(mean, work)}"]
    entries = _signed_sum([format_number(float(value), work) for value in x])
    return [f"\u03bc = ({entries}) / {d}", f"= {format_number(mean, work)}"]


def variance_terms(centred, var: float, decimals: int) -> list[str]:
    """``σ² = ((x₀ − μ)² + …) / d = v``, each centred entry written with enough decimals that
    the squares add up to v within one unit of its last decimal."""
    work = decimals + formulas.WORK_DECIMALS
    d = len(centred)
    if d > WRITTEN_TERMS:
        return ["\u03c3\u00b2 = mean of the squares of x \u2212 \u03bc", f"= {format_number(var, work)}"]
    shown_var = formulas.shown(var, work)
    for entry_decimals in range(work, formulas.LARGEST_WORK_DECIMALS + 1):
        if abs(sum(formulas.shown(value, entry_decimals) ** 2 for value in centred) / d - shown_var) <= 10 ** -work:
            break
    squares = " + ".join(f"({format_number(float(value), entry_decimals)})\u00b2" if value < 0 else f"{format_number(float(value), entry_decimals)}\u00b2"
                         for value in centred)
    return [f"\u03c3\u00b2 = ({squares}) / {d}", f"= {format_number(var, work)}"]


def scale_terms(var: float, eps: float, scale: float, decimals: int) -> list[str]:
    """``√(σ² + ε) = √(v + ε) = s``, σ² with enough decimals that its square root reads s."""
    work = decimals + formulas.WORK_DECIMALS
    shown_scale = formulas.shown(scale, work)
    for var_decimals in range(work, formulas.LARGEST_WORK_DECIMALS + 1):
        if abs(math.sqrt(formulas.shown(var, var_decimals) + eps) - shown_scale) <= 10 ** -work:
            break
    return [f"\u221a(\u03c3\u00b2 + \u03b5) = \u221a({format_number(var, var_decimals)} + {eps:g})", f"= {format_number(scale, work)}"]


def _signed_sum(numbers: list[str]) -> str:
    """``["0.5", "−1.2", "3"]`` → ``"0.5 − 1.2 + 3"``."""
    text = numbers[0]
    for number in numbers[1:]:
        text += f" \u2212 {number[1:]}" if number.startswith("\u2212") else f" + {number}"
    return text
