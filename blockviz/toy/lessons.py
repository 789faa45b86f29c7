"""The lesson goals, measured on a model: does a head link "it" to its subject, and does the
adjective's row find the noun it describes?

Goals (issue 20): on the chicken sentence some head puts ≥ :data:`IT_GOAL` of the weight from
"it" (or the token after it) on "chicken", the most of any key, and that head does so on ≥
:data:`HELD_OUT_GOAL` of 50 generated sentences whose noun pairs were held out of training; some
head attends most to "chicken" from "tired" in "…too tired." and to "road" from "wide" in "…too
wide.", ≥ :data:`CONTRAST_GOAL` each; every recorded value is below :data:`VALUE_LIMIT` in size.
In one block a row's query depends only on its own token and position, so the rows before the
adjective are the same in both sentences: only the adjective's row can tell them apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

from blockviz.toy.corpus import LESSON_SENTENCES, PronounSentence

IT_GOAL = 0.5
HELD_OUT_GOAL = 0.9
CONTRAST_GOAL = 0.4
VALUE_LIMIT = 100.0


@dataclass(frozen=True)
class Link:
    """One head's weight from a query token to a key token: ``head``, the ``query`` and ``key``
    positions, ``weight``, and whether the key gets the most weight of the query's row (``top``)."""

    head: int
    query: int
    key: int
    weight: float
    top: bool


@dataclass(frozen=True)
class LessonFigures:
    """What the lessons measure on one model (the model card's ``lessons``).

    ``it_head``, ``it_query`` ("it" or the token after it), ``it_weight``: the head and row that
    put the most weight from "it" on "chicken" (the most of its row); ``held_out``: the share of
    50 held-out sentences on which that head and row give the subject the most weight, ≥ 0.5;
    ``contrast_head``, ``tired_weight``, ``wide_weight``: the head whose adjective row attends
    most to "chicken" in "…too tired." and to "road" in "…too wide." (the weaker of the two the
    largest); ``trophy_*`` the same for "big" → "trophy", "small" → "suitcase" (reported, not a
    goal); ``max_abs`` the largest |value| over the lesson sentences' records.
    """

    it_head: int
    it_query: str
    it_weight: float
    it_top: bool
    held_out: float
    contrast_head: int
    tired_weight: float
    wide_weight: float
    contrast_top: bool
    trophy_head: int
    big_weight: float
    small_weight: float
    trophy_top: bool
    max_abs: float

    @property
    def goals(self) -> dict[str, bool]:
        """Each goal, met or not."""
        return {
            "it_to_chicken": self.it_top and self.it_weight >= IT_GOAL,
            "held_out": self.held_out >= HELD_OUT_GOAL,
            "contrast": self.contrast_top and min(self.tired_weight, self.wide_weight) >= CONTRAST_GOAL,
            "values_readable": self.max_abs < VALUE_LIMIT,
        }

    @property
    def met(self) -> bool:
        """Whether every goal is met."""
        return all(self.goals.values())

    def to_dict(self) -> dict:
        data = {key: round(value, 4) if isinstance(value, float) else value for key, value in asdict(self).items()}
        return {**data, "goals": self.goals}


def link(weights: torch.Tensor, head: int, query: int, key: int) -> Link:
    """Head ``head``'s weight from ``query`` to ``key`` in ``weights`` ``(n_heads, n, n)``."""
    row = weights[head, query]
    return Link(head, query, key, float(row[key]), int(torch.argmax(row)) == key)


def best_link(weights: torch.Tensor, queries: list[int], key: int) -> Link:
    """Of every head and of the ``queries`` rows, the link to ``key`` that is its row's top with
    the largest weight; if none is a top, the largest weight."""
    links = [link(weights, head, query, key) for head in range(weights.shape[0]) for query in queries]
    return max(links, key=lambda item: (item.top, item.weight))


def contrast(
    first: torch.Tensor, first_rows: tuple[int, int], second: torch.Tensor, second_rows: tuple[int, int]
) -> tuple[Link, Link]:
    """The head whose row ``first_rows[0]`` → key ``first_rows[1]`` in ``first`` and row
    ``second_rows[0]`` → ``second_rows[1]`` in ``second`` are both their rows' top, with the
    larger of the two weaker weights (if no head has both tops, the largest weaker weight)."""
    pairs = [(link(first, head, *first_rows), link(second, head, *second_rows)) for head in range(first.shape[0])]
    return max(pairs, key=lambda pair: (pair[0].top and pair[1].top, min(pair[0].weight, pair[1].weight)))


Run = Callable[[str], tuple[list[str], dict[str, torch.Tensor]]]
"""``run(sentence)``: the sentence's tokens and the model's recorded tensors on it (``weights``
``(n_heads, n, n)``, ``probs`` ``(n, n_vocab)``, …)."""


def largest_value(cache: dict[str, torch.Tensor]) -> float:
    """The largest finite |value| among the recorded tensors (the mask's −∞ left out)."""
    return max(float(tensor[torch.isfinite(tensor)].abs().max()) for tensor in cache.values() if tensor.numel())


def measure(run: Run, held_out: list[PronounSentence]) -> LessonFigures:
    """The lesson figures of a model (:class:`LessonFigures`); ``max_abs`` covers the lesson sentences."""
    attend = lambda sentence: (lambda tokens, cache: (tokens, cache["weights"]))(*run(sentence))  # noqa: E731
    largest = max(largest_value(run(sentence)[1]) for sentence in LESSON_SENTENCES.values())
    tokens, weights = attend(LESSON_SENTENCES["chicken_tired"])
    it = tokens.index("it")
    it_link = best_link(weights, [it, it + 1], tokens.index("chicken"))
    offset = it_link.query - it
    hits = 0
    for sentence in held_out:
        words, held_weights = attend(sentence.text)
        here = words.index("it") + offset
        found = link(held_weights, it_link.head, here, words.index(sentence.subject))
        hits += found.top and found.weight >= IT_GOAL
    _, wide = attend(LESSON_SENTENCES["chicken_wide"])
    adjective = tokens.index("tired")
    tired_link, wide_link = contrast(
        weights, (adjective, tokens.index("chicken")), wide, (adjective, tokens.index("road"))
    )
    trophy_tokens, big = attend(LESSON_SENTENCES["trophy_big"])
    _, small = attend(LESSON_SENTENCES["trophy_small"])
    adjective = trophy_tokens.index("big")
    big_link, small_link = contrast(
        big, (adjective, trophy_tokens.index("trophy")), small, (adjective, trophy_tokens.index("suitcase"))
    )
    return LessonFigures(
        it_head=it_link.head,
        it_query=tokens[it_link.query],
        it_weight=it_link.weight,
        it_top=it_link.top,
        held_out=hits / len(held_out),
        contrast_head=tired_link.head,
        tired_weight=tired_link.weight,
        wide_weight=wide_link.weight,
        contrast_top=tired_link.top and wide_link.top,
        trophy_head=big_link.head,
        big_weight=big_link.weight,
        small_weight=small_link.weight,
        trophy_top=big_link.top and small_link.top,
        max_abs=largest,
    )


def referent_accuracy(run: Run, vocabulary_words: tuple[str, ...], held_out: list[PronounSentence]) -> float:
    """The share of ``held_out`` sentences, continued with `` the <adjective>``, after which the
    model's most probable next token is the noun the adjective describes."""
    hits = 0
    for sentence in held_out:
        _, cache = run(f"{sentence.text} the {sentence.adjective}")
        hits += vocabulary_words[int(cache["probs"][-1].argmax())] == sentence.referent
    return hits / len(held_out)
