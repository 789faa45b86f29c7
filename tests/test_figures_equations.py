"""Every equation a figure writes adds up: read the figures' Text artists back, parse the written
numbers and check each equation within one unit of the last digit of its shown result."""

from __future__ import annotations

import functools
import re

import pytest
from support_figures import (
    NUMBER,
    VECTOR,
    adds_up,
    check_figure_equations,
    check_value_mixing,
    number,
    signed_terms,
    unit,
    vector,
)

from blockviz.block_record import record
from blockviz.figures import FigureRequest, draw_figure

SENTENCES = {
    3: "the cat sat",
    13: "The chicken didn't cross the road because it was too tired.",
    64: " ".join(f"w{i}" for i in range(64)),
}


@functools.cache
def sentence_record(tokens: int):
    return record(SENTENCES[tokens])


@pytest.mark.parametrize(("tokens", "width"), [(3, 6.5), (13, 6.5), (13, 3.3), (64, 6.5), (64, 3.3)])
def test_value_mixing_adds_up(tokens, width):
    rec = sentence_record(tokens)
    for head in range(rec.config.n_heads):
        for query in sorted({rec.n // 2, rec.n - 1}):
            figure = draw_figure("value-mixing", FigureRequest(rec, token=query, head=head, width=width))
            assert check_value_mixing(figure) >= 2 * min(query + 1, 10)


def test_the_issues_example_adds_up_now():
    """The 13-token figure printed (0.35, 0.30) for written terms giving (0.37, 0.32)."""
    figure = draw_figure(
        "value-mixing", FigureRequest(sentence_record(13), token=12)
    )  # the issue wrote out the final "."
    check_value_mixing(figure)
    total = [text.get_text() for text in figure.texts if text.get_label() == "mixing_total"]
    assert total == ["z = (0.35, 0.30)"]


def test_value_mixing_checks_catch_a_sum_that_does_not_add_up():
    figure = draw_figure("value-mixing", FigureRequest(sentence_record(3), token=2))
    (total,) = [text for text in figure.texts if text.get_label() == "mixing_total"]
    total.set_text("z = (0.37, 0.32)")
    with pytest.raises(AssertionError, match="≠ 0.37"):
        check_value_mixing(figure)


WORKED = re.compile(
    rf"^(?P<w1>{NUMBER})\u00b7{VECTOR} \+ (?P<w2>{NUMBER})\u00b7{VECTOR} = {VECTOR} \+ {VECTOR} = {VECTOR}$"
)


@pytest.mark.parametrize("width", [6.5, 3.3, None])
def test_worked_example_adds_up(width):
    figure = draw_figure("worked-example", FigureRequest(sentence_record(3), width=width))
    texts = {text.get_label(): text.get_text() for text in figure.texts}
    match = WORKED.match(re.sub(r"\s+", " ", texts["example_equation"]))
    assert match, texts["example_equation"]
    w1, v1, w2, v2, p1, p2, z = (
        match["w1"],
        vector(match[2]),
        match["w2"],
        vector(match[4]),
        vector(match[5]),
        vector(match[6]),
        vector(match[7]),
    )
    for index in range(2):
        assert adds_up([number(w1) * number(v1[index])], p1[index]) and adds_up(
            [number(w2) * number(v2[index])], p2[index]
        )
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
SCALE = re.compile(
    rf"^\u221a\(\u03c3\u00b2 \+ \u03b5\) = \u221a\((?P<var>{NUMBER}) \+ (?P<eps>[0-9.e+-]+)\) = (?P<scale>{NUMBER})$"
)


@pytest.mark.parametrize(("tokens", "width"), [(3, 6.5), (13, 3.3), (64, 6.5)])
def test_layer_norm_adds_up(tokens, width):
    rec = sentence_record(tokens)
    for query in sorted({0, rec.n - 1}):
        figure = draw_figure("layer-norm", FigureRequest(rec, token=query, width=width))
        texts = {text.get_label(): re.sub(r"\s+", " ", text.get_text()) for text in figure.texts if text.get_label()}
        for name, _source in (("ln1", "resid_pre"), ("ln2", "resid_mid")):
            mean = MEAN.match(texts[f"{name}_mean"])
            assert mean, texts[f"{name}_mean"]
            terms = signed_terms(mean["terms"])
            assert len(terms) == int(mean["d"]) == rec.config.d_model
            assert adds_up([sum(terms) / len(terms)], mean["mean"])
            assert number(mean["mean"]) == pytest.approx(
                rec.tensors[f"{name}_mean"][query].item(), abs=unit(mean["mean"]) / 2
            )
            variance = VARIANCE.match(texts[f"{name}_var"])
            assert variance, texts[f"{name}_var"]
            squares = [
                number(item.strip().strip("()").rstrip("\u00b2").strip("()")) ** 2
                for item in variance["squares"].split(" + ")
            ]
            assert adds_up([sum(squares) / int(variance["d"])], variance["var"])
            scale = SCALE.match(texts[f"{name}_scale"])
            assert scale, texts[f"{name}_scale"]
            assert float(scale["eps"]) == rec.config.ln_eps
            assert adds_up([(number(scale["var"]) + float(scale["eps"])) ** 0.5], scale["scale"])


# -- any block's record: a trained model's layer, post-norm, RMSNorm, gated FFN --------------


OTHER_BLOCKS = {
    "post-norm": dict(d_model=16, n_heads=2, d_ff=32, norm_placement="post", causal=False),
    "llama-like": dict(
        d_model=16,
        n_heads=4,
        d_ff=24,
        norm="rmsnorm",
        ffn="gated",
        positional="rotary",
        n_kv_heads=2,
        activation="silu",
        bias=False,
    ),
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
