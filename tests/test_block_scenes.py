"""The whole-block scenes (multi-head, block flow, inside the FFN), built without writing video:
the numbers they show are the record's, the residual additions add up, no label overlaps another
or leaves the frame at any length up to 64 tokens and d_model 16 / d_ff 64, and each renders.

Builds are shared between tests (one per scene and record); the whole file takes about a minute.
"""

import math

import av
import numpy as np
import pytest
import torch
from manim import Rectangle, tempconfig

from blockviz import BlockConfig, record
from blockviz.style import format_number
from blockviz.scenes.block_flow import BlockFlow
from blockviz.scenes.block_helpers import activation_curve
from blockviz.scenes.inside_ffn import InsideFFN
from blockviz.scenes.look import look
from blockviz.scenes.multi_head import MultiHead
from test_scenes import TWELVE_TOKENS, build, parse, record_value, visible_texts

SCENES = {"multi-head": MultiHead, "block-flow": BlockFlow, "ffn": InsideFFN}
SIXTY_FOUR_TOKENS = " ".join(f"w{i}" for i in range(64))
RECORDS = {
    "default": lambda: record("the cat sat"),
    "12 tokens": lambda: record(TWELVE_TOKENS),
    "64 tokens, d_model 16, d_ff 64, relu": lambda: record(SIXTY_FOUR_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64, activation="relu")),
}


@pytest.fixture(scope="module")
def records():
    return {name: make() for name, make in RECORDS.items()}


@pytest.fixture(scope="module")
def built(records):
    """(scene, inspector) of each scene on each record, built once for the module."""
    cache = {}

    def get(scene_name: str, record_name: str):
        if (scene_name, record_name) not in cache:
            cache[scene_name, record_name] = build(watching_parameters(SCENES[scene_name]), records[record_name])
        return cache[scene_name, record_name]

    return get


def drawn(width: int) -> int:
    """How many positions of an axis of ``width`` a grid draws (8 slots; one is ⋯ when elided)."""
    return width if width <= 8 else 7


def watching_parameters(scene_class):
    """``scene_class`` that also keeps, in ``.parameters_shown``, every label of a parameter
    (``.parameter``, e.g. ``("attn.W_O", i, j)``) visible after any play."""

    class Watched(scene_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.parameters_shown = {}
            self.play_listeners.append(self.keep_parameters)

        def keep_parameters(self, scene):
            for label in visible_texts(scene):
                if getattr(label, "parameter", None) is not None:
                    self.parameters_shown[id(label)] = label

    return Watched


CASES = [(scene, rec) for scene in SCENES for rec in RECORDS]


@pytest.mark.parametrize(("scene_name", "record_name"), CASES, ids=[f"{s}/{r}" for s, r in CASES])
def test_scene_shows_the_records_numbers_legibly(scene_name, record_name, built, records):
    scene, inspector = built(scene_name, record_name)
    rec = records[record_name]
    assert inspector.problems == []
    assert len(inspector.sourced) >= 12
    for label in inspector.sourced.values():
        assert label.shown == format_number(record_value(label.source, inspector.records), label.decimals), label.source
    for label in scene.parameters_shown.values():
        name, *index = label.parameter
        assert label.shown == format_number(rec.params[name][tuple(index)].item()), label.parameter
    for parts, total in scene.sums:
        assert sum(parse(part.shown) for part in parts) == pytest.approx(parse(total.shown), abs=0.005 * (len(parts) + 1))
    # Rounded numbers that do not add up exactly are said to be rounded, and only then.
    inexact = any(round(sum(parse(part.shown) for part in parts) * 100) != round(parse(total.shown) * 100) for parts, total in scene.sums)
    assert any("rounded" in label.shown for label in visible_texts(scene)) == inexact
    assert 10 <= scene.renderer.time <= 40, f"{scene.renderer.time:.1f} s at normal speed"


def hidden_under_cells(scene) -> list[str]:
    """Visible labels with an opaque cell drawn after them (on top) over their centre."""
    order = {id(member): k for k, member in enumerate(scene.get_mobject_family_members())}
    cells = [(order[id(m)], m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1])
             for m in scene.get_mobject_family_members() if isinstance(m, Rectangle) and m.get_fill_opacity() > 0.5]
    hidden = []
    for label in visible_texts(scene):
        x, y, _ = label.get_center()
        if any(k > order[id(label)] and left < x < right and bottom < y < top for k, left, bottom, right, top in cells):
            hidden.append(label.shown)
    return hidden


@pytest.mark.parametrize(("scene_name", "record_name"), CASES, ids=[f"{s}/{r}" for s, r in CASES])
def test_no_label_ends_hidden_under_a_cell(scene_name, record_name, built):
    scene, _ = built(scene_name, record_name)
    assert hidden_under_cells(scene) == []


def sourced_by(inspector, name: str) -> dict:
    return {label.source[1:]: label for label in inspector.sourced.values() if label.source[0] == name}


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_multi_head_shows_every_head_concat_and_the_focus_rows_projection(record_name, built, records):
    scene, inspector = built("multi-head", record_name)
    rec, f = records[record_name], records[record_name].n - 1
    heads = {h for h, *_ in sourced_by(inspector, "head_outputs")}
    assert len(heads) == min(rec.config.n_heads, 2)
    attn_out = sourced_by(inspector, "attn_out")
    assert {i for i, _ in attn_out} == {f} and len(attn_out) == drawn(rec.config.d_model)
    assert {(i, j) for i, j in sourced_by(inspector, "concat") if i == f} >= {(f, j) for _, j in attn_out}
    shown = {label.parameter for label in scene.parameters_shown.values()}
    assert ("attn.b_O", 0) in shown and ("attn.W_O", 0, 0) in shown
    assert len([p for p in shown if p[0] == "attn.W_O"]) == drawn(rec.config.d_model) ** 2
    if rec.config.d_model <= 8:
        # attn_out[f, j] = Σ_i concat[f, i] · W_O[i, j] + b_O[j]: d_model products and the bias.
        assert len(scene.sums) == rec.config.d_model
        assert all(len(parts) == rec.config.d_model + 1 for parts, _ in scene.sums)


