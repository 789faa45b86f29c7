"""Every number a figure shows is the record's: read the Text artists back and compare."""

from __future__ import annotations

import dataclasses
import functools
import math
import re

import numpy as np
import pytest
import torch
from figure_cache import drawn as shared_drawn
from figure_cache import sentence_record as shared_record
from matplotlib.collections import QuadMesh
from matplotlib.colors import to_hex
from matplotlib.text import Text
from support_figures import (
    BLOCK_FIGURES,
    mixing_lines,  # a term's key and numbers are two Texts
)

from blockviz import BlockConfig, BlockvizError
from blockviz.block_record import record
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.formulas import mixture_equation, product_terms, vector_text
from blockviz.record_fields import axis_labels
from blockviz.scale_limits import nice_limit
from blockviz.style import (
    BLOCKED_WEIGHT_LABEL,
    DARK,
    LIGHT,
    NEG_INF_LABEL,
    SIGNED_CMAP,
    format_number,
    signed_color,
    weight_color,
)
from blockviz.tokens import display_token
from blockviz.worked_example import worked_example


def natural(rec, **choices) -> FigureRequest:
    """A request for figures at their natural size, where every cell's number is written."""
    return FigureRequest(rec, width=None, **choices)


@pytest.fixture
def rec(chicken_record):
    return chicken_record


@pytest.fixture
def short(cat_record):
    return cat_record


def axis_texts(figure, key: str, kind: str) -> list[str]:
    """The labels panel ``key`` wrote along its columns ("col"), rows ("row"), or its axis names ("xlabel", "ylabel")."""
    return [text.get_text() for text in figure.texts if text.get_label() == f"{key}:{kind}"]


def panel(figure, label):
    matches = [ax for ax in figure.axes if ax.get_label() == label]
    assert len(matches) == 1, [ax.get_label() for ax in figure.axes]
    return matches[0]


def shown(figure, label) -> list[str]:
    panel(figure, label)
    return [text.get_text() for text in figure.texts if text.get_label() == f"{label}:cell"]


def figure_text(figure, label) -> str:
    (text,) = [text for text in figure.texts if text.get_label() == label]
    return text.get_text()


def expected(tensor) -> list[str]:
    return [format_number(float(value)) for value in tensor.flatten().tolist()]


def expected_weights(rec, tensor, query: int | None = None) -> list[str]:
    """Weights as written: blocked keys read "0" (the blocked style), the others as every number."""
    blocked = rec.mask.isneginf() if query is None else rec.mask[query].isneginf()
    return [
        BLOCKED_WEIGHT_LABEL if flag else format_number(value)
        for value, flag in zip(tensor.flatten().tolist(), blocked.flatten().tolist())
    ]


def test_token_grid_shows_embed_pos_embed_and_resid_pre(rec):
    figure = drawn(rec, "token-grid")
    for name in ("embed", "pos_embed", "resid_pre"):
        assert shown(figure, name) == expected(getattr(rec, name))
    labels = axis_texts(figure, "embed", "row")
    assert labels == [f"\u201c{token}\u201d" if token == "." else token for token in rec.tokens]  # “.” quoted


def test_qkv_shows_every_head(short):
    figure = drawn(short, "qkv")
    for head in range(short.config.n_heads):
        for name in ("query", "key", "value"):
            assert shown(figure, f"{name}[{head}]") == expected(getattr(short, name)[head])


def test_scores_and_scaled_scores_per_head(rec):
    figure = drawn(rec, "scores")
    for head in range(2):
        assert shown(figure, f"scores[{head}]") == expected(rec.scores[head])
        assert shown(figure, f"scaled_scores[{head}]") == expected(rec.scaled_scores[head])
    panel(figure, "scores[0]")
    assert (axis_texts(figure, "scores[0]", "xlabel"), axis_texts(figure, "scores[0]", "ylabel")) == (
        ["key"],
        ["query"],
    )
    assert axis_texts(figure, "scores[0]", "col") == [
        f"\u201c{token}\u201d" if token == "." else token for token in rec.tokens
    ]  # “.” quoted


def test_head_option_limits_per_head_figures(rec):
    figure = draw_figure("scores", natural(rec, head=1))
    labels = {ax.get_label() for ax in figure.axes}
    assert "scores[1]" in labels and "scores[0]" not in labels
    assert shown(figure, "scores[1]") == expected(rec.scores[1])


