"""Every number a figure shows is the record's: read the Text artists back and compare."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blockviz import BlockConfig, BlockvizError, record
from blockviz.figures import FigureRequest, draw_figure
from blockviz.figures.formulas import escape_mathtext, mixture_equation, vector_text
from blockviz.figures.request import other_mask_record, resolve_token
from blockviz.style import DARK, NEG_INF_LABEL, format_number

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
    limit = rec.scaled_scores.abs().max().item()  # every finite value; −∞ plays no part
    assert (mesh.norm.vmin, mesh.norm.vmax) == (pytest.approx(-limit), pytest.approx(limit))
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
    request = FigureRequest(rec, token=resolve_token(rec.tokens, "road"), head=1)
    figure = draw_figure("value-mixing", request)
    query, head = rec.tokens.index("road"), 1
    weights, values = rec.weights[head, query], rec.value[head]
    lines = shown(figure, "mixing_equation")
    terms = [line.lstrip("+ ") for line in lines[: query + 1]]
    assert terms == [f"{format_number(weights[j].item())}\u00b7{vector_text(values[j].tolist())}" for j in range(query + 1)]
    assert lines[-1] == "= " + vector_text(rec.head_outputs[head, query].tolist())
    assert sum(1 for line in lines if "blocked" in line) == rec.n - query - 1
    assert shown(figure, "mixing_weights") == expected(rec.weights[head, query])


def test_value_mixing_default_is_last_token_head_0_and_one_line_for_few_terms(short):
    figure = draw_figure("value-mixing", FigureRequest(short, token=1))
    one_line = figure_text(figure, "mixing_one_line")
    assert one_line == mixture_equation(short.weights[0, 1, :2].tolist(), short.value[0, :2].tolist(), short.head_outputs[0, 1].tolist())
    assert FigureRequest(short).query == short.n - 1 and FigureRequest(short).mixing_head == 0


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
    other = other_mask_record(custom)
    assert not other.config.causal
    assert all(other.params[name].equal(custom.params[name]) for name in custom.params)
    assert other.weights.equal(record("the cat sat", BlockConfig(causal=False), params=weights_file).weights)


def test_worked_example_numbers():
    figure = draw_figure("worked-example", FigureRequest(record("hi")))
    assert shown(figure, "example_scores") == ["0.00", format_number(math.log(3))]
    assert shown(figure, "example_weights") == ["0.25", "0.75"]
    assert shown(figure, "example_mixture") == ["0.50", "3.00"]
    equation = figure_text(figure, "example_equation")
    assert equation == "0.25\u00b7(2.00, 0.00) + 0.75\u00b7(0.00, 4.00) = (0.50, 3.00)"


def test_dark_theme_colours_the_page():
    figure = draw_figure("weights", FigureRequest(record("the cat sat"), theme=DARK))
    assert figure.get_facecolor()[:3] == pytest.approx(tuple(int(DARK.background[i:i + 2], 16) / 255 for i in (1, 3, 5)))


def test_resolve_token():
    tokens = ["The", "cat", "sat", "the", "end"]
    assert resolve_token(tokens, None) is None
    assert resolve_token(tokens, "cat") == 1
    assert resolve_token(tokens, "the") == 3  # exact match first
    assert resolve_token(tokens, "CAT") == 1
    assert resolve_token(tokens, "-1") == 4
    assert resolve_token(tokens, 2) == 2
    with pytest.raises(BlockvizError, match=r"token 'dog' is not in the sentence: choose one of 0 'The', 1 'cat'"):
        resolve_token(tokens, "dog")
    with pytest.raises(BlockvizError, match="outside the sentence of 5 tokens"):
        resolve_token(tokens, "9")


def test_head_out_of_range_is_a_blockviz_error(short):
    with pytest.raises(BlockvizError, match="head 2 does not exist: this block has 2 heads, numbered 0 to 1"):
        FigureRequest(short, head=2)


def test_formula_helpers():
    assert escape_mathtext("$5 and $6") == r"\$5 and \$6"
    assert vector_text([0.5, -3]) == "(0.50, \u22123.00)"
    assert vector_text(range(8)) == "(0.00, 1.00, 2.00, \u2026, 6.00, 7.00)"
    assert mixture_equation([0.25, 0.75], [(2, 0), (0, 4)], (0.5, 3)) == "0.25\u00b7(2.00, 0.00) + 0.75\u00b7(0.00, 4.00) = (0.50, 3.00)"
