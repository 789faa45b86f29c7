"""Finding the head, and how attention moves between two sentences, as plain data: :func:`rank`
(what ``blockviz heads`` prints) and :func:`compare` (what ``blockviz compare`` prints).

Both read a sentence's attentions ``(n_layers, n_heads, n, n)`` (rows = queries, columns =
keys): given as a sentence, run through ``model`` by the front door
(:func:`blockviz.attentions`), or as the :class:`~blockviz.models.recording.ModelAttentions`
already made. Tokens are named as everywhere: a word (its first occurrence, ignoring case),
``word#k`` (its k-th) or a 0-based position; a word the tokenizer splits is one key, its pieces'
weights added (:mod:`blockviz.models.evidence`). Heads are query heads.

>>> ranking = rank("the cat sat on the mat", "mat", "cat")  # the trained toy model
>>> ranking.what, len(ranking.rows), ranking.by
('toy (blockviz): 1 layer × 2 heads', 2, 'above-baseline')
>>> moved = compare("the cat sat on the mat", "the dog sat on the mat", "mat")
>>> moved.labels
['the', 'cat→dog', 'sat', 'on', 'the', 'mat']
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import torch

from blockviz.errors import BlockvizError
from blockviz.models.evidence import HeadEvidence, HeadShift, Side, Words
from blockviz.models.recording import ModelAttentions
from blockviz.tokens import display_token

SEEDED = "seeded"
"""``model`` naming blockviz's block with seeded random weights (as :func:`blockviz.record` takes it)."""
DEFAULT_KEYS = 3
"""Keys listed per head by :func:`rank` without a key."""


class TokenChoiceError(BlockvizError):
    """A token choice a sentence does not hold, or that is ambiguous; ``argument`` names the
    argument that made it, ``"query"`` or ``"key"`` (a command names its own option instead)."""

    def __init__(self, message: str, argument: str):
        super().__init__(message)
        self.argument = argument


@dataclass(frozen=True)
class HeadRanking:
    """Every head's attention from one query token (:func:`rank`).

    ``attentions`` are the sentence's, ``layers`` the model's layers ranked and ``weights``
    theirs ``(len(layers), n_heads, n, n)``; ``words`` its tokens grouped into words; ``query``
    and ``key`` token positions (``key`` ``None``: no key named). ``what`` says whose heads
    (``minilm (bert): 6 layers × 12 heads``); ``notes`` are the lines to show with them (a split
    word, then ``seeing``: why a causal query's contrast is empty, or ``None``).

    With a key: ``rows``, each head's :class:`~blockviz.models.evidence.HeadEvidence` ranked
    ``by`` (``weight``, ``contrast`` or ``above-baseline``), ``side`` and, with a contrast
    sentence, ``contrast`` (its :class:`~blockviz.models.evidence.Side`) and ``other`` (its
    attentions). Without: ``keys``, each head's largest word weights ``[(word, weight), …]`` in
    layer-then-head order, and ``sinks`` ``(len(layers), n_heads)``, each head's weight on the
    first token and the special tokens — or, for a causal model's first token, no keys and
    ``horizon``: the line saying it sees only itself (every head's weight 1 on it says nothing).
    """

    attentions: ModelAttentions
    layers: list[int]
    weights: torch.Tensor
    words: Words
    query: int
    key: int | None
    causal: bool
    what: str
    notes: list[str]
    seeing: str | None = None
    by: str | None = None
    rows: list[HeadEvidence] | None = None
    side: Side | None = None
    contrast: Side | None = None
    other: ModelAttentions | None = None
    keys: list[list[tuple[int, float]]] | None = None
    sinks: torch.Tensor | None = None
    horizon: str | None = None

    @property
    def n_heads(self) -> int:
        """Query heads per layer."""
        return self.weights.shape[1]

    @property
    def kv_heads(self) -> int:
        """Key/value heads per layer (as many as the query heads when the attentions do not say)."""
        return self.attentions.kv_heads or self.n_heads