def test_mask_cells_read_minus_infinity_and_zero(short):
    figure = drawn(short, "mask")
    n = short.n
    mask_texts = shown(figure, "mask")
    for i in range(n):
        for j in range(n):
            assert mask_texts[i * n + j] == (NEG_INF_LABEL if j > i else "0.00")
    for head in range(2):
        masked = shown(figure, f"masked_scores[{head}]")
        assert masked == expected(short.masked_scores[head])
        assert masked[1] == NEG_INF_LABEL and masked[n] == format_number(float(short.scaled_scores[head, 1, 0]))


def test_blocked_cells_have_the_one_blocked_style_and_do_not_stretch_the_colour_scale(rec):
    figure = drawn(rec, "mask")
    ax = panel(figure, "masked_scores[0]")
    grey = [patch for patch in ax.patches if to_hex(patch.get_facecolor()) == LIGHT.blocked]
    assert len(grey) == len(ax.patches) == rec.n - 1  # one run of blocked keys per query row but the last
    assert sum(patch.get_width() for patch in grey) == rec.n * (rec.n - 1) / 2
    weights = drawn(rec, "weights")
    assert [to_hex(patch.get_facecolor()) for patch in panel(weights, "weights[0]").patches] == [LIGHT.blocked] * (
        rec.n - 1
    )  # the same style
    mesh = ax.collections[0]
    heads = FigureRequest(rec).heads
    largest = rec.scaled_scores[heads][:, rec.mask == 0].abs().max().item()  # the cells the mask lets through
    vmin, vmax = mesh.norm.vmin, mesh.norm.vmax  # chosen from them (issue 36): −∞ plays no part
    assert vmin == -vmax and 0.75 * vmax <= largest <= vmax
    assert bool(np.ma.getmaskarray(mesh.get_array()).reshape(rec.n, rec.n)[0, 1])
    assert NEG_INF_LABEL in figure_text(figure, "legend") and "blocked" in figure_text(figure, "legend")


def test_weights_on_fixed_scale_blocked_cells_read_zero(rec):
    figure = drawn(rec, "weights")
    for head in range(2):
        ax = panel(figure, f"weights[{head}]")
        texts = shown(figure, f"weights[{head}]")
        assert texts == expected_weights(rec, rec.weights[head])
        assert texts[1] == "0" and rec.weights[head, 0, 1].item() == 0.0
        assert (ax.collections[0].norm.vmin, ax.collections[0].norm.vmax) == (0.0, 1.0)
    (bar,) = colour_bars(figure)
    assert bar_ticks(bar) == ["0.00", "0.05", "0.20", "0.50", "1.00"] and bar_title(bar) == "weight (\u221a scale)"


def test_value_mixing_writes_out_the_records_numbers(rec):
    request = natural(rec, token="road", head=1)
    figure = draw_figure("value-mixing", request)
    query, head = rec.tokens.index("road"), 1
    _weights, _values, products = rec.weights[head, query], rec.value[head], rec.weighted_values(head, query)
    lines = mixing_lines(figure)
    assert [key for key in lines if key.startswith("mixing_term:")] == [
        f"mixing_term:{j}" for j in range(query + 1)
    ]  # 7 allowed keys: all written
    for j in range(query + 1):
        line = re.sub(r"\(\s+", "(", re.sub(r"\s+", " ", lines[f"mixing_term:{j}"]))  # entries are padded to line up
        assert f" = {vector_text(products[j].tolist(), 3)}" in line, line
        assert re.search(r"\d\.\d{3,}\u00b7", line) and rec.tokens[j] in line, line
    assert lines["mixing_total"] == "z = " + vector_text(rec.head_outputs[head, query].tolist())
    assert "mixing_hidden" not in lines
    assert shown(figure, "mixing_weights") == expected_weights(rec, rec.weights[head, query], query)
    assert shown(figure, "mixing_values") == expected(rec.value[head])


