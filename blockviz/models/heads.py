"""Finding the head: every layer's and head's attention from one token, ranked.

Pure functions on an attentions tensor ``weights`` ``(n_layers, n_heads, n, n)`` — rows =
queries, columns = keys, each row a softmax (it sums to 1), as
:func:`blockviz.models.model_attentions` returns it (``weights[layer, head, i, j]`` is query
i's weight on key j). Heads are query heads: with grouped-query attention (SmolLM2: 9 query
heads, 3 key/value heads) each query head has its own row of weights, so each is ranked on its
own. A seeded toy block is one layer: :func:`block_attentions` gives it the same shape.

>>> import torch
>>> weights = torch.tensor([[[[1.0, 0.0], [0.25, 0.75]], [[1.0, 0.0], [0.5, 0.5]]]])  # 1 layer, 2 heads, 2 tokens
>>> [(h.layer, h.head, h.weight) for h in rank_heads(weights, query=1, key=0)]
[(0, 1, 0.5), (0, 0, 0.25)]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class HeadWeight:
    """One head's weight from the query token to a key token: ``layer`` and ``head`` (0-based,
    ``head`` a query head), ``key`` the key's position, ``weight`` in [0, 1]."""

    layer: int
    head: int
    key: int
    weight: float


def check_attentions(weights: torch.Tensor) -> torch.Tensor:
    """``weights`` if it is an attentions tensor ``(n_layers, n_heads, n, n)`` with n ≥ 1.

    Raises :class:`BlockvizError` naming the shape otherwise.
    """
    if (
        not isinstance(weights, torch.Tensor)
        or weights.dim() != 4
        or weights.shape[-1] != weights.shape[-2]
        or 0 in weights.shape
    ):
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise BlockvizError(f"attention weights must be (n_layers, n_heads, n, n) with n ≥ 1, got {shape}")
    return weights


def weights_between(weights: torch.Tensor, query: int, key: int) -> torch.Tensor:
    """The weight from token ``query`` to token ``key`` in every head: ``(n_layers, n_heads)``,
    ``weights[:, :, query, key]``.

    Raises :class:`BlockvizError` for a position outside 0 … n − 1.
    """
    weights = check_attentions(weights)
    for name, position in (("query", query), ("key", key)):
        _check_position(name, position, weights.shape[-1])
    return weights[:, :, query, key]


def rank_heads(weights: torch.Tensor, query: int, key: int) -> list[HeadWeight]:
    """Every head (``n_layers × n_heads`` of them), the largest weight from ``query`` to ``key``
    first; equal weights keep layer-then-head order (a stable sort).

    Raises :class:`BlockvizError` as :func:`weights_between`.
    """
    grid = weights_between(weights, query, key)
    n_heads = grid.shape[1]
    values, order = torch.sort(grid.flatten(), descending=True, stable=True)
    return [
        HeadWeight(int(index) // n_heads, int(index) % n_heads, key, float(value))
        for value, index in zip(values, order)
    ]


def top_keys(weights: torch.Tensor, query: int, k: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """Each head's ``k`` largest weights from token ``query`` and the keys that get them:
    ``(values, keys)``, both ``(n_layers, n_heads, min(k, n))``, largest first; equal weights
    keep position order (the earlier key first). ``values[..., 0]`` is each head's largest weight.

    Raises :class:`BlockvizError` for a position outside 0 … n − 1 or ``k`` below 1.
    """
    weights = check_attentions(weights)
    _check_position("query", query, weights.shape[-1])
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise BlockvizError(f"the number of keys per head must be at least 1, got {k!r}")
    values, keys = torch.sort(weights[:, :, query, :], dim=-1, descending=True, stable=True)
    k = min(k, weights.shape[-1])
    return values[..., :k], keys[..., :k]


def heads_of(weights: torch.Tensor, query: int, k: int = 3) -> list[list[HeadWeight]]:
    """:func:`top_keys` as one list per head, in layer-then-head order: ``[[HeadWeight of the
    head's largest key, …], …]`` (``n_layers × n_heads`` lists of ``min(k, n)``). Keys a causal
    mask hides (weight exactly 0, after the query) are left out."""
    values, keys = top_keys(weights, query, k)
    n_layers, n_heads = values.shape[:2]
    return [
        [
            HeadWeight(layer, head, int(key), float(value))
            for value, key in zip(values[layer, head], keys[layer, head])
            if not (value == 0 and key > query)
        ]
        for layer in range(n_layers)
        for head in range(n_heads)
    ]


def check_visible(weights: torch.Tensor, query: int, key: int, tokens: list[str]) -> None:
    """Refuse a key that every head's mask hides from the query: a key after the query whose
    weight is exactly 0 in every head (a causal decoder's mask), where a ranking would be all 0.

    Raises :class:`BlockvizError` saying so, naming both tokens and their positions.
    """
    grid = weights_between(weights, query, key)
    if key > query and bool((grid == 0).all()):
        raise BlockvizError(
            f"key {tokens[key]!r} (position {key}) comes after query {tokens[query]!r} (position {query}): "
            f"the causal mask gives it weight 0 in every head; choose a key at position {query} or before"
        )


def _check_position(name: str, position: int, n: int) -> None:
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < n:
        raise BlockvizError(f"{name} position {position!r} is outside the {n} tokens (0 … {n - 1})")