@dataclass(frozen=True)
class HeadComparison:
    """One query token's attention in two sentences, head by head (:func:`compare`).

    ``first`` and ``second`` are the sentences' attentions, ``layers`` the model's layers
    compared, ``query`` the query's position in each, ``query_name`` its text as both have it
    ("it", or "tired/wide"), ``labels`` the aligned words' names ("tired→wide"), ``shifts``
    every head's :class:`~blockviz.models.evidence.HeadShift` over them, most moved first;
    ``unseen`` which aligned words the causal mask hides from the query in both; ``seeing``
    the line saying a causal query cannot see where the sentences differ (nothing is ranked),
    else ``None``; ``what`` whose heads; ``model`` as given; ``pairs`` the aligned words'
    indices in each sentence (``None`` where a sentence lacks the word).
    """

    first: ModelAttentions
    second: ModelAttentions
    layers: list[int]
    query: tuple[int, int]
    query_name: str
    labels: list[str]
    shifts: list[HeadShift]
    unseen: list[bool]
    seeing: str | None
    what: str
    model: str | Path | None
    pairs: list[tuple[int | None, int | None]] | None = None

    @property
    def n_heads(self) -> int:
        """Query heads per layer."""
        return self.first.weights.shape[1]

    @property
    def kv_heads(self) -> int:
        """Key/value heads per layer (as many as the query heads when the attentions do not say)."""
        return self.first.kv_heads or self.n_heads

    def data(self) -> dict:
        """The fields ``compare --json`` prints (:func:`blockviz.models.comparison.comparison_json`)."""
        from blockviz.models.comparison import comparison_json

        model = None if _is_seeded(self.model) else self.model
        return comparison_json(
            self.first.tokens,
            self.second.tokens,
            *self.query,
            self.labels,
            self.shifts,
            self.layers,
            self.seeing,
            model,
        )


def rank(
    sentence: str | ModelAttentions,
    query: str | int,
    key: str | int | None = None,
    *,
    model: str | Path | None = None,
    layer: int | None = None,
    contrast: str | ModelAttentions | None = None,
    by: str | None = None,
    keys: int = DEFAULT_KEYS,
) -> HeadRanking:
    """Rank every layer × head by its weight from ``query`` to ``key``, with the evidence beside it.

    Parameters
    ----------
    sentence
        The sentence, or its attentions already made (``model`` then only names them).
    query, key
        The tokens: a word, ``word#k`` or a 0-based position. Without ``key``, each head's
        ``keys`` largest word weights from ``query`` are listed instead of a ranking.
    model
        As :func:`blockviz.record` takes it: ``None`` the trained toy model, ``"seeded"`` the
        seeded block, a model's name or folder.
    layer
        Rank only this layer's heads (from 0); ``None``: every layer.
    contrast
        A contrast sentence (one word changed), or its attentions: the same weight there and its
        change. Needs ``key``.
    by
        ``weight``, ``contrast`` or ``above-baseline`` (default: ``contrast`` with a contrast
        sentence the query can tell apart, else ``above-baseline``). Needs ``key``.

    Returns
    -------
    HeadRanking
        The ranked rows (with ``key``) or each head's largest keys, and the notes.

    Raises
    ------
    TokenChoiceError
        For a ``query`` or ``key`` the sentence (or the contrast sentence) does not hold.
    BlockvizError
        For a layer out of range, a key after the query that every head's causal mask hides, a
        contrast or ``by`` without a key, another ``by``, and as :func:`blockviz.attentions`.
    """
    from blockviz.models.evidence import (
        first_difference,
        head_evidence,
        rank_evidence,
        select_word,
        sink_share,
        top_words,
    )
    from blockviz.models.heads import check_visible

    if key is None and (contrast is not None or by is not None):
        raise BlockvizError("a contrast sentence and a ranking compare one weight: give a key too")
    attentions = _attentions(sentence, model)
    other = _attentions(contrast, model) if contrast is not None else None
    layers = _layers(attentions, layer, model)
    weights = attentions.weights[layers]
    tokens = attentions.tokens
    words = Words.of_tokens(tokens, attentions.words)
    with _choosing("query"):
        query_position = select_word(tokens, words, query, attentions.special)
    with _choosing("key"):
        key_position = select_word(tokens, words, key, attentions.special) if key is not None else None
    if key_position is not None:
        check_visible(weights, query_position, key_position, tokens)
    contrast_side = _contrast_side(attentions, other, query, key, layers) if other is not None else None
    what = describe(attentions, model, weights.shape)
    causal = _causal(attentions)
    notes = piece_notes(words, tokens, query_position, key_position)
    if key_position is None and causal and query_position == 0:
        horizon = horizon_note(tokens, model)
        return HeadRanking(attentions, layers, weights, words, 0, None, causal, what, notes, horizon=horizon)
    if key_position is None:
        return HeadRanking(
            attentions,
            layers,
            weights,
            words,
            query_position,
            None,
            causal,
            what,
            notes,
            keys=top_words(weights, query_position, words, keys, causal),
            sinks=sink_share(weights, query_position, attentions.special),
        )
    side = Side(weights, words, attentions.special, query_position, words.of(key_position))
    seeing = None
    if contrast_side is not None:
        seeing = seeing_note(attentions, other, side.query, contrast_side.query, causal, model)
        if seeing:
            notes.append(seeing)
        if first_difference(attentions.tokens, other.tokens, attentions.inputs, other.inputs) is None:
            contrast_side = other = None  # the same input: the note says so, no column of +0.0000
    by = by or ("contrast" if contrast_side is not None and not seeing else "above-baseline")
    if by == "contrast" and seeing:
        by = "above-baseline"
    rows = rank_evidence(head_evidence(side, causal, contrast_side), by)
    return HeadRanking(
        attentions,
        layers,
        weights,
        words,
        query_position,
        key_position,
        causal,
        what,
        notes,
        seeing,
        by,
        rows,
        side,
        contrast_side,
        other,
    )


