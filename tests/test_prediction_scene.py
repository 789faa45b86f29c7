"""The prediction scene on the trained toy model's records: every number it shows is the record's
(the output row, ln_f, the five largest logits and probabilities, read back from its labels and
checked against an independent ranking of the recorded row), the probabilities and "+ others"
add up to 1 within one unit of their last decimal, the last caption names the record's words
and numbers, it keeps every rule of docs/writing-a-scene.md, and it is left out of (or refused
for) a record without an unembedding."""

from __future__ import annotations

import functools

import pytest
import torch
from click.testing import CliRunner
from support import build, captions_held_to_read, check_scene, parse, record_value, shown_decimals
from support_motion import assert_same_end, build_in_motion, end_state

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.scenes.catalog import entries, for_record, lookup
from blockviz.scenes.prediction import Prediction
from blockviz.scenes.text import font_size_of
from blockviz.scenes.token_axis import token_face
from blockviz.style import format_number
from blockviz.toy.recording import record_toy

CHICKEN = "The chicken didn't cross the road because it was too tired."
TOO = 10  # "The chicken didn't cross the road because it was too …": position by hand


@functools.cache
def toy(sentence: str = CHICKEN):
    return record_toy(sentence)


@functools.cache
def built_on(sentence: str = CHICKEN, token: str | None = "too", theme: str = "dark"):
    return build(Prediction, toy(sentence), token=token, theme=theme)


def sourced_by(inspector, name: str) -> dict:
    return {label.source[1:]: label for label in inspector.numbers.values() if label.source[0] == name}


def top_five(rec, row: int):
    """An independent ranking of the recorded row: torch's top 5 of ``probs[row]``."""
    return torch.topk(rec.probs[row], 5)


@pytest.mark.parametrize(
    ("sentence", "token", "theme"),
    [
        (CHICKEN, "too", "dark"),
        (CHICKEN, None, "dark"),
        ("the cat sat", None, "dark"),
        ("cat", None, "dark"),
        (CHICKEN, "The", "light"),
    ],
    ids=["chicken/too", "chicken/default", "cat sat", "one token", "chicken/first/light"],
)
def test_the_scene_keeps_every_rule(sentence, token, theme):
    """Every number the record's, its sum adding up, no text overlapping, leaving the frame, under
    11 px or under 4.5:1, every shot filling 60 % of the frame, every caption held as long as it takes to read."""
    scene, inspector = built_on(sentence, token, theme)
    check_scene(scene, inspector, toy(sentence))
    assert captions_held_to_read(scene) == []


def test_the_shown_words_and_probabilities_are_the_records_five_largest():
    scene, inspector = built_on()
    rec = toy()
    assert scene.focus == TOO
    top = top_five(rec, TOO)
    probs = sourced_by(inspector, "probs")
    assert sorted(probs) == sorted((TOO, int(index)) for index in top.indices)
    decimals = shown_decimals(probs[TOO, int(top.indices[0])])
    for value, index in zip(top.values, top.indices):
        assert probs[TOO, int(index)].shown == format_number(float(value), decimals)
    vocabulary = rec.source.vocabulary
    headers = [scene.logits.row_headers[k].shown for k in range(5)]
    assert headers == [token_face(vocabulary[int(index)]) for index in top.indices]
    drawn = [scene.probs.labels[k, 0] for k in range(5)]  # one under another: largest first
    assert [label.source for label in drawn] == [("probs", TOO, int(index)) for index in top.indices]


def test_the_logits_shown_are_the_five_largest_of_the_row_and_the_rows_above_are_the_focus_rows():
    scene, inspector = built_on()
    rec = toy()
    logits = sourced_by(inspector, "logits")
    largest = torch.topk(rec.logits[TOO], 5)  # softmax keeps the order: the most probable words
    assert sorted(logits) == sorted((TOO, int(index)) for index in largest.indices)
    for value, index in zip(largest.values, largest.indices):
        assert logits[TOO, int(index)].shown == format_number(float(value))
    for field in ("resid_post", "ln_f"):
        shown = sourced_by(inspector, field)
        assert sorted(shown) == [(TOO, j) for j in range(rec.config.d_model)]
        assert [shown[TOO, j].shown for j in range(rec.config.d_model)] == [
            format_number(float(value)) for value in rec.tensors[field][TOO]
        ]
    assert sourced_by(inspector, "ln_f_mean")[(TOO,)].shown == format_number(rec.ln_f_mean[TOO].item())
    assert sourced_by(inspector, "ln_f_var")[(TOO,)].shown == format_number(rec.ln_f_var[TOO].item())


def test_the_probabilities_and_others_add_up_to_one_within_a_unit_of_their_last_decimal():
    scene, _ = built_on()
    rec = toy()
    ((terms, total),) = scene.sums
    assert total.source == ("constant", 1.0) and total.shown == format_number(1.0, total.decimals)
    top = top_five(rec, TOO)
    others = terms[-1]
    assert others.source[0] == "remainder" and len(terms) == 6
    assert record_value(rec, others.source) == pytest.approx(float(rec.probs[TOO].sum() - top.values.sum()), abs=1e-6)
    written = sum(parse(term.shown) for term in terms)
    unit = 10**-total.decimals
    assert abs(written - 1.0) <= unit + 1e-9
    exact = round(written / unit) == round(1.0 / unit)
    assert scene.sign.shown == ("=" if exact else "\u2248")


