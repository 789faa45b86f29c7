"""Every number a figure shows is the record's: read the Text artists back and compare."""

from __future__ import annotations

import dataclasses
import functools
import math
import re

import numpy as np
import pytest
from matplotlib.collections import QuadMesh
from matplotlib.text import Text

from blockviz import BlockConfig, BlockvizError, record
from blockviz.worked_example import worked_example
from blockviz.figures import FIGURE_NAMES, FIGURES, FigureRequest, draw_figure
from blockviz.figures.formulas import mixture_equation, product_terms, vector_text
from blockviz.record_fields import axis_labels
from blockviz.style import DARK, NEG_INF_LABEL, SIGNED_CMAP, format_number
from blockviz.tokens import display_token

from conftest import LONG_SENTENCE as LONG


@pytest.fixture
def rec(chicken_record):
    return chicken_record


@pytest.fixture
def short(cat_record):
    return cat_record


def panel(figure, label):
    matches = [ax for ax in figure.axes if ax.get_label() == label]
    assert len(matches) == 1, [ax.get_label() for ax in figure.axes]
    return matches[0]


def shown(figure, label) -> list[str]:
    return [text.get_text() for text in panel(figure, label).texts]


def figure_text(figure, label) -> str:
    (text,) = [text for text in figure.texts if text.get_label() == label]
    return text.get_text()


def expected(tensor) -> list[str]:
    return [format_number(float(value)) for value in tensor.flatten().tolist()]


def test_token_grid_shows_embed_pos_embed_and_resid_pre(rec):
    figure = draw_figure("token-grid", FigureRequest(rec))
    for name in ("embed", "pos_embed", "resid_pre"):
        assert shown(figure, name) == expected(getattr(rec, name))
    labels = [label.get_text() for label in panel(figure, "embed").get_yticklabels()]
    assert labels == rec.tokens


def test_qkv_shows_every_head(short):
    figure = draw_figure("qkv", FigureRequest(short))
    for head in range(short.config.n_heads):
        for name in ("query", "key", "value"):
            assert shown(figure, f"{name}[{head}]") == expected(getattr(short, name)[head])


def test_scores_and_scaled_scores_per_head(rec):
    figure = draw_figure("scores", FigureRequest(rec))
    for head in range(2):
        assert shown(figure, f"scores[{head}]") == expected(rec.scores[head])
        assert shown(figure, f"scaled_scores[{head}]") == expected(rec.scaled_scores[head])
    ax = panel(figure, "scores[0]")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key", "query")
    assert [label.get_text() for label in ax.get_xticklabels()] == rec.tokens


def test_head_option_limits_per_head_figures(rec):
    figure = draw_figure("scores", FigureRequest(rec, head=1))
    labels = {ax.get_label() for ax in figure.axes}
    assert "scores[1]" in labels and "scores[0]" not in labels
    assert shown(figure, "scores[1]") == expected(rec.scores[1])


def test_mask_cells_read_minus_infinity_and_zero(short):
    figure = draw_figure("mask", FigureRequest(short))
    n = short.n
    mask_texts = shown(figure, "mask")
    for i in range(n):
        for j in range(n):
            assert mask_texts[i * n + j] == (NEG_INF_LABEL if j > i else "0.00")
    for head in range(2):
        masked = shown(figure, f"masked_scores[{head}]")
        assert masked == expected(short.masked_scores[head])
        assert masked[1] == NEG_INF_LABEL and masked[n] == format_number(float(short.scaled_scores[head, 1, 0]))


def test_blocked_cells_are_hatched_and_do_not_stretch_the_colour_scale(rec):
    figure = draw_figure("mask", FigureRequest(rec))
    ax = panel(figure, "masked_scores[0]")
    hatched = [patch for patch in ax.patches if patch.get_hatch()]
    assert len(hatched) == rec.n - 1  # one run of blocked keys per query row but the last
    assert sum(patch.get_width() for patch in hatched) == rec.n * (rec.n - 1) / 2
    mesh = ax.collections[0]
    limit = max(rec.scores.abs().max().item(), rec.scaled_scores.abs().max().item())  # the scores family; −∞ plays no part
    assert (mesh.norm.vmin, mesh.norm.vmax) == (-rec.scale_limit("masked_scores"), rec.scale_limit("masked_scores"))
    assert rec.scale_limit("masked_scores") == pytest.approx(limit)
    assert bool(np.ma.getmaskarray(mesh.get_array()).reshape(rec.n, rec.n)[0, 1])
    legend_texts = [text.get_text() for legend in figure.legends for text in legend.get_texts()]
    assert any(NEG_INF_LABEL in text and "blocked" in text for text in legend_texts)