def compare(
    sentence: str | ModelAttentions,
    second: str | ModelAttentions,
    query: str | int,
    *,
    model: str | Path | None = None,
    layer: int | None = None,
) -> HeadComparison:
    """How far each head's attention from ``query`` moves between ``sentence`` and ``second``.

    ``query`` is found in both sentences by word, else (sentences as long as each other) at its
    position in the first (:func:`~blockviz.models.evidence.match_query`); each head's two
    rows over the aligned words, their change and ½ Σ |change| (the share of the query's weight
    that goes elsewhere). ``sentence``, ``second``, ``model`` and ``layer`` as :func:`rank`.

    Raises
    ------
    TokenChoiceError
        For a ``query`` missing from either sentence, or a position when their lengths differ.
    BlockvizError
        For a layer out of range, and as :func:`blockviz.attentions`.
    """
    from blockviz.models.comparison import pair_label, query_name
    from blockviz.models.evidence import align_words, head_shifts, match_query, unseen_words

    first = _attentions(sentence, model)
    other = _attentions(second, model)
    layers = _layers(first, layer, model)
    words_a = Words.of_tokens(first.tokens, first.words)
    words_b = Words.of_tokens(other.tokens, other.words)
    with _choosing("query"):
        query_a, query_b = match_query(
            (first.tokens, words_a, first.special), (other.tokens, words_b, other.special), query
        )
    causal = _causal(first)
    pairs = align_words(words_a.names, words_b.names)
    side_a = Side(first.weights[layers], words_a, first.special, query_a, 0)
    side_b = Side(other.weights[layers], words_b, other.special, query_b, 0)
    return HeadComparison(
        first,
        other,
        layers,
        (query_a, query_b),
        query_name(first.tokens[query_a], other.tokens[query_b]),
        [pair_label(words_a, words_b, pair) for pair in pairs],
        head_shifts(side_a, side_b, pairs),
        unseen_words(side_a, side_b, pairs, causal),
        seeing_note(first, other, query_a, query_b, causal, model),
        describe(first, model, side_a.weights.shape),
        model,
        pairs,
    )


def describe(attentions: ModelAttentions, model, shape) -> str:
    """Whose heads ``shape`` ``(n_layers, n_heads, …)`` are: ``minilm (bert): 6 layers × 12
    heads``, or ``… 9 query heads, every 3 sharing a key/value head``; the seeded block by its
    source (``the seeded block (seeded random weights): …``)."""
    n_layers, n_heads = shape[0], shape[1]
    kv_heads = attentions.kv_heads or n_heads
    if _is_seeded(model):
        source = f"the seeded block ({attentions.model})"
    else:
        source = f"{_name(model)} ({attentions.family})"
    layers = f"{n_layers} layer{'s' if n_layers > 1 else ''}"
    if kv_heads < n_heads:
        return f"{source}: {layers} × {n_heads} query heads, every {n_heads // kv_heads} sharing a key/value head"
    return f"{source}: {layers} × {n_heads} head{'s' if n_heads > 1 else ''}"


def seeing_note(attentions, other, query_a: int, query_b: int, causal: bool, model) -> str | None:
    """One line when a causal query cannot see where the two sentences differ (its weights are
    the same in both, so nothing can be ranked by the contrast), else ``None``."""
    from blockviz.models.evidence import first_difference, query_sees_difference

    difference = first_difference(attentions.tokens, other.tokens, attentions.inputs, other.inputs)
    if query_sees_difference(query_a, query_b, difference, causal):
        return None
    q = display_token(attentions.tokens[query_a])
    if difference is None:
        return same_tokens_note(attentions.tokens, other.tokens, q, model)
    a = attentions.tokens[difference] if difference < len(attentions.tokens) else "(end)"
    b = other.tokens[difference] if difference < len(other.tokens) else "(end)"
    name = "the model" if _is_seeded(model) else _name(model)
    return (
        f"{q!r} (position {query_a}) cannot see {display_token(a)!r} → {display_token(b)!r} (position {difference}), "
        f"where the sentences differ: {name} is causal, so every weight from {q!r} is the same in both and nothing is ranked by the contrast"
    )


