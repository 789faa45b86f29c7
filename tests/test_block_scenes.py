"""The whole-block scenes (multi-head, block flow, inside the FFN) and LayerNorm: what each shows of the record,
up to 64 tokens and d_model 16 / d_ff 64. Their numbers, sums and legibility are checked with every
other catalogued scene's in test_scenes.py; builds are shared (tests/support.py). Every catalogued
scene also renders to a tiny real video here (marked ``render``)."""

import math

import av
import numpy as np
import pytest
import torch
from manim import tempconfig
from support import RECORDS, THIRTEEN_TOKENS, build, built, named_record, parse, record_value, shows, visible_texts

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.scenes.block_flow import BlockFlow
from blockviz.scenes.block_helpers import activation_curve
from blockviz.scenes.catalog import entries
from blockviz.scenes.look import look
from blockviz.scenes.multi_head import MIN_ROWS, MultiHead
from blockviz.style import format_number


def drawn(width: int, slots: int = 8) -> int:
    """How many positions of an axis of ``width`` a grid of ``slots`` slots draws (one is ⋯ when elided)."""
    return width if width <= slots else slots - 1


def sourced_by(inspector, name: str) -> dict:
    return {label.source[1:]: label for label in inspector.numbers.values() if label.source[0] == name}


@pytest.mark.parametrize("scene_name", ["multi-head", "block-flow", "ffn"])
@pytest.mark.parametrize("record_name", list(RECORDS))
def test_block_scenes_say_when_rounded_numbers_miss_their_sum_and_last_a_while(scene_name, record_name):
    """Each lasts 10–45 s at normal speed: the most of any scene, as multi-head walks nine or ten
    captioned steps (every head, the concatenation, the output weights' products and sums, and
    on a wide record the rows left out) and each caption holds as long as it takes to read
    (0.6 s, then four words a second): 40.5 s on "the cat sat", 44.9 s at d_model 16."""
    scene, _ = built(scene_name, record_name)
    # Rounded numbers that do not add up exactly are written "≈", and only then.
    inexact = any(
        round(sum(parse(part.shown) for part in parts) * 10**total.decimals)
        != round(parse(total.shown) * 10**total.decimals)
        for parts, total in scene.sums
    )
    approximately = ("≈", r"\approx")  # in words, or typeset (multi-head's "≈ attn(x)")
    assert any(sign in label.shown for label in visible_texts(scene) for sign in approximately) == inexact
    assert 10 <= scene.renderer.time <= 45, f"{scene.renderer.time:.1f} s at normal speed"


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_multi_head_shows_every_head_concat_and_the_focus_rows_projection(record_name):
    scene, inspector = built("multi-head", record_name)
    rec = named_record(record_name)
    f, d_model = scene.focus, rec.config.d_model
    heads = {h for h, *_ in sourced_by(inspector, "head_outputs")}
    assert heads == set(range(rec.config.n_heads))  # every head (at most 4) side by side, as the title says
    assert any(
        label.shown == f"Multi-head attention: {rec.config.n_heads} heads side by side"
        for label in visible_texts(scene)
    ) == (rec.config.n_heads > 1)
    attn_out = sourced_by(inspector, "attn_out")
    assert {i for i, _ in attn_out} == {f} and len(attn_out) == drawn(d_model)
    assert {(i, j) for i, j in sourced_by(inspector, "concat") if i == f} >= {(f, j) for _, j in attn_out}
    parameters = set(sourced_by(inspector, "params"))
    w_o = [p for p in parameters if p[0] == "attn.W_O"]
    shown_columns = sorted({j for _, j in attn_out})
    products = rec.projection_products(f)
    contribution = [sum(abs(float(products[i, j])) for j in shown_columns) for i in range(d_model)]
    shown_rows = {p[1] for p in w_o}
    assert ("attn.b_O", 0) in parameters and (shown_rows == set(range(d_model)) or max(contribution) > 0)
    assert min(contribution[i] for i in shown_rows) >= max(
        [contribution[k] for k in range(d_model) if k not in shown_rows], default=0.0
    )  # W_O's rows that add the most to the shown sums, not the first in index order
    rows = len({p[1] for p in w_o})  # as many as stay legible: 8 (6 of a wider d_model) down to MIN_ROWS
    assert min(MIN_ROWS, d_model) <= rows <= drawn(d_model, 8 if d_model <= 8 else 6)
    assert len(w_o) == rows * drawn(d_model)
    # each attn_out entry: the shown products c_i · W_O[i, j] (+ the hidden rows as one term) + b_O
    products = sourced_by(inspector, "projection_products")
    assert len(products) == rows * drawn(d_model)
    assert len(scene.sums) == drawn(d_model) and all(
        len(parts) == rows + (rows < d_model) + 1 for parts, _ in scene.sums
    )