def test_weights_on_fixed_scale_blocked_cells_read_zero(rec):
    figure = draw_figure("weights", FigureRequest(rec))
    for head in range(2):
        ax = panel(figure, f"weights[{head}]")
        texts = [text.get_text() for text in ax.texts]
        assert texts == expected(rec.weights[head])
        assert texts[1] == "0.00" and rec.weights[head, 0, 1].item() == 0.0
        assert (ax.collections[0].norm.vmin, ax.collections[0].norm.vmax) == (0.0, 1.0)
    colorbars = [ax for ax in figure.axes if ax.get_label() == "colorbar"]
    assert colorbars and colorbars[0].get_ylim() == (0.0, 1.0)


def test_value_mixing_writes_out_the_records_numbers(rec):
    request = FigureRequest(rec, token="road", head=1)
    figure = draw_figure("value-mixing", request)
    query, head = rec.tokens.index("road"), 1
    weights, values, products = rec.weights[head, query], rec.value[head], rec.weighted_values(head, query)
    lines = shown(figure, "mixing_equation")
    terms = [line[2:] for line in lines[: query + 1]]
    assert terms == [f"{format_number(weights[j].item())}\u00b7{vector_text(values[j].tolist())} = {vector_text(products[j].tolist())}" for j in range(query + 1)]
    assert terms == product_terms(weights[: query + 1].tolist(), values[: query + 1].tolist(), products[: query + 1].tolist())
    assert lines[-1] == "z = " + vector_text(rec.head_outputs[head, query].tolist())
    assert sum(1 for line in lines if "blocked" in line) == rec.n - query - 1
    assert shown(figure, "mixing_weights") == expected(rec.weights[head, query])
    assert shown(figure, "mixing_values") == expected(rec.value[head])


def test_value_mixing_default_is_last_token_head_0_and_one_line_for_few_terms(short):
    figure = draw_figure("value-mixing", FigureRequest(short, token=1))
    one_line = figure_text(figure, "mixing_one_line")
    assert one_line == mixture_equation(short.weights[0, 1, :2].tolist(), short.value[0, :2].tolist(), short.head_outputs[0, 1].tolist())
    assert FigureRequest(short).query == short.n - 1 and FigureRequest(short).mixing_head == 0


def test_token_is_chosen_by_the_one_selector():
    rec = record("the cat saw the dog")
    assert FigureRequest(rec, token="the#2").query == 3
    assert FigureRequest(rec, token="the").query == 0
    assert FigureRequest(rec, token="DOG").query == 4
    assert FigureRequest(rec, token="2").token == 2 == FigureRequest(rec, token=2).query
    assert FigureRequest(rec).token is None and FigureRequest(rec).query == 4
    figure = draw_figure("value-mixing", FigureRequest(rec, token="the#2"))
    assert figure_text(figure, "heading") == "Value mixing: query 'the' (position 3), head 0"
    for choice, message in [("the#3", "'the' occurs 2 times, so the#3 does not exist"), ("the#0", "occurrences count from 1"),
                            ("7", "token position 7 is outside the sentence of 5 tokens"), ("-1", "token '-1' is not in the sentence"),
                            ("fox", "token 'fox' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat'")]:
        with pytest.raises(BlockvizError, match=message):
            FigureRequest(rec, token=choice)


def test_multi_head_shows_concat_output_projection_and_attn_out(short):
    figure = draw_figure("multi-head", FigureRequest(short))
    assert shown(figure, "concat") == expected(short.concat)
    assert shown(figure, "W_O") == expected(short.params["attn.W_O"])
    assert shown(figure, "attn_out") == expected(short.attn_out)
    for head in range(2):
        assert shown(figure, f"weights[{head}]") == expected(short.weights[head])
        assert shown(figure, f"head_outputs[{head}]") == expected(short.head_outputs[head])


def test_ffn_and_residual_stream(short):
    ffn = draw_figure("ffn", FigureRequest(short))
    for name in ("ln2", "ffn_pre", "ffn_post", "ffn_out"):
        assert shown(ffn, name) == expected(getattr(short, name))
    stream = draw_figure("residual-stream", FigureRequest(short))
    for name in ("resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post"):
        assert shown(stream, name) == expected(getattr(short, name))


def test_block_flow_states_this_sentences_shapes(rec):
    figure = draw_figure("block-flow", FigureRequest(rec))
    texts = [text.get_text() for text in panel(figure, "flow").texts]
    assert "FFN (GELU)\n13 × 4 \u2192 13 × 8 \u2192 13 × 4" in texts
    assert any("2 heads × d_head 2, causal mask" in text for text in texts)


def test_causal_vs_bidirectional_uses_a_bidirectional_record(short):
    figure = draw_figure("causal-vs-bidirectional", FigureRequest(short))
    open_record = record("the cat sat", BlockConfig(causal=False))
    for head in range(2):
        assert shown(figure, f"causal[{head}]") == expected(short.weights[head])
        assert shown(figure, f"bidirectional[{head}]") == expected(open_record.weights[head])
    assert open_record.weights[0, 0, 1].item() > 0  # really unmasked