def test_value_mixing_writes_the_largest_weights_and_one_term_for_the_rest(rec):
    query = FigureRequest(rec).query
    assert rec.tokens[query] == "tired" and query == rec.n - 2  # the default: the last word, not the final "."
    figure = drawn(rec, "value-mixing")  # 12 allowed keys
    lines = mixing_lines(figure)
    written = sorted(int(key.split(":")[1]) for key in lines if key.startswith("mixing_term:"))
    weights = rec.weights[0, query]
    assert len(written) == 9 and set(written) == set(weights.argsort(descending=True)[:9].tolist())
    hidden = [j for j in range(query + 1) if j not in written]
    assert lines["mixing_hidden"].startswith(f"+ {len(hidden)} other keys")
    assert re.sub(r"\(\s+", "(", re.sub(r"\s+", " ", lines["mixing_hidden"])).endswith(
        vector_text(rec.weighted_values(0, query)[hidden].double().sum(0).tolist(), 3)
    )
    assert FigureRequest(rec).mixing_head == 0


def test_token_is_chosen_by_the_one_selector():
    rec = record("the cat saw the dog")
    assert natural(rec, token="the#2").query == 3
    assert natural(rec, token="the").query == 0
    assert natural(rec, token="DOG").query == 4
    assert natural(rec, token="2").token == 2 == natural(rec, token=2).query
    assert natural(rec).token is None and natural(rec).query == 4
    figure = draw_figure("value-mixing", natural(rec, token="the#2"))
    assert figure_text(figure, "heading") == "Value mixing: query 'the' (position 3), head 0"
    for choice, message in [
        ("the#3", "'the' occurs 2 times, so the#3 does not exist"),
        ("the#0", "occurrences count from 1"),
        ("7", "token position 7 is outside the sentence of 5 tokens"),
        ("-1", "token '-1' is not in the sentence"),
        ("fox", "token 'fox' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat'"),
    ]:
        with pytest.raises(BlockvizError, match=message):
            natural(rec, token=choice)


def test_multi_head_shows_concat_output_projection_and_attn_out(short):
    figure = drawn(short, "multi-head")
    assert shown(figure, "concat") == expected(short.concat)
    assert shown(figure, "W_O") == expected(short.params["attn.W_O"])
    assert shown(figure, "attn_out") == expected(short.attn_out)
    for head in range(2):
        assert shown(figure, f"weights[{head}]") == expected_weights(short, short.weights[head])
        assert shown(figure, f"head_outputs[{head}]") == expected(short.head_outputs[head])


def test_ffn_and_residual_stream(short):
    ffn = drawn(short, "ffn")
    for name in ("ln2", "ffn_pre", "ffn_post", "ffn_out"):
        assert shown(ffn, name) == expected(getattr(short, name))
    stream = drawn(
        short, "residual-stream"
    )  # the chosen token's row of each, stacked: every column adds up down the page
    query = natural(short).query
    for name in ("resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post"):
        assert shown(stream, name) == expected(getattr(short, name)[query])


def test_block_flow_states_this_sentences_shapes(rec):
    figure = drawn(rec, "block-flow")
    texts = [text.get_text() for text in panel(figure, "flow").texts]
    assert "FFN (GELU)\n13 × 4 \u2192 13 × 8\n\u2192 13 × 4" in texts
    assert "multi-head attention\n2 heads × width 2\ncausal mask\n13 × 4 \u2192 13 × 4" in texts


def test_causal_vs_bidirectional_uses_a_bidirectional_record(short):
    figure = drawn(short, "causal-vs-bidirectional")
    open_record = record("the cat sat", BlockConfig(causal=False))
    for head in range(2):
        assert shown(figure, f"causal[{head}]") == expected_weights(short, short.weights[head])
        assert shown(figure, f"bidirectional[{head}]") == expected(open_record.weights[head])
    assert open_record.weights[0, 0, 1].item() > 0  # really unmasked


def test_other_mask_record_keeps_custom_weights(tmp_path):
    weights_file = tmp_path / "weights.safetensors"
    from blockviz.tensorfile import write_tensors

    write_tensors(weights_file, record("x", BlockConfig(seed=7)).params, {})
    custom = record("the cat sat", params=weights_file)
    other = natural(custom).other_mask_record
    assert not other.config.causal
    assert all(other.params[name].equal(custom.params[name]) for name in custom.params)
    assert other.weights.equal(record("the cat sat", BlockConfig(causal=False), params=weights_file).weights)


