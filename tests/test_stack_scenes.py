"""The stack's scenes — stack, previous-token, induction, logit-lens — on the copy model's record
of "cat river lamp dog cat river": every number they draw is the record's (read back from its
label's source), every written sum adds up (the induction score's split, each block's
probabilities to 1), the heads and rows they pick are the record's by hand, their words hold no
code names, and they are left out of (or refused for) a record of one block."""

from __future__ import annotations

import functools
import re

import pytest
import torch
from click.testing import CliRunner
from support import build, check_scene, named_record, parse, shown_decimals, sum_misses
from support_motion import build_in_motion

from blockviz.cli import main
from blockviz.scenes.catalog import entries, for_record, lookup
from blockviz.scenes.induction import Induction
from blockviz.scenes.logit_lens import LogitLens
from blockviz.scenes.previous_token import PreviousToken
from blockviz.scenes.stack import Stack
from blockviz.style import format_number
from blockviz.toy.recording import record_toy

SENTENCE = "cat river lamp dog cat river"
LESSON = "cat road because lamp cake river tall dog sat mat wide lamp cake river"  # docs/models.md
CAT_2, RIVER_1 = 4, 1  # the second "cat" and the "river" after the first: by hand
SCENES = {"stack": Stack, "previous-token": PreviousToken, "induction": Induction, "logit-lens": LogitLens}
CODE_NAME = re.compile(r"\b(?:d_model|d_head|d_ff|resid_pre|resid_post|pos_embed|scores_from_\w+)\b")


@functools.cache
def copy_record(sentence: str = SENTENCE):
    return record_toy(sentence, "copy")


@functools.cache
def built(name: str, token: str | None = "cat#2", sentence: str = SENTENCE):
    return build(SCENES[name], copy_record(sentence), **({"token": token} if token else {}))


def labels_of(inspector, *head) -> dict:
    """The drawn numbers whose source starts with ``head``, by the rest of their source."""
    return {
        label.source[len(head) :]: label for label in inspector.numbers.values() if label.source[: len(head)] == head
    }


@pytest.mark.parametrize(
    ("sentence", "token", "framed"),
    [
        (SENTENCE, "cat#2", True),
        (SENTENCE, None, True),
        ("cat river lamp", None, True),  # no word comes back: nothing for an induction head to find
        (LESSON, None, True),
        ("cat", None, False),
    ],
    ids=["second cat", "default focus", "no repeat", "lesson", "one token"],
)
@pytest.mark.parametrize("name", list(SCENES))
def test_each_scene_keeps_every_rule(name, sentence, token, framed):
    """Every number the record's at its source, every sum adding up, no text overlapping, leaving
    the frame, under 11 px or under 4.5:1, every shot filling 60 % of the frame (but on one token)."""
    scene, inspector = built(name, token, sentence)
    check_scene(scene, inspector, copy_record(sentence), framed=framed)


def test_the_catalogue_states_what_each_needs_and_all_keeps_them_only_for_a_stack():
    by_name = {entry.name: entry for entry in entries()}
    assert {name: by_name[name].needs for name in SCENES} == {
        "stack": "stack",
        "previous-token": "stack",
        "induction": "key-sources",
        "logit-lens": "lens-scene",
    }
    assert all(by_name[name].scene_class() is SCENES[name] for name in SCENES)
    one_block = record_toy("cat river lamp")
    assert not set(SCENES) & {entry.name for entry in for_record(lookup(["all"]), one_block)}
    assert set(SCENES) <= {entry.name for entry in for_record(lookup(["all"]), copy_record())}
    assert set(SCENES) <= {entry.name for entry in for_record(entries(), copy_record(), ())}  # the lecture


def test_the_stack_draws_block_1s_input_as_block_0s_output_number_for_number():
    _, inspector = built("stack")
    rec = copy_record()
    leaving, entering = labels_of(inspector, "block", 0, "resid_post"), labels_of(inspector, "block", 1, "resid_pre")
    assert leaving and leaving.keys() == entering.keys()
    for (i, j), label in entering.items():
        assert label.shown == leaving[i, j].shown == format_number(rec.blocks[0].resid_post[i, j].item())


def test_previous_token_shows_block_0s_head_with_most_weight_on_the_word_before():
    scene, inspector = built("previous-token")
    view = copy_record().block(0)
    on_previous = [view.weights[h].diagonal(-1).sum().item() for h in range(view.config.n_heads)]
    assert scene.g == max(range(len(on_previous)), key=on_previous.__getitem__) == 0
    weights = labels_of(inspector, "block", 0, "weights", scene.g)
    assert weights[CAT_2, CAT_2 - 1].shown == "0.83"  # the second "cat" on "dog": read off the record by hand
    outputs = labels_of(inspector, "block", 0, "head_outputs", scene.g, CAT_2)
    values = labels_of(inspector, "block", 0, "value", scene.g, CAT_2 - 1)
    assert len(outputs) == len(values) == view.config.d_head
    assert "“cat” puts 0.83 of its weight on “dog”" in [caption for _, caption in scene.captions]


