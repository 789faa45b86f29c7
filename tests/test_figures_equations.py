"""Every equation a figure writes adds up: read the figures' Text artists back, parse the written
numbers and check each equation within one unit of the last digit of its shown result."""

from __future__ import annotations

import functools
import re

import pytest

from blockviz import record
from blockviz.figures import FigureRequest, draw_figure

SENTENCES = {3: "the cat sat", 13: "The chicken didn't cross the road because it was too tired.", 64: " ".join(f"w{i}" for i in range(64))}
NUMBER = r"\u2212?\d+\.\d+"
VECTOR = r"\(([^()]*)\)"


@functools.cache
def sentence_record(tokens: int):
    return record(SENTENCES[tokens])


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


@pytest.mark.parametrize(("tokens", "width"), [(3, 6.5), (13, 6.5), (13, 3.3), (64, 6.5), (64, 3.3)])
def test_value_mixing_adds_up(tokens, width):
    rec = sentence_record(tokens)
    for head in range(rec.config.n_heads):
        for query in sorted({rec.n // 2, rec.n - 1}):
            figure = draw_figure("value-mixing", FigureRequest(rec, token=query, head=head, width=width))
            assert check_value_mixing(figure) >= 2 * min(query + 1, 10)


def test_the_issues_example_adds_up_now():
    """The 13-token figure printed (0.35, 0.30) for written terms giving (0.37, 0.32)."""
    figure = draw_figure("value-mixing", FigureRequest(sentence_record(13), token=12))  # the issue wrote out the final "."
    check_value_mixing(figure)
    total = [text.get_text() for text in figure.texts if text.get_label() == "mixing_total"]
    assert total == ["z = (0.35, 0.30)"]


def test_value_mixing_checks_catch_a_sum_that_does_not_add_up():
    figure = draw_figure("value-mixing", FigureRequest(sentence_record(3), token=2))
    (total,) = [text for text in figure.texts if text.get_label() == "mixing_total"]
    total.set_text("z = (0.37, 0.32)")
    with pytest.raises(AssertionError, match="≠ 0.37"):
        check_value_mixing(figure)


WORKED = re.compile(rf"^(?P<w1>{NUMBER})\u00b7{VECTOR} \+ (?P<w2>{NUMBER})\u00b7{VECTOR} = {VECTOR} \+ {VECTOR} = {VECTOR}$")


@pytest.mark.parametrize("width", [6.5, 3.3, None])
def test_worked_example_adds_up(width):
    figure = draw_figure("worked-example", FigureRequest(sentence_record(3), width=width))
    texts = {text.get_label(): text.get_text() for text in figure.texts}
    match = WORKED.match(re.sub(r"\s+", " ", texts["example_equation"]))
    assert match, texts["example_equation"]
    w1, v1, w2, v2, p1, p2, z = match["w1"], vector(match[2]), match["w2"], vector(match[4]), vector(match[5]), vector(match[6]), vector(match[7])
    for index in range(2):
        assert adds_up([number(w1) * number(v1[index])], p1[index]) and adds_up([number(w2) * number(v2[index])], p2[index])
        assert adds_up([number(p1[index]), number(p2[index])], z[index])
    operators = [text.get_text() for text in figure.texts]
    (max_step,) = [text for text in operators if text.startswith("\u2212 max")]
    (sum_step,) = [text for text in operators if text.startswith("\u00f7 sum")]
    exps = [text.get_text() for text in figure.texts if text.get_label() == "example_exp_scores:cell"]
    weights = [text.get_text() for text in figure.texts if text.get_label() == "example_weights:cell"]
    exp_sum = re.search(NUMBER, sum_step)[0]
    assert adds_up([number(exp) for exp in exps], exp_sum)
    assert all(adds_up([number(exp) / number(exp_sum)], weight) for exp, weight in zip(exps, weights))
    assert re.search(NUMBER, max_step)[0] == "1.10"


MEAN = re.compile(rf"^\u03bc = \((?P<terms>[^()]*)\) / (?P<d>\d+) = (?P<mean>{NUMBER})$")
VARIANCE = re.compile(rf"^\u03c3\u00b2 = \((?P<squares>.*)\) / (?P<d>\d+) = (?P<var>{NUMBER})$")
SCALE = re.compile(rf"^\u221a\(\u03c3\u00b2 \+ \u03b5\) = \u221a\((?P<var>{NUMBER}) \+ (?P<eps>[0-9.e+-]+)\) = (?P<scale>{NUMBER})$")


def signed_terms(text: str) -> list[float]:
    """``"−0.716 − 0.585 + 1.042"`` → [-0.716, -0.585, 1.042]."""
    terms, sign = [], 1.0
    for item in text.split(" "):
        if item in ("+", "\u2212"):
            sign = -1.0 if item == "\u2212" else 1.0
        else:
            terms.append(sign * number(item))
    return terms


@pytest.mark.parametrize(("tokens", "width"), [(3, 6.5), (13, 3.3), (64, 6.5)])
def test_layer_norm_adds_up(tokens, width):
    rec = sentence_record(tokens)
    for query in sorted({0, rec.n - 1}):
        figure = draw_figure("layer-norm", FigureRequest(rec, token=query, width=width))
        texts = {text.get_label(): re.sub(r"\s+", " ", text.get_text()) for text in figure.texts if text.get_label()}
        for name, source in (("ln1", "resid_pre"), ("ln2", "resid_mid")):
            mean = MEAN.match(texts[f"{name}_mean"])
            assert mean, texts[f"{name}_mean"]
            terms = signed_terms(mean["terms"])
            assert len(terms) == int(mean["d"]) == rec.config.d_model
            assert adds_up([sum(terms) / len(terms)], mean["mean"])
            assert number(mean["mean"]) == pytest.approx(rec.tensors[f"{name}_mean"][query].item(), abs=unit(mean["mean"]) / 2)
            variance = VARIANCE.match(texts[f"{name}_var"])
            assert variance, texts[f"{name}_var"]
            squares = [number(item.strip().strip("()").rstrip("\u00b2").strip("()")) ** 2 for item in variance["squares"].split(" + ")]
            assert adds_up([sum(squares) / int(variance["d"])], variance["var"])
            scale = SCALE.match(texts[f"{name}_scale"])
            assert scale, texts[f"{name}_scale"]
            assert float(scale["eps"]) == rec.config.ln_eps
            assert adds_up([(number(scale["var"]) + float(scale["eps"])) ** 0.5], scale["scale"])


# -- any block's record: a trained model's layer, post-norm, RMSNorm, gated FFN --------------

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
    return [texts[row * cols:(row + 1) * cols] for row in range(rows)]


def check_sums(figure, left: str, right: str, result: str) -> int:
    """Every shown cell of ``left`` + ``right`` = ``result`` (panels sharing their columns)."""
    checked = 0
    for row_a, row_b, row_c in zip(grid(figure, left), grid(figure, right), grid(figure, result)):
        for a, b, c in zip(row_a, row_b, row_c):
            if GAP_TEXT in (a, b, c):
                assert a == b == c == GAP_TEXT, (a, b, c)
                continue
            assert abs(number(a) + number(b) - number(c)) <= (any_unit(a) + any_unit(b) + any_unit(c)) / 2 * 1.0001, f"{left} + {right}: {a} + {b} ≠ {c}"
            checked += 1
    return checked


def check_products(figure, left: str, right: str, result: str) -> int:
    checked = 0
    for row_a, row_b, row_c in zip(grid(figure, left), grid(figure, right), grid(figure, result)):
        for a, b, c in zip(row_a, row_b, row_c):
            if GAP_TEXT in (a, b, c):
                continue
            tolerance = abs(number(b)) * any_unit(a) / 2 + abs(number(a)) * any_unit(b) / 2 + any_unit(a) * any_unit(b) / 4 + any_unit(c) / 2
            assert abs(number(a) * number(b) - number(c)) <= tolerance * 1.0001, f"{a} ⊙ {b} ≠ {c}"
            checked += 1
    return checked


def texts_by_label(figure) -> dict[str, str]:
    return {text.get_label(): re.sub(r"\s+", " ", text.get_text()) for text in figure.texts if text.get_label()}


OTHERS = rf"(?: \+ \[(?P<k>\d+) others: (?P<rest>{ANY_NUMBER})\])?"
ANY_MEAN = re.compile(rf"^\u03bc = \((?P<terms>.*?){OTHERS}\) / (?P<d>\d+) = (?P<mean>{ANY_NUMBER})$")
SQUARES = re.compile(rf"^(?:\u03c3\u00b2|mean\(x\u00b2\)) = \((?P<squares>.*?){OTHERS}\) / (?P<d>\d+) = (?P<value>{ANY_NUMBER})$")
ANY_SCALE = re.compile(rf"^\u221a\((?:\u03c3\u00b2|mean\(x\u00b2\)) \+ \u03b5\) = \u221a\((?P<var>{ANY_NUMBER}) \+ (?P<eps>[0-9.e+-]+)\) = (?P<scale>{ANY_NUMBER})$")


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
        values = [number(item.strip().strip("()").rstrip("\u00b2").strip("()")) ** 2 for item in squares["squares"].split(" + ")]
        assert len(values) + int(squares["k"] or 0) == d
        total = sum(values) + (number(squares["rest"]) if squares["k"] else 0.0)
        assert abs(total / d - number(squares["value"])) <= any_unit(squares["value"]) * 1.0001, squares_text
        scale = ANY_SCALE.match(texts[f"{prefix}_scale"])
        assert scale, texts[f"{prefix}_scale"]
        assert float(scale["eps"]) == pytest.approx(rec.config.ln_eps, rel=1e-5)  # ε written with 6 digits (a float32 1e-5 reads 1e-05)
        assert abs((number(scale["var"]) + float(scale["eps"])) ** 0.5 - number(scale["scale"])) <= any_unit(scale["scale"]) * 1.0001
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
        return (check_sums(figure, "resid_pre", "attn_out", "resid_mid")
                + check_sums(figure, "resid_mid_norm" if post else "resid_mid", "ffn_out", "resid_post"))
    if name == "ffn" and rec.config.ffn == "gated":
        return check_products(figure, "ffn_gate_act:again" if "ffn_gate_act:again" in [ax.get_label() for ax in figure.axes] else "ffn_gate_act", "ffn_up", "ffn_post")
    if name == "token-grid" and (not rec.source.is_model or (rec.source.layer == 0 and rec.source.family == "gpt2")) and "pos_embed" in rec.tensors:
        return check_sums(figure, "embed", "pos_embed", "resid_pre")
    return 0


OTHER_BLOCKS = {
    "post-norm": dict(d_model=16, n_heads=2, d_ff=32, norm_placement="post", causal=False),
    "llama-like": dict(d_model=16, n_heads=4, d_ff=24, norm="rmsnorm", ffn="gated", positional="rotary", n_kv_heads=2, activation="silu", bias=False),
}
"""Blocks of other architectures, seeded: rows 16 wide (elided), numbers read back from the figures."""


@functools.cache
def other_block(name: str):
    from blockviz import BlockConfig

    return record(SENTENCES[13], BlockConfig(**OTHER_BLOCKS[name]))


@pytest.mark.parametrize("width", [6.5, 3.3])
@pytest.mark.parametrize("figure_name", ["value-mixing", "layer-norm", "residual-stream", "ffn", "token-grid"])
@pytest.mark.parametrize("block", sorted(OTHER_BLOCKS))
def test_other_blocks_add_up(block, figure_name, width):
    rec = other_block(block)
    for query in (rec.n // 2, rec.n - 1):
        figure = draw_figure(figure_name, FigureRequest(rec, token=query, head=rec.config.n_heads - 1, width=width))
        checked = check_figure_equations(figure, figure_name, rec)
        if figure_name in ("value-mixing", "layer-norm") or (width == 6.5 and figure_name == "residual-stream"):
            assert checked > 0
