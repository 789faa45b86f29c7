"""The toy model's corpus and vocabulary: every lesson word is known, the held-out pairs never
meet in training, the grammar makes the referent predictable, lookups lower-case."""

import pytest

from blockviz.errors import BlockvizError
from blockviz.tokens import tokenize
from blockviz.toy.corpus import (
    LESSON_SENTENCES,
    RELATIONS,
    UNKNOWN,
    CorpusRecipe,
    held_out_pairs,
    held_out_sentences,
    lesson_pairs,
    training_sentences,
    vocabulary_words,
)
from blockviz.toy.vocabulary import Vocabulary

RECIPE = CorpusRecipe(sentences=3000)


def test_every_word_of_the_lesson_sentences_is_in_the_vocabulary_as_blockviz_tokenises_it():
    vocabulary = Vocabulary(vocabulary_words())
    for sentence in LESSON_SENTENCES.values():
        tokens = tokenize(sentence)
        assert vocabulary.ids(tokens)[1] == [], sentence
    assert {"didn", "'t", "."} <= set(vocabulary.words)


def test_the_lesson_pairs_are_the_chicken_and_the_trophy_sentences():
    assert lesson_pairs() == {("chicken", "road"), ("trophy", "suitcase")}


def test_no_training_sentence_names_a_held_out_pair():
    held = held_out_pairs(RECIPE)
    assert ("chicken", "road") in held["crossing"] and ("trophy", "suitcase") in held["fitting"]
    pairs = {pair for pairs in held.values() for pair in pairs}
    seen = set()
    for sentence in training_sentences(RECIPE):
        words = sentence.split()
        for relation in RELATIONS:
            subjects = [word for word in words if word in relation.subjects]
            objects = [word for word in words if word in relation.objects]
            if subjects and objects:
                seen.add((subjects[-1], objects[0]))
                assert (subjects[-1], objects[0]) not in pairs, sentence
    assert len(seen) > 30  # many pairs do appear: the pattern has to be learned, not memorised


def test_the_continuation_names_the_noun_the_adjective_fits():
    for sentence in training_sentences(RECIPE):
        words = sentence.split()
        if "too" not in words:
            continue
        adjective = words[words.index("too") + 1]
        noun = words[-2]
        assert words[-5:] == [".", "the", adjective, noun, "."]
        relation = next(r for r in RELATIONS if adjective in r.subject_adjectives + r.object_adjectives)
        assert noun in (relation.subjects if adjective in relation.subject_adjectives else relation.objects)
        assert noun in words[: words.index("because")]


def test_held_out_sentences_use_held_out_pairs_and_no_continuation():
    held = {pair for pairs in held_out_pairs(RECIPE).values() for pair in pairs}
    sentences = held_out_sentences(RECIPE)
    assert len(sentences) == 50
    for sentence in sentences:
        assert (sentence.subject, sentence.object) in held
        assert sentence.text.endswith(f"too {sentence.adjective} .")


def test_the_corpus_is_the_same_for_the_same_seed_and_other_for_another():
    assert training_sentences(RECIPE)[:50] == training_sentences(RECIPE)[:50]
    assert training_sentences(RECIPE)[:50] != training_sentences(CorpusRecipe(sentences=3000, seed=1))[:50]


def test_lookup_is_lower_case_and_unknown_words_are_named_once_as_typed():
    vocabulary = Vocabulary(vocabulary_words())
    ids, unknown = vocabulary.ids(["The", "Chicken", "Zorb", "zorb", "Zorb"])
    assert ids[:2] == [vocabulary.words.index("the"), vocabulary.words.index("chicken")]
    assert ids[2:] == [0, 0, 0] and vocabulary.words[0] == UNKNOWN
    assert unknown == ["Zorb", "zorb"]


@pytest.mark.parametrize("words", [(), ("the",), ("<unk>", "the", "the"), ("<unk>", "The")])
def test_a_malformed_vocabulary_is_refused(words):
    with pytest.raises(BlockvizError):
        Vocabulary(words)
