"""Shared helpers of the figure tests: reading a figure's written equations back and checking each
adds up within one unit of the last digit of its shown result, and checking a figure is legible
on its page (no text under 6 pt, none overlapping, none outside the figure, numbers in their cells)."""

from __future__ import annotations

import re

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from blockviz.figures.context import quiet_glyphs
from blockviz.figures.page import MIN_PT
from blockviz.figures.registry import FIGURES

NUMBER = r"\u2212?\d+\.\d+"
VECTOR = r"\(([^()]*)\)"


def number(text: str) -> float:
    return float(text.replace("\u2212", "-"))


def unit(text: str) -> float:
    """One unit of the last digit of a written number: ``"0.35"`` → 0.01."""
    return 10.0 ** -len(text.split(".")[1])


def vector(text: str) -> list[str | None]:
    """The entries of a written vector, ``None`` for "…" (an elided run of entries)."""
    return [None if item.strip() in ("\u2026", "\u22ef") else item.strip() for item in text.split(",")]


def adds_up(terms: list[float], result: str) -> bool:
    return abs(sum(terms) - number(result)) <= unit(result) * 1.0001


TERM = re.compile(rf"^[+ ] (?P<key>.+?)\s+(?P<w>{NUMBER})\u00b7{VECTOR}\s+= {VECTOR}$")
HIDDEN = re.compile(rf"^\+ (?P<count>\d+) other keys?\s+= {VECTOR}$")
TOTAL = re.compile(rf"^z = {VECTOR}$")


def mixing_lines(figure) -> dict[str, str]:
    """The written sum of value mixing, by label (``mixing_term:<key>``, ``mixing_hidden``,
    ``mixing_total``), each term's line read as its key's Text and its numbers' Text together:
    ``"+ road  0.05·(…) = (…)"``."""
    texts = {text.get_label(): text.get_text() for text in figure.texts if text.get_label().startswith("mixing_")}
    lines = {}
    for label, text in texts.items():
        if label.startswith("mixing_term:"):
            lines[label] = texts["mixing_key:" + label.split(":")[1]] + "  " + text
        elif label == "mixing_hidden":
            lines[label] = texts["mixing_key:hidden"] + " " + text
        elif label == "mixing_total":
            lines[label] = text
    return lines


def check_value_mixing(figure) -> int:
    """Checks each term ``w·(v) = (p)`` and the sum of the products (and the hidden keys' term)
    against ``z``; returns the number of equations checked."""
    lines = mixing_lines(figure)
    products = []
    checked = 0
    for key, line in lines.items():
        if key.startswith("mixing_term:"):
            match = TERM.match(line)
            assert match, line
            weight, values, product = match["w"], vector(match[3]), vector(match[4])
            for v, p in zip(values, product):
                if v is not None:
                    assert adds_up([number(weight) * number(v)], p), f"{line}: {weight}·{v} ≠ {p}"
                    checked += 1
            products.append(product)
        elif key == "mixing_hidden":
            match = HIDDEN.match(line)
            assert match, line
            products.append(vector(match[2]))
    (total,) = [TOTAL.match(line) for key, line in lines.items() if key == "mixing_total"]
    assert total, lines
    for index, z in enumerate(vector(total[1])):
        if z is not None:
            terms = [number(product[index]) for product in products]
            assert adds_up(terms, z), f"{' + '.join(product[index] for product in products)} ≠ {z}"
            checked += 1
    return checked


def signed_terms(text: str) -> list[float]:
    """``"−0.716 − 0.585 + 1.042"`` → [-0.716, -0.585, 1.042]."""
    terms, sign = [], 1.0
    for item in text.split(" "):
        if item in ("+", "\u2212"):
            sign = -1.0 if item == "\u2212" else 1.0
        else:
            terms.append(sign * number(item))
    return terms


ANY_NUMBER = r"\u2212?\d+(?:\.\d+)?"
GAP_TEXT = "\u22ef"


def any_unit(text: str) -> float:
    """One unit of the last digit of a written number: "0.35" → 0.01, "164" → 1 (a model's
    numbers are written to fit their cells)."""
    return 10.0 ** -len(text.split(".")[1]) if "." in text else 1.0


def cell_texts(figure, key: str) -> list[str]:
    return [text.get_text() for text in figure.texts if text.get_label() == f"{key}:cell"]


def grid(figure, key: str) -> list[list[str]]:
    """Panel ``key``'s written cells, row by row (``⋯`` where columns are hidden)."""
    (ax,) = [ax for ax in figure.axes if ax.get_label() == key]
    rows, cols = ax.collections[0].get_array().shape
    texts = cell_texts(figure, key)
    if not texts:
        return []  # colour alone: nothing written, nothing to check
    assert len(texts) == rows * cols, f"{key}: {len(texts)} numbers for {rows} × {cols} cells"
    return [texts[row * cols : (row + 1) * cols] for row in range(rows)]