def test_worked_example_numbers(short):
    example = worked_example()
    figure = drawn(short, "worked-example")
    assert shown(figure, "example_scores") == ["0.00", format_number(math.log(3))] == expected(example.scores)
    assert shown(figure, "example_exp_scores") == ["0.33", "1.00"] == expected(example.exp_scores)
    assert shown(figure, "example_weights") == ["0.25", "0.75"]
    assert shown(figure, "example_values") == expected(example.values)
    assert shown(figure, "example_mixture") == ["0.50", "3.00"]
    operators = [text.get_text() for text in figure.texts]
    assert f"\u2212 max {format_number(math.log(3))}, exp \u2192" in operators and "\u00f7 sum 1.33 \u2192" in operators
    equation = figure_text(figure, "example_equation")
    assert equation == "0.25\u00b7(2.00, 0.00) + 0.75\u00b7(0.00, 4.00) = (0.50, 0.00) + (0.00, 3.00) = (0.50, 3.00)"


def test_dark_theme_colours_the_page(short):
    figure = draw_figure("weights", natural(short, theme=DARK))
    assert figure.get_facecolor()[:3] == pytest.approx(
        tuple(int(DARK.background[i : i + 2], 16) / 255 for i in (1, 3, 5))
    )


@pytest.mark.parametrize("head", [2, -1])
def test_head_out_of_range_is_a_blockviz_error(short, head):
    with pytest.raises(BlockvizError, match=f"head {head} does not exist: the block has 2 heads, choose heads 0 to 1"):
        natural(short, head=head)


def test_formula_helpers():
    assert vector_text([0.5, -3]) == "(0.50, \u22123.00)"
    assert vector_text(range(8)) == "(0.00, 1.00, 2.00, \u2026, 6.00, 7.00)"
    assert vector_text(range(8), max_items=4) == "(0.00, 1.00, \u2026, 7.00)"
    assert (
        mixture_equation([0.25, 0.75], [(2, 0), (0, 4)], (0.5, 3))
        == "0.25\u00b7(2.00, 0.00) + 0.75\u00b7(0.00, 4.00) = (0.50, 3.00)"
    )
    assert (
        mixture_equation([0.5], [(2, 0)], (1, 0), products=[(1, 0)])
        == "0.50\u00b7(2.00, 0.00) = (1.00, 0.00) = (1.00, 0.00)"
    )
    assert product_terms([0.5], [(2, -4)], [(1, -2)]) == ["0.50\u00b7(2.00, \u22124.00) = (1.00, \u22122.00)"]


# Every figure of the registry: each number shown and each colour scale is the record's.

NUMBER = re.compile(r"[\u2212-]?\d+\.\d{2}(?!\d)")


@functools.lru_cache(maxsize=4)
def record_numbers(rec, decimals: int = 2) -> set[str]:
    """Every number the figures may show for ``rec``, formatted: its tensors, its parameters, its
    counterpart's weights, the weighted values it gives, and the worked example's numbers."""
    tensors = [*rec.tensors.values(), *rec.params.values(), rec.counterpart(causal=not rec.config.causal).weights]
    tensors += [rec.weighted_values(head, query) for head in range(rec.config.n_heads) for query in range(rec.n)]
    tensors += [getattr(worked_example(), name.name) for name in dataclasses.fields(worked_example())]
    return {format_number(value, decimals) for tensor in tensors for value in tensor.double().flatten().tolist()}


def drawn(rec, name: str):
    """Figure ``name`` of ``rec`` at its natural size with the default choices, for tests that
    only read it: drawn once per session (:mod:`figure_cache`) when ``rec`` is its sentence's
    default record (config and parameters), else drawn now."""
    shared = shared_record(rec.sentence)
    if (
        rec.config == shared.config
        and rec.params.keys() == shared.params.keys()
        and all(torch.equal(value, shared.params[key]) for key, value in rec.params.items())
    ):
        return shared_drawn(name, rec.sentence, None)
    return draw_figure(name, natural(rec))


def numbers_shown(figure) -> list[str]:
    texts = [text for text in figure.findobj(Text) if text.get_visible() and not _in_colorbar(text)]
    return [number for text in texts for number in NUMBER.findall(text.get_text())]


def _in_colorbar(text) -> bool:
    return text.axes is not None and text.axes.get_label().startswith("colorbar")


