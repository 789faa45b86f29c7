"""The one token/head selector, by hand-worked cases."""

import pytest

from blockviz import BlockvizError
from blockviz.selection import select_head, select_token

TOKENS = ["The", "cat", "saw", "the", "dog", "3", "."]


@pytest.mark.parametrize(
    "choice, position",
    [
        (None, 5),
        ("cat", 1),
        ("CAT", 1),
        ("the", 0),
        ("The", 0),
        ("the#2", 3),
        ("THE#1", 0),
        ("0", 0),
        ("4", 4),
        (4, 4),
        ("3#1", 5),
        (".", 6),
        (".#1", 6),
    ],
)
def test_words_occurrences_and_positions(choice, position):
    assert select_token(TOKENS, choice) == position


@pytest.mark.parametrize(
    "tokens, position",
    [
        (["[CLS]", "it", "was", ".", "[SEP]"], 2),
        (["<s>", "it", "<|endoftext|>"], 1),
        (["the", "cat", "sat"], 2),
        ([".", ",", "!"], 2),
        (["[CLS]", "[SEP]"], 1),
        (["tired", "\u2026", "\U0001f600"], 0),
    ],
)
def test_the_default_is_the_last_word_token(tokens, position):
    assert select_token(tokens, None) == position


@pytest.mark.parametrize(
    "choice, message",
    [
        ("bird", "'bird' is not in the sentence"),
        ("the#0", "count from 1"),
        ("the#3", "occurs 2 times"),
        ("cat#2", "occurs once"),
        ("7", "position 7 is outside the sentence of 7 tokens"),
        (True, "neither a word nor a position"),
    ],
)
def test_errors_list_the_tokens_with_positions(choice, message):
    with pytest.raises(BlockvizError, match=message) as error:
        select_token(TOKENS, choice)
    assert "0 'The', 1 'cat'" in str(error.value) and "\n" not in str(error.value)


def test_a_token_that_looks_like_an_occurrence_is_itself():
    assert select_token(["a#2", "b"], "a#2") == 0


def test_heads():
    assert select_head(None, 2) == 0 and select_head(1, 2) == 1
    for bad in (2, -1, True):
        with pytest.raises(BlockvizError, match="heads 0 to 1"):
            select_head(bad, 2)
    with pytest.raises(BlockvizError, match="head 0 only"):
        select_head(1, 1)


def test_the_default_token_uses_the_records_special_flags_over_the_names():
    tokens = ["[CLS]", "it", "was", "[UNK]", ".", "[SEP]"]  # [UNK]: a word the vocabulary lacks
    assert select_token(tokens, None) == 2  # told by names alone
    assert select_token(tokens, None, [True, False, False, False, False, True]) == 3
    assert select_token(["<x>", "y"], None, [False, True]) == 0  # flagged "y" is passed over; "<x>" is a word here
