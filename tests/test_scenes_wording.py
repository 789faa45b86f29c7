"""Captions and chapters name the record's own steps (issue 24): on the tiny GPT-2 (a decoder,
learned positions, pre-norm LayerNorm, GELU), BERT (an encoder, post-norm) and Llama (a decoder,
RMSNorm, rotary positions, a gated FFN), every caption a scene shows, its title, its chapter
title and caption, and the lecture's chapter files and ``.srt`` written from them hold no step
the architecture lacks and name the steps it has. Scenes are built without rendering
(:func:`support.build`). A repeated token is named in captions as its header shows it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import srt

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE  # noqa: E402
from support import build  # noqa: E402

from blockviz.architecture import Architecture, supported_architectures  # noqa: E402
from blockviz.lecture.chapters import captions_srt, chapters_json, chapters_of, chapters_text  # noqa: E402
from blockviz.scenes.catalog import entries, scene_entry  # noqa: E402
from blockviz.scenes.wording import FACTS, PHRASES, Wording, toy_wording  # noqa: E402

COMPARES_BOTH = {"causal-vs-bidirectional"}
"""Scenes whose subject is the decoder's mask beside the encoder's: they name both on any record."""

DECODER_STEPS = ("blocked keys get", "exp(−∞)", "The causal mask", "no looking ahead", "never later", "mask will block")
CENTRING_STEPS = ("LayerNorm", "subtracts its mean", "its mean, μ", "subtract μ", "variance", "shifts by β", "+ β")
ADDED_POSITION_STEPS = ("plus its position", "position's encoding", "sinusoidal", "position's learned", "W_pos")
PRE_NORM_STEPS = ("pre-norm", "Each normalized row", "before attention and again before the FFN")
PLAIN_FFN_STEPS = ("the wide layer", "GELU")
GATED_STEPS = ("SwiGLU", "W_gate", "gated")
GROUPED_STEPS = ("group of heads", "its group")

FAMILIES = {
    # family: (steps it lacks, steps it names)
    "gpt2": (
        ("No mask", "no key is masked", "RMSNorm", "rotary", "post-norm", "sinusoidal", *GATED_STEPS, *GROUPED_STEPS),
        (
            "The causal mask",
            "blocked keys get exactly 0",
            "exp(−∞)",
            "LayerNorm",
            "its mean, μ",
            "β",
            "GELU",
            "read u on",
        ),
    ),
    "bert": (
        (*DECODER_STEPS, *PRE_NORM_STEPS, "RMSNorm", "rotary", "sinusoidal", *GATED_STEPS, *GROUPED_STEPS),
        ("No mask: every key allowed", "no key is masked to 0", "post-norm", "after attention's sum", "LayerNorm"),
    ),
    "llama": (
        (
            *CENTRING_STEPS,
            *ADDED_POSITION_STEPS,
            *PLAIN_FFN_STEPS,
            "post-norm",
            "No mask",
            "no key is masked",
            "read u on",
        ),
        (
            "The causal mask",
            "RMSNorm",
            "root mean square",
            "no shift",
            "rotary",
            "turn",
            "SwiGLU",
            "SiLU",
            "gate",
            "its group",
            "read g on the curve",
        ),
    ),
}
"""What each tiny family's captions and chapters must not say (steps it lacks) and must say."""

