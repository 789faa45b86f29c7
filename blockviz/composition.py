"""How much a head of a later block reads what a head of an earlier block wrote: the composition
scores of Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits", §"Two-layer
attention-only transformers", Q-, K- and V-composition.

A head's two circuits, as blockviz's rows-are-tokens convention writes them (a row ``x`` of the
residual stream, ``(1, d_model)``):

- OV circuit ``W_OV = W_V^h W_O^h`` ``(d_model, d_model)``: what the head writes for a key row,
  ``x W_OV`` (``W_V^h`` ``(d_model, d_head)``; ``W_O^h`` the ``d_head`` rows of ``W_O`` that
  multiply head h's output);
- QK circuit ``W_QK = W_Q^h (W_K^h)ᵀ`` ``(d_model, d_model)``: the score of query row ``x_q``
  and key row ``x_k`` is ``x_q W_QK x_kᵀ`` (before ÷√d_k).

When head 1 of an earlier block wrote ``y W_OV¹`` into a row, a head 2 of a later block reads it
through its query (Q), its key (K) or its value (V); the matrices that do the reading are

    Q: W_OV¹ W_QK²      K: W_QK² (W_OV¹)ᵀ      V: W_OV¹ W_OV²

and each score is that product's Frobenius norm over the product of the two factors' norms,
``‖A B‖_F / (‖A‖_F ‖B‖_F)`` — in [0, 1] (``‖AB‖_F ≤ ‖A‖_F ‖B‖_F``), large when what head 1
writes lies where head 2 reads. (The paper's matrices act on columns: ``W_QK²ᵀ W_OV¹`` for Q,
``W_QK² W_OV¹`` for K, ``W_OV² W_OV¹`` for V. Acting on rows, ``W_OV`` is its transpose and ``W_QK``
the same matrix, so these products are the paper's or their transposes, with the same norms.) Random weights of
the same shapes give a baseline: the score two unrelated heads have (:func:`random_composition`).

For a pre-norm block each head reads its block's LayerNorm output: the LayerNorm's scale γ is
folded into the reading weights (``diag(γ) W_V``, ``diag(γ) W_Q``, ``diag(γ) W_K``), as
TransformerLens does before it computes these scores; the centring, the division by the row's
standard deviation, and the biases are left out (the paper's scores leave them out too). Rotary
positions are left out as well: the score is of ``W_Q W_Kᵀ`` before any rotation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from blockviz.errors import BlockvizError

KINDS = ("Q", "K", "V")
"""The three ways a later head reads an earlier head's output: through its query, key or value."""
RANDOM_SEED = 0
"""The seed of the random weights of :func:`random_composition` (the same baseline every run)."""


def normalised_norm(first: torch.Tensor, second: torch.Tensor) -> float:
    """``‖first @ second‖_F / (‖first‖_F ‖second‖_F)``: how much of ``first``'s output space
    ``second`` reads, in [0, 1] (Elhage et al. 2021, composition scores).

    Raises :class:`BlockvizError` when either matrix is all zeros (the score is undefined).
    """
    first, second = first.double(), second.double()
    scale = torch.linalg.matrix_norm(first) * torch.linalg.matrix_norm(second)
    if float(scale) == 0.0:
        raise BlockvizError("a composition score of an all-zero circuit is undefined: the head writes or reads nothing")
    return float(torch.linalg.matrix_norm(first @ second) / scale)


def composition_score(kind: str, ov_writer: torch.Tensor, reader_qk: torch.Tensor, reader_ov: torch.Tensor) -> float:
    """The ``kind`` (``"Q"``, ``"K"`` or ``"V"``) composition score of a writing head, OV circuit
    ``ov_writer`` ``(d_model, d_model)``, with a reading head of a later block, circuits
    ``reader_qk`` and ``reader_ov`` ``(d_model, d_model)`` (rows-are-tokens convention, the
    module's docstring):

    - Q: ``‖W_OV¹ W_QK²‖_F / (‖W_OV¹‖_F ‖W_QK²‖_F)``
    - K: ``‖W_QK² W_OV¹ᵀ‖_F / (‖W_QK²‖_F ‖W_OV¹‖_F)``
    - V: ``‖W_OV¹ W_OV²‖_F / (‖W_OV¹‖_F ‖W_OV²‖_F)``

    Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits".

    Raises :class:`BlockvizError` for another kind.
    """
    if kind == "Q":
        return normalised_norm(ov_writer, reader_qk)
    if kind == "K":
        return normalised_norm(reader_qk, ov_writer.T)
    if kind == "V":
        return normalised_norm(ov_writer, reader_ov)
    raise BlockvizError(f"no composition kind {kind!r}: choose one of {', '.join(KINDS)}")


@dataclass(frozen=True)
class HeadCircuits:
    """Every head's circuits of one block: ``qk[h]`` and ``ov[h]`` ``(d_model, d_model)``."""

    qk: tuple[torch.Tensor, ...]
    ov: tuple[torch.Tensor, ...]


