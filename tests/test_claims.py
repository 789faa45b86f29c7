"""Claims follow the numbers: a row's largest weight is called learned only when it passes the
tests ``heads`` applies — not the causal horizon, not an attention sink, above its baseline —
checked against numbers worked out here independently, and in the softmax scene's captions of
the default lecture ("the cat sat"), the chicken lecture ("it") and MiniLM layer 3."""

from __future__ import annotations

import math

import pytest
import torch
from support import build

from blockviz.block_record import record as record_seeded
from blockviz.models.evidence import largest_weight
from blockviz.models.evidence_types import LEARNED_MARGIN, PARKS_AT
from blockviz.recording import record
from blockviz.scenes.softmax import Softmax, largest_weight_caption

CHICKEN = "The chicken didn't cross the road because it was too tired."


def reading_by_hand(weights: torch.Tensor, head: int, query: int, special, causal: bool) -> str:
    """The reading from the definitions: the first causal row; the weight on token 0 and the
    special tokens; the mean weight of the other rows that see the key."""
    row = weights[head, query].tolist()
    key = max(range(len(row)), key=lambda j: (row[j], -j))
    if causal and query == 0:
        return "horizon"
    sink = row[0] + sum(row[j] for j in range(1, len(row)) if special[j])
    if (key == 0 or special[key]) and sink >= PARKS_AT:
        return "sink"
    others = [q for q in range(len(row)) if q != query and (not causal or q >= key)]
    if others:
        baseline = sum(float(weights[head, q, key]) for q in others) / len(others)
        if row[key] - baseline >= LEARNED_MARGIN:
            return "above"
    return "ordinary"


@pytest.fixture(scope="module")
def records():
    recs = {
        "toy cat": record("the cat sat"),
        "toy chicken": record(CHICKEN),
        "seeded chicken": record_seeded(CHICKEN),
    }
    try:
        recs["minilm"] = record(CHICKEN, "minilm", layer=3)
    except Exception as error:  # noqa: BLE001 - the packaged model is an optional extra
        pytest.skip(f"MiniLM is not installed here ({error})")
    return recs


def test_every_rows_reading_matches_the_definitions(records):
    counted = {}
    for rec in records.values():
        for head in range(rec.config.n_heads):
            for query in range(rec.n):
                got = largest_weight(rec.weights[None], 0, head, query, rec.special, rec.config.causal)
                assert got.reading == reading_by_hand(rec.weights, head, query, rec.special, rec.config.causal)
                assert got.weight == pytest.approx(float(rec.weights[head, query].max()))
                counted[got.reading] = counted.get(got.reading, 0) + 1
    assert {"sink", "above", "ordinary", "horizon"} <= set(counted), counted  # every reading occurs


def softmax_captions(rec, **options) -> str:
    scene, _ = build(Softmax, rec, **options)
    return " | ".join(caption for _, caption in scene.captions)


def test_the_default_lecture_calls_a_parked_row_a_sink_not_a_meaning(records):
    rec = records["toy cat"]
    scene_focus = 2  # the softmax scene's default focus: the last token, "sat"
    reading = largest_weight(rec.weights[None], 0, 0, scene_focus, rec.special, True)
    said = softmax_captions(rec, head=0)
    expected = largest_weight_caption(
        "sat", rec.tokens[reading.key], reading.reading, trained=True, first=reading.key == 0
    )
    assert expected in said
    if reading.reading == "sink":
        assert "an attention sink, not a meaning" in said and "learned in training" not in said


@pytest.mark.parametrize(("name", "head"), [("toy chicken", 0), ("minilm", 1)])  # the heads the lectures show
def test_a_learned_claim_only_where_the_row_stands_above_its_baseline(records, name, head):
    rec = records[name]
    focus = rec.tokens.index("it")
    said = softmax_captions(rec, token="it", head=head)
    reading = reading_by_hand(rec.weights, head, focus, rec.special, rec.config.causal)
    assert ("learned in training" in said) == (reading == "above"), (reading, said)
    assert ("attention sink" in said) == (reading == "sink"), (reading, said)


def test_random_weights_are_never_said_to_mean_anything(records):
    said = softmax_captions(records["seeded chicken"], token="it", head=1)
    assert "by chance, not for its meaning" in said and "learned" not in said and "sink" not in said


def test_the_first_causal_row_made_no_choice():
    assert "no choice" in largest_weight_caption("the", "the", "horizon", trained=True)
    assert math.isnan(largest_weight(torch.eye(3)[None, None], 0, 0, 2, [False] * 3, True).baseline)


def test_multi_head_names_a_parked_largest_weight_an_attention_sink(records):
    from blockviz.scenes.multi_head import MultiHead

    rec = records["toy cat"]
    reading = largest_weight(rec.weights[None], 0, 0, 2, rec.special, True)
    scene, _ = build(MultiHead, rec, head=0)
    said = " | ".join(caption for _, caption in scene.captions)
    named = (
        f"head 0, row “sat”: its largest weight, {rec.weights[0, 2, reading.key]:.2f}, on “{rec.tokens[reading.key]}”"
    )
    assert named in said
    assert (reading.reading == "sink") == ("an attention sink" in said.split(named)[1].split(" | ")[0])
    assert reading.reading == "sink"  # "the cat sat": head 0's 'sat' parks on 'the' (0.9x), the case this guards


def test_a_weight_on_a_word_read_as_unk_is_never_said_learned():
    rec = record("the zebra sat")  # "zebra" is not in the toy's vocabulary: the model read <unk>
    unknown = [False, True, False]
    reading = largest_weight(rec.weights[None], 0, 0, 2, rec.special, True, unknown)
    assert rec.tokens[reading.key] == "zebra"
    assert reading_by_hand(rec.weights, 0, 2, rec.special, True) == "above"  # the case this guards
    assert reading.reading == "unknown"
    said = softmax_captions(rec, head=0)
    assert "learned in training" not in said
    assert "“sat” weighs “zebra (<unk>)” most, but <unk> stands for every word outside the vocabulary" in said


def test_a_word_read_as_unk_is_labelled_so_in_scenes_and_figures():
    from blockviz.figures.parts import columns_of, rows_of

    rec = record("the zebra sat")
    scene, _ = build(Softmax, rec, head=0)
    assert scene.token_names == ["the", "zebra (<unk>)", "sat"]
    assert rows_of(rec) == columns_of(rec, "weights") == ["the", "zebra (<unk>)", "sat"]
    known = record("the cat sat")
    assert rows_of(known) == list(known.tokens)  # known words unmarked
