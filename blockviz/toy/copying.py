"""The copy task: sequences of the toy's own words in which a phrase comes back after a gap.

Each sequence is ``length`` distinct words of the toy's vocabulary (the unknown token never),
except that a phrase of them (3 to 5 words by default; the copy model trains on 8 to 11,
:data:`blockviz.toy.options.COPY_DEFAULTS`) is repeated after a random gap:

    cat road because [lamp cake river] tall dog . sat [lamp cake river] mat wide …
                      first occurrence    gap        repeat

Where the phrase starts and how long the gap is are drawn for every sequence, so no position
tells where the repeat is: only the words do (with a fixed offset one block solves it by
position alone). The loss is on the repeat's predictable tokens: from the repeat's first word
on, each next word is the word after its twin in the first occurrence (the induction pattern,
Olsson et al. 2022). Words are distinct elsewhere, so "its first occurrence" is unambiguous.
Sequences come from a seeded :class:`random.Random`: the same seed, the same sequences.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class CopyRecipe:
    """How the copy sequences are made: ``length`` tokens each, a phrase of ``shortest`` to
    ``longest`` words, repeated after a gap of at least ``min_gap`` words, drawn with ``seed``.

    Raises
    ------
    BlockvizError
        If the phrase lengths are not 2 ≤ shortest ≤ longest, the gap < 1, or two phrases and
        the gap do not fit in ``length``.
    """

    length: int = 24
    shortest: int = 3
    longest: int = 5
    min_gap: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if not 2 <= self.shortest <= self.longest or self.min_gap < 1:
            raise BlockvizError(
                f"a copy phrase has 2 or more words and a gap of 1 or more, got {self.shortest}–{self.longest} words, "
                f"gap {self.min_gap}: choose other sizes"
            )
        if 2 * self.longest + self.min_gap > self.length:
            raise BlockvizError(
                f"two phrases of {self.longest} words and a gap of {self.min_gap} do not fit in {self.length} positions: "
                "choose a shorter phrase or more positions"
            )

    def to_dict(self) -> dict:
        """The recipe, JSON-ready (the model card's ``corpus``)."""
        return {**asdict(self), "layout": "FILLER PHRASE GAP PHRASE FILLER, every word distinct but the phrase's"}


@dataclass(frozen=True)
class CopySequence:
    """One sequence: its ``words``, where the phrase first starts (``first``), where it is
    repeated (``repeat``) and its length (``phrase``)."""

    words: tuple[str, ...]
    first: int
    repeat: int
    phrase: int

    @property
    def predicted(self) -> list[tuple[int, int]]:
        """The (query, key) pairs of copying: each repeated word whose next word is the phrase's
        (rows ``repeat`` … ``repeat + phrase − 2``), and the position after its first occurrence
        (the word it predicts). Row i's prediction is of token i + 1."""
        return [(self.repeat + j, self.first + j + 1) for j in range(self.phrase - 1)]


def copy_sequence(chooser: random.Random, words: tuple[str, ...], recipe: CopyRecipe) -> CopySequence:
    """One sequence of ``recipe.length`` tokens drawn with ``chooser`` from ``words`` (at least
    ``length`` of them): a random start and gap, the phrase twice, distinct words elsewhere.

    Raises
    ------
    BlockvizError
        If there are fewer words than positions less the phrase.
    """
    phrase = chooser.randint(recipe.shortest, recipe.longest)
    distinct = recipe.length - phrase
    if len(words) < distinct:
        raise BlockvizError(f"a copy sequence of {recipe.length} tokens needs {distinct} words, got {len(words)}")
    gap = chooser.randint(recipe.min_gap, recipe.length - 2 * phrase)
    first = chooser.randint(0, recipe.length - 2 * phrase - gap)
    repeat = first + phrase + gap
    drawn = chooser.sample(words, distinct)
    sequence = drawn[:repeat] + drawn[first : first + phrase] + drawn[repeat:]
    return CopySequence(tuple(sequence), first, repeat, phrase)


def copy_sequences(words: tuple[str, ...], recipe: CopyRecipe, count: int, seed: int) -> list[CopySequence]:
    """``count`` sequences, the same for the same ``seed`` and recipe (training draws with
    ``recipe.seed``, the measures with seeds of their own)."""
    chooser = random.Random(f"copy {recipe.seed} {seed}")
    return [copy_sequence(chooser, words, recipe) for _ in range(count)]