@pytest.mark.parametrize("name", BLOCK_FIGURES)
@pytest.mark.parametrize("fixture", ["cat_record", "chicken_record"])
def test_every_number_shown_is_the_records(name, fixture, request):
    rec = request.getfixturevalue(fixture)
    allowed = record_numbers(rec)
    shown_numbers = numbers_shown(drawn(rec, name))
    assert shown_numbers or name == "block-flow"
    assert set(shown_numbers) <= allowed, sorted(set(shown_numbers) - allowed)[:5]


def signed_panels(figure) -> list:
    """Axes holding a heatmap on the diverging map (weights have their fixed 0–1 map)."""
    return [
        ax
        for ax in figure.axes
        if ax.collections and isinstance(ax.collections[0], QuadMesh) and ax.collections[0].cmap.name == SIGNED_CMAP
    ]


DRAWN_SCALE_FIGURES = ("token-grid", "layer-norm", "residual-stream")
"""Figures whose residual stream (and the norms' γ, β) is coloured on one scale chosen from the
cells they draw (:func:`blockviz.figures.heatmap.drawn_scale`), as a scene's frame is."""


@pytest.mark.parametrize("name", DRAWN_SCALE_FIGURES)
def test_a_figure_colours_each_family_on_one_scale_its_cells_fill(chicken_record, name):
    # the rows a residual addition adds share one scale; its largest drawn |value| reaches 60 %
    # of it (the user's token-grid was almost white on the record's ±10.41) and none is clipped
    by_kind: dict[str, list] = {}
    for ax in signed_panels(drawn(chicken_record, name)):
        kind = "norm_parameters" if ax.get_label().endswith(("_gamma", "_beta")) else "residual"
        by_kind.setdefault(kind, []).append(ax)
    assert "residual" in by_kind
    for kind, axes in by_kind.items():
        (limit,) = {ax.collections[0].norm.vmax for ax in axes}
        cells = np.concatenate([np.ma.compressed(ax.collections[0].get_array()) for ax in axes])
        largest = np.abs(cells[np.isfinite(cells)]).max()
        assert nice_limit(limit) == limit and 0.6 * limit <= largest <= limit, (kind, limit, largest)


@pytest.mark.parametrize(
    "name", [name for name in BLOCK_FIGURES if name not in ("worked-example", *DRAWN_SCALE_FIGURES)]
)
def test_every_signed_panel_uses_its_quantitys_one_scale(chicken_record, name):
    rec = chicken_record
    limits = {rec.scale_limit(quantity) for quantity in [*rec.tensors, *rec.params]}
    for ax in signed_panels(drawn(rec, name)):
        norm = ax.collections[0].norm
        assert norm.vmin == -norm.vmax, ax.get_label()
        shown = shown_scores(rec, ax.get_label())
        if shown is None:
            assert norm.vmax in limits, (ax.get_label(), norm.vmax)
        else:  # the scores: a scale chosen from what is shown, the largest reaching 75 % of it (issue 36)
            assert 0.75 * norm.vmax <= shown <= norm.vmax, (ax.get_label(), norm.vmax, shown)


def shown_scores(rec, label: str) -> float | None:
    """The largest |value| a scores panel's scale is chosen from — every raw score of the drawn
    heads, the scaled (and masked) scores where the mask lets them through — or ``None`` for
    another panel (on its record scale)."""
    name = label.split("[")[0]
    if name not in ("scores", "scaled_scores", "masked_scores"):
        return None
    heads = FigureRequest(rec).heads
    if name == "scores":
        return rec.scores[heads].abs().max().item()
    return rec.scaled_scores[heads][:, rec.mask == 0].abs().max().item()


PANEL_QUANTITIES = {
    "scores[0]": "scores",
    "scaled_scores[1]": "scaled_scores",
    "masked_scores[0]": "masked_scores",
    "mask": "mask",
    "query[0]": "query",
    "key[1]": "key",
    "value[0]": "value",
    "mixing_values": "value",
    "attn_out": "attn_out",
    "ffn_pre": "ffn_pre",
    "ffn_post": "ffn_post",
    "ln2": "ln2",
    "head_outputs[1]": "head_outputs",
    "concat": "concat",
    "W_O": "attn.W_O",
    "b_O": "attn.b_O",
}


