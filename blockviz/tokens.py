"""From a sentence to rows of numbers: tokens, their embeddings and their positions.

torch is imported by the functions that make numbers, not by the module: the text functions
(:func:`tokenize`, :func:`display_token`) serve commands that never load torch (``slides`` with
its record kept, the scenes' glyph check)."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from typing import TYPE_CHECKING

from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError

if TYPE_CHECKING:
    import torch

# Contractions split as GPT-2 splits them ("didn't" → "didn", "'t"); a word keeps its combining
# accents; an emoji keeps its variation selectors, skin tones and zero-width joins.
_TOKEN = re.compile(
    r"'(?:s|t|re|ve|m|ll|d)\b"
    r"|[\w\u0300-\u036f]+"
    r"|[^\w\s](?:[\ufe00-\ufe0f\U0001f3fb-\U0001f3ff]|\u200d[^\w\s])*",
    re.IGNORECASE,
)

EMBEDDING_SCALE = 1.0
"""Standard deviation of a token embedding's entries.

At 1.0 a token vector is as large as the sinusoidal position it is added to, so both show in
``resid_pre``, and the numbers print well with two decimals.
"""


def tokenize(sentence: str, max_tokens: int = 64) -> list[str]:
    """Split a sentence into word and punctuation tokens, keeping their text exactly.

    ``"it was too tired."`` → ``["it", "was", "too", "tired", "."]``.

    Raises
    ------
    BlockvizError
        If the sentence holds no token, or more than ``max_tokens``.
    """
    tokens = _TOKEN.findall(sentence)
    if not tokens:
        raise BlockvizError('the sentence is empty: give at least one word, e.g. "the cat sat"')
    if len(tokens) > max_tokens:
        raise BlockvizError(f"the sentence has {len(tokens)} tokens, more than max_tokens {max_tokens}: shorten it")
    return tokens


def unknown_tokens(tokens: list[str], vocabulary: tuple[str, ...] | None) -> list[bool]:
    """Which ``tokens`` a toy model read as its unknown token: those its ``vocabulary``
    (``rec.source.vocabulary``: its words in id order, the unknown token first) lacks, looked up
    in lower case as the model reads them. All ``False`` without a vocabulary (the seeded block,
    a model with its own tokenizer).

    >>> unknown_tokens(["The", "zebra", "sat"], ("<unk>", "the", "sat"))
    [False, True, False]
    """
    if not vocabulary:
        return [False] * len(tokens)
    known = set(vocabulary[1:])
    return [token.lower() not in known for token in tokens]


def marked_unknown(label: str, vocabulary: tuple[str, ...]) -> str:
    """A token's drawn ``label`` marked as read as the unknown token ``vocabulary[0]``:
    ``"zebra (<unk>)"``, so a picture never names a word the model did not see."""
    return f"{label} ({vocabulary[0]})"


def token_embedding(token: str, config: BlockConfig) -> torch.Tensor:
    """The embedding of one token, shape ``(d_model,)``.

    Drawn from N(0, EMBEDDING_SCALE²) by a generator seeded with a BLAKE2 hash of the seed and
    the token's text in Unicode normal form NFC, so a token has the same vector in every
    sentence, run and machine, and ``naïve`` typed with a precomposed or a combining accent is
    one token. A lone surrogate (what Python makes of invalid UTF-8 in argv) is hashed as is.
    """
    import torch

    text = unicodedata.normalize("NFC", token)
    digest = hashlib.blake2b(f"{config.seed}\x00{text}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    generator = torch.Generator().manual_seed(int.from_bytes(digest, "little") & (2**63 - 1))
    vector = torch.randn(config.d_model, generator=generator, dtype=torch.float64) * EMBEDDING_SCALE
    return vector.to(dtype_of(config))


def embed(tokens: list[str], config: BlockConfig) -> torch.Tensor:
    """The token embeddings, one row per token, shape ``(n, d_model)``."""
    import torch

    return torch.stack([token_embedding(token, config) for token in tokens])


def sinusoidal_positions(n: int, d_model: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Sinusoidal positional encodings, shape ``(n, d_model)``, of ``dtype`` (``None``: float32).

    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))
    (Vaswani et al. 2017, "Attention Is All You Need", §3.5).
    """
    import torch

    dtype = torch.float32 if dtype is None else dtype
    position = torch.arange(n, dtype=torch.float64)[:, None]
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    encoding = torch.zeros(n, d_model, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(position * frequency)
    encoding[:, 1::2] = torch.cos(position * frequency)[:, : d_model // 2]
    return encoding.to(dtype)


def dtype_of(config: BlockConfig) -> torch.dtype:
    """The torch dtype named by ``config.dtype``."""
    import torch

    return {"float32": torch.float32, "float64": torch.float64}[config.dtype]


def display_token(token: str) -> str:
    """``token`` as it can be drawn and written anywhere (terminal, SVG, PDF, video): the text
    itself, with each character no font or file can hold — control characters (NUL, C0, C1),
    lone surrogates and the noncharacters U+FFFE and U+FFFF — written as its code point.

    >>> display_token("a\\x01b"), display_token("\\udcff"), display_token("café")
    ('aU+0001b', 'U+DCFF', 'café')
    """
    return "".join(f"U+{ord(char):04X}" if _undrawable(char) else char for char in token)


def without_glyph(shown: str) -> bool:
    """Whether ``shown`` (a :func:`display_token`) has no letter, digit or symbol of its own —
    punctuation, spaces, joiners, such as "." — so that drawn alone it would be a lone dot or
    nothing: figures and videos draw it quoted, “.”."""
    return bool(shown) and all(
        unicodedata.category(char)[0] in "PZ" or unicodedata.category(char) in ("Cf", "Sk") for char in shown
    )


_XML_NONCHARACTERS = frozenset("\ufffe\uffff")
"""The two noncharacters XML 1.0 forbids (its Char production stops at U+FFFD)."""


def _undrawable(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cs") or char in _XML_NONCHARACTERS