def circuits(w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor, w_o: torch.Tensor, kv_head_of) -> HeadCircuits:
    """Each head's QK and OV circuits from a block's weights: ``w_q`` ``(n_heads, d_model, d_head)``,
    ``w_k``, ``w_v`` ``(n_kv_heads, d_model, d_head)``, ``w_o`` ``(d_model, d_model)`` (head h's
    rows ``h·d_head … (h+1)·d_head − 1``); ``kv_head_of(h)`` the key/value head query head h uses.
    ``W_QK^h = W_Q^h (W_K^h)ᵀ``, ``W_OV^h = W_V^h W_O^h``."""
    n_heads, _, d_head = w_q.shape
    w_q, w_k, w_v, w_o = (weight.double() for weight in (w_q, w_k, w_v, w_o))
    qk = tuple(w_q[h] @ w_k[kv_head_of(h)].T for h in range(n_heads))
    ov = tuple(w_v[kv_head_of(h)] @ w_o[h * d_head : (h + 1) * d_head] for h in range(n_heads))
    return HeadCircuits(qk, ov)


def folds_norm(view) -> bool:
    """Whether :func:`block_circuits` folds the block's LayerNorm γ into its reading weights: a
    pre-norm block's ``ln1.weight`` (a post-norm block's attention reads the residual stream as it is)."""
    return view.architecture.norm_placement == "pre" and "ln1.weight" in view.params


def block_circuits(view) -> HeadCircuits:
    """The circuits of a record's block ``view`` (a one-block
    :class:`~blockviz.block_record.BlockRecord`) from its parameters, its pre-norm LayerNorm's γ
    (``ln1.weight``) folded into W_Q, W_K and W_V (the module's docstring)."""
    params = view.params
    w_q, w_k, w_v = (params[f"attn.W_{kind}"] for kind in KINDS)
    if folds_norm(view):
        gamma = params["ln1.weight"].double()[:, None]  # scales each input row of the weights
        w_q, w_k, w_v = (gamma * weight.double() for weight in (w_q, w_k, w_v))
    return circuits(w_q, w_k, w_v, params["attn.W_O"], view.config.kv_head_of)


@dataclass(frozen=True)
class Composition:
    """Every composition score between the heads of block ``writer`` and those of block
    ``reader``: ``scores[kind][h1][h2]`` for writing head h1 and reading head h2, kind in
    :data:`KINDS`."""

    writer: int
    reader: int
    scores: dict[str, tuple[tuple[float, ...], ...]]


def composition_between(writing: HeadCircuits, reading: HeadCircuits, writer: int, reader: int) -> Composition:
    """:func:`composition_score` of every head of ``writing`` with every head of ``reading``."""
    scores = {
        kind: tuple(
            tuple(composition_score(kind, ov, qk, ov_reader) for qk, ov_reader in zip(reading.qk, reading.ov))
            for ov in writing.ov
        )
        for kind in KINDS
    }
    return Composition(writer, reader, scores)


def record_composition(rec, reader: int) -> Composition:
    """The composition of block ``reader − 1``'s heads with block ``reader``'s, from the
    parameters of ``rec`` (a record of several blocks, :meth:`~blockviz.block_record.BlockRecord.blocks`).

    Raises
    ------
    BlockvizError
        For a record of one block (nothing composes) or ``reader`` not in 1 … blocks − 1.
    """
    count = len(rec.blocks)
    if count < 2:
        raise BlockvizError(
            "composition needs two blocks, the record has one: record a stack (--model copy, or --layer all)"
        )
    if not 1 <= reader < count:
        raise BlockvizError(f"block {reader} reads no earlier block: choose a block from 1 to {count - 1}")
    return composition_between(
        block_circuits(rec.block(reader - 1)), block_circuits(rec.block(reader)), reader - 1, reader
    )


def random_composition(rec, reader: int, seed: int = RANDOM_SEED) -> Composition:
    """The same scores as :func:`record_composition` for random weights of the same shapes
    (every W_Q, W_K, W_V, W_O entry standard normal, drawn with ``seed``; no γ): the baseline of
    heads that do not compose. Raises as :func:`record_composition`."""
    record_composition(rec, reader)  # the same checks
    generator = torch.Generator().manual_seed(seed)

    def drawn(view) -> HeadCircuits:
        w_q, w_k, w_v, w_o = (
            torch.randn(tuple(view.params[name].shape), generator=generator, dtype=torch.float64)
            for name in ("attn.W_Q", "attn.W_K", "attn.W_V", "attn.W_O")
        )
        return circuits(w_q, w_k, w_v, w_o, view.config.kv_head_of)

    writing = drawn(rec.block(reader - 1))
    return composition_between(writing, drawn(rec.block(reader)), reader - 1, reader)
