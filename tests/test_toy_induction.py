"""The copy task's sequences and the copy measures (blockviz.toy.copying, blockviz.toy.induction),
on hand-built attention patterns and logits whose scores are worked out by hand."""

import random

import pytest
import torch

from blockviz.errors import BlockvizError
from blockviz.toy.copying import CopyRecipe, CopySequence, copy_sequence, copy_sequences
from blockviz.toy.corpus import vocabulary_words
from blockviz.toy.induction import COPY_LESSON, CopyMeasures, copy_hits, induction_scores, previous_token_scores

WORDS = vocabulary_words()[1:]


def _previous_token_pattern(n: int) -> torch.Tensor:
    """Row 0 on itself, every other row wholly on the row before: ``(n, n)``."""
    pattern = torch.zeros(n, n)
    pattern[0, 0] = 1.0
    pattern[torch.arange(1, n), torch.arange(n - 1)] = 1.0
    return pattern


def _uniform_causal(n: int) -> torch.Tensor:
    return torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]


def test_a_previous_token_pattern_scores_one_and_a_uniform_one_its_hand_worked_mean():
    weights = torch.stack([_previous_token_pattern(4), _uniform_causal(4), torch.eye(4)])  # (3 heads, 4, 4)
    scores = previous_token_scores(weights)
    assert scores.tolist() == pytest.approx([1.0, (1 / 2 + 1 / 3 + 1 / 4) / 3, 0.0])


def test_previous_token_scores_keep_leading_dimensions():
    weights = torch.stack([_previous_token_pattern(5)[None].repeat(2, 1, 1), _uniform_causal(5)[None].repeat(2, 1, 1)])
    assert previous_token_scores(weights).shape == (2, 2)


def test_an_exact_induction_pattern_scores_one_and_a_half_split_one_a_half():
    sequence = CopySequence(("a", "b", "c", "x", "a", "b", "c"), first=0, repeat=4, phrase=3)
    assert sequence.predicted == [(4, 1), (5, 2)]
    exact = _uniform_causal(7).clone()
    half = _uniform_causal(7).clone()
    for query, key in sequence.predicted:
        exact[query] = 0.0
        exact[query, key] = 1.0
        half[query] = 0.0
        half[query, key] = 0.5
        half[query, query] = 0.5
    scores = induction_scores(torch.stack([exact, half, _previous_token_pattern(7)]), sequence.predicted)
    assert scores.tolist() == pytest.approx([1.0, 0.5, 0.0])


def test_copy_hits_compare_each_querys_top_logit_with_the_word_at_its_key():
    ids = torch.tensor([7, 8, 9, 3, 7, 8, 9])
    logits = torch.zeros(7, 10)
    logits[4, 8] = 5.0  # right: after the second 7 comes 8
    logits[5, 3] = 5.0  # wrong: 9 comes next
    assert copy_hits(logits, ids, [(4, 1), (5, 2)]).tolist() == [True, False]


def test_measures_choose_the_best_head_per_block_and_judge_the_goals():
    measures = CopyMeasures(previous_token=[[0.2, 0.6], [0.1, 0.1]], induction=[[0.0, 0.1], [0.7, 0.3]], accuracy=0.65)
    assert measures.best("previous_token", 0) == (1, 0.6)
    assert measures.best("induction", 1) == (0, 0.7)
    assert measures.goals == {"previous_token": True, "induction": True, "accuracy": False}
    one_block = CopyMeasures(previous_token=[[0.9, 0.1]], induction=[[0.1, 0.2]], accuracy=0.1)
    assert one_block.goals == {"previous_token": True, "induction": False, "accuracy": False}


def test_a_copy_sequence_repeats_its_phrase_after_a_gap_and_is_distinct_elsewhere():
    recipe = CopyRecipe()
    chooser = random.Random(3)
    for _ in range(200):
        sequence = copy_sequence(chooser, WORDS, recipe)
        words = sequence.words
        assert len(words) == recipe.length and recipe.shortest <= sequence.phrase <= recipe.longest
        assert sequence.repeat >= sequence.first + sequence.phrase + recipe.min_gap
        first = words[sequence.first : sequence.first + sequence.phrase]
        assert words[sequence.repeat : sequence.repeat + sequence.phrase] == first
        assert len(set(words)) == recipe.length - sequence.phrase
        for query, key in sequence.predicted:
            assert words[query + 1] == words[key] and words[query] == words[key - 1]


def test_the_gap_and_the_start_vary_so_no_position_gives_the_repeat_away():
    sequences = copy_sequences(WORDS, CopyRecipe(), 200, seed=1)
    assert len({sequence.repeat - sequence.first for sequence in sequences}) >= 10
    assert len({sequence.first for sequence in sequences}) >= 10
    assert sequences == copy_sequences(WORDS, CopyRecipe(), 200, seed=1)
    assert sequences != copy_sequences(WORDS, CopyRecipe(), 200, seed=2)


@pytest.mark.parametrize(
    "sizes",
    [{"shortest": 1}, {"shortest": 4, "longest": 3}, {"min_gap": 0}, {"length": 10, "longest": 5, "min_gap": 1}],
)
def test_a_recipe_that_cannot_make_a_sequence_is_one_line(sizes):
    with pytest.raises(BlockvizError) as error:
        CopyRecipe(**sizes)
    assert "\n" not in str(error.value)


def test_the_copy_lesson_is_made_of_the_models_words_with_its_phrase_repeated():
    words = COPY_LESSON.split()
    assert set(words) <= set(WORDS)
    assert words[3:6] == words[-3:] == ["lamp", "cake", "river"]