def test_other_mask_record_keeps_custom_weights(tmp_path):
    weights_file = tmp_path / "weights.safetensors"
    from blockviz.tensorfile import write_tensors

    write_tensors(weights_file, record("x", BlockConfig(seed=7)).params, {})
    custom = record("the cat sat", params=weights_file)
    other = FigureRequest(custom).other_mask_record
    assert not other.config.causal
    assert all(other.params[name].equal(custom.params[name]) for name in custom.params)
    assert other.weights.equal(record("the cat sat", BlockConfig(causal=False), params=weights_file).weights)


def test_worked_example_numbers(short):
    example = worked_example()
    figure = draw_figure("worked-example", FigureRequest(short))
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
    figure = draw_figure("weights", FigureRequest(short, theme=DARK))
    assert figure.get_facecolor()[:3] == pytest.approx(tuple(int(DARK.background[i:i + 2], 16) / 255 for i in (1, 3, 5)))


@pytest.mark.parametrize("head", [2, -1])
def test_head_out_of_range_is_a_blockviz_error(short, head):
    with pytest.raises(BlockvizError, match=f"head {head} does not exist: the block has 2 heads, choose heads 0 to 1"):
        FigureRequest(short, head=head)


def test_formula_helpers():
    assert vector_text([0.5, -3]) == "(0.50, \u22123.00)"
    assert vector_text(range(8)) == "(0.00, 1.00, 2.00, \u2026, 6.00, 7.00)"
    assert mixture_equation([0.25, 0.75], [(2, 0), (0, 4)], (0.5, 3)) == "0.25\u00b7(2.00, 0.00) + 0.75\u00b7(0.00, 4.00) = (0.50, 3.00)"
    assert mixture_equation([0.5], [(2, 0)], (1, 0), products=[(1, 0)]) == "0.50\u00b7(2.00, 0.00) = (1.00, 0.00) = (1.00, 0.00)"
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


@functools.lru_cache(maxsize=None)
def drawn(rec, name: str):
    """Figure ``name`` of ``rec`` with the default choices, drawn once for the tests that only read it."""
    return draw_figure(name, FigureRequest(rec))


def numbers_shown(figure) -> list[str]:
    texts = [text for text in figure.findobj(Text) if text.get_visible() and not _in_colorbar(text)]
    return [number for text in texts for number in NUMBER.findall(text.get_text())]


def _in_colorbar(text) -> bool:
    return text.axes is not None and text.axes.get_label().startswith("colorbar")


@pytest.mark.parametrize("name", FIGURE_NAMES)
@pytest.mark.parametrize("fixture", ["cat_record", "chicken_record"])
def test_every_number_shown_is_the_records(name, fixture, request):
    rec = request.getfixturevalue(fixture)
    allowed = record_numbers(rec)
    shown_numbers = numbers_shown(drawn(rec, name))
    assert shown_numbers or name == "block-flow"
    assert set(shown_numbers) <= allowed, sorted(set(shown_numbers) - allowed)[:5]


def signed_panels(figure) -> list:
    """Axes holding a heatmap on the diverging map (weights have their fixed 0–1 map)."""
    return [ax for ax in figure.axes if ax.collections and isinstance(ax.collections[0], QuadMesh) and ax.collections[0].cmap.name == SIGNED_CMAP]


@pytest.mark.parametrize("name", [spec.name for spec in FIGURES if spec.name != "worked-example"])
def test_every_signed_panel_uses_its_quantitys_one_scale(chicken_record, name):
    rec = chicken_record
    limits = {rec.scale_limit(quantity) for quantity in [*rec.tensors, *rec.params]}
    for ax in signed_panels(drawn(rec, name)):
        norm = ax.collections[0].norm
        assert norm.vmin == -norm.vmax and norm.vmax in limits, (ax.get_label(), norm.vmax)


PANEL_QUANTITIES = {"scores[0]": "scores", "scaled_scores[1]": "scaled_scores", "masked_scores[0]": "masked_scores", "mask": "mask",
                    "query[0]": "query", "key[1]": "key", "value[0]": "value", "mixing_values": "value", "embed": "embed",
                    "resid_pre": "resid_pre", "attn_out": "attn_out", "ffn_pre": "ffn_pre", "ffn_post": "ffn_post", "ln2": "ln2",
                    "head_outputs[1]": "head_outputs", "concat": "concat", "W_O": "attn.W_O", "b_O": "attn.b_O"}


