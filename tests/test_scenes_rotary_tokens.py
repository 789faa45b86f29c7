"""The qkv scene on a rotary layer and the tokens scene on a trained model's layer (issue 12):
tiny random Llama (rotary, 4 query heads sharing 2 key/value heads), GPT-2 (learned positions
added) and BERT (post-norm: an embedding LayerNorm before layer 0) built in the test, layers 0 and 1.

Every number shown is the record's, no text is under 11 px at 854 × 480, overlaps or has low
contrast, every shot fills 60 % of the frame; the rotated pair worked on screen is the rotation
of the shown pair by the shown cos and sin (checked by hand); each input story says what x is.
Then one tiny real render per variant."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE, tiny_model_records  # noqa: E402
from support import build, check_scene, parse  # noqa: E402

from blockviz.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """family → (its folder, {layer: record}) for layers 0 and 1."""
    return tiny_model_records(tmp_path_factory.mktemp("models"), layers=(0, 1))


# -- qkv with rotary positions ----------------------------------------------------------------


@pytest.fixture(scope="module")
def rotary_scene(models):
    from blockviz.scenes.query_key_value import QueryKeyValue

    _, records = models["llama"]
    rec = records[1]
    scene, inspector = build(QueryKeyValue, rec, head=1, token="it")
    return rec, scene, inspector


def test_qkv_draws_a_rotary_layer_legibly_with_the_records_numbers(rotary_scene):
    rec, scene, inspector = rotary_scene
    check_scene(scene, inspector, rec)
    fields = {label.source[0] for label in inspector.numbers.values()}
    assert {"ln1", "query", "key", "rope_cos", "rope_sin", "query_rot", "key_rot"} <= fields
    query, key = scene.panels  # the key's columns stand under the query's, cell for cell
    for j in query.after.shown_columns():
        assert key.before.cells[0, j].get_center()[0] == pytest.approx(
            query.after.cells[0, j].get_center()[0], abs=1e-3
        )
        assert key.before.cells[0, j].width == pytest.approx(query.after.cells[0, j].width, abs=1e-3)


def test_the_worked_pair_is_the_shown_pair_turned_by_the_shown_angle(rotary_scene):
    """By hand, from the shown numbers: q′_i = q_i cos − q_{i+d/2} sin and q′_{i+d/2} = q_i sin +
    q_{i+d/2} cos (half-split pairs, RoFormer Eq. 34) within one unit of the result's last digit;
    and from the record: the rotation exact, cos and sin those of position p · θ^(−2i/d_head)."""
    rec, scene, _ = rotary_scene
    work = scene.worked
    a, cos, b, sin, a2, sin2, b2, cos2 = work.factors
    first, second = work.results
    _, head, position, i = first.source
    half = rec.config.d_head // 2
    x, y = ("query", head, position, i), ("query", head, position, i + half)
    assert [label.source for label in work.factors] == [
        x,
        ("rope_cos", position, i),
        y,
        ("rope_sin", position, i),
        x,
        ("rope_sin", position, i),
        y,
        ("rope_cos", position, i),
    ]
    assert second.source == ("query_rot", head, position, i + half)
    value = lambda label: parse(label.shown)  # noqa: E731
    assert abs(value(a) * value(cos) - value(b) * value(sin) - value(first)) <= 0.01 + 1e-9
    assert abs(value(a2) * value(sin2) + value(b2) * value(cos2) - value(second)) <= 0.01 + 1e-9
    q, k = rec.query[head, position, i].item(), rec.query[head, position, i + half].item()
    c, s = rec.rope_cos[position, i].item(), rec.rope_sin[position, i].item()
    assert rec.query_rot[head, position, i].item() == pytest.approx(q * c - k * s, abs=1e-5)
    assert rec.query_rot[head, position, i + half].item() == pytest.approx(q * s + k * c, abs=1e-5)
    angle = position * rec.config.rope_theta ** (-2 * i / rec.config.d_head)
    assert (c, s) == pytest.approx((math.cos(angle), math.sin(angle)), abs=1e-6)
    assert position == scene.focus and abs(s) > 0.05  # a pair that visibly turns


def test_pairs_are_drawn_side_by_side_first_largest_last():
    from blockviz.scenes.rotary import pair_columns, pairs_shown

    assert pair_columns([0, 5, 31], 64) == [0, 32, None, 5, 37, None, 31, 63]
    assert pair_columns([0, 1], 4) == [0, 2, 1, 3]
    vector = [0.0] * 64
    vector[7], vector[7 + 32] = 3.0, -4.0  # pair 7's arrow is 5 long
    vector[20] = 2.0
    assert pairs_shown(vector) == [0, 7, 31]
    assert pairs_shown([1.0, 2.0, 3.0, 4.0]) == [0, 1]


def test_qkv_says_which_query_heads_share_the_key_and_value(rotary_scene, models):
    rec, scene, _ = rotary_scene
    captions = [caption for _, caption in scene.captions]
    assert rec.config.kv_heads == 2 and rec.config.kv_head_of(1) == 0
    assert "query heads 0 and 1 share this key and value" in captions, captions
    assert any(
        "(key/value head 0, shared by query heads 0 and 1)" in getattr(member, "shown", "")
        for member in scene.get_mobject_family_members()
    )
    assert any(caption.startswith("rotary positions: no position was added") for caption in captions)


def test_a_wide_rotary_head_is_elided_to_pairs_with_the_hidden_ones_counted():
    """A seeded rotary block with d_model 128, d_head 64 (a trained model's widths)."""
    from blockviz import BlockConfig
    from blockviz.block_record import record
    from blockviz.scenes.query_key_value import QueryKeyValue

    rec = record(SENTENCE, BlockConfig(d_model=128, n_heads=2, d_ff=16, positional="rotary", n_kv_heads=1))
    scene, inspector = build(QueryKeyValue, rec, token="it")
    check_scene(scene, inspector, rec)
    texts = {getattr(member, "shown", "") for mobject in scene.mobjects for member in mobject.get_family()}
    shown_rot = sorted({label.source[-1] for label in inspector.numbers.values() if label.source[0] == "query_rot"})
    assert len(shown_rot) == 6 and all((j + 32) in shown_rot for j in shown_rot if j < 32)  # three pairs, each whole
    assert "pair 0" in texts and "pair 31" in texts


# -- tokens on a trained model's layer -------------------------------------------------------


def tokens_scene(rec):
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    return build(TokensToGrid, rec, token="it")


def test_gpt2_layer_0_is_embedding_plus_position_and_the_rows_add_up(models):
    from blockviz.scenes.tokens_to_grid import input_story

    _, records = models["gpt2"]
    rec = records[0]
    assert (rec.resid_pre - (rec.embed + rec.pos_embed)).abs().max() <= 1e-6  # the claim holds for this record
    story = input_story(rec)
    assert story.adds_up and story.joiners == ("+", "=")
    scene, inspector = tokens_scene(rec)
    check_scene(scene, inspector, rec)
    shown = {label.source: parse(label.shown) for label in inspector.numbers.values()}
    rows = [source for source in shown if source[0] == "resid_pre"]
    assert rows
    for _, i, j in rows:
        if ("embed", i, j) in shown:
            assert abs(shown["embed", i, j] + shown["pos_embed", i, j] - shown["resid_pre", i, j]) <= 0.01 + 1e-9


def test_bert_layer_0_is_a_layernorm_of_the_sum_and_says_what_is_not_recorded(models):
    _, records = models["bert"]
    rec = records[0]
    assert (rec.resid_pre - (rec.embed + rec.pos_embed)).abs().max() > 0.1  # not a plain sum: the embedding LayerNorm
    scene, inspector = tokens_scene(rec)
    check_scene(scene, inspector, rec)
    captions = " ".join(caption for _, caption in scene.captions)
    assert "LayerNorm" in captions and "token type" in captions and "not in the record" in captions
    texts = [getattr(member, "shown", "") for mobject in scene.mobjects for member in mobject.get_family()]
    assert "=" not in texts and "LayerNorm" in texts
    assert {label.source[0] for label in inspector.numbers.values()} == {"embed", "pos_embed", "resid_pre"}


def test_bert_special_tokens_are_marked(models):
    from manim import DashedVMobject

    _, records = models["bert"]
    rec = records[0]
    if not any(getattr(rec, "special", ())):
        pytest.skip("this record keeps no special-token flags")
    assert [rec.tokens[i] for i, flag in enumerate(rec.special) if flag] == ["[CLS]", "[SEP]"]
    scene, _ = tokens_scene(rec)
    assert any("2 special tokens" in caption for _, caption in scene.captions)
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    chips = TokensToGrid.chips(scene, scene.token_slots())
    dashed = [member for member in chips.get_family() if isinstance(member, DashedVMobject)]
    assert len(dashed) == sum(1 for i in scene.token_slots() if i is not None and rec.special[i])


def test_rotary_layer_0_adds_no_position(models):
    _, records = models["llama"]
    rec = records[0]
    assert "pos_embed" not in rec.tensors and (rec.resid_pre - rec.embed).abs().max() == 0
    scene, inspector = tokens_scene(rec)
    check_scene(scene, inspector, rec)
    captions = " ".join(caption for _, caption in scene.captions)
    assert "no position is added" in captions and "rotation of the query and key" in captions


@pytest.mark.parametrize("family", list(BUILDERS))
def test_a_later_layers_rows_are_the_previous_layers_output(models, family):
    _, records = models[family]
    rec = records[1]
    scene, inspector = tokens_scene(rec)
    check_scene(scene, inspector, rec)
    assert {label.source[0] for label in inspector.numbers.values()} == {"resid_pre"}
    captions = " ".join(caption for _, caption in scene.captions)
    assert "layer 1's input is the output of layer 0" in captions and "not embedding + position" in captions
    assert scene.title_mobject.shown == "Tokens: layer 1's input rows"


def test_wide_rows_show_the_first_last_and_largest_columns(models):
    from blockviz import BlockConfig
    from blockviz.block_record import record

    _, records = models["gpt2"]
    rec = records[0]  # n_embd 8: wider than the 4 columns drawn whole
    scene, _ = tokens_scene(rec)
    fields = ["embed", "pos_embed", "resid_pre"]
    columns = scene.columns(fields, 3)
    f = scene.focus
    largest = max(range(1, 7), key=lambda j: max(abs(rec.tensors[field][f, j].item()) for field in fields))
    assert [j for j in columns if j is not None] == [0, largest, 7] and None in columns
    wide = record(SENTENCE, BlockConfig(d_model=64, n_heads=2, d_ff=16))
    scene, inspector = tokens_scene(wide)
    check_scene(scene, inspector, wide)
    shown = sorted({label.source[-1] for label in inspector.numbers.values()})
    assert shown[0] == 0 and shown[-1] == 63 and len(shown) == 3
    texts = {getattr(member, "shown", "") for mobject in scene.mobjects for member in mobject.get_family()}
    assert "61 of 64 columns hidden" in texts


# -- tiny real renders ---------------------------------------------------------------------------


@pytest.mark.render
@pytest.mark.parametrize(
    ("family", "layer", "scene_name"),
    [("llama", 1, "qkv"), ("gpt2", 0, "tokens"), ("bert", 0, "tokens"), ("llama", 0, "tokens"), ("bert", 1, "tokens")],
)
def test_a_tiny_real_render_of_each_variant(models, tmp_path, family, layer, scene_name):
    import av

    folder, _ = models[family]
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "render",
            SENTENCE,
            "--model",
            str(folder),
            "--layer",
            str(layer),
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
    video = out / f"{scene_name}.mp4"
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 90)
        assert sum(1 for _ in container.decode(stream)) >= 10
