"""The toy model's vocabulary: its words, and a typed sentence's tokens as their ids.

A token is looked up in lower case (the corpus is lowercase: "The" is "the"); the record's labels
keep the text as typed. A token outside the vocabulary becomes :data:`~blockviz.toy.corpus.UNKNOWN`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from blockviz.errors import BlockvizError, quoted
from blockviz.toy.corpus import UNKNOWN


@dataclass(frozen=True)
class Vocabulary:
    """``words``: the vocabulary in id order, :data:`~blockviz.toy.corpus.UNKNOWN` first (id 0).

    Raises
    ------
    BlockvizError
        If ``words`` is empty, does not start with the unknown token, holds a word twice, or a
        word that is not lowercase text.
    """

    words: tuple[str, ...]

    def __post_init__(self) -> None:
        words = self.words
        if not isinstance(words, tuple) or not words or words[0] != UNKNOWN:
            raise BlockvizError(
                f"a vocabulary is a list of words starting with {UNKNOWN!r}: write it again with blockviz train"
            )
        if not all(isinstance(word, str) and word and word == word.lower() for word in words):
            raise BlockvizError(
                "a vocabulary's words are non-empty lowercase strings: write it again with blockviz train"
            )
        if len(set(words)) != len(words):
            repeated = next(word for word in words if words.count(word) > 1)
            raise BlockvizError(f"the vocabulary holds {repeated!r} twice: write it again with blockviz train")

    @property
    def size(self) -> int:
        """Number of words, the unknown token included."""
        return len(self.words)

    def ids(self, tokens: list[str]) -> tuple[list[int], list[str]]:
        """The id of each token (looked up in lower case; unknown: 0) and the tokens that were
        unknown, as typed, each once in order of appearance.

        >>> Vocabulary(("<unk>", "the", "cat")).ids(["The", "cat", "purred", "purred"])
        ([1, 2, 0, 0], ['purred'])
        """
        ids = [self._index.get(token.lower(), 0) for token in tokens]
        unknown = [token for token, id_ in zip(tokens, ids) if id_ == 0]
        return ids, list(dict.fromkeys(unknown))

    def encode(self, text: str) -> list[int]:
        """The ids of a corpus sentence (space-separated lowercase tokens, all known)."""
        return [self._index[word] for word in text.split()]

    @cached_property
    def _index(self) -> dict[str, int]:
        return {word: position for position, word in enumerate(self.words)}


def unknown_words_message(unknown: list[str], unknown_token: str) -> str:
    """The warning for ``unknown``, the words of a sentence outside a toy model's vocabulary (each
    once, as typed), read as ``unknown_token``.

    >>> unknown_words_message(["zebra"], "<unk>")
    "'zebra' is not in the toy model's vocabulary: read as the unknown token <unk>"
    """
    shown = ", ".join(quoted(word) for word in unknown)
    return (
        f"{shown} {'is' if len(unknown) == 1 else 'are'} not in the toy model's vocabulary: "
        f"read as the unknown token {unknown_token}"
    )
