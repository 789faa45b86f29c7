"""Choosing a token and a head of a record: the one rule every command and the Python API use.

A token is named by

* a word of the sentence — its first occurrence, ignoring case (``the`` finds ``The``);
* ``word#k`` — the k-th occurrence of the word, ignoring case, counted from 1 (``the#2``);
* a 0-based position — ``0`` is the first token (a token that is itself a number, such as
  ``"3"``, is reached as ``3#1``).

>>> tokens = ["The", "cat", "saw", "the", "dog"]
>>> select_token(tokens, "the"), select_token(tokens, "the#2"), select_token(tokens, "Dog"), select_token(tokens, "1")
(0, 3, 4, 1)
>>> select_token(tokens, None)      # the default: the last word token
4
>>> select_token(["[CLS]", "it", "was", ".", "[SEP]"], None)  # not punctuation, not a special token
2
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from blockviz.errors import BlockvizError, quoted

_OCCURRENCE = re.compile(r"(?P<word>.+)#(?P<k>-?\d+)", re.DOTALL)
_SPECIAL = re.compile(r"\[[A-Z]+\]|<\|?[^<>\s]*\|?>")
"""Special tokens as tokenizers write them: ``[CLS]``, ``[SEP]``, ``<s>``, ``<|endoftext|>``."""


def looks_special(token: str) -> bool:
    """Whether ``token`` is named like a tokenizer's special token (``[CLS]``, ``<|im_start|>``):
    the guess for a record that does not say (``BlockRecord.special``: saved before the flags
    were stored)."""
    return bool(_SPECIAL.fullmatch(token.strip()))


def default_token(tokens: list[str], special: Sequence[bool] | None = None) -> int:
    """The token a command focuses on when none is named: the last word token (one with a letter
    or digit, not a special token such as ``[SEP]``), so "tired" rather than the final "."; the
    last token when there is no word. ``special`` flags the special tokens (a record's
    ``rec.special``); without it they are told by their names (:func:`looks_special`).

    >>> default_token(["[CLS]", "it", "[X]", "[SEP]"], special=[True, False, False, True])  # "[X]" typed in the sentence
    2
    """
    flags = [looks_special(token) for token in tokens] if special is None else list(special)
    words = [i for i, token in enumerate(tokens) if any(char.isalnum() for char in token) and not flags[i]]
    return words[-1] if words else len(tokens) - 1


def select_token(tokens: list[str], choice: str | int | None, special: Sequence[bool] | None = None) -> int:
    """The position (0-based) of the token named by ``choice``; ``None`` gives
    :func:`default_token` (the last word token; ``special`` as there).

    Raises
    ------
    BlockvizError
        If the position is out of range, the word is not a token, ``k`` is below 1, or the word
        occurs fewer than ``k`` times. The message lists the tokens with their positions.
    """
    if choice is None:
        return default_token(tokens, special)
    if isinstance(choice, bool):
        raise BlockvizError(f"token {choice!r} is neither a word nor a position: {token_choices(tokens)}")
    if isinstance(choice, int) or str(choice).strip().isdecimal():
        return _position(tokens, int(choice))
    text = str(choice)
    occurrence = _OCCURRENCE.fullmatch(text)
    if occurrence and text not in tokens:
        return _occurrence(tokens, occurrence["word"], int(occurrence["k"]))
    return _occurrence(tokens, text, 1)


def select_head(head: int | None, n_heads: int) -> int:
    """``head`` if it is a head of the block (0 ≤ head < n_heads); ``None`` gives head 0.

    Raises
    ------
    BlockvizError
        If ``head`` is out of range; the message gives the valid range.
    """
    if head is None:
        return 0
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < n_heads:
        heads = "head 0 only" if n_heads == 1 else f"heads 0 to {n_heads - 1}"
        raise BlockvizError(
            f"head {head!r} does not exist: the block has {n_heads} head{'s' if n_heads > 1 else ''}, choose {heads}"
        )
    return head


AUTO = "auto"
"""``--head auto``: the head with the largest weight above its baseline from the focus token
(:func:`blockviz.head_choice.choose_head`)."""


def default_head(model: str | None, token: str | int | None) -> int | str:
    """The head a command shows when ``--head`` is not given: :data:`AUTO` when ``model`` is a
    trained model's name or folder (not ``None`` — the seeded block — nor blockviz's toy model)
    and ``token`` names a word (not a position, not the default token), else head 0.

    >>> default_head("minilm", "it"), default_head("minilm", "10"), default_head("toy", "it"), default_head(None, "it")
    ('auto', 0, 0, 0)
    """
    from blockviz.toy import is_toy_model

    if (
        model is None
        or str(model).strip().lower() == "seeded"
        or is_toy_model(model)
        or token is None
        or isinstance(token, int)
    ):
        return 0
    return 0 if str(token).strip().isdecimal() else AUTO


def occurrence_name(tokens: list[str], position: int) -> str:
    """Token ``position`` as ``--token`` names it: the word itself, or ``word#k`` when the word
    occurs more than once (ignoring case), k its occurrence counted from 1.

    >>> occurrence_name(["The", "cat", "saw", "the", "dog"], 3), occurrence_name(["The", "cat"], 1)
    ('the#2', 'cat')
    """
    word = tokens[position].casefold()
    positions = [other for other, token in enumerate(tokens) if token.casefold() == word]
    return tokens[position] if len(positions) == 1 else f"{tokens[position]}#{positions.index(position) + 1}"


def token_choices(tokens: list[str]) -> str:
    """``"choose a word, word#k or a position: 0 'the', 1 'cat', 2 'sat'"``."""
    listed = ", ".join(f"{position} {token!r}" for position, token in enumerate(tokens))
    return f"choose a word, word#k or a position: {listed}"


def _position(tokens: list[str], position: int) -> int:
    if 0 <= position < len(tokens):
        return position
    raise BlockvizError(
        f"token position {position} is outside the sentence of {len(tokens)} token{'s' if len(tokens) > 1 else ''}: {token_choices(tokens)}"
    )


def _occurrence(tokens: list[str], word: str, k: int) -> int:
    if k < 1:
        raise BlockvizError(f"{word}#{k}: occurrences count from 1 (the first is {word}#1): {token_choices(tokens)}")
    positions = [position for position, token in enumerate(tokens) if token.casefold() == word.casefold()]
    if positions:
        if k > len(positions):
            times = "once" if len(positions) == 1 else f"{len(positions)} times"
            raise BlockvizError(f"{word!r} occurs {times}, so {word}#{k} does not exist: {token_choices(tokens)}")
        return positions[k - 1]
    raise BlockvizError(f"token {quoted(word)} is not in the sentence: {token_choices(tokens)}")
