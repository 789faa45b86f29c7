"""Scenes that draw the record's own architecture (issue 12): layer-norm on RMSNorm (Llama), ffn
on a gated FFN (SwiGLU), recap on a post-norm block (BERT). On tiny random models of each family
and, where installed, on the packaged SmolLM2 and MiniLM: every number shown is the record's,
every shown sum (and gated product) reads right, text is at least 11 px at 854 × 480, and the
steps are the architecture's own (no mean, no β for RMSNorm; gate, activation, ⊙ up for a gated
FFN; two LayerNorms after the two sums for post-norm). Then one tiny real render of each."""

from __future__ import annotations

import math

import pytest
import torch
from click.testing import CliRunner

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE, packaged_model_installed  # noqa: E402
from support import build, check_scene, parse, visible_texts  # noqa: E402

from blockviz.cli import main  # noqa: E402
from blockviz.scenes.inside_ffn import InsideFFN, product_decimals  # noqa: E402
from blockviz.scenes.layer_norm import LayerNormRow  # noqa: E402
from blockviz.scenes.recap import Recap  # noqa: E402
from blockviz.scenes.wide import edges_and_largest  # noqa: E402

CHICKEN = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    """family → (its folder, layer 1's record), for Llama and BERT."""
    from blockviz.models import record_layer

    root = tmp_path_factory.mktemp("models")
    made = {}
    for family in ("llama", "bert"):
        folder = BUILDERS[family](root / family)
        made[family] = (folder, record_layer(SENTENCE, model=str(folder), layer=1))
    return made


def shown(inspector, field: str) -> dict:
    """The labels shown of ``field``, by their index in it."""
    return {label.source[1:]: label for label in inspector.numbers.values() if label.source[0] == field}


def test_edges_and_largest_keeps_the_first_the_last_and_the_largest_of_any_row():
    assert edges_and_largest([[1, 9, 0, -7, 2, 3]], 4) == [0, 1, 3, 5]
    assert edges_and_largest([[1, 0, 0, 0, 2], [0, 0, -5, 0, 0]], 3) == [0, 2, 4]  # the largest of the second row
    assert edges_and_largest([[1, 2, 3]], 5) == [0, 1, 2]


# -- layer-norm on RMSNorm ---------------------------------------------------------------------------
def test_rmsnorm_shows_the_mean_of_squares_the_division_and_gamma_without_mean_or_beta(layers):
    _, rec = layers["llama"]
    scene, inspector = build(LayerNormRow, rec, token="it")
    f = scene.focus
    fields = {label.source[0] for label in inspector.numbers.values()}
    assert fields == {"resid_pre", "ln1_mean_sq", "ln1_norm", "params", "ln1"}  # no ln1_mean, ln1_centred, ln1_var
    assert {label.source[1] for label in inspector.numbers.values() if label.source[0] == "params"} == {
        "ln1.weight"
    }  # no β
    assert {label.source[1] for label in inspector.numbers.values() if label.source[0] != "params"} == {f}
    (mean_sq,) = shown(inspector, "ln1_mean_sq").values()
    # The shown numbers obey RMSNorm (Zhang & Sennrich 2019, Eq. 4), read back from the screen.
    x, norm, out = (shown(inspector, name) for name in ("resid_pre", "ln1_norm", "ln1"))
    gamma = {label.source[2]: label for label in inspector.numbers.values() if label.source[0] == "params"}
    root = math.sqrt(parse(mean_sq.shown) + rec.config.ln_eps)
    for (i, j), label in x.items():
        assert parse(norm[i, j].shown) == pytest.approx(
            parse(label.shown) / root, abs=0.01 + 0.01 * abs(parse(label.shown))
        )
        assert parse(out[i, j].shown) == pytest.approx(
            parse(gamma[j].shown) * parse(norm[i, j].shown), abs=0.01 + 0.01 * abs(parse(norm[i, j].shown))
        )
    assert scene.title_mobject.shown.startswith("RMSNorm, one row")
    said = " ".join(caption for _, caption in scene.captions)
    assert "mean of its squares" in said and "no shift β" in said and "LayerNorm" not in said
    check_scene(scene, inspector, rec, framed=False)


# -- the gated FFN ------------------------------------------------------------------------------------
def test_a_gated_ffn_shows_gate_activation_up_and_their_product_column_by_column(layers):
    _, rec = layers["llama"]
    scene, inspector = build(InsideFFN, rec, token="it")
    f, d_ff = scene.focus, rec.config.d_ff
    fields = {label.source[0] for label in inspector.numbers.values()}
    assert {"ln2", "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out"} <= fields and "ffn_pre" not in fields
    hidden = {
        name: {j for (i, j) in shown(inspector, name) if i == f}
        for name in ("ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post")
    }
    columns = hidden["ffn_post"]
    assert all(seen == columns for seen in hidden.values())  # one choice of columns for the product
    magnitude = rec.ffn_post[f].abs()
    assert {0, d_ff - 1, int(magnitude[1:-1].argmax()) + 1} <= columns and len(
        columns
    ) < d_ff  # elided: the first, the last, the largest
    # Each shown column reads gate_act ⊙ up = post within one unit of the product's last digit.
    assert len(scene.products) == len(columns)
    for gate, up, post in scene.products:
        assert gate.source[2] == up.source[2] == post.source[2]
        assert abs(parse(gate.shown) * parse(up.shown) - parse(post.shown)) <= 10**-post.decimals + 1e-9
    # The curve's dots sit at the record's (gate, activation(gate)).
    axes, dots = scene.plot.axes, scene.plot.dots
    assert len(dots) == d_ff
    for j, dot in enumerate(dots):
        assert axes.p2c(dot.get_center()) == pytest.approx(
            (rec.ffn_gate[f, j].item(), rec.ffn_gate_act[f, j].item()), abs=1e-4
        )
    said = " ".join(caption for _, caption in scene.captions)
    assert "SiLU" in said and "⊙ up" in said and "the gate" in said
    assert "gated FFN, row by row" in {
        label.shown for label in visible_texts(scene)
    }  # the toy block's says "FFN, row by row"
    check_scene(scene, inspector, rec, framed=False)