def test_the_last_caption_names_the_records_words_and_numbers_as_its_labels():
    scene, inspector = built_on()
    rec = toy()
    top = top_five(rec, TOO)
    vocabulary = rec.source.vocabulary
    decimals = scene.decimals
    named = ", ".join(
        f"\u201c{vocabulary[int(index)]}\u201d {format_number(float(value), decimals)}"
        for value, index in zip(top.values[:3], top.indices[:3])
    )
    said = [caption for _, caption in scene.captions]
    assert f"after \u201ctoo\u201d, the block predicts {named}, \u2026" in said
    (phrases,) = scene.numbered_captions.values()
    caption_numbers = [member for phrase in phrases for member in phrase.get_family() if hasattr(member, "source")]
    assert [label.source for label in caption_numbers] == [("probs", TOO, int(index)) for index in top.indices[:3]]
    assert all(id(label) in inspector.numbers for label in caption_numbers)  # drawn, so checked against the record


def test_the_last_caption_names_no_word_whose_probability_reads_zero():
    """After "tired" the toy model is sure of "." (1.00): the others read 0.00 and go unnamed, no "…"."""
    scene, _ = built_on(CHICKEN, None)
    rec = toy()
    assert scene.focus == 11 and torch.argmax(rec.probs[11]).item() == rec.source.vocabulary.index(".")
    said = [caption for _, caption in scene.captions]
    shown = format_number(rec.probs[11].max().item(), scene.decimals)
    assert shown == "1.00" and f"after \u201ctired\u201d, the block predicts \u201c.\u201d {shown}" in said  # no "…"


def test_in_motion_it_keeps_its_bars_and_ends_as_its_still():
    settled, _ = built_on()
    played, inspector = build_in_motion(Prediction, toy(), token="too")
    assert inspector.problems == []
    assert settled.renderer.time == pytest.approx(played.renderer.time)
    assert [shown for _, shown in settled.captions] == [shown for _, shown in played.captions]
    assert_same_end(end_state(settled), end_state(played))


def test_the_catalogue_places_it_after_the_recap_and_needs_an_unembedding():
    names = [entry.name for entry in entries()]
    assert names[names.index("recap") + 1] == "prediction"
    (entry,) = lookup(["prediction"])
    assert entry.needs == "unembedding" and entry.scene_class() is Prediction
    seeded = record("the cat sat")
    assert "prediction" not in [entry.name for entry in for_record(lookup(["all"]), seeded)]
    assert "prediction" in [entry.name for entry in for_record(lookup(["all"]), toy())]
    with pytest.raises(BlockvizError, match="scene 'prediction' cannot be drawn: .*try --model toy"):
        for_record(lookup(["prediction"]), seeded, asked=["prediction"])


def test_a_record_without_an_unembedding_is_refused_in_one_line():
    with pytest.raises(BlockvizError, match="no unembedding") as refused:
        build(Prediction, record("the cat sat"))
    assert "\n" not in str(refused.value)
    result = CliRunner().invoke(
        main, ["render", "the cat sat", "--model", "seeded", "--scene", "prediction", "--format", "png"]
    )
    assert result.exit_code != 0 and "scene 'prediction' cannot be drawn" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_the_others_caption_counts_the_vocabulary_as_words_and_unk():
    scene, _ = built_on()
    said = " | ".join(caption for _, caption in scene.captions)
    words = len(toy().source.vocabulary) - 1  # the vocabulary's first entry is <unk>, not a word
    assert f"the {words - 5} other words and <unk> as one term" in said


def glyph_of(piece, char: str):
    """The glyph drawing the first ``char`` of text ``piece`` (one glyph per character but spaces)."""
    characters = [c for c in piece.shown if not c.isspace()]
    assert len(characters) == len(piece.submobjects)
    return piece.submobjects[characters.index(char)]


def test_a_quoted_word_in_the_last_caption_is_drawn_at_the_captions_size_on_its_baseline():
    """After "sat" the toy model predicts “.” and “on”: the quoted “on” is drawn as large as the
    caption's words and on their baseline (its quotation marks sit high: a median over all its
    glyphs' bottoms put it 0.08 units, 5 px at 480p, under the line)."""
    scene, _ = built_on("the cat sat", None)
    (phrases,) = scene.numbered_captions.values()
    texts = [member for phrase in phrases for member in phrase.get_family() if hasattr(member, "shown")]
    words = next(piece for piece in texts if piece.shown.startswith("after"))
    quoted_on = next(piece for piece in texts if piece.shown == "\u201con\u201d")
    assert font_size_of(quoted_on) == pytest.approx(font_size_of(words))
    o_in_block, o_in_on = glyph_of(words, "o"), glyph_of(quoted_on, "o")
    assert o_in_on.height == pytest.approx(o_in_block.height, rel=0.01)
    assert o_in_on.get_bottom()[1] == pytest.approx(o_in_block.get_bottom()[1], abs=0.005)
