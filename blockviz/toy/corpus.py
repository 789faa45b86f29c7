"""The toy model's corpus: sentences generated from a small seeded grammar, no data file.

Two kinds of sentence teach the pronoun lesson (Levesque et al. 2012, the Winograd schema: "The
trophy doesn't fit in the suitcase because it is too big / small"). Each names a subject and an
object, then "it", then an adjective that only one of them can be; a continuation repeats the
adjective and names the noun it describes, so the referent is predictable from the adjective:

    the chicken didn't cross the road because it was too tired . the tired chicken .
    the trophy didn't fit in the suitcase because it was too small . the small suitcase .

In a fifth of them "it" does something only the subject does instead — ``the chicken didn't
cross the road because it clucked .`` — so the word after "it" depends on the subject, and the
"it" row has a reason to look at it. A third kind is the seed's first sentence and its
neighbours: ``the cat sat .``, ``the dog sat on the mat .``; a pronoun sentence sometimes follows
one, so the pattern is met at other positions too and has to be found by the words. Nouns, verbs and adjectives come in classes (animals and paths, things and
containers); every noun meets most nouns of the other class, so the pattern is learned, not
memorised. The noun pairs of the lesson sentences, and a seeded tenth of all pairs, never appear
together in training: they are the held-out pairs the lesson goals are measured on.

Tokens are blockviz's own (:func:`blockviz.tokens.tokenize`): "didn't" is ``didn`` + ``'t``, the
full stop a token; the corpus is lowercase and lookups lowercase the typed text.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from itertools import product

LESSON_SENTENCES = {
    "cat": "the cat sat",
    "chicken_tired": "The chicken didn't cross the road because it was too tired.",
    "chicken_wide": "The chicken didn't cross the road because it was too wide.",
    "trophy_big": "The trophy didn't fit in the suitcase because it was too big.",
    "trophy_small": "The trophy didn't fit in the suitcase because it was too small.",
}
"""The sentences the lessons are about (the seed's and the classic pronoun sentences), by a
short name; their noun pairs are held out of training."""


@dataclass(frozen=True)
class Relation:
    """One kind of pronoun sentence: ``the <subject> didn't <verb> the <object> because it was
    too <adjective> .`` with subjects, objects, verb phrases, and the adjectives that fit only
    the subject or only the object (so the adjective says which noun "it" is)."""

    name: str
    subjects: tuple[str, ...]
    objects: tuple[str, ...]
    verbs: tuple[str, ...]
    subject_adjectives: tuple[str, ...]
    object_adjectives: tuple[str, ...]


RELATIONS = (
    Relation(
        "crossing",
        subjects=("chicken", "cat", "dog", "horse", "duck", "goat"),
        objects=("road", "river", "street", "bridge", "field"),
        verbs=("cross", "climb over"),
        subject_adjectives=("tired", "scared", "slow"),
        object_adjectives=("wide", "busy", "long"),
    ),
    Relation(
        "fitting",
        subjects=("trophy", "ball", "book", "lamp", "cake", "coat"),
        objects=("suitcase", "bag", "box", "drawer", "basket"),
        verbs=("fit in", "go into"),
        subject_adjectives=("big", "large", "tall"),
        object_adjectives=("small", "narrow", "full"),
    ),
)
"""The two relations, after the classic pair: a creature and the way it crosses, a thing and
what it goes into. (A tenth of the 30 noun pairs of each is held out; at d_model 8 a larger
grammar — 10 subjects, 8 objects, 5 + 5 adjectives — was not learned in 4,000 steps.)"""

SOUNDS = {
    "chicken": "clucked",
    "cat": "purred",
    "dog": "barked",
    "horse": "neighed",
    "duck": "quacked",
    "goat": "bleated",
    "trophy": "shone",
    "ball": "bounced",
    "book": "fell",
    "lamp": "flickered",
    "cake": "melted",
    "coat": "tore",
}
"""What each subject does in ``the <subject> didn't <verb> the <object> because it <sound> .``:
the word after "it" depends on the subject, so the "it" row has a reason to look at it."""

SITTING_PLACES = ("mat", "rug", "chair", "sofa", "wall", "floor")
"""Where the seed's cat sits: ``the cat sat .`` and ``the cat sat on the mat .``."""

FUNCTION_WORDS = ("the", "didn", "'t", "because", "it", "was", "too", ".", "sat", "on")

UNKNOWN = "<unk>"
"""The token every word outside the vocabulary becomes."""


def lesson_pairs() -> set[tuple[str, str]]:
    """The (subject, object) noun pairs the lesson sentences name: held out of training."""
    pairs = set()
    for relation in RELATIONS:
        for sentence in LESSON_SENTENCES.values():
            words = sentence.lower().replace(".", " .").split()
            subjects = [word for word in words if word in relation.subjects]
            objects = [word for word in words if word in relation.objects]
            if subjects and objects:
                pairs.add((subjects[0], objects[0]))
    return pairs


def vocabulary_words() -> tuple[str, ...]:
    """Every word of the corpus and the lesson sentences, once: :data:`UNKNOWN` first, then
    the function words, then each relation's words in their order, then the sitting places."""
    words = [UNKNOWN, *FUNCTION_WORDS]
    for relation in RELATIONS:
        for group in (relation.subjects, relation.objects, relation.subject_adjectives, relation.object_adjectives):
            words += group
        words += [part for verb in relation.verbs for part in verb.split()]
    words += SITTING_PLACES
    words += SOUNDS.values()
    return tuple(dict.fromkeys(words))


@dataclass(frozen=True)
class PronounSentence:
    """One generated pronoun sentence: its ``text`` (with the continuation if asked), the
    ``subject`` and ``object``, the ``adjective`` and the ``referent`` it describes."""

    text: str
    subject: str
    object: str
    adjective: str
    referent: str


def pronoun_sentence(
    relation: Relation, subject: str, object_: str, verb: str, adjective: str, continued: bool = True
) -> PronounSentence:
    """``the <subject> didn't <verb> the <object> because it was too <adjective> .``, and with
    ``continued`` `` the <adjective> <referent> .``."""
    referent = subject if adjective in relation.subject_adjectives else object_
    text = f"the {subject} didn 't {verb} the {object_} because it was too {adjective} ."
    if continued:
        text += f" the {adjective} {referent} ."
    return PronounSentence(text, subject, object_, adjective, referent)


@dataclass(frozen=True)
class CorpusRecipe:
    """How the training corpus is made: ``sentences`` generated with ``seed``; a share
    ``sitting_share`` of them are sitting sentences, the rest pronoun sentences, of which a share
    ``sound_share`` end "because it <sound> ." instead of the adjective and its continuation; a
    share ``prefix_share`` of the pronoun sentences follow a sitting sentence (so the pattern is
    found at other positions too); a share ``held_out_share`` of every relation's noun pairs (and
    always the lesson pairs) never appear in training."""

    sentences: int = 20000
    seed: int = 0
    sitting_share: float = 0.1
    held_out_share: float = 0.1
    sound_share: float = 0.2
    prefix_share: float = 0.3

    def to_dict(self) -> dict:
        """The recipe and the grammar, JSON-ready (the model card's ``corpus``)."""
        return {**asdict(self), "grammar": grammar_summary()}


def grammar_summary() -> dict:
    """The grammar as JSON-ready data (for the model card)."""
    return {
        "pronoun": "the SUBJECT didn 't VERB the OBJECT because it was too ADJECTIVE . the ADJECTIVE REFERENT .",
        "sound": "the SUBJECT didn 't VERB the OBJECT because it SOUND-OF-SUBJECT .",
        "prefixed": "SITTING PRONOUN | SITTING SOUND",
        "sitting": "the NOUN sat . | the NOUN sat on the PLACE .",
        "relations": [
            {
                "name": r.name,
                "subjects": list(r.subjects),
                "objects": list(r.objects),
                "verbs": list(r.verbs),
                "subject_adjectives": list(r.subject_adjectives),
                "object_adjectives": list(r.object_adjectives),
            }
            for r in RELATIONS
        ],
        "sitting_places": list(SITTING_PLACES),
        "sounds": dict(SOUNDS),
    }


def held_out_pairs(recipe: CorpusRecipe) -> dict[str, set[tuple[str, str]]]:
    """Each relation's held-out (subject, object) pairs: the lesson pairs plus a seeded share."""
    chooser = random.Random(f"held-out {recipe.seed}")
    lessons = lesson_pairs()
    held = {}
    for relation in RELATIONS:
        pairs = sorted(product(relation.subjects, relation.objects))
        fixed = {pair for pair in pairs if pair in lessons}
        others = [pair for pair in pairs if pair not in fixed]
        count = max(0, round(recipe.held_out_share * len(pairs)) - len(fixed))
        held[relation.name] = fixed | set(chooser.sample(others, count))
    return held


def training_sentences(recipe: CorpusRecipe) -> list[str]:
    """The corpus: ``recipe.sentences`` sentences (space-separated tokens), seeded, none naming
    a held-out pair."""
    chooser = random.Random(f"corpus {recipe.seed}")
    held = held_out_pairs(recipe)
    allowed = {
        relation.name: [
            pair for pair in sorted(product(relation.subjects, relation.objects)) if pair not in held[relation.name]
        ]
        for relation in RELATIONS
    }
    sitters = RELATIONS[0].subjects
    sentences = []

    def sitting() -> str:
        noun = chooser.choice(sitters)
        return (
            f"the {noun} sat ."
            if chooser.random() < 0.5
            else f"the {noun} sat on the {chooser.choice(SITTING_PLACES)} ."
        )

    for _ in range(recipe.sentences):
        if chooser.random() < recipe.sitting_share:
            sentences.append(sitting())
            continue
        relation = chooser.choice(RELATIONS)
        subject, object_ = chooser.choice(allowed[relation.name])
        verb = chooser.choice(relation.verbs)
        if chooser.random() < recipe.sound_share:
            text = f"the {subject} didn 't {verb} the {object_} because it {SOUNDS[subject]} ."
        else:
            adjective = chooser.choice(relation.subject_adjectives + relation.object_adjectives)
            text = pronoun_sentence(relation, subject, object_, verb, adjective).text
        if chooser.random() < recipe.prefix_share:
            text = sitting() + " " + text
        sentences.append(text)
    return sentences


def held_out_sentences(recipe: CorpusRecipe, count: int = 50, seed: int = 1) -> list[PronounSentence]:
    """``count`` pronoun sentences (without continuation) whose noun pairs were held out of
    training, seeded by ``seed``: what the lesson goals are measured on."""
    chooser = random.Random(f"held-out sentences {recipe.seed} {seed}")
    held = held_out_pairs(recipe)
    result = []
    for _ in range(count):
        relation = chooser.choice(RELATIONS)
        subject, object_ = chooser.choice(sorted(held[relation.name]))
        adjective = chooser.choice(relation.subject_adjectives + relation.object_adjectives)
        result.append(
            pronoun_sentence(relation, subject, object_, chooser.choice(relation.verbs), adjective, continued=False)
        )
    return result
