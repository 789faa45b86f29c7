"""A model's own tokens of a sentence, shown readably.

The text of each token is the piece of the sentence it covers (the tokenizer's character
offsets), so byte-level BPE's ``Ġ`` (GPT-2, Llama) and WordPiece's ``##`` (BERT) never show and
no byte is decoded on its own (no mojibake: a character split over two tokens shows whole in
both). Special tokens (``[CLS]``, ``[SEP]``, ``<|endoftext|>``, …) keep their own bracketed names,
which no word of a sentence produces; text the vocabulary lacks shows as the unknown token the
model sees (``[UNK]``). A token that covers only white space shows it as ``␣``
(space), ``⏎`` (line break) or ``⇥`` (tab).
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz.errors import BlockvizError

_WHITESPACE = {" ": "␣", "\n": "⏎", "\r": "⏎", "\t": "⇥"}


@dataclass(frozen=True)
class ModelTokens:
    """``ids`` (the model's token ids), ``tokens`` (readable text, one per id) and ``special``
    (which positions are special tokens: those the tokenizer adds, ``[CLS]``, ``[SEP]``, and its
    special tokens written in the text, ``<|endoftext|>``; not ``[UNK]``, which stands for a
    word), all of length n; ``words`` the word each token belongs to (the tokenizer's
    ``word_ids()``: "suit" and "case" share one, a special token has ``None``)."""

    ids: list[int]
    tokens: list[str]
    special: list[bool]
    words: list[int | None] | None = None


def model_tokens(tokenizer, sentence: str, max_tokens: int, model_name: str = "the model") -> ModelTokens:
    """Tokenise ``sentence`` as the model does (its special tokens added) and name each token
    readably (the module docstring says how).

    Raises
    ------
    BlockvizError
        For a sentence without any text, or more tokens than ``max_tokens`` (the model's
        positions, at most blockviz's limit).
    """
    if not isinstance(sentence, str) or not sentence.strip():
        raise BlockvizError('the sentence is empty: give at least one word, e.g. "the cat sat"')
    text = sentence.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes U+FFFD for the tokenizer
    encoding = tokenizer(
        text, return_offsets_mapping=True, return_special_tokens_mask=True, add_special_tokens=True, verbose=False
    )  # not verbose: a sentence too long is our one line, not also transformers' warning
    ids = list(encoding["input_ids"])
    if len(ids) > max_tokens:
        raise BlockvizError(
            f"the sentence is {len(ids)} tokens for {model_name}, more than the {max_tokens} it (or blockviz) takes: shorten it"
        )
    unknown = getattr(tokenizer, "unk_token_id", None)
    own = set(getattr(tokenizer, "all_special_ids", ())) - {unknown}  # [UNK] stands for a word of the text
    special = [bool(flag) or ids[index] in own for index, flag in enumerate(encoding["special_tokens_mask"])]
    pieces = tokenizer.convert_ids_to_tokens(ids)
    tokens = []
    for index, (start, end) in enumerate(encoding["offset_mapping"]):
        if (
            special[index] or start == end or (unknown is not None and ids[index] == unknown)
        ):  # the model sees [UNK], not the text
            tokens.append(str(pieces[index]))
            continue
        piece = text[start:end]
        tokens.append(piece.strip() or "".join(_WHITESPACE.get(char, char) for char in piece))
    return ModelTokens(ids, tokens, special, list(encoding.word_ids()))
