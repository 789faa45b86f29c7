"""Where a later block's keys come from: each dot product q·k of block k > 0 split by the part of
key j's residual stream row it came from — the embeddings, each head of the block before — the
rest being everything else (that block's b_O and FFN, earlier blocks, LayerNorm's β, the key
bias). This is K-composition (Elhage et al. 2021, "A Mathematical Framework for Transformer
Circuits", section "Two-Layer Attention-Only Transformers"): an induction head's key matches
because a previous-token head of the block before wrote the previous word into its row.

The split is exact because pre-norm LayerNorm is linear once its row statistics are fixed:
``ln1[j] = γ ⊙ (x_j − mean(x_j)) / √(var_j + ε) + β``, so a part p of ``x_j`` contributes
``γ ⊙ (p − mean(p)) / √(var_j + ε)`` with the record's own ``ln1_var[j]``, and its key term is
that times ``W_K``. Computed when a toy model's stack is recorded
(:func:`blockviz.toy.recording.record_toy`) and checked when its record is loaded
(:func:`blockviz.record_check.check_claims`).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

SOURCE_FIELDS = ("scores_from_embed", "scores_from_heads")
"""The record fields of the split (:mod:`blockviz.record_fields`), held by block k > 0 of a toy model's stack."""


def score_sources(
    before: Mapping[str, torch.Tensor],
    before_params: Mapping[str, torch.Tensor],
    tensors: Mapping[str, torch.Tensor],
    params: Mapping[str, torch.Tensor],
    eps: float,
) -> dict[str, torch.Tensor]:
    """The parts of block k's ``scores`` that came from key j's embeddings and from each head of
    block k − 1 (``before``, ``before_params``: its tensors and parameters; ``tensors``,
    ``params``: block k's; ``eps``: LayerNorm's ε).

    Returns ``scores_from_embed`` ``(n_heads, n, n)``: entry (h, i, j) is
    ``query[h, i] · (γ ⊙ (e_j − mean(e_j)) / √(ln1_var[j] + ε)) W_K[h]`` with
    ``e = embed + pos_embed``; and ``scores_from_heads`` ``(n_heads, n_heads, n, n)``: entry
    (h, g, i, j) the same with ``e`` replaced by head g's output in the residual stream,
    ``head_outputs_before[g] · W_O_before[g·d_head : (g + 1)·d_head]`` ``(n, d_model)``.
    ``scores`` less both (summed over g) is the rest. A key of a grouped-query block reads its
    key/value head; the toy models have none.
    """
    heads_before = before["head_outputs"]
    n_heads, _, d_head = heads_before.shape
    w_o = before_params["attn.W_O"].reshape(n_heads, d_head, -1)
    written = torch.einsum("gnc,gcd->gnd", heads_before, w_o)  # (n_heads, n, d_model): each head's write
    embedded = (tensors["embed"] + tensors["pos_embed"])[None]
    spread = torch.sqrt(tensors["ln1_var"] + eps)[None, :, None]
    gamma = params["ln1.weight"]

    def scores_of(parts: torch.Tensor) -> torch.Tensor:
        normed = gamma * (parts - parts.mean(-1, keepdim=True)) / spread  # (parts, n, d_model)
        keys = torch.einsum("pnd,hdc->hpnc", normed, params["attn.W_K"])  # (n_heads, parts, n, d_head)
        return torch.einsum("hic,hpjc->hpij", tensors["query"], keys)

    return {"scores_from_embed": scores_of(embedded)[:, 0], "scores_from_heads": scores_of(written)}