def check_sums(figure, left: str, right: str, result: str) -> int:
    """Every shown cell of ``left`` + ``right`` = ``result`` (panels sharing their columns)."""
    checked = 0
    for row_a, row_b, row_c in zip(grid(figure, left), grid(figure, right), grid(figure, result)):
        for a, b, c in zip(row_a, row_b, row_c):
            if GAP_TEXT in (a, b, c):
                assert a == b == c == GAP_TEXT, (a, b, c)
                continue
            assert abs(number(a) + number(b) - number(c)) <= (any_unit(a) + any_unit(b) + any_unit(c)) / 2 * 1.0001, (
                f"{left} + {right}: {a} + {b} ≠ {c}"
            )
            checked += 1
    return checked


def check_products(figure, left: str, right: str, result: str) -> int:
    checked = 0
    for row_a, row_b, row_c in zip(grid(figure, left), grid(figure, right), grid(figure, result)):
        for a, b, c in zip(row_a, row_b, row_c):
            if GAP_TEXT in (a, b, c):
                continue
            tolerance = (
                abs(number(b)) * any_unit(a) / 2
                + abs(number(a)) * any_unit(b) / 2
                + any_unit(a) * any_unit(b) / 4
                + any_unit(c) / 2
            )
            assert abs(number(a) * number(b) - number(c)) <= tolerance * 1.0001, f"{a} ⊙ {b} ≠ {c}"
            checked += 1
    return checked


def texts_by_label(figure) -> dict[str, str]:
    return {text.get_label(): re.sub(r"\s+", " ", text.get_text()) for text in figure.texts if text.get_label()}


OTHERS = rf"(?: \+ \[(?P<k>\d+) others: (?P<rest>{ANY_NUMBER})\])?"
ANY_MEAN = re.compile(rf"^\u03bc = \((?P<terms>.*?){OTHERS}\) / (?P<d>\d+) = (?P<mean>{ANY_NUMBER})$")
SQUARES = re.compile(
    rf"^(?:\u03c3\u00b2|mean\(x\u00b2\)) = \((?P<squares>.*?){OTHERS}\) / (?P<d>\d+) = (?P<value>{ANY_NUMBER})$"
)
ANY_SCALE = re.compile(
    rf"^\u221a\((?:\u03c3\u00b2|mean\(x\u00b2\)) \+ \u03b5\) = \u221a\((?P<var>{ANY_NUMBER}) \+ (?P<eps>[0-9.e+-]+)\) = (?P<scale>{ANY_NUMBER})$"
)


def check_norms(figure, rec) -> int:
    """The norm figure's written mean, variance (or mean of squares) and scale add up."""
    texts = texts_by_label(figure)
    d = rec.config.d_model
    checked = 0
    for prefix in ("ln1", "ln2"):
        if rec.config.norm == "layernorm":
            mean = ANY_MEAN.match(texts[f"{prefix}_mean"])
            assert mean, texts[f"{prefix}_mean"]
            terms = signed_terms(mean["terms"]) + ([number(mean["rest"])] if mean["k"] else [])
            assert len(terms) - (1 if mean["k"] else 0) + int(mean["k"] or 0) == int(mean["d"]) == d
            assert abs(sum(terms) / d - number(mean["mean"])) <= any_unit(mean["mean"]) * 1.0001
            squares_text = texts[f"{prefix}_var"]
        else:
            squares_text = texts[f"{prefix}_mean_sq"]
        squares = SQUARES.match(squares_text)
        assert squares, squares_text
        values = [
            number(item.strip().strip("()").rstrip("\u00b2").strip("()")) ** 2
            for item in squares["squares"].split(" + ")
        ]
        assert len(values) + int(squares["k"] or 0) == d
        total = sum(values) + (number(squares["rest"]) if squares["k"] else 0.0)
        assert abs(total / d - number(squares["value"])) <= any_unit(squares["value"]) * 1.0001, squares_text
        scale = ANY_SCALE.match(texts[f"{prefix}_scale"])
        assert scale, texts[f"{prefix}_scale"]
        assert float(scale["eps"]) == pytest.approx(
            rec.config.ln_eps, rel=1e-5
        )  # ε written with 6 digits (a float32 1e-5 reads 1e-05)
        assert (
            abs((number(scale["var"]) + float(scale["eps"])) ** 0.5 - number(scale["scale"]))
            <= any_unit(scale["scale"]) * 1.0001
        )
        checked += 3
    return checked


def check_figure_equations(figure, name: str, rec) -> int:
    """Every equation figure ``name`` writes, checked; the number checked."""
    post = rec.config.norm_placement == "post"
    if name == "value-mixing":
        return check_value_mixing(figure)
    if name == "layer-norm":
        return check_norms(figure, rec)
    if name == "residual-stream":
        return check_sums(figure, "resid_pre", "attn_out", "resid_mid") + check_sums(
            figure, "resid_mid_norm" if post else "resid_mid", "ffn_out", "resid_post"
        )
    if name == "ffn" and rec.config.ffn == "gated":
        return check_products(
            figure,
            "ffn_gate_act:again" if "ffn_gate_act:again" in [ax.get_label() for ax in figure.axes] else "ffn_gate_act",
            "ffn_up",
            "ffn_post",
        )
    if (
        name == "token-grid"
        and (not rec.source.is_model or (rec.source.layer == 0 and rec.source.family == "gpt2"))
        and "pos_embed" in rec.tensors
    ):
        return check_sums(figure, "embed", "pos_embed", "resid_pre")
    return 0