def test_multi_head_elides_wide_head_outputs():
    rec = record(THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=2, d_ff=64))
    _, inspector = build(MultiHead, rec, token="it", head=1)
    assert inspector.problems == []
    it = rec.tokens.index("it")
    outputs = sourced_by(inspector, "head_outputs")
    assert {h for h, _, _ in outputs} == {0, 1} and {c for _, _, c in outputs} == {0, 1}  # d_head 8: d0 d1 ⋯
    assert {i for _, i, _ in outputs} == {it} and {i for i, _ in sourced_by(inspector, "attn_out")} == {it}
    for label in inspector.numbers.values():
        assert label.shown == format_number(record_value(rec, label.source), label.decimals)


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_block_flow_adds_the_residual_twice_and_names_the_shapes(record_name):
    from blockviz.scenes.block_flow import SUM_COLUMNS

    scene, _ = built("block-flow", record_name)
    rec = named_record(record_name)
    f = scene.focus
    added = {tuple(part.source[0] for part in parts) + (total.source[0],) for parts, total in scene.sums}
    assert added == {("resid_pre", "attn_out", "resid_mid"), ("resid_mid", "ffn_out", "resid_post")}
    assert all(total.source[1] == f for _, total in scene.sums)
    assert len(scene.sums) == 2 * drawn(rec.config.d_model, SUM_COLUMNS)
    shown = [label.shown for label in visible_texts(scene)]
    n_by_d = f"{rec.n} × {rec.config.d_model}"
    assert (
        shown.count(n_by_d) >= 2 and f"via {rec.n} × {rec.config.d_ff}" in shown
    )  # x and resid_mid; the FFN's hidden width
    assert scene.caption.shown.startswith(f"y: {n_by_d} out, as {n_by_d} came in")
    # Elided columns: one ⋯ per row of each addition and one over its column headers.
    assert shown.count("⋯") == (0 if rec.config.d_model <= SUM_COLUMNS else 2 * (3 + 1))


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_ffn_marks_the_rows_values_on_the_activation_curve(record_name):
    from blockviz.scenes.inside_ffn import ROW_SLOTS

    scene, inspector = built("ffn", record_name)
    rec = named_record(record_name)
    f = scene.focus
    axes, dots = scene.plot.axes, scene.plot.dots
    assert len(dots) == rec.config.d_ff
    for j, dot in enumerate(dots):
        x, y = axes.p2c(dot.get_center())
        assert (x, y) == pytest.approx((rec.ffn_pre[f, j].item(), rec.ffn_post[f, j].item()), abs=1e-4)
    for name in ("ln2", "ffn_pre", "ffn_post", "ffn_out"):
        assert {index[0] for index in sourced_by(inspector, name) if len(index) == 2} >= {f}
    assert len([index for index in sourced_by(inspector, "ffn_post") if index[0] == f]) == drawn(
        rec.config.d_ff, ROW_SLOTS
    )
    name = rec.config.activation_name
    assert any(
        f"through {name}" in label.shown for label in visible_texts(scene)
    )  # the title: BlockConfig.activation_name


