"""The explorer's overview: every layer's and head's attention weights, and a contrast sentence's.

BertViz's model view (Vig 2019, "A Multiscale Visualization of Attention in the Transformer
Model", §3.3) as a layer × head grid of the selected token's weights rows. A one-block record
(the toy model, the seeded block, a saved record) is its own overview: ``1 × n_heads``, the
record's ``weights``. For a model's layer the page also carries every other layer's weights
(:func:`blockviz.models.recording.model_attentions`, the model's own ``output_attentions``),
and the recorded layer's row is the record's own (the numbers of its detailed calculation).
With a contrast sentence, its weights (every layer of a model, or its one block) go beside them.

Weights go into the page as their little-endian float32 bytes, packed
(:func:`blockviz.explorer.packing.packed`): exact; the recorded layer's are not repeated (the page
has the record's ``weights``).
"""

from __future__ import annotations

import numpy as np
import torch

from blockviz.errors import BlockvizError
from blockviz.explorer.packing import packed
from blockviz.tokens import display_token


def _b64(weights: torch.Tensor) -> dict:
    array = np.ascontiguousarray(weights.detach().cpu().numpy().astype("<f4"))
    return {"shape": list(array.shape), "size": 4, "z": packed(array.tobytes(), 4)}


def overview_weights(rec, attentions=None) -> tuple[torch.Tensor, list[int], int]:
    """The overview's weights ``(n_layers, n_heads, n, n)``, its layers' numbers and the index of
    the recorded layer among them: ``attentions`` (a
    :class:`~blockviz.models.recording.ModelAttentions` of ``rec``'s sentence and model) with the
    recorded layer's weights replaced by the record's own, or ``rec.weights`` alone.

    Raises
    ------
    BlockvizError
        If ``attentions`` are not of ``rec``'s tokens and heads, or lack the recorded layer.
    """
    layer = rec.source.layer if rec.source.is_model and rec.source.layer is not None else 0
    if attentions is None:
        return rec.weights.detach().float()[None], [layer], 0
    weights = attentions.weights.detach().float().clone()
    if list(attentions.tokens) != list(rec.tokens) or tuple(weights.shape[1:]) != tuple(rec.weights.shape):
        raise BlockvizError(
            "the overview's attentions are not of the record's tokens and heads: compute them on the same sentence and model"
        )
    if layer >= weights.shape[0]:
        raise BlockvizError(f"the overview's attentions have {weights.shape[0]} layers, not the recorded layer {layer}")
    weights[layer] = rec.weights.detach().float()
    return weights, list(range(weights.shape[0])), layer


def overview_payload(rec, attentions=None, contrast=None, contrast_sentence: str | None = None) -> dict:
    """The page's ``overview``: ``layers`` (their numbers), ``recorded`` (the index of the
    recorded layer), ``others`` the other layers' weights ``(n_layers − 1, n_heads, n, n)``
    (b64 float32; ``None`` for one layer: the page reads the record's ``weights``) and ``source``
    (where the other layers come from); ``contrast`` ``None`` or the contrast sentence's
    ``sentence``, ``tokens``, ``special`` and ``weights`` ``(n_layers, n_heads, m, m)``.

    ``contrast`` is a :class:`~blockviz.models.recording.ModelAttentions` of the second
    sentence ``contrast_sentence``: every layer of the same model, or for a one-block record its one block
    (:func:`~blockviz.models.recording.block_attentions`).

    Raises
    ------
    BlockvizError
        As :func:`overview_weights`, and if ``contrast`` has other layers or heads.
    """
    weights, layers, recorded = overview_weights(rec, attentions)
    out = {
        "layers": layers,
        "recorded": recorded,
        "others": _b64(torch.cat([weights[:recorded], weights[recorded + 1 :]])) if len(layers) > 1 else None,
        "source": "the model's own attention weights (output_attentions)" if attentions is not None else None,
        "contrast": None,
    }
    if contrast is not None:
        theirs = contrast.weights.detach().float()
        if tuple(theirs.shape[:2]) != tuple(weights.shape[:2]):
            raise BlockvizError(
                f"the contrast sentence's weights have {theirs.shape[0]} layers × {theirs.shape[1]} heads, "
                f"the page {weights.shape[0]} × {weights.shape[1]}: record both with the same model"
            )
        out["contrast"] = {
            "sentence": display_token(contrast_sentence or ""),
            "tokens": [display_token(token) for token in contrast.tokens],
            "special": [bool(flag) for flag in contrast.special],
            "weights": _b64(theirs),
        }
    return out
