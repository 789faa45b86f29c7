"""Scenes on a trained model's layer (issue 12): one layer of a tiny random GPT-2 (pre-norm
LayerNorm), BERT (post-norm, bidirectional) and Llama (RMSNorm, rotary, gated FFN, shared
key/value heads, no biases), built without writing video. Every scene that can draw the
architecture shows the record's numbers legibly and its sums add up.
Wide heads (d_head 32) are elided to their first and largest entries, the rest one term. Then one
tiny real render of the packaged MiniLM."""

from __future__ import annotations

import functools

import pytest
from click.testing import CliRunner

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE  # noqa: E402
from support import build, check_scene  # noqa: E402

from blockviz import BlockConfig  # noqa: E402
from blockviz.block_record import record  # noqa: E402
from blockviz.cli import main  # noqa: E402
from blockviz.scenes.catalog import entries, lookup  # noqa: E402

SCENES = [entry.name for entry in entries() if not entry.lecture_only and not entry.needs]
"""A model's layer has no unembedding and no training checkpoints: scenes that need them leave it out."""
NOT_YET: dict[tuple[str, str], str] = {}
"""Cases not legible yet (strict: one that passes must leave this list)."""
CASES = [
    pytest.param(family, name, marks=pytest.mark.xfail(reason=NOT_YET[family, name], strict=True))
    if (family, name) in NOT_YET
    else (family, name)
    for family in BUILDERS
    for name in SCENES
]


@pytest.mark.parametrize(
    ("family", "scene_name"),
    CASES,
    ids=[f"{f}/{s}" for f, s in [(family, name) for family in BUILDERS for name in SCENES]],
)
def test_every_scene_that_can_draw_the_layer_shows_its_numbers_legibly(model_layers, layer_builds, family, scene_name):
    _, rec = model_layers[family]
    scene, inspector, _ = layer_builds(family, scene_name)
    check_scene(scene, inspector, rec)


def test_a_rotary_layers_dot_products_multiply_the_rotated_query_and_key(model_layers, layer_builds):
    from blockviz.scenes.dot_products import DotProducts

    _, rec = model_layers["llama"]
    scene, inspector, _ = layer_builds("llama", "dot-products")  # the build the sweep above checks
    assert isinstance(scene, DotProducts)
    fields = {label.source[0] for label in inspector.numbers.values()}
    assert {"query_rot", "key_rot"} <= fields and not {"query", "key"} & fields
    assert scene.captions[0][1].startswith("the rotated query and key")
    check_scene(scene, inspector, rec)


WIDE = BlockConfig(d_model=64, n_heads=2, d_ff=16)
"""A seeded block with a trained model's head width, d_head 32."""


@functools.cache
def wide_build(scene_name: str):
    """``(record, scene, inspector)``: the catalogued scene built on :data:`WIDE`'s record, focus "it", once a module."""
    rec = record(SENTENCE, WIDE)
    (entry,) = lookup([scene_name])
    return (rec, *build(entry.scene_class(), rec, token="it"))


@pytest.mark.parametrize("scene_name", ["dot-products", "softmax", "value-mixing", "multi-head"])
def test_wide_heads_are_elided_legibly_and_their_sums_keep_the_hidden_terms(scene_name):
    rec, scene, inspector = wide_build(scene_name)
    check_scene(scene, inspector, rec)


def test_dot_products_write_out_the_first_and_the_largest_products():
    from blockviz.scenes.dot_products import WIDE_DIMENSIONS, DotProducts
    from blockviz.scenes.wide import largest_entries

    rec, scene, _ = wide_build("dot-products")
    assert isinstance(scene, DotProducts)
    f = scene.focus
    top = scene.top_keys_of(f)[0]
    products = rec.qk_products(0, f)[top].abs()
    dims = scene.dims_shown()
    assert len(dims) == WIDE_DIMENSIONS and dims[0] == 0
    assert int(products[1:].argmax()) + 1 in dims
    assert largest_entries([5, 0, -9, 1], 2) == [0, 2] and largest_entries([1, 2], 4) == [0, 1]
    worked = [
        parts for parts, _ in scene.sums if any(getattr(part, "source", ("",))[0] == "remainder" for part in parts)
    ]
    assert worked, "the hidden products are one explicit term"


@pytest.mark.render
def test_a_tiny_render_of_the_packaged_minilm(tmp_path):
    from blockviz.errors import BlockvizError as Missing
    from blockviz.models import resolve_model

    try:
        resolve_model("minilm")
    except Missing as missing:
        pytest.skip(str(missing))
    out = tmp_path / "minilm"
    result = CliRunner().invoke(
        main,
        [
            "render",
            "The chicken didn't cross the road because it was too tired.",
            "--model",
            "minilm",
            "--layer",
            "3",
            "--head",
            "1",
            "--token",
            "it",
            "--scene",
            "softmax",
            "--resolution",
            "160x90",
            "--fps",
            "2",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    video = out / "softmax.mp4"
    assert video.stat().st_size > 1000
    import av

    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 90)


def test_the_title_card_says_whose_trained_weights_the_layer_has(model_layers):
    from blockviz.scenes.title_card import weights_sentence

    for family, (_, rec) in model_layers.items():
        first, second = weights_sentence(rec.config.seed, rec.source)
        assert first.startswith("trained weights: ") and f"({family}), layer 1 of 0–1" in first, first
        assert "random" not in first + second
    assert "random (seed 3)" in weights_sentence(3)[0]