def test_a_quantity_has_one_colour_scale_in_every_figure(chicken_record):
    rec = chicken_record
    found = {}
    for name in BLOCK_FIGURES:
        if name in DRAWN_SCALE_FIGURES:  # one scale chosen from their own cells
            continue
        for ax in signed_panels(drawn(rec, name)):
            if ax.get_label() in PANEL_QUANTITIES:
                found.setdefault(ax.get_label(), set()).add(ax.collections[0].norm.vmax)
    assert set(found) == set(PANEL_QUANTITIES)
    for label, limits in found.items():
        shown = shown_scores(rec, label)
        if shown is None:
            assert limits == {rec.scale_limit(PANEL_QUANTITIES[label])}, (
                label
            )  # the same in token-grid and residual-stream
        else:  # chosen from what is shown, and the same wherever the same cells are drawn
            ((limit,),) = [limits]
            assert 0.75 * limit <= shown <= limit, label
    assert (
        rec.scale_limit("scores") == rec.scale_limit("scaled_scores") == rec.scale_limit("masked_scores")
    )  # one family


def colour_bars(figure) -> list:
    return [ax for ax in figure.axes if ax.get_label() == "colorbar"]


def bar_labels(figure) -> list[str]:
    return [bar_title(ax) for ax in colour_bars(figure)]


def bar_title(bar) -> str:
    (title,) = [text.get_text() for text in bar.texts if text.get_label() == "title"]
    return title


def bar_ticks(bar) -> list[str]:
    return [text.get_text() for text in bar.texts if text.get_label() == "tick"]


def test_the_norms_gamma_and_beta_bar_is_their_own_scale(short):
    """γ = 1 and β = 0 in the seeded block: their bar ends at 1, not at the weights' 1.57."""
    figure = drawn(short, "layer-norm")
    (bar,) = [ax for ax in colour_bars(figure) if bar_title(ax) == "\u03b3, \u03b2"]
    norms = max(float(short.params[name].abs().max()) for name in ("ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias"))
    assert norms == 1.0 < short.scale_limit("attn.W_O")
    assert bar_ticks(bar)[-1] == format_number(norms) == "1.00"


def test_colour_bars_name_their_quantity_and_skip_a_quantity_of_zeros(short):
    assert not short.params["attn.b_O"].any()  # biases start at 0
    figure = drawn(short, "multi-head")
    bars = colour_bars(figure)
    assert bar_labels(figure) == ["weight (\u221a scale)", "heads' outputs", "residual stream", "W_O, b_O"]
    assert [bar_ticks(ax)[-1] for ax in bars[1:]] == [
        format_number(short.scale_limit(name)) for name in ("head_outputs", "attn_out", "attn.W_O")
    ]
    assert bar_labels(drawn(short, "ffn")) == ["residual stream", "FFN hidden layer"]
    assert bar_labels(drawn(short, "residual-stream")) == ["residual stream"]
    assert bar_labels(drawn(short, "mask")) == [
        "scores"
    ]  # raw, scaled and masked scores share one scale; M is all 0 or −∞
    assert bar_labels(drawn(short, "qkv")) == ["query, key, value"]


def test_colour_bar_ticks_are_written_like_every_number(short):
    for bar in colour_bars(drawn(short, "scores")):
        labels = bar_ticks(bar)
        assert labels and all(re.fullmatch(r"\u2212?\d+\.\d{2}", label) for label in labels), labels
    tiny = record(
        "the cat sat",
        params={
            **short.params,
            "attn.b_O": short.params["attn.b_O"] + 1e-4,
            "attn.W_O": short.params["attn.W_O"] * 0 + 1e-4,
        },
    )
    figure = drawn(tiny, "multi-head")
    (bar,) = [ax for ax in colour_bars(figure) if bar_title(ax) == "W_O, b_O"]
    labels = bar_ticks(bar)
    assert len(set(labels)) == len(labels) > 1 and all("e" not in label for label in labels), labels


def tick_texts(figure, key: str, axis: str = "x") -> list[str]:
    return axis_texts(figure, key, "col" if axis == "x" else "row")


def test_column_labels_are_the_records_axis_labels(short):
    config = short.config
    ffn = drawn(short, "ffn")
    assert (
        tick_texts(ffn, "ffn_pre")
        == [f"f{index}" for index in range(config.d_ff)]
        == axis_labels("d_ff", short.tokens, config.d_ff)
    )
    assert tick_texts(ffn, "ln2") == axis_labels("d_model", short.tokens, config.d_model)
    qkv = drawn(short, "qkv")
    assert tick_texts(qkv, "key[0]") == ["d0", "d1"] == axis_labels("d_head", short.tokens, config.d_head)
    multi = drawn(short, "multi-head")
    assert tick_texts(multi, "W_O", "y") == tick_texts(multi, "W_O") == ["d0", "d1", "d2", "d3"]