# -- legibility ------------------------------------------------------------------------------------

DPI = 50
UNHINTED = {"text.hinting": "none"}
"""Extents are measured at a low resolution for speed, with text unhinted so that its width is
that of its outlines, as in vector files and high-resolution PNGs (hinting at 50 dpi widens text
by up to 12 %)."""


def visible_texts(figure) -> list:
    """Every drawn, non-empty text of the figure: titles, tick labels, axis labels, annotations,
    and formulas (drawn as outlines: patches with a ``formula``)."""
    texts = [artist for artist in figure.findobj(Text) if artist.get_visible() and artist.get_text().strip()]
    formulas = [artist for artist in figure.artists if getattr(artist, "formula", None)]
    return [text for text in texts if not _is_hidden_tick(text)] + formulas


def shown(artist) -> str:
    return artist.get_text() if isinstance(artist, Text) else artist.formula


def _is_hidden_tick(text: Text) -> bool:
    # Tick label artists that no tick uses are never drawn.
    return text.axes is not None and text.get_label() == "" and text.get_text() == ""


def extents(figure, texts) -> np.ndarray:
    canvas = FigureCanvasAgg(figure)
    with quiet_glyphs(), matplotlib.rc_context(UNHINTED):
        renderer = (
            canvas.get_renderer()
        )  # every text is placed when drawn (figures draw no Axis, whose labels move at draw time)
        boxes = [text.get_window_extent(renderer) for text in texts]
    return np.array([[box.x0, box.y0, box.x1, box.y1] for box in boxes]).reshape(-1, 4)


def overlapping_pairs(boxes: np.ndarray, tolerance: float = 0.5) -> list[tuple[int, int]]:
    x0, y0, x1, y1 = (boxes[:, index][:, None] for index in range(4))
    overlap = (x0 < x1.T - tolerance) & (x0.T < x1 - tolerance) & (y0 < y1.T - tolerance) & (y0.T < y1 - tolerance)
    np.fill_diagonal(overlap, False)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(overlap)))]


def assert_legible(figure, width: float | None = None) -> None:
    """No two texts overlap, every text is inside the figure and at least 6 pt, every cell's
    number inside its cell; the figure is ``width`` inches wide (if given)."""
    figure.set_dpi(DPI)
    if width is not None:
        assert figure.get_size_inches()[0] == pytest.approx(width)
    texts = visible_texts(figure)
    small = [
        (shown(text), text.get_fontsize() if isinstance(text, Text) else text.fontsize)
        for text in texts
        if (text.get_fontsize() if isinstance(text, Text) else text.fontsize) < MIN_PT - 1e-9
    ]
    assert not small, small[:5]
    boxes = extents(figure, texts)
    pairs = overlapping_pairs(boxes)
    assert not pairs, [(shown(texts[i]), shown(texts[j])) for i, j in pairs[:5]]
    width_px, height_px = figure.canvas.get_width_height()
    inside = (
        (boxes[:, 0] >= -0.5)
        & (boxes[:, 1] >= -0.5)
        & (boxes[:, 2] <= width_px + 0.5)
        & (boxes[:, 3] <= height_px + 0.5)
    )
    assert inside.all(), [shown(texts[i]) for i in np.nonzero(~inside)[0][:5]]
    assert_numbers_in_their_cells(figure)


def cells(figure, key: str) -> list[Text]:
    """The numbers written on panel ``key``'s cells, row by row."""
    return [text for text in figure.texts if text.get_label() == f"{key}:cell"]


def assert_numbers_in_their_cells(figure) -> None:
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        texts = cells(figure, ax.get_label())
        if not texts or not ax.collections:
            continue
        rows, cols = ax.collections[0].get_array().shape
        assert len(texts) == rows * cols, ax.get_label()
        box = ax.get_window_extent(renderer)
        cell_w, cell_h = box.width / cols, box.height / rows
        for index, text in enumerate(texts):
            row, col = divmod(index, cols)
            extent = text.get_window_extent(renderer)
            left, top = box.x0 + col * cell_w, box.y1 - row * cell_h
            assert left - 0.5 <= extent.x0 and extent.x1 <= left + cell_w + 0.5, (ax.get_label(), text.get_text())
            assert top - cell_h - 0.5 <= extent.y0 and extent.y1 <= top + 0.5, (ax.get_label(), text.get_text())


TRAINED_ONLY = ("prediction", "training")
"""Figures of a trained toy model's record only (its unembedding, its model folder's checkpoints):
skipped for other records (:func:`~blockviz.figures.registry.skip_reason`), tested in test_figures_prediction."""
BLOCK_FIGURES = tuple(spec.name for spec in FIGURES if spec.applies is None)
"""The figures every block's record draws (the others need more: an unembedding, a model folder,
a stack of blocks, a repeated word; :data:`blockviz.record_needs.NEEDS`)."""
