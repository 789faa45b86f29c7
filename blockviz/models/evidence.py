"""Attention as evidence: what a head's weight means next to its baseline, its sinks, a word's
pieces and a contrast sentence.

Pure functions on an attentions tensor ``weights`` ``(n_layers, n_heads, n, n)`` (rows =
queries, columns = keys, each row sums to 1; :func:`blockviz.models.model_attentions`). A large
weight is not a guarantee of relevance (Jain & Wallace 2019, "Attention is not Explanation";
Wiegreffe & Pinter 2019); these are the checks a teacher can show beside it:

* the **baseline** — the mean weight the same head gives the same key from the *other* queries
  (a causal model: only the queries that can see the key, q ≥ key), so a head that gives the key
  0.7 from every query is not singling out this one;
* the **sink share** — the weight on the first token and on the tokenizer's special tokens
  (``[CLS]``, ``[SEP]``, BOS): heads that put ≥ :data:`PARKS_AT` there are *parking* the query's
  attention (Clark et al. 2019, "What does BERT look at?": ``[SEP]``/``[CLS]`` as a no-op;
  Xiao et al. 2024, "attention sinks": the first token);
* **words, not pieces** — a word split into pieces ("suit" + "case") is one key, its pieces'
  weights added (weights of one query sum over keys, so a word's weight is the sum of its pieces';
  Clark et al. 2019 do the same);
* the **contrast** — the same weight in a second sentence that differs in a word, and the change;
  in a causal model a query before the first differing token computes exactly the same weights
  in both sentences (its prefix is the same), so the contrast is empty there.

>>> import torch
>>> w = torch.tensor([[[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.7, 0.1]]]])  # 1 layer, 1 head, causal
>>> float(baselines(w, 2, Words.of_tokens(["a", "b", "c"]), causal=True)[0, 0, 1])  # key 1 from query 1 only
0.5
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from blockviz.errors import BlockvizError
from blockviz.models.evidence_types import PARKS_AT, AnsweringHead, LargestWeight, best_margin, reading_of
from blockviz.models.heads import check_attentions

RANKINGS = ("weight", "contrast", "above-baseline")
"""How ``heads`` can rank: by the weight, by the size of its change in the contrast sentence,
or by how far it stands above its baseline."""


@dataclass(frozen=True)
class Words:
    """A sentence's tokens grouped into words: ``groups[w]`` the token positions of word ``w``
    (consecutive, from the tokenizer's word ids; a special token is a word of its own), ``names[w]``
    its text (the pieces joined: "suit" + "case" → "suitcase")."""

    groups: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]

    @classmethod
    def of_tokens(cls, tokens: Sequence[str], word_ids: Sequence[int | None] | None = None) -> Words:
        """Group ``tokens`` by ``word_ids`` (one per token, ``None`` for a special token: the
        tokenizer's ``encoding.word_ids()``); without them every token is a word."""
        if word_ids is None:
            word_ids = list(range(len(tokens)))
        if len(word_ids) != len(tokens):
            raise BlockvizError(f"one word id per token is needed: {len(word_ids)} ids for {len(tokens)} tokens")
        groups: list[list[int]] = []
        for position, word in enumerate(word_ids):
            if groups and word is not None and word_ids[groups[-1][-1]] == word:
                groups[-1].append(position)
            else:
                groups.append([position])
        return cls(tuple(tuple(g) for g in groups), tuple("".join(tokens[p] for p in g) for g in groups))

    def of(self, position: int) -> int:
        """The word holding token ``position``."""
        for index, group in enumerate(self.groups):
            if position in group:
                return index
        raise BlockvizError(f"token position {position} is outside the {self.n_tokens} tokens")

    @property
    def n_tokens(self) -> int:
        return sum(len(group) for group in self.groups)

    @property
    def split(self) -> list[int]:
        """The words made of more than one token."""
        return [index for index, group in enumerate(self.groups) if len(group) > 1]


def word_weights(weights: torch.Tensor, words: Words) -> torch.Tensor:
    """Each query's weight on each word: ``(n_layers, n_heads, n, n_words)``, a word's pieces'
    weights added (``Σ_{j ∈ word} weights[..., j]``; rows still sum to 1)."""
    weights = check_attentions(weights)
    if words.n_tokens != weights.shape[-1]:
        raise BlockvizError(f"the words cover {words.n_tokens} tokens, the weights {weights.shape[-1]}")
    return torch.stack([weights[..., list(group)].sum(-1) for group in words.groups], dim=-1)


def sees(query: int, group: Sequence[int], causal: bool) -> bool:
    """Whether token ``query`` sees every piece of a word (``group``): always in an encoder; in a
    causal model when the word ends at or before the query."""
    return not causal or query >= max(group)


def baselines(weights: torch.Tensor, query: int, words: Words, causal: bool) -> torch.Tensor:
    """Each head's baseline for each word: ``(n_layers, n_heads, n_words)``, the mean weight the
    head gives the word from the queries other than ``query`` that see it (:func:`sees`):
    ``mean_{q ≠ query, q sees w} Σ_{j ∈ w} weights[l, h, q, j]``. NaN where no other query sees
    the word (a causal model's last token)."""
    grouped = word_weights(weights, words)
    n = weights.shape[-1]
    _check_query(query, n)
    columns = []
    for index, group in enumerate(words.groups):
        others = [q for q in range(n) if q != query and sees(q, group, causal)]
        if others:
            columns.append(grouped[:, :, others, index].mean(-1))
        else:
            columns.append(torch.full(grouped.shape[:2], math.nan))
    return torch.stack(columns, dim=-1)


def first_token_share(weights: torch.Tensor, query: int) -> torch.Tensor:
    """The weight from ``query`` on token 0 in every head: ``(n_layers, n_heads)``."""
    weights = check_attentions(weights)
    _check_query(query, weights.shape[-1])
    return weights[:, :, query, 0]


def special_share(weights: torch.Tensor, query: int, special: Sequence[bool]) -> torch.Tensor:
    """The weight from ``query`` on the special tokens (``special[j]``: ``[CLS]``, ``[SEP]``,
    BOS…) in every head: ``(n_layers, n_heads)``, 0 when there are none."""
    weights = check_attentions(weights)
    _check_query(query, weights.shape[-1])
    positions = [j for j, flag in enumerate(special) if flag]
    return weights[:, :, query, positions].sum(-1)


def sink_share(weights: torch.Tensor, query: int, special: Sequence[bool]) -> torch.Tensor:
    """The weight from ``query`` on the first token and the special tokens together (each
    counted once): ``(n_layers, n_heads)``; a head parks there when this is ≥ :data:`PARKS_AT`."""
    weights = check_attentions(weights)
    _check_query(query, weights.shape[-1])
    positions = sorted({0} | {j for j, flag in enumerate(special) if flag})
    return weights[:, :, query, positions].sum(-1)


def largest_weight(
    weights: torch.Tensor,
    layer: int,
    head: int,
    query: int,
    special: Sequence[bool],
    causal: bool,
    unknown: Sequence[bool] | None = None,
) -> LargestWeight:
    """The reading of head ``head``'s (of ``layer``) largest weight from ``query``, by the tests
    ``heads`` applies: the causal horizon, the sink share, the baseline; ``unknown[j]``: token j
    was read as a toy model's unknown token (:func:`blockviz.tokens.unknown_tokens`).

    >>> w = torch.tensor([[[[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.8, 0.1, 0.1]]]])
    >>> [largest_weight(w, 0, 0, q, [False] * 3, causal=True).reading for q in range(3)]
    ['horizon', 'sink', 'sink']
    >>> w = torch.tensor([[[[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.1, 0.2, 0.7]]]])
    >>> largest_weight(w, 0, 0, 2, [False] * 3, causal=True)
    LargestWeight(key=2, weight=0.699999988079071, baseline=nan, reading='ordinary')
    >>> largest_weight(w, 0, 0, 1, [False] * 3, causal=True).reading  # 0.7 on "b" against 0.2
    'above'

    Raises :class:`BlockvizError` for a bad tensor or position.
    """
    weights = check_attentions(weights)
    _check_query(query, weights.shape[-1])
    row = weights[layer, head, query]
    key = int(row.argmax())
    weight = float(row[key])
    words = Words.of_tokens([""] * weights.shape[-1])
    baseline = float(baselines(weights, query, words, causal)[layer, head, key])
    sink = float(sink_share(weights, query, special)[layer, head])
    either_unknown = bool(unknown) and (unknown[query] or unknown[key])
    return LargestWeight(
        key, weight, baseline, reading_of(query, key, weight, baseline, special[key], sink, causal, either_unknown)
    )


def infer_causal(weights: torch.Tensor) -> bool:
    """Whether every head gives every key after its query weight exactly 0 (a causal mask's
    −∞ makes it exactly 0; a softmax of finite scores never does in practice)."""
    weights = check_attentions(weights)
    n = weights.shape[-1]
    return n > 1 and bool((weights.triu(diagonal=1) == 0).all())


@dataclass(frozen=True)
class HeadEvidence:
    """One head's evidence for the weight from a query to a key word (``layer``, ``head``
    0-based): ``weight``; ``baseline`` (NaN: no other query sees the key) and ``above`` =
    weight − baseline; ``first`` and ``special`` the query's weight on token 0 and on the special
    tokens, ``sink`` both together, ``parks`` sink ≥ :data:`PARKS_AT`; with a contrast sentence,
    ``contrast`` the same weight there and ``change`` = contrast − weight (else ``None``)."""

    layer: int
    head: int
    weight: float
    baseline: float
    above: float
    first: float
    special: float
    sink: float
    parks: bool
    contrast: float | None = None
    change: float | None = None


@dataclass(frozen=True)
class Side:
    """One sentence for :func:`head_evidence`: ``weights`` ``(n_layers, n_heads, n, n)``, its
    ``words``, ``special`` flags (length n), ``query`` (a token position) and ``key`` (a word index)."""

    weights: torch.Tensor
    words: Words
    special: Sequence[bool]
    query: int
    key: int


def head_evidence(side: Side, causal: bool, contrast: Side | None = None) -> list[HeadEvidence]:
    """Every head's :class:`HeadEvidence`, in layer-then-head order (``n_layers × n_heads``).
    ``contrast``: the same query and key in the contrast sentence (same layers and heads)."""
    grouped = word_weights(side.weights, side.words)
    weight = grouped[:, :, side.query, side.key]
    baseline = baselines(side.weights, side.query, side.words, causal)[:, :, side.key]
    first = first_token_share(side.weights, side.query)
    special = special_share(side.weights, side.query, side.special)
    sink = sink_share(side.weights, side.query, side.special)
    other = None
    if contrast is not None:
        if contrast.weights.shape[:2] != side.weights.shape[:2]:
            raise BlockvizError("the contrast sentence's attentions have other layers or heads than the sentence's")
        other = word_weights(contrast.weights, contrast.words)[:, :, contrast.query, contrast.key]
    rows = []
    n_layers, n_heads = weight.shape
    for layer in range(n_layers):
        for head in range(n_heads):
            w, b = float(weight[layer, head]), float(baseline[layer, head])
            c = None if other is None else float(other[layer, head])
            rows.append(
                HeadEvidence(
                    layer,
                    head,
                    w,
                    b,
                    w - b,
                    float(first[layer, head]),
                    float(special[layer, head]),
                    float(sink[layer, head]),
                    float(sink[layer, head]) >= PARKS_AT,
                    c,
                    None if c is None else c - w,
                )
            )
    return rows


def rank_evidence(rows: list[HeadEvidence], by: str) -> list[HeadEvidence]:
    """``rows`` ranked, first the largest ``weight``, the largest ``above``-baseline
    (``above-baseline``; NaN last) or the largest size of ``change`` (``contrast``); equal values
    keep their order (stable).

    Raises :class:`BlockvizError` for another ``by``, or ``contrast`` without a contrast sentence.
    """
    if by not in RANKINGS:
        raise BlockvizError(f"rank by one of {', '.join(RANKINGS)}, not {by!r}")
    if by == "contrast" and any(row.change is None for row in rows):
        raise BlockvizError("ranking by contrast needs a contrast sentence: give --contrast S2")

    def key(row: HeadEvidence) -> float:
        value = {"weight": row.weight, "above-baseline": row.above, "contrast": abs(row.change or 0.0)}[by]
        return -math.inf if math.isnan(value) else value

    return sorted(rows, key=key, reverse=True)


def answering_head(
    weights: torch.Tensor, query: int, key: int | None = None, *, causal: bool | None = None
) -> AnsweringHead:
    """The head with the largest weight above its baseline (:func:`baselines`, token by token)
    from token ``query`` — to token ``key`` if given, else to whichever key that margin is
    largest for (keys the query cannot see, and keys no other query sees, left out). Ties keep
    layer, head, key order. ``causal`` ``None``: inferred from the weights (:func:`infer_causal`).

    Raises :class:`BlockvizError` for a bad tensor or position, or a key the query cannot see.
    """
    weights = check_attentions(weights)
    n = weights.shape[-1]
    _check_query(query, n)
    if causal is None:
        causal = infer_causal(weights)
    words = Words.of_tokens([""] * n)
    margin = weights[:, :, query, :] - baselines(weights, query, words, causal)  # (n_layers, n_heads, n)
    if key is not None:
        _check_query(key, n, "key")
        if causal and key > query:
            raise BlockvizError(f"key position {key} comes after query position {query}: a causal model hides it")
        allowed = [key]
    else:
        allowed = [j for j in range(n) if not (causal and j > query)]
    best = best_margin(
        (float(margin[layer, head, j]), layer, head, j)
        for layer in range(margin.shape[0])
        for head in range(margin.shape[1])
        for j in allowed
    )
    if best is None:
        raise BlockvizError(f"no other query sees key {key}: there is no baseline to stand above")
    above, layer, head, j = best
    weight = float(weights[layer, head, query, j])
    return AnsweringHead(layer, head, j, weight, weight - above, above)


# --- two sentences -------------------------------------------------------------------------


def first_difference(tokens_a: Sequence[str], tokens_b: Sequence[str], inputs_a=None, inputs_b=None) -> int | None:
    """The first token position where the sentences differ (the common prefix's length), ``None``
    when the tokens are the same. With ``inputs_a`` and ``inputs_b`` (what the model reads at
    each position: ids, or rows ``(n, d)``; :attr:`~blockviz.models.recording.ModelAttentions.inputs`)
    those are compared instead: "The" and "the" are the same input to a model that ignores case.

    >>> first_difference(["The", "cat"], ["the", "cat"]), first_difference(["The", "cat"], ["the", "cat"], [1, 2], [1, 2])
    (0, None)
    """
    if inputs_a is not None and inputs_b is not None:
        tokens_a, tokens_b = _positions(inputs_a), _positions(inputs_b)
    for position, (a, b) in enumerate(zip(tokens_a, tokens_b)):
        if a != b:
            return position
    return None if len(tokens_a) == len(tokens_b) else min(len(tokens_a), len(tokens_b))


def _positions(inputs) -> list:
    """Each position's input as a comparable value: an id, or a row's numbers as a tuple."""
    if isinstance(inputs, torch.Tensor):
        return [tuple(row.tolist()) if row.dim() else row.item() for row in inputs]
    return list(inputs)


def query_sees_difference(query_a: int, query_b: int, difference: int | None, causal: bool) -> bool:
    """Whether the query can see where the sentences differ: always in an encoder; in a causal
    model only at or after the first differing position (before it, both sentences' prefixes
    are the same, and so are the query's weights)."""
    if difference is None:
        return False
    return not causal or max(query_a, query_b) >= difference


def align_words(names_a: Sequence[str], names_b: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """The two sentences' words side by side: pairs ``(word in a, word in b)``, the same word
    (ignoring case) paired, a replaced run of the same length paired word for word ("tired" ↔
    "wide"), others with ``None`` on the side that lacks them; in sentence order
    (:class:`difflib.SequenceMatcher`).

    >>> align_words(["it", "was", "tired"], ["it", "was", "very", "wide"])
    [(0, 0), (1, 1), (2, None), (None, 2), (None, 3)]
    """
    folded_a, folded_b = [n.casefold() for n in names_a], [n.casefold() for n in names_b]
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, folded_a, folded_b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            pairs += list(zip(range(a0, a1), range(b0, b1)))
        else:
            pairs += [(a, None) for a in range(a0, a1)] + [(None, b) for b in range(b0, b1)]
    return pairs


@dataclass(frozen=True)
class HeadShift:
    """How one head's weights row from the query moves between two sentences: ``row_a`` and
    ``row_b`` over the aligned words (0 where a sentence lacks the word), ``change`` = row_b −
    row_a, ``moved`` = ½ Σ |change| (total variation: the share of the query's attention that
    went elsewhere, 0 … 1); ``gained`` / ``lost`` the aligned indices whose weight rose / fell
    most (at most three each, largest first, changes of at least 0.005)."""

    layer: int
    head: int
    row_a: tuple[float, ...]
    row_b: tuple[float, ...]
    change: tuple[float, ...]
    moved: float
    gained: tuple[int, ...]
    lost: tuple[int, ...]


SHOWN_CHANGE = 0.005
"""A key counts as gained or lost when its weight changes by at least this much."""


def unseen_words(side_a: Side, side_b: Side, pairs: list[tuple[int | None, int | None]], causal: bool) -> list[bool]:
    """For each aligned word of ``pairs`` (word indices into ``side_a.words`` and
    ``side_b.words``, ``None`` where a sentence lacks it): whether the causal mask hides it from
    the query in both sentences (:func:`sees`), so that its weight is exactly 0 in both rows.
    Always ``False`` in an encoder."""

    def hidden(side: Side, index: int | None) -> bool:
        return index is None or not sees(side.query, side.words.groups[index], causal)

    return [hidden(side_a, a) and hidden(side_b, b) for a, b in pairs]


def head_shifts(
    side_a: Side, side_b: Side, pairs: list[tuple[int | None, int | None]], n_listed: int = 3
) -> list[HeadShift]:
    """Every head's :class:`HeadShift` from ``side_a.query`` to ``side_b.query`` (``key`` of the
    sides unused), most moved first (stable: layer-then-head order among equals)."""
    rows_a = word_weights(side_a.weights, side_a.words)[:, :, side_a.query, :]
    rows_b = word_weights(side_b.weights, side_b.words)[:, :, side_b.query, :]
    if rows_a.shape[:2] != rows_b.shape[:2]:
        raise BlockvizError("the two sentences' attentions have different layers or heads")
    n_layers, n_heads = rows_a.shape[:2]
    zero = torch.zeros(n_layers, n_heads, 1)
    a = torch.cat([rows_a, zero], -1)[:, :, [p if p is not None else -1 for p, _ in pairs]]
    b = torch.cat([rows_b, zero], -1)[:, :, [p if p is not None else -1 for _, p in pairs]]
    change = b - a
    moved = 0.5 * change.abs().sum(-1)
    shifts = []
    for layer in range(n_layers):
        for head in range(n_heads):
            values = change[layer, head].tolist()
            order = sorted(range(len(values)), key=lambda i: -values[i])
            gained = tuple(i for i in order if values[i] >= SHOWN_CHANGE)[:n_listed]
            lost = tuple(i for i in reversed(order) if values[i] <= -SHOWN_CHANGE)[:n_listed]
            shifts.append(
                HeadShift(
                    layer,
                    head,
                    tuple(a[layer, head].tolist()),
                    tuple(b[layer, head].tolist()),
                    tuple(values),
                    float(moved[layer, head]),
                    gained,
                    lost,
                )
            )
    return sorted(shifts, key=lambda s: -s.moved)


def match_query(
    a: tuple[Sequence[str], Words, Sequence[bool] | None],
    b: tuple[Sequence[str], Words, Sequence[bool] | None],
    choice: str,
) -> tuple[int, int]:
    """The query token in each sentence, ``a`` and ``b`` each ``(tokens, words, special)``: a
    word (``word``, ``word#k``, a split word by its whole text: :func:`select_word`) found in each
    by word; found only in the first when both have the same number of tokens, the token at its
    position in the second ("tired" ↔ "wide"); a position, the same position when the lengths agree.

    Raises
    ------
    BlockvizError
        For a token missing from the first sentence, a word missing from the second when the
        lengths differ, or a position when the lengths differ (which token it means is ambiguous).
    """
    text = str(choice).strip()
    same_length = len(a[0]) == len(b[0])
    if text.isdecimal() and not same_length:
        raise BlockvizError(
            f"--from {text} is ambiguous: the sentences are {len(a[0])} and {len(b[0])} tokens long, "
            "so a position means different tokens; name the query by its word"
        )
    query_a = select_word(*a[:2], text, a[2])
    if text.isdecimal():
        return query_a, query_a
    try:
        return query_a, select_word(*b[:2], text, b[2])
    except BlockvizError:
        if same_length:
            return query_a, query_a
        raise BlockvizError(
            f"{text!r} is in the first sentence but not in the second, and their lengths differ "
            f"({len(a[0])} and {len(b[0])} tokens): name a word both have"
        ) from None


def select_word(tokens: Sequence[str], words: Words, choice, special: Sequence[bool] | None = None) -> int:
    """The token position named by ``choice`` as :func:`blockviz.selection.select_token` reads
    it; a whole word the tokenizer split ("suitcase" = "suit" + "case") is named by its word too,
    and gives its last piece.

    Raises :class:`BlockvizError` as ``select_token`` when neither a token nor a word matches.
    """
    from blockviz.selection import select_token

    try:
        return select_token(list(tokens), choice, special)
    except BlockvizError as error:
        try:
            word = select_token(list(words.names), choice)
        except BlockvizError:
            raise error from None
        return words.groups[word][-1]


def _check_query(position: int, n: int, name: str = "query") -> None:
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < n:
        raise BlockvizError(f"{name} position {position!r} is outside the {n} tokens (0 … {n - 1})")


def top_words(weights: torch.Tensor, query: int, words: Words, k: int, causal: bool) -> list[list[tuple[int, float]]]:
    """Each head's ``k`` largest word weights from token ``query`` (:func:`word_weights`), as
    ``[(word index, weight), …]`` per head in layer-then-head order, largest first (ties: the
    earlier word first); words a causal query cannot see are left out."""
    grouped = word_weights(weights, words)[:, :, query, :]
    visible = [index for index, group in enumerate(words.groups) if sees(query, group, causal)]
    n_layers, n_heads = grouped.shape[:2]
    listed = []
    for layer in range(n_layers):
        for head in range(n_heads):
            row = grouped[layer, head]
            order = sorted(visible, key=lambda index: -float(row[index]))
            listed.append([(index, float(row[index])) for index in order[:k]])
    return listed