def test_the_induction_split_is_the_records_and_adds_up_to_the_score():
    scene, inspector = built("induction")
    rec = copy_record()
    h = scene.h_shown
    assert (scene.q, scene.k) == (CAT_2, RIVER_1)
    assert h == int(rec.weights[:, CAT_2, RIVER_1].argmax())
    heads = labels_of(inspector, "block", 1, "scores_from_heads", h)
    embed = labels_of(inspector, "block", 1, "scores_from_embed", h)
    assert sorted(heads) == [(g, CAT_2, RIVER_1) for g in range(rec.config.n_heads)] and list(embed) == [
        (CAT_2, RIVER_1)
    ]
    (total,) = labels_of(inspector, "block", 1, "scores", h).values()
    rest = [label for label in inspector.numbers.values() if label.source[0] == "remainder"]
    assert len(rest) == 1
    parts = [*heads.values(), *embed.values(), *rest]
    assert [parts, total] in [[list(shown), written] for shown, written in scene.sums]
    assert sum_misses(parts, total) <= 1
    assert parse(total.shown) == pytest.approx(rec.scores[h, CAT_2, RIVER_1].item(), abs=10 ** -shown_decimals(total))
    # the record's own split: the heads' and the embeddings' parts and the rest make the score
    record_rest = (
        rec.scores[h, CAT_2, RIVER_1]
        - rec.scores_from_heads[h, :, CAT_2, RIVER_1].sum()
        - rec.scores_from_embed[h, CAT_2, RIVER_1]
    )
    assert parse(rest[0].shown) == pytest.approx(record_rest.item(), abs=10 ** -shown_decimals(rest[0]))
    predicted = labels_of(inspector, "block", 1, "probs", CAT_2)
    river = list(rec.source.vocabulary).index("river")
    assert list(predicted) == [(river,)] and int(rec.probs[CAT_2].argmax()) == river


def test_the_logit_lens_shows_each_blocks_five_largest_adding_up_to_one():
    scene, inspector = built("logit-lens")
    rec = copy_record()
    for k, view in enumerate(rec.blocks):
        shown = labels_of(inspector, "block", k, "probs", CAT_2)
        top = torch.topk(view.probs[CAT_2], 5)
        assert sorted(shown) == sorted((int(index),) for index in top.indices)
        decimals = shown_decimals(next(iter(shown.values())))
        for value, index in zip(top.values, top.indices):
            assert shown[int(index),].shown == format_number(float(value), decimals)
    assert len(scene.sums) == len(rec.blocks)
    for parts, total in scene.sums:
        assert len(parts) == 6 and parse(total.shown) == 1 and sum_misses(parts, total) <= 1


def test_the_logit_lens_bar_names_probabilities_not_attention_weights():
    """The lens's grids hold next-token probabilities (``probs``): on the weights' 0–1 map, named
    as the logit-lens figure names them, never "weights"."""
    from blockviz.scenes.colour_bar import bars_of

    scene, _ = built("logit-lens")
    assert [bar.name.shown for bar in bars_of(scene)] == ["probability (\u221a scale)"]


def test_no_scene_says_a_code_name():
    for name in SCENES:
        for token in ("cat#2", None):
            scene, _ = built(name, token)
            said = [scene.title_mobject.shown]
            said += [caption for _, caption in scene.captions]
            assert not [text for text in said if CODE_NAME.search(text)], name


@pytest.mark.parametrize("name", list(SCENES))
def test_asking_for_one_on_a_record_of_one_block_is_one_line_exit_2(name, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["render", "cat river lamp", "--scene", name, "--format", "png", "--resolution", "160x90", "-o", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert f"scene {name!r} cannot be drawn" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not out.exists()


@pytest.mark.render
def test_each_renders_a_tiny_png(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "render",
            SENTENCE,
            "--model",
            "copy",
            "--token",
            "cat#2",
            "--scene",
            ",".join(SCENES),
            "--format",
            "png",
            "--resolution",
            "160x90",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    pngs = sorted(path.name for path in tmp_path.glob("*.png"))
    assert pngs == sorted(f"{name}.png" for name in SCENES)
    assert all((tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs)


def test_a_trained_models_layers_show_as_a_stack_with_their_own_output_and_names(tmp_path):
    """A post-norm model's stack (tiny BERT, --layer all): the output grid is the layer's output
    (resid_post_norm, what the next layer reads), the blocks are named by their layers, and the
    scenes that need a toy model's split or prediction are left out."""
    from models_support import SENTENCE as MODEL_SENTENCE
    from models_support import bert_folder

    import blockviz

    rec = blockviz.record(MODEL_SENTENCE, str(bert_folder(tmp_path / "bert")), "all")
    shown = {entry.name for entry in for_record(lookup(["all"]), rec)}
    assert {"stack", "previous-token"} <= shown and not {"induction", "logit-lens"} & shown
    scene, inspector = build(Stack, rec)
    check_scene(scene, inspector, rec, framed=False)
    assert labels_of(inspector, "block", 0, "resid_post_norm") and not labels_of(inspector, "block", 0, "resid_post")
    assert scene.captions[0][1].startswith("the grid entering layer 0:")
    scene, inspector = build(PreviousToken, rec)
    check_scene(scene, inspector, rec, framed=False)


@pytest.mark.parametrize("name", list(SCENES))
def test_each_keeps_its_bars_in_motion(name):
    """At 0.1, 0.25, 0.5, 0.75 and 0.9 of every play: no text under 4.5:1 against what is
    composited behind it, no highlight edge through a text, no number morphing into another."""
    _, inspector = build_in_motion(SCENES[name], copy_record(), token="cat#2")
    assert inspector.plays >= 3
    assert inspector.problems == []


@pytest.mark.parametrize("name", ["copy", "toy"])
def test_a_kept_records_header_chooses_the_scenes_its_record_does(name, tmp_path):
    """``slides`` reads only a kept record's header (no torch): the scenes it lists from the
    header are the scenes the record itself can show (a header has no tensors, only ``n_blocks``)."""
    from blockviz.record_format import read_record_header
    from blockviz.scenes.catalog import entries, for_record

    rec = named_record(name)
    rec.save(tmp_path / "r.safetensors")
    header = read_record_header(tmp_path / "r.safetensors")
    shown = [entry.name for entry in for_record(entries(), rec)]
    assert [entry.name for entry in for_record(entries(), header)] == shown
    assert ("induction" in shown) == (name == "copy")