def test_a_quantity_has_one_colour_scale_in_every_figure(chicken_record):
    rec = chicken_record
    found = {}
    for spec in FIGURES:
        for ax in signed_panels(drawn(rec, spec.name)):
            if ax.get_label() in PANEL_QUANTITIES:
                found.setdefault(ax.get_label(), set()).add(ax.collections[0].norm.vmax)
    assert set(found) == set(PANEL_QUANTITIES)
    for label, limits in found.items():
        assert limits == {rec.scale_limit(PANEL_QUANTITIES[label])}, label  # the same in token-grid and residual-stream
    assert rec.scale_limit("scores") != rec.scale_limit("scaled_scores")


def colour_bars(figure) -> list:
    return [ax for ax in figure.axes if ax.get_label() == "colorbar"]


def test_colour_bars_name_their_quantity_and_skip_a_quantity_of_zeros(short):
    assert not short.params["attn.b_O"].any()  # biases start at 0
    figure = draw_figure("multi-head", FigureRequest(short))
    bars = colour_bars(figure)
    assert [ax.get_ylabel() for ax in bars] == ["weight", "z, concat", "W_O", "attn_out"]
    assert [ax.get_ylim()[1] for ax in bars[1:]] == pytest.approx([short.scale_limit(name) for name in ("head_outputs", "attn.W_O", "attn_out")])
    assert [ax.get_ylabel() for ax in colour_bars(draw_figure("ffn", FigureRequest(short)))] == ["ln2", "ffn_pre, ffn_post", "ffn_out"]
    assert [ax.get_ylabel() for ax in colour_bars(draw_figure("residual-stream", FigureRequest(short)))] == ["residual", "attn_out", "ffn_out"]
    assert [ax.get_ylabel() for ax in colour_bars(draw_figure("mask", FigureRequest(short)))] == ["scaled_scores"] * 2  # one per head; M is all 0 or −∞


def test_colour_bar_ticks_are_written_like_every_number(short):
    for bar in colour_bars(draw_figure("scores", FigureRequest(short))):
        labels = [label.get_text() for label in bar.get_yticklabels() if label.get_text()]
        assert labels and all(re.fullmatch(r"\u2212?\d+\.\d{2}", label) for label in labels), labels
        assert not bar.yaxis.get_offset_text().get_text()
    tiny = record("the cat sat", params={**short.params, "attn.b_O": short.params["attn.b_O"] + 1e-4})
    bar = colour_bars(draw_figure("multi-head", FigureRequest(tiny)))[3]
    assert bar.get_ylabel() == "b_O"
    labels = [label.get_text() for label in bar.get_yticklabels() if label.get_text()]
    assert len(set(labels)) == len(labels) > 1 and not bar.yaxis.get_offset_text().get_text(), labels


def tick_texts(ax, axis: str = "x") -> list[str]:
    return [label.get_text() for label in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def test_column_labels_are_the_records_axis_labels(short):
    config = short.config
    ffn = draw_figure("ffn", FigureRequest(short))
    assert tick_texts(panel(ffn, "ffn_pre")) == [f"f{index}" for index in range(config.d_ff)] == axis_labels("d_ff", short.tokens, config.d_ff)
    assert tick_texts(panel(ffn, "ln2")) == axis_labels("d_model", short.tokens, config.d_model)
    qkv = draw_figure("qkv", FigureRequest(short))
    assert tick_texts(panel(qkv, "key[0]")) == ["d0", "d1"] == axis_labels("d_head", short.tokens, config.d_head)
    multi = draw_figure("multi-head", FigureRequest(short))
    assert tick_texts(panel(multi, "W_O"), "y") == tick_texts(panel(multi, "W_O")) == ["d0", "d1", "d2", "d3"]


def test_activation_is_named_by_the_config():
    rec = record("the cat sat", BlockConfig(activation="relu"))
    ffn = draw_figure("ffn", FigureRequest(rec))
    assert panel(ffn, "ffn_post").get_title() == "ffn_post = ReLU(ffn_pre)"
    flow = draw_figure("block-flow", FigureRequest(rec))
    assert any(text.get_text().startswith("FFN (ReLU)\n") for text in panel(flow, "flow").texts)


def test_tokens_are_drawn_as_display_tokens():
    rec = record("a\x01b \udcff c")
    assert "\x01" in rec.tokens and "\udcff" in rec.tokens
    figure = draw_figure("weights", FigureRequest(rec))
    assert tick_texts(panel(figure, "weights[0]")) == [display_token(token) for token in rec.tokens]
    assert "U+0001" in tick_texts(panel(figure, "weights[0]")) and "U+DCFF" in tick_texts(panel(figure, "weights[0]"))
    mixing = draw_figure("value-mixing", FigureRequest(rec, token=1))
    assert figure_text(mixing, "heading") == "Value mixing: query 'U+0001' (position 1), head 0"