def test_activation_is_named_by_the_config():
    rec = record("the cat sat", BlockConfig(activation="relu"))
    ffn = drawn(rec, "ffn")
    assert axis_texts(ffn, "ffn_post", "title") == [r"$\mathrm{ReLU}(u)$"]
    flow = drawn(rec, "block-flow")
    assert any(text.get_text().startswith("FFN (ReLU)\n") for text in panel(flow, "flow").texts)


def test_tokens_are_drawn_as_display_tokens():
    rec = record("a\x01b \udcff c")
    assert "\x01" in rec.tokens and "\udcff" in rec.tokens
    figure = drawn(rec, "weights")
    assert tick_texts(figure, "weights[0]") == [display_token(token) for token in rec.tokens]
    assert "U+0001" in tick_texts(figure, "weights[0]") and "U+DCFF" in tick_texts(figure, "weights[0]")
    mixing = draw_figure("value-mixing", natural(rec, token=1))
    assert figure_text(mixing, "heading") == "Value mixing: query 'U+0001' (position 1), head 0"


def test_a_value_has_the_colour_the_style_gives_it_as_in_the_videos(rec):
    """Cells are coloured by the scenes' own functions: blockviz.style.signed_color on the
    quantity's record scale, weight_color for weights."""
    figure = drawn(rec, "multi-head")
    for label, quantity in (("concat", "concat"), ("W_O", "attn.W_O"), ("attn_out", "attn_out")):
        mesh = panel(figure, label).collections[0]
        values = np.asarray(mesh.get_array()).ravel()
        colours = mesh.cmap(mesh.norm(values))
        assert np.allclose(colours, [signed_color(value, rec.scale_limit(quantity)) for value in values]), label
    mesh = panel(figure, "weights[1]").collections[0]
    values = np.ma.getdata(mesh.get_array()).ravel()
    assert np.allclose(mesh.cmap(mesh.norm(values)), [weight_color(value) for value in values])
    flow = drawn(rec, "residual-stream")  # the rows added together are read on one scale
    assert panel(flow, "attn_out").collections[0].norm.vmax == panel(flow, "resid_pre").collections[0].norm.vmax


def mesh_norm(figure, label):
    return panel(figure, label).collections[0].norm


def test_layer_norm_shows_the_records_statistics_for_the_chosen_token(rec):
    query = rec.tokens.index("road")
    figure = draw_figure("layer-norm", natural(rec, token="road"))
    for name, source in (("ln1", "resid_pre"), ("ln2", "resid_mid")):
        assert shown(figure, f"{name}_x") == expected(rec.tensors[source][query])
        assert shown(figure, f"{name}_centred") == expected(rec.tensors[f"{name}_centred"][query])
        assert shown(figure, f"{name}_norm") == expected(rec.tensors[f"{name}_norm"][query])
        assert shown(figure, f"{name}_gamma") == expected(rec.params[f"{name}.weight"])
        assert shown(figure, f"{name}_beta") == expected(rec.params[f"{name}.bias"])
        assert shown(figure, name) == expected(rec.tensors[name][query])
        assert figure_text(figure, f"{name}_mean").endswith(
            f"= {format_number(rec.tensors[f'{name}_mean'][query].item(), 3)}"
        )
        assert figure_text(figure, f"{name}_var").endswith(
            f"= {format_number(rec.tensors[f'{name}_var'][query].item(), 3)}"
        )
    assert figure_text(figure, "heading").startswith(f"LayerNorm: token 'road' (position {query})")


def _extent(text, renderer):
    return text.get_window_extent(renderer)