def test_multi_head_elides_wide_head_outputs():
    rec = record(TWELVE_TOKENS, BlockConfig(d_model=16, n_heads=2, d_ff=64))
    scene, inspector = build(MultiHead, rec, token="it", head=1)
    assert inspector.problems == [] and len(scene.sums) == 0  # 16 rows of W_O: 8 drawn, so no sum is claimed
    it = rec.tokens.index("it")
    outputs = sourced_by(inspector, "head_outputs")
    assert {h for h, _, _ in outputs} == {0, 1} and {c for _, _, c in outputs} == {0, 1, 7}  # d_head 8: z0 z1 ⋯ z7
    assert {i for i, _ in sourced_by(inspector, "attn_out")} == {it}
    for label in inspector.sourced.values():
        assert label.shown == format_number(record_value(label.source, inspector.records), label.decimals)


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_block_flow_adds_the_residual_twice_and_names_the_shapes(record_name, built, records):
    scene, _ = built("block-flow", record_name)
    rec, f = records[record_name], records[record_name].n - 1
    added = {tuple(part.source[0] for part in parts) + (total.source[0],) for parts, total in scene.sums}
    assert added == {("resid_pre", "attn_out", "resid_mid"), ("resid_mid", "ffn_out", "resid_post")}
    assert all(total.source[1] == f for _, total in scene.sums)
    assert len(scene.sums) == 2 * drawn(rec.config.d_model)
    shown = [label.shown for label in visible_texts(scene)]
    n_by_d = f"{rec.n} × {rec.config.d_model}"
    assert shown.count(n_by_d) >= 6 and f"via {rec.n} × {rec.config.d_ff}" in shown
    assert scene.caption.shown.startswith(f"{n_by_d} out, as {n_by_d} came in")
    # Elided columns: one ⋯ per row of each addition and one over its column headers.
    assert shown.count("⋯") == (0 if rec.config.d_model <= 8 else 2 * (3 + 1))


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_ffn_marks_the_rows_values_on_the_activation_curve(record_name, built, records):
    scene, inspector = built("ffn", record_name)
    rec, f = records[record_name], records[record_name].n - 1
    axes, dots = scene.plot.axes, scene.plot.dots
    assert len(dots) == rec.config.d_ff
    for j, dot in enumerate(dots):
        x, y = axes.p2c(dot.get_center())
        assert (x, y) == pytest.approx((rec.ffn_pre[f, j].item(), rec.ffn_post[f, j].item()), abs=1e-4)
    for name in ("ln2", "ffn_pre", "ffn_post", "ffn_out"):
        assert {index[0] for index in sourced_by(inspector, name) if len(index) == 2} >= {f}
    assert len([index for index in sourced_by(inspector, "ffn_post") if index[0] == f]) == drawn(rec.config.d_ff)


@pytest.mark.parametrize(("activation", "at_minus_one"), [("gelu", -0.158655), ("relu", 0.0)])
def test_the_curve_is_the_records_activation(activation, at_minus_one):
    axes, curve, dots, _ = activation_curve([-1.0, 0.5, 2.0], [at_minus_one, 0.1, 1.9], activation, look("dark"), "#db2777")
    xs, ys = zip(*(axes.p2c(point) for point in curve.get_anchors()))
    assert min(xs) < -1 and max(xs) > 2
    function = getattr(torch.nn.functional, activation)
    expected = function(torch.tensor(xs, dtype=torch.float64)).numpy()
    assert np.abs(np.array(ys) - expected).max() < 1e-6
    assert np.interp(-1.0, xs, ys) == pytest.approx(at_minus_one, abs=2e-3)
    assert axes.p2c(dots[0].get_center()) == pytest.approx((-1.0, at_minus_one), abs=1e-6)


def test_the_focus_token_chooses_the_rows_worked(chicken_record):
    scene, _ = build(BlockFlow, chicken_record, token="it")
    it = chicken_record.tokens.index("it")
    assert {total.source[1] for _, total in scene.sums} == {it}


@pytest.mark.parametrize("scene_name", list(SCENES))
def test_a_tiny_render_is_a_video(scene_name, tmp_path, cat_record):
    settings = {"pixel_width": 160, "pixel_height": 90, "frame_rate": 4, "media_dir": str(tmp_path), "disable_caching": True,
                "verbosity": "ERROR", "progress_bar": "none", "output_file": scene_name}
    with tempconfig(settings):
        scene = SCENES[scene_name](record=cat_record)
        scene.render()
        video = scene.renderer.file_writer.movie_file_path
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 90)
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert len(frames) == pytest.approx(scene.renderer.time * 4, abs=2)
    last = frames[-1]
    assert (last.max(axis=2) > 200).sum() > 30  # text and cells drawn on the dark page
    assert not math.isclose(float(last.std()), 0.0)