def test_product_decimals_adds_a_decimal_only_where_rounding_breaks_a_product():
    assert product_decimals([([2.0, 0.5], 1.0)]) == 2
    # 1.274 × −1.306 = −1.664: at 2 decimals 1.27 × −1.31 = −1.6637, within one unit of −1.66;
    # 5.554² = 30.85: 5.55² = 30.80 misses by 5 units, 5.554² = 30.8469 does not.
    assert product_decimals([([1.274, -1.306], 1.274 * -1.306)]) == 2
    assert product_decimals([([5.554, 5.554], 5.554**2)]) == 3


# -- recap on a post-norm block -----------------------------------------------------------------------
def test_a_post_norm_recap_adds_twice_and_normalizes_after_each_sum(layers):
    _, rec = layers["bert"]
    scene, inspector = build(Recap, rec, token="it")
    f, n, d = scene.focus, rec.n, rec.config.d_model
    fields = ("resid_pre", "attn_out", "resid_mid", "resid_mid_norm", "ffn_out", "resid_post", "resid_post_norm")
    rows = {name: shown(inspector, name) for name in fields}
    assert all(rows[name] and {i for i, _ in rows[name]} == {f} for name in fields)
    columns = {j for _, j in rows["resid_post_norm"]}
    assert all({j for _, j in rows[name]} == columns for name in fields)  # every row the same columns: blocks stack
    totals = {total.source[0] for _, total in scene.sums}
    assert totals == {"resid_mid", "resid_post"} and len(scene.sums) == 2 * len(columns)
    for parts, total in scene.sums:
        expected = ("resid_pre", "attn_out") if total.source[0] == "resid_mid" else ("resid_mid_norm", "ffn_out")
        assert tuple(part.source[0] for part in parts) == expected
    said = {label.shown for label in visible_texts(scene)}
    assert {f"{n} × {d} in", f"{n} × {d} out", "next block"} <= said
    assert [label.shown for label in visible_texts(scene)].count("LayerNorm, each row") == 2
    assert scene.captions[-1][1].endswith("so blocks stack")
    check_scene(scene, inspector, rec, framed=False)


# -- the packaged models -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def packaged():
    """name → the chicken sentence's layer of the packaged model (SmolLM2 13, MiniLM 3), if installed."""
    from blockviz.models import record_layer

    return {
        name: record_layer(CHICKEN, model=name, layer=layer)
        for name, layer in (("smollm2", 13), ("minilm", 3))
        if packaged_model_installed(name)
    }


@pytest.mark.parametrize(
    ("model", "scene_class"),
    [("smollm2", LayerNormRow), ("smollm2", InsideFFN), ("minilm", Recap)],
    ids=["smollm2/layer-norm", "smollm2/ffn", "minilm/recap"],
)
def test_the_packaged_models_layer_is_drawn_legibly_with_its_own_numbers(packaged, model, scene_class):
    if model not in packaged:
        pytest.skip(f"{model} is not installed (make setup)")
    rec = packaged[model]
    scene, inspector = build(scene_class, rec, token="it")
    check_scene(scene, inspector, rec, framed=False)
    f = scene.focus
    if (
        scene_class is LayerNormRow
    ):  # SmolLM2's massive activation (d247) is among the entries shown: it decides mean(x²)
        assert int(rec.resid_pre[f].abs().argmax()) in {j for _, j in shown(inspector, "resid_pre")}
    if scene_class is InsideFFN:
        assert int(rec.ffn_post[f].abs().argmax()) in {j for _, j in shown(inspector, "ffn_post")}
    if scene_class is Recap:
        assert int(rec.resid_post_norm[f].abs().argmax()) in {j for _, j in shown(inspector, "resid_post_norm")}
    assert min(inspector.shares) >= 0.6


@pytest.mark.render
@pytest.mark.parametrize(("family", "scene_name"), [("llama", "layer-norm"), ("llama", "ffn"), ("bert", "recap")])
def test_a_tiny_render_of_each_new_variant(layers, tmp_path, family, scene_name):
    import av

    folder, _ = layers[family]
    out = tmp_path / family
    result = CliRunner().invoke(
        main,
        [
            "render",
            SENTENCE,
            "--model",
            str(folder),
            "--layer",
            "1",
            "--token",
            "it",
            "--scene",
            scene_name,
            "--resolution",
            "160x90",
            "--fps",
            "2",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    with av.open(str(out / f"{scene_name}.mp4")) as container:
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert frames[-1].shape == (90, 160, 3) and len(frames) > 10
    assert (frames[-1].max(axis=2) > 200).sum() > 30 and float(torch.tensor(frames[-1]).float().std()) > 0