def test_value_mixing_numbers_line_up_whatever_the_tokens_glyphs():
    """Emoji keys (Symbola, wider than the monospace digits) do not push their numbers right:
    every term's numbers start at one x, after every key, and their "=" signs stand in one column."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    rec = record("the \U0001f414 crossed \U0001f6e3\ufe0f and \U0001f355\U0001f355 ok")
    figure = draw_figure("value-mixing", FigureRequest(rec, token="ok", head=1))
    renderer = FigureCanvasAgg(figure).get_renderer()
    numbers = [text for text in figure.texts if text.get_label().startswith("mixing_term:")]
    keys = [text for text in figure.texts if text.get_label().startswith("mixing_key:")]
    assert len(numbers) == len(keys) == rec.n
    lefts = {round(_extent(text, renderer).x0, 1) for text in numbers}
    assert len(lefts) == 1, lefts
    assert max(_extent(text, renderer).x1 for text in keys) < min(lefts)
    assert len({text.get_text().index(" = ") for text in numbers}) == 1  # monospace: one column of "="
    assert any("\U0001f414" in text.get_text() for text in keys)


def test_value_mixing_writes_the_columns_its_value_panel_shows_with_one_number_format():
    """A wide head (d_head 32): the value panel shows some columns and ⋯; every written vector has
    exactly those columns (⋯ where the panel has ⋯), its entries the record's; every weight and
    value has the same number of decimals, every product too."""
    rec = record("the cat sat on the mat today", BlockConfig(d_model=64, n_heads=2, d_ff=16))
    head, query = 1, rec.n - 1
    figure = draw_figure("value-mixing", FigureRequest(rec, token=query, head=head, width=6.5))
    panel_columns = [text.get_text() for text in figure.texts if text.get_label() == "mixing_values:col"]
    assert "\u22ef" in panel_columns and len(panel_columns) < rec.config.d_head
    lines = mixing_lines(figure)
    values = rec.value[head].double().numpy()
    factor_decimals, product_decimals = set(), set()
    for j in range(query + 1):
        match = re.search(r"(\S+)\u00b7\(([^()]*)\) = \(([^()]*)\)$", lines[f"mixing_term:{j}"])
        weight, entries, products = (
            match[1],
            [e.strip() for e in match[2].split(",")],
            [e.strip() for e in match[3].split(",")],
        )
        assert len(entries) == len(products) == len(panel_columns)
        for label, entry, product in zip(panel_columns, entries, products):
            if label == "\u22ef":
                assert entry == product == "\u22ef"
            else:
                assert float(entry.replace("\u2212", "-")) == pytest.approx(
                    values[j, int(label[1:])], abs=0.6 * 10 ** -len(entry.split(".")[1])
                )
                factor_decimals.add(len(entry.split(".")[1]))
                product_decimals.add(len(product.split(".")[1]))
        factor_decimals.add(len(weight.split(".")[1]))
    assert len(factor_decimals) == 1 and product_decimals == {3}


def test_residual_stream_writes_approximately_where_the_rounded_column_does_not_add_up():
    import numpy as np

    from blockviz.figures.vectors import approximate_sums

    steps = [("a", "a"), ("b", "+ b"), ("c", "= c"), ("d", "+ d"), ("e", "= e")]
    # 0.29 + 0.01 as drawn is 0.30, but e = 0.305 + 0.0051 = 0.3101 is drawn 0.31: "≈ e"; 0.96 − 0.67 = 0.29 holds: "= c"
    rows = {
        "a": np.array([0.96]),
        "b": np.array([-0.67]),
        "c": np.array([0.29]),
        "d": np.array([0.0051]),
        "e": np.array([0.3101]),
    }
    assert [label for _, label in approximate_sums(steps, rows, 2)] == ["a", "+ b", "= c", "+ d", "≈ e"]


def test_causal_vs_bidirectional_claims_a_wider_spread_only_for_rows_the_mask_changes(short):
    figure = drawn(short, "causal-vs-bidirectional")
    open_record = record("the cat sat", BlockConfig(causal=False))
    changed = [i for i in range(3) if not torch.equal(open_record.weights[:, i], short.weights[:, i])]
    assert changed == [0, 1]  # "sat", the last token, sees every key with the mask or without it
    said = " ".join(text.get_text() for text in figure.texts)
    assert "every row's weights spread further" not in said
    assert "every row but the last spreads its weights further ('sat' sees every key either way)" in said


def test_a_turned_key_axis_keeps_a_quoted_dot_level(rec):
    figure = draw_figure("weights", FigureRequest(rec))  # the page's width: 13 keys, their labels turned
    rotations = {text.get_text(): text.get_rotation() for text in figure.texts if text.get_label() == "weights[0]:col"}
    assert rotations["because"] == 90  # the axis is turned
    assert rotations["\u201c.\u201d"] == 0  # “.” on its side reads as stray marks