def same_tokens_note(tokens_a: list[str], tokens_b: list[str], q: str, model) -> str:
    """The line for two sentences the model reads as the same input: their tokens the same, or
    different only where the model reads them alike ("The" and "the" to the toy's vocabulary)."""
    alike = [(a, b) for a, b in zip(tokens_a, tokens_b) if a != b]
    if not alike:
        return f"the two sentences have the same tokens: every weight from {q!r} is the same in both"
    a, b = alike[0]
    name = "the model" if _is_seeded(model) else _name(model)
    return (
        f"the two sentences have the same tokens to {name} ({display_token(a)!r} and {display_token(b)!r} "
        f"are one input to it): every weight from {q!r} is the same in both"
    )


def horizon_note(tokens: list[str], model) -> str:
    """The line for a causal model's first token: it sees only itself, so each head's weight
    from it is 1 on itself and says nothing about any head (nothing is listed)."""
    name = "the model" if _is_seeded(model) else _name(model)
    return (
        f"{display_token(tokens[0])!r} is the first token and {name} is causal: it sees only itself, "
        "so every head puts all its weight (1) on it — nothing to list, no figure written"
    )


def piece_notes(words: Words, tokens: list[str], query: int, key: int | None) -> list[str]:
    """A line for the key's and the query's word when the tokenizer split it into pieces."""
    lines = []
    for role, position in (("key", key), ("query", query)):
        if position is None:
            continue
        group = words.groups[words.of(position)]
        if len(group) == 1:
            continue
        pieces = " + ".join(repr(display_token(tokens[p])) for p in group)
        name = display_token(words.names[words.of(position)])
        if role == "key":
            lines.append(
                f"{name!r} is {len(group)} tokens ({pieces}, positions {group[0]}–{group[-1]}): one key, its pieces' weights added"
            )
        else:
            lines.append(f"{name!r} is {len(group)} tokens ({pieces}): the query is the token at position {position}")
    return lines


def _attentions(given: str | ModelAttentions, model) -> ModelAttentions:
    if isinstance(given, ModelAttentions):
        return given
    from blockviz.recording import attentions

    return attentions(given, model)


def _layers(attentions: ModelAttentions, layer: int | None, model) -> list[int]:
    n_layers = attentions.weights.shape[0]
    if layer is None:
        return list(range(n_layers))
    if layer >= n_layers:
        raise BlockvizError(f"layer {layer} is out of range: {_name(model)} has layers 0 to {n_layers - 1}")
    return [layer]


def _causal(attentions: ModelAttentions) -> bool:
    """Whether the attentions are a causal model's: as the model says, else from the weights."""
    if attentions.causal is not None:
        return attentions.causal
    from blockviz.models.evidence import infer_causal

    return infer_causal(attentions.weights)


def _contrast_side(attentions: ModelAttentions, other: ModelAttentions, query, key, layers: list[int]) -> Side:
    """The contrast sentence's :class:`~blockviz.models.evidence.Side`: the query and key
    matched in it by word (or position, :func:`~blockviz.models.evidence.match_query`)."""
    from blockviz.models.evidence import match_query

    words_b = Words.of_tokens(other.tokens, other.words)
    a = (attentions.tokens, Words.of_tokens(attentions.tokens, attentions.words), attentions.special)
    b = (other.tokens, words_b, other.special)
    with _choosing("query"):
        _, query_b = match_query(a, b, query)
    with _choosing("key"):
        _, key_b = match_query(a, b, key)
    return Side(other.weights[layers], words_b, other.special, query_b, words_b.of(key_b))


@contextlib.contextmanager
def _choosing(argument: str):
    """A :class:`BlockvizError` raised inside becomes a :class:`TokenChoiceError` of ``argument``."""
    try:
        yield
    except TokenChoiceError:
        raise
    except BlockvizError as error:
        raise TokenChoiceError(str(error), argument) from None


def _is_seeded(model) -> bool:
    return isinstance(model, str) and model.strip().lower() == SEEDED


def _name(model) -> str:
    """The model as messages name it: as given, ``toy`` for the default."""
    return "toy" if model is None else str(model)
