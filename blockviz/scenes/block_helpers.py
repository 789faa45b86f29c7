"""Drawing objects for the whole-block scenes (multi-head, block flow, inside the FFN).

Built on :mod:`blockviz.scenes.grids`; everything takes real record tensors and computes nothing.

* :func:`row_grid` — one token's row ``(d,)`` of a record field as a 1 × d :class:`NumberGrid`.
* :func:`parameter_grid` — a parameter matrix (``W_O``, …); its labels' sources are
  ``("params", name, *index)``.
* :class:`ColumnSum` — rows stacked like a written addition (``a + b = c``), columns aligned.
* :func:`shape_text` — ``"13 × 4"``.
* :func:`activation_curve` — axes with the FFN's activation drawn from ``torch.nn.functional``
  and a dot at each (pre, post) value pair of the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from manim import DOWN, LEFT, RIGHT, UP, Axes, Dot, Line, VGroup, VMobject

from blockviz import style
from blockviz.record_fields import BY_NAME, axis_labels
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import (
    CAPTION_SIZE,
    CELL_WIDTH,
    HEADER_SIZE,
    MAX_SLOTS,
    NOTE_SIZE,
    NUMBER_SIZE,
    WORK_SIZE,
    Look,
)
from blockviz.scenes.text import number, numeral, text, typeset

TIMES = "\u00d7"

ACTIVATION_FORMULAS = {
    "gelu": r"$\mathrm{GELU}(@) = @\,\Phi(@),\ \ \Phi\mathrm{:\ normal\ CDF}$",
    "relu": r"$\mathrm{ReLU}(@) = \max(0,\,@)$",
    "gelu_tanh": r"$\mathrm{GELU}(@) \approx @\,\Phi(@)\ \mathrm{(tanh)},\ \ \Phi\mathrm{:\ normal\ CDF}$",
    "silu": r"$\mathrm{SiLU}(@) = @\,\sigma(@)$",
}
"""Hendrycks & Gimpel 2016 (GELU, exact erf form as ``torch.nn.functional.gelu``; GPT-2's tanh
approximation); Nair & Hinton 2010 (ReLU); Elfwing et al. 2018 (SiLU, Llama's gate). ``@``
stands for the variable (:func:`activation_formula`)."""


def activation_formula(activation: str, variable: str) -> str:
    """The mathtext of ``activation`` (a key of :data:`ACTIVATION_FORMULAS`) applied to
    ``variable`` (``"u"``, a plain FFN's hidden row; ``"g"``, a gated FFN's gate), as the
    scene's axes and rows name it. Raises ``KeyError`` for an unknown activation."""
    return ACTIVATION_FORMULAS[activation].replace("@", variable)


def shape_text(rows: int, columns: int) -> str:
    """``"rows × columns"``, as a grid's shape is said on screen."""
    return f"{rows} {TIMES} {columns}"


def row_grid(
    rec,
    field: str,
    i: int,
    name: str | None,
    look: Look,
    *,
    column_headers: bool = True,
    column_focus: int = 0,
    max_columns: int = MAX_SLOTS,
    header_color: str | None = None,
    cell_width: float = CELL_WIDTH,
    empty: bool = False,
    color_limit: float | None = None,
) -> NumberGrid:
    """Row ``i`` of the record's ``(n, d)`` field ``field`` as a 1 × d grid headed ``name``, on a
    scale chosen from its shown cells (or ``color_limit``, a scale one equation shares), its columns named by
    :func:`~blockviz.record_fields.axis_labels`.

    Label ``(0, j)`` has ``.source = (field, i, j)``; columns beyond ``max_columns`` are elided
    with ⋯ around ``column_focus``. ``empty`` draws blank cells to fill later.
    """
    row = rec.tensors[field][i]
    dimension = BY_NAME[field].shape[-1]
    columns = axis_labels(dimension, rec.tokens, len(row)) if column_headers else None
    return NumberGrid(
        row[None, :],
        [name] if name is not None else None,
        columns,
        look,
        source=lambda _, j: (field, i, j),
        color_limit=color_limit,
        column_focus=column_focus,
        max_columns=max_columns,
        row_header_color=header_color,
        cell_width=cell_width,
        filled=not empty,
        show_numbers=not empty,
        record=rec,
    )


def parameter_grid(rec, name: str, look: Look, values=None, index=None, **grid_options) -> NumberGrid:
    """The parameter ``rec.params[name]`` (or ``values``, a view of it such as ``b[None, :]``) as a
    grid on a colour scale chosen from its shown cells; label ``(i, j)`` has ``.source = ("params", name,
    *index(i, j))`` (default ``index(i, j) = (i, j)``)."""
    index = index or (lambda i, j: (i, j))
    values = rec.params[name] if values is None else values
    return NumberGrid(
        values,
        look=look,
        source=lambda i, j: ("params", name, *index(i, j)),
        record=rec,
        **grid_options,
    )


def regroup(scene, whole, *pieces) -> None:
    """Put ``whole`` in the scene in place of ``pieces`` of it that were added one by one (a grid's
    cells faded in as one group, its labels arriving one by one): later animations then move and
    layer it as one, labels above cells. Each piece must be a top-level mobject of ``scene``."""
    scene.remove(*pieces)
    scene.add(whole)


class ColumnSum(VGroup):
    """Rows stacked as a written addition, one term per line and the result under a rule::

            d0    d1    d2
          [x row          ]
        + [attn_out row   ]
        ───────────────────
        = [resid_mid row  ]

    ``terms`` and ``result`` are 1 × d :class:`NumberGrid` s with the same column slots (their
    column headers are hidden except the first term's). :meth:`register` tells the scene that each
    shown result label is the sum of the term labels above it.
    """

    def __init__(self, terms: Sequence[NumberGrid], result: NumberGrid, look: Look, gap: float = 0.16) -> None:
        super().__init__()
        self.terms, self.result = list(terms), result
        for grid in self.terms[1:] + [result]:  # one row of column headers (and ⋯) is enough
            row_headers = list(grid.row_headers.values())
            grid.header_group.remove(
                *(header for header in grid.header_group if not any(header is kept for kept in row_headers))
            )
            grid.column_headers = {}
        grids = self.terms + [result]
        for previous, grid in zip(grids, grids[1:]):
            grid.next_to(previous.cell_group, DOWN, buff=gap)
            grid.shift(RIGHT * (previous.cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        result.shift(DOWN * gap)
        left = min(grid.header_group.get_left()[0] for grid in grids if len(grid.header_group))
        self.signs = VGroup()
        adds = [([grid.labels[0, j] for grid in self.terms], result.labels[0, j]) for j in result.shown_columns()]
        equals = "=" if all(exact(parts, total) for parts, total in adds) else "≈"
        for grid, sign in zip(grids[1:], ["+"] * (len(grids) - 2) + [equals]):
            mark = text(sign, CAPTION_SIZE, look.text).move_to(grid.cell_group).set_x(left - 0.3)
            self.signs.add(mark)
        rule_y = (self.terms[-1].cell_group.get_bottom()[1] + result.cell_group.get_top()[1]) / 2
        self.rule = Line(LEFT, RIGHT, color=look.muted, stroke_width=2)
        self.rule.put_start_and_end_on([left - 0.45, rule_y, 0], [result.cell_group.get_right()[0], rule_y, 0])
        self.add(*grids, self.signs, self.rule)
        self.note = rounding_note(adds, look)
        if len(self.note):
            self.note.next_to(result.cell_group, DOWN, buff=0.15).align_to(self.rule, LEFT)
            self.add(self.note)

    def register(self, scene) -> int:
        """Note every fully shown column as a sum on ``scene``; returns how many."""
        count = 0
        for j in self.result.shown_columns():
            scene.shown_sum([grid.labels[0, j] for grid in self.terms], self.result.labels[0, j])
            count += 1
        return count


ROUNDING_NOTE = "≈: each number is rounded on its own"
ROUNDING_NOTE_ONE_LINE = ROUNDING_NOTE


def shown_value(value: float, decimals: int) -> float:
    """``value`` as it reads once written with ``decimals`` (:func:`blockviz.style.format_number`)."""
    return float(style.format_number(value, decimals).replace(style.MINUS, "-"))


def adds_up(terms: Sequence[float], total: float, decimals: int, total_decimals: int = 2) -> bool:
    """Whether ``terms`` written with ``decimals`` add up to ``total`` written with
    ``total_decimals`` within one unit of its last digit."""
    written = sum(shown_value(term, decimals) for term in terms)
    return abs(written - shown_value(total, total_decimals)) <= 10**-total_decimals + 1e-9


def adds_up_as_written(terms: Sequence[float], total: float, decimals: int = 2) -> bool:
    """Whether ``terms``, each written with ``decimals``, add up exactly to ``total`` written
    so (else a sign between them says "≈", or a note says each number is rounded on its own)."""
    return abs(sum(shown_value(term, decimals) for term in terms) - shown_value(total, decimals)) < 0.5 * 10**-decimals


def plus_before(term, look: Look, scale: float = 1.0) -> VGroup:
    """``+ term``: a muted "+" put left of ``term`` where it stands (a hidden keys' share beside
    a row of weights), so its row reads as the sum it is; ``scale`` the size ``term`` is drawn at.

    A negative ``term`` reads "− 0.02", never "+ −0.02": its own minus glyph is taken out (the
    label keeps its place, its ``.shown`` and ``.source``: the signed number it stands for) and a
    muted "−" stands where the "+" would."""
    sign = "+"
    if term.shown.startswith(style.MINUS) and len(term.submobjects) == len(term.shown.replace(" ", "")):
        term.remove(term.submobjects[0])
        sign = style.MINUS
    mark = text(sign, NUMBER_SIZE, look.muted).scale(scale).next_to(term, LEFT, buff=0.12 * scale)
    return VGroup(mark, term)


def sum_decimals(sums: Sequence[tuple[Sequence[float], float]], total_decimals: int = 2, most: int = 4) -> int:
    """The fewest decimals (from ``total_decimals``) at which every ``(terms, total)`` adds up
    within one unit of the total's last digit: a work line gets one more decimal than the grid
    only where rounding would otherwise break its sum."""
    for decimals in range(total_decimals, most + 1):
        if all(adds_up(terms, total, decimals, total_decimals) for terms, total in sums):
            return decimals
    return most


def exact(labels: Sequence, total) -> bool:
    """Whether shown ``labels`` add up to the shown ``total`` exactly (else it is written "≈")."""
    written = sum(float(label.shown.replace(style.MINUS, "-")) for label in labels)
    return abs(written - float(total.shown.replace(style.MINUS, "-"))) < 0.5 * 10 ** -max(
        label.decimals for label in [*labels, total]
    )


def adds_to(labels: Sequence, total: float) -> bool:
    """Whether shown ``labels`` add up to ``total`` (a fact such as softmax's 1, drawn as "1")
    exactly, at their most decimals (else the total is written "≈ 1")."""
    written = sum(float(label.shown.replace(style.MINUS, "-")) for label in labels)
    return abs(written - total) < 0.5 * 10 ** -max(label.decimals for label in labels)


def products_hold(firsts: Sequence, seconds: Sequence, products: Sequence) -> bool:
    """Whether every shown product is its two shown factors' product, rounded as it is shown
    (``firsts[k] × seconds[k] = products[k]``, all labels). A product of the record's unrounded
    numbers may differ in its last digit: then the line says "≈"."""

    def shown(label) -> float:
        return float(label.shown.replace(style.MINUS, "-"))

    return all(
        style.format_number(shown(a) * shown(b), product.decimals)
        == style.format_number(shown(product), product.decimals)
        for a, b, product in zip(firsts, seconds, products)
    )


def later_term(value: float, color: str, source: tuple, decimals: int = 2):
    """A term after the first in a written sum, at the work lines' size: a negative one is drawn
    "− 0.03" (its sign stands in for the "+"). ``.shown`` is the signed number (``"−0.03"``) it
    stands for."""
    label = number(value, WORK_SIZE, color, decimals, source=source)
    if not label.shown.startswith(style.MINUS):
        return label
    written = numeral(f"{style.MINUS} {label.shown[1:]}", WORK_SIZE, color)
    written.shown, written.value, written.decimals, written.source = (
        label.shown,
        label.value,
        label.decimals,
        label.source,
    )
    return written


def joined(parts: list, term, plus) -> list:
    """``parts`` with ``term`` (a later term of a written sum, from :func:`later_term`) joined on:
    after ``plus`` (a "+" text) unless the term is negative, whose own "− " is the operator."""
    return parts + ([term] if term.shown.startswith(style.MINUS) else [plus, term])


def rest_term(label, note, plus, color: str) -> list:
    """The hidden terms' one term (:func:`remainder`) written after others, with ``note`` ("(the
    rest)") between its operator and its number: "+ (the rest) 2.71" or "− (the rest) 2.71",
    never "(the rest) −2.71". A negative one is redrawn as its magnitude standing for the signed
    number (``.shown``, ``.value``, ``.decimals`` and ``.source`` as ``label``'s); ``plus`` is a
    "+" text, replaced by a "−" of its size and colour then."""
    if not label.shown.startswith(style.MINUS):
        return [plus, note, label]
    written = numeral(label.shown[1:], WORK_SIZE, color)
    written.shown, written.value, written.decimals, written.source = (
        label.shown,
        label.value,
        label.decimals,
        label.source,
    )
    minus = text(style.MINUS, WORK_SIZE, plus.get_fill_color().to_hex())
    return [minus, note, written]


def remainder(
    total: float,
    total_source: tuple,
    shown: Sequence[tuple[float, tuple]],
    font_size: float,
    color: str,
    decimals: int = 2,
):
    """The hidden terms of a sum as one number: the record's ``total`` less the ``shown`` terms
    ``(value, source)``. This is the record's total split for display (total − shown), so the
    shown terms and this one add up to the total; its source says so, ``("remainder",
    total_source, *shown sources)``."""
    value = total - sum(term for term, _ in shown)
    return number(
        value, font_size, color, decimals, source=("remainder", total_source, *(source for _, source in shown))
    )


def rounding_note(sums: Sequence[tuple[Sequence, object]], look: Look, one_line: bool = False) -> VGroup:
    """A small muted note that shown numbers are rounded, if some ``(parts, total)`` sum of
    shown labels does not add up exactly at the shown decimals; else an empty group.
    ``one_line`` gives the shorter note that ends a written line (:data:`ROUNDING_NOTE_ONE_LINE`)."""

    def units(label) -> int:
        return round(float(label.shown.replace("\u2212", "-")) * 10**label.decimals)

    if all(sum(units(part) for part in parts) == units(total) for parts, total in sums):
        return VGroup()
    return VGroup(text(ROUNDING_NOTE_ONE_LINE if one_line else ROUNDING_NOTE, NOTE_SIZE, look.muted))


DOT_RADIUS = 0.11
"""The radius of a row's entries as dots on the activation curve: their arrival a step the eye sees
(at 0.06, under 0.5 % of the picture: issue 36)."""


def activation_curve(
    pre: Sequence[float],
    post: Sequence[float],
    activation: str,
    look: Look,
    color: str,
    width: float = 4.6,
    height: float = 3.4,
    axis_names: tuple[str, str] = (r"$u$", r"$\mathrm{act}(u)$"),
):
    """Axes with ``activation`` drawn as its curve and a dot at each ``(pre[j], post[j])``.

    The curve is ``torch.nn.functional.<activation>`` applied to sample points (0 is always
    sampled, so ReLU's corner is sharp); the dots are placed at the record's values, so
    ``axes.p2c(dot.get_center())`` gives ``(pre[j], post[j])`` back.

    ``axis_names`` (mathtext) name the axes: the values in and out. Returns ``(axes, curve, dots,
    labels)``: ``dots[j]`` is value ``j``'s dot.
    """
    import torch

    from blockviz.block import ACTIVATION_FUNCTIONS

    function = ACTIVATION_FUNCTIONS[activation]  # the block's own: GPT-2's gelu_tanh too
    low = float(min(min(pre), -1.0))
    high = float(max(max(pre), 1.0))
    pad = 0.08 * (high - low)
    x_low, x_high = low - pad, high + pad
    samples = torch.linspace(x_low, x_high, 241, dtype=torch.float64)
    samples = torch.sort(torch.cat([samples, torch.zeros(1, dtype=torch.float64)])).values
    curve_values = function(samples)
    y_low = float(min(curve_values.min().item(), min(post), -0.25))
    y_high = float(max(curve_values.max().item(), max(post), 1.0))
    y_pad = 0.08 * (y_high - y_low)
    axes = Axes(
        x_range=[x_low, x_high, 1.0],
        y_range=[y_low - y_pad, y_high + y_pad, 1.0],
        x_length=width,
        y_length=height,
        axis_config={
            "color": look.muted,
            "stroke_width": 2,
            "include_ticks": True,
            "tick_size": 0.05,
            "include_tip": False,
        },
    )
    points = [axes.c2p(x, y) for x, y in zip(samples.tolist(), curve_values.tolist())]
    curve = VMobject(color=color, stroke_width=4).set_points_as_corners(points)
    dots = VGroup(
        *(Dot(axes.c2p(float(x), float(y)), radius=DOT_RADIUS, color=look.highlight) for x, y in zip(pre, post))
    )
    labels = VGroup(
        typeset(axis_names[0], HEADER_SIZE, look.muted)
        .next_to(axes.x_axis.get_right(), UP, buff=0.1)
        .align_to(axes.x_axis.get_right(), RIGHT),
        typeset(axis_names[1], HEADER_SIZE, look.muted)
        .next_to(axes.y_axis.get_top(), RIGHT, buff=0.12)
        .align_to(axes.y_axis.get_top(), UP),
        # The unit on each axis (ticks every 1): where the curve never is, right of and above 0.
        text("1", HEADER_SIZE, look.muted).next_to(axes.c2p(1, 0), DOWN, buff=0.1),
        text("1", HEADER_SIZE, look.muted).next_to(axes.c2p(0, 1), LEFT, buff=0.1),
    )
    return axes, curve, dots, labels


__all__ = [
    "shape_text",
    "row_grid",
    "parameter_grid",
    "regroup",
    "ColumnSum",
    "rounding_note",
    "activation_curve",
    "ACTIVATION_FORMULAS",
    "activation_formula",
    "TIMES",
    "sum_decimals",
    "adds_up",
    "exact",
    "products_hold",
    "remainder",
    "shown_value",
]