LAYER_0 = {
    # family: (the tokens scene's words at layer 0 that it lacks, that it has)
    "gpt2": (("sinusoidal", "rotary"), ("its position's learned vector", "position")),
    "bert": (("sinusoidal", "rotary"), ("its position's learned vector", "position")),
    "llama": (ADDED_POSITION_STEPS, ("no position vector added", "rotary positions", "rotation of the query and key")),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {family: builder(root / family) for family, builder in BUILDERS.items()}


@pytest.fixture(scope="module")
def lectures(folders):
    """family → (record of layer 1, {scene name: built scene}) for every scene that shows it."""
    from blockviz.models import record_layer

    made = {}
    for family, folder in folders.items():
        rec = record_layer(SENTENCE, model=str(folder), layer=1)
        scenes = {
            entry.name: build(entry.scene_class(), rec, token="it")[0]
            for entry in entries()
            if entry.missing_for(rec) is None
        }
        made[family] = (rec, scenes)
    return made


def lecture_text(rec, scenes: dict) -> dict[str, str]:
    """What a lecture of ``scenes`` says, by where: each scene's captions and title as drawn, and
    the chapter files and ``.srt`` written from the catalogue's titles and captions for ``rec``
    and the scenes' captions (as :func:`blockviz.render.run.join_lecture` writes them)."""
    wording = Wording.of(rec)
    chosen = [entry for entry in entries() if entry.name in scenes]
    chapters = chapters_of(
        [entry.name for entry in chosen],
        [entry.title_for(wording) for entry in chosen],
        [entry.caption_for(wording) for entry in chosen],
        [60.0] * len(chosen),
        [
            [(at - scenes[entry.name].captions[0][0], said) for at, said in scenes[entry.name].captions]
            for entry in chosen
        ],
    )
    said = {}
    for entry in chosen:
        scene = scenes[entry.name]
        title = getattr(scene.title_mobject, "shown", "")
        said[entry.name] = " | ".join([title, *(caption for _, caption in scene.captions)])
        said[f"{entry.name} (chapter)"] = f"{entry.title_for(wording)} | {entry.caption_for(wording)}"
    said["chapters.txt"] = chapters_text(chapters, min_seconds=0)
    said["chapters.json"] = chapters_json(chapters, "lecture.mp4")
    cues = srt.parse(captions_srt(chapters, burned_captions=False))  # untagged: no "{\\an8}"
    said["lecture.srt"] = " ".join(" ".join(cue.content.split()) for cue in cues)
    return said


@pytest.mark.parametrize("family", FAMILIES)
def test_captions_and_chapters_name_only_the_architectures_steps(family, lectures):
    rec, scenes = lectures[family]
    lacks, has = FAMILIES[family]
    said = lecture_text(rec, scenes)
    for where, words in said.items():
        if where.split(" ")[0] in COMPARES_BOTH:
            continue
        wrong = [step for step in lacks if step in words]
        assert not wrong, f"{family} {where} names {wrong}: {words}"
    everything = " ".join(said.values())
    assert [step for step in has if step not in everything] == []
    assert not re.search(r"\{\w*\}", everything)  # every placeholder filled in


def test_an_encoders_mask_and_softmax_chapters_say_nothing_is_blocked(lectures):
    rec, scenes = lectures["bert"]
    said = lecture_text(rec, scenes)
    assert said["mask (chapter)"].startswith("No mask: every key allowed | Without a causal mask M is all 0")
    assert "no key is masked to 0" in said["softmax"] and "exp(−∞)" not in said["softmax"]
    assert "the scaled scores: one row per query" in said["softmax"] and "masked scores" not in said["softmax"]
    assert "00:00 Introduction" in said["chapters.txt"] and "No mask: every key allowed" in said["chapters.txt"]
    assert "The causal mask" not in said["chapters.txt"] + said["chapters.json"]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_input_grid_names_the_positions_the_model_adds_at_layer_0(family, folders):
    from blockviz.models import record_layer

    rec = record_layer(SENTENCE, model=str(folders[family]), layer=0)
    (entry,) = [entry for entry in entries() if entry.name == "tokens"]
    scene, _ = build(entry.scene_class(), rec, token="it")
    said = " | ".join([entry.caption_for(Wording.of(rec)), *(caption for _, caption in scene.captions)])
    lacks, has = LAYER_0[family]
    assert [step for step in lacks if step in said] == [], said
    assert [step for step in has if step not in said] == [], said


@pytest.mark.parametrize("family", FAMILIES)
def test_a_repeated_token_is_named_as_its_header_shows_it(family, lectures):
    """“the” twice in the sentence: captions say “the” as the headers do, never “the#1”."""
    rec, scenes = lectures[family]
    assert rec.tokens.count("the") == 2
    for name, scene in scenes.items():
        headers = {label[1:-1] if label.startswith("\u201c") else label for label in scene.token_names}
        quoted = re.findall(r"\u201c([^\u201d]+)\u201d", " ".join(caption for _, caption in scene.captions))
        assert not re.search(r"\w#\d", " ".join(caption for _, caption in scene.captions)), name
        assert [word for word in quoted if word not in headers] == [], name


# -- the wording and the catalogue, on every architecture (no scene built) --------------------------
@pytest.mark.parametrize("arch", supported_architectures())
def test_every_chapter_and_caption_fills_in_on_every_architecture(arch):
    wording = Wording(arch, "SiLU" if arch.gated else "GELU", layer=1 if arch.model_layer else 0)
    for entry in entries():
        title, caption = entry.title_for(wording), entry.caption_for(wording)
        assert title and caption and "{" not in title + caption
        said = f"{title} | {caption}"
        if not arch.causal and entry.name not in COMPARES_BOTH:
            assert not any(step in said for step in DECODER_STEPS), said
        if not arch.has_centring:
            assert not any(step in said for step in CENTRING_STEPS), said
        if arch.post_norm:
            assert not any(step in said for step in PRE_NORM_STEPS), said
        if not arch.gated:
            assert not any(step in said for step in GATED_STEPS), said
        if not arch.grouped:
            assert not any(step in said for step in GROUPED_STEPS), said


def test_the_first_fact_with_a_variant_wins_and_placeholders_are_filled():
    llama = Wording(Architecture(norm="rmsnorm", positions="rotary", ffn="gated"), "SiLU")
    bert = Wording(Architecture(norm_placement="post", positions="learned", causal=False), "GELU")
    assert llama.facts == ("RMSNORM", "ROTARY", "GATED") and bert.facts == ("ENCODER", "POST_NORM", "LEARNED")
    variants = {"GATED": "gated, {glu}", "ROTARY": "rotary, {norm}", "ENCODER": "encoder"}
    assert llama.pick("plain {norm}", variants) == "rotary, RMSNorm"  # ROTARY comes before GATED in FACTS
    assert bert.pick("plain {norm}", variants) == "encoder"
    assert toy_wording().pick("plain {norm}, {positions}", variants) == "plain LayerNorm, sinusoidal encoding"
    assert Wording(Architecture(ffn="gated"), "GELU").glu == "GeGLU"
    assert Wording(Architecture(model_layer=True, embedding="table"), layer=3).fill(
        "layer {layer} reads layer {previous_layer}"
    ) == ("layer 3 reads layer 2")
    assert "LATER_LAYER" not in Wording(Architecture(model_layer=True, embedding="table"), layer=0).facts


@pytest.mark.parametrize(
    "stated, refusal",
    [
        ('CHAPTER = "The {mask}"', "CHAPTER holds {mask}: placeholders are norm"),
        ('CAPTION = "a {norm caption"', "CAPTION holds an unmatched brace"),
        ('ENCODER_CAPTION = "an {}"', "ENCODER_CAPTION holds {}"),
    ],
)
def test_the_catalogue_refuses_an_unknown_placeholder(tmp_path: Path, stated, refusal):
    module = tmp_path / "scene.py"
    module.write_text(
        "\n".join(
            [
                'NAME = "a-scene"',
                "ORDER = 1",
                'DESCRIPTION = "one line"',
                'CHAPTER = "A chapter"',
                'CAPTION = "a caption"',
                stated,
                "",
                "class A(RecordScene):",
                "    pass",
                "",
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=re.escape(refusal)):
        scene_entry(module)


def test_the_variants_a_module_may_state_are_one_chapter_and_one_caption_per_fact():
    entry = next(entry for entry in entries() if entry.name == "layer-norm")
    assert dict(entry.variants)["RMSNORM_CHAPTER"] == "RMSNorm"
    assert set(PHRASES) <= set(dir(Wording)) | {"activation", "layer"}
    assert list(FACTS)[0] == "ENCODER"  # the mask's encoder caption wins over any other variant
