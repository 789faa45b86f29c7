"""The lesson goals of issue 20, measured on the shipped model through its records: a head links
"it" to its subject, on the chicken sentence and on held-out sentences; the adjective's row
finds the noun it describes; every number is readable with two decimals."""

import json

import pytest
import torch

from blockviz.toy import PACKAGED
from blockviz.toy.corpus import CorpusRecipe, held_out_sentences
from blockviz.toy.lessons import CONTRAST_GOAL, HELD_OUT_GOAL, IT_GOAL, VALUE_LIMIT
from blockviz.toy.recording import record_toy

TIRED = "The chicken didn't cross the road because it was too tired."
WIDE = "The chicken didn't cross the road because it was too wide."


@pytest.fixture(scope="module")
def card():
    return json.loads((PACKAGED / "card.json").read_text())


def _it_head(rec):
    """The (head, row) whose row puts the most weight on "chicken" among the rows of "it" and
    the token after it, with that weight and whether "chicken" is the row's top key."""
    it, chicken = rec.tokens.index("it"), rec.tokens.index("chicken")
    options = [
        (bool(rec.weights[h, row].argmax() == chicken), float(rec.weights[h, row, chicken]), h, row)
        for h in range(rec.config.n_heads)
        for row in (it, it + 1)
    ]
    top, weight, head, row = max(options)
    return head, row - it, weight, top


def test_a_head_puts_most_of_the_weight_from_it_on_chicken():
    head, _, weight, top = _it_head(record_toy(TIRED))
    assert top and weight >= IT_GOAL


def test_the_same_head_does_so_on_held_out_noun_pairs(card):
    head, offset, _, _ = _it_head(record_toy(TIRED))
    sentences = held_out_sentences(
        CorpusRecipe(**{k: v for k, v in card["corpus"].items() if k not in ("grammar", "held_out_pairs")})
    )
    hits = 0
    for sentence in sentences:
        rec = record_toy(sentence.text)
        row, subject = rec.tokens.index("it") + offset, rec.tokens.index(sentence.subject)
        hits += bool(rec.weights[head, row].argmax() == subject) and float(rec.weights[head, row, subject]) >= IT_GOAL
    assert hits / len(sentences) >= HELD_OUT_GOAL
    assert hits / len(sentences) == card["held_out_accuracy"]["it_to_subject"]


def test_the_adjective_row_attends_to_the_noun_it_describes():
    tired, wide = record_toy(TIRED), record_toy(WIDE)
    row, chicken, road = tired.tokens.index("tired"), tired.tokens.index("chicken"), tired.tokens.index("road")
    assert torch.equal(tired.weights[:, :row], wide.weights[:, :row])  # the rows before the adjective cannot differ
    met = [
        h
        for h in range(tired.config.n_heads)
        if tired.weights[h, row].argmax() == chicken
        and wide.weights[h, row].argmax() == road
        and min(float(tired.weights[h, row, chicken]), float(wide.weights[h, row, road])) >= CONTRAST_GOAL
    ]
    assert met


def test_every_recorded_value_is_below_a_hundred():
    for sentence in (TIRED, WIDE, "The trophy didn't fit in the suitcase because it was too big.", "the cat sat"):
        for name, tensor in record_toy(sentence).activations().items():
            assert float(tensor[torch.isfinite(tensor)].abs().max()) < VALUE_LIMIT, name


def test_the_card_reports_the_figures_the_records_show(card):
    tired, wide = record_toy(TIRED), record_toy(WIDE)
    lessons = card["lessons"]
    assert all(lessons["goals"].values())
    row = tired.tokens.index("tired")
    assert lessons["tired_weight"] == round(
        float(tired.weights[lessons["contrast_head"], row, tired.tokens.index("chicken")]), 4
    )
    assert lessons["wide_weight"] == round(
        float(wide.weights[lessons["contrast_head"], row, wide.tokens.index("road")]), 4
    )
    head, offset, weight, _ = _it_head(tired)
    assert (lessons["it_head"], lessons["it_weight"]) == (head, round(weight, 4))