@pytest.mark.parametrize(("activation", "at_minus_one"), [("gelu", -0.158655), ("relu", 0.0)])
def test_the_curve_is_the_records_activation(activation, at_minus_one):
    axes, curve, dots, _ = activation_curve(
        [-1.0, 0.5, 2.0], [at_minus_one, 0.1, 1.9], activation, look("dark"), "#db2777"
    )
    xs, ys = zip(*(axes.p2c(point) for point in curve.get_anchors()))
    assert min(xs) < -1 and max(xs) > 2
    function = getattr(torch.nn.functional, activation)
    expected = function(torch.tensor(xs, dtype=torch.float64)).numpy()
    assert np.abs(np.array(ys) - expected).max() < 1e-6
    assert np.interp(-1.0, xs, ys) == pytest.approx(at_minus_one, abs=2e-3)
    assert axes.p2c(dots[0].get_center()) == pytest.approx((-1.0, at_minus_one), abs=1e-6)


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_layer_norm_shows_one_row_through_every_step_of_the_record(record_name):
    scene, inspector = built("layer-norm", record_name)
    _rec, f = named_record(record_name), scene.focus
    fields = {label.source[0] for label in inspector.numbers.values()}
    assert fields == {"resid_pre", "ln1_mean", "ln1_centred", "ln1_var", "ln1_norm", "params", "ln1"}
    assert {label.source[1] for label in inspector.numbers.values() if label.source[0] not in ("params",)} == {f}
    assert {label.source[1] for label in inspector.numbers.values() if label.source[0] == "params"} == {
        "ln1.weight",
        "ln1.bias",
    }
    shown = {label.shown for label in visible_texts(scene)}
    assert any("epsilon" in line for line in shown)  # ε written as mathtext, not as a decimal


def test_the_focus_token_chooses_the_rows_worked(chicken_record):
    scene, _ = build(BlockFlow, chicken_record, token="it")
    it = chicken_record.tokens.index("it")
    assert {total.source[1] for _, total in scene.sums} == {it}


@pytest.mark.render
@pytest.mark.parametrize("entry", entries(), ids=[entry.name for entry in entries()])
def test_a_tiny_render_is_a_video(entry, tmp_path, cat_record):
    if entry.needs:  # its own test file renders it on a record that has what it needs
        cat_record = next(named_record(name) for name in ("toy", "copy") if shows(entry, name))
    settings = {
        "pixel_width": 160,
        "pixel_height": 90,
        "frame_rate": 4,
        "media_dir": str(tmp_path),
        "disable_caching": True,
        "verbosity": "ERROR",
        "progress_bar": "none",
        "output_file": entry.name,
    }
    with tempconfig(settings):
        scene = entry.scene_class()(record=cat_record)
        scene.render()
        video = scene.renderer.file_writer.movie_file_path
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 90)
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert len(frames) == pytest.approx(scene.renderer.time * 4, abs=3)
    last = frames[-1]
    assert (last.max(axis=2) > 200).sum() > 30  # text and cells drawn on the dark page
    assert not math.isclose(float(last.std()), 0.0)


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_recap_adds_the_focus_rows_residual_stream_into_an_output_of_the_inputs_shape(record_name):
    """x + attn_out + ffn_out = resid_post for the focus row, column by column, read back from the
    labels; the shapes said in and out are the record's (n × d_model both)."""
    scene, inspector = built("recap", record_name)
    rec = named_record(record_name)
    f, n, d = scene.focus, rec.n, rec.config.d_model
    fields = {"resid_pre", "attn_out", "ffn_out", "resid_post"}
    shown = {name: sourced_by(inspector, name) for name in fields}
    assert all({i for i, _ in labels} == {f} for labels in shown.values())  # the focus row only
    columns = {j for _, j in shown["resid_post"]}
    assert len(columns) == min(d, 6 - 1 if d > 6 else d) and all(
        {j for _, j in shown[name]} == columns for name in fields
    )
    for j in columns:
        written = sum(parse(shown[name][f, j].shown) for name in ("resid_pre", "attn_out", "ffn_out"))
        total = shown["resid_post"][f, j]
        assert abs(written - parse(total.shown)) <= 10**-total.decimals + 1e-9
        assert rec.resid_post[f, j].item() == pytest.approx(
            rec.resid_pre[f, j].item() + rec.attn_out[f, j].item() + rec.ffn_out[f, j].item(), abs=1e-5
        )
    assert len(scene.sums) == len(columns)
    said = {label.shown for label in visible_texts(scene)}
    onward = "prediction" if rec.architecture.unembedding else "next block"  # a one-block model predicts
    assert {f"{n} × {d} in", f"{n} × {d} out", onward} <= said
    assert scene.captions[-1][1].endswith(
        "goes on to the prediction" if rec.architecture.unembedding else "so blocks stack"
    )
