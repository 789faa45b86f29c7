"""Is this a record? Tokens, every field's presence, dtype and shape, finiteness, and the mask.

Run whenever a :class:`~blockviz.block_record.BlockRecord` is built (computed or loaded), so a
bad record is a one-line error naming the field, never a traceback later in a figure or scene.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from blockviz.attention import causal_mask, open_mask
from blockviz.config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.params import check_parameters
from blockviz.record_fields import RecordField, fields_for
from blockviz.tokens import dtype_of


def check_record(tokens, config: BlockConfig, tensors: Mapping[str, torch.Tensor], params: Mapping[str, torch.Tensor], fields: tuple[RecordField, ...] | None = None) -> None:
    """Raise :class:`BlockvizError` unless the parts form one record.

    Checks: ``tokens`` is a non-empty list or tuple of strings, at most ``config.max_tokens``; every
    field of ``fields`` (default :func:`blockviz.record_fields.fields_for` ``(config)``, which is
    :data:`blockviz.record_fields.FIELDS` for the toy block) is present (and nothing else), a tensor of
    the config's dtype and of its shape for ``n = len(tokens)``; values are finite (−∞ allowed
    only where the field says so, never NaN or +∞); the mask is the config's (causal or open)
    and ``masked_scores`` is −∞ exactly where it is; the weights lie in [0, 1], are exactly 0
    where the mask blocks a key and each row sums to 1 (within :data:`WEIGHT_SUM_TOLERANCE`); the parameters are complete, of the
    config's dtype and shapes, and finite.
    """
    if not isinstance(tokens, (list, tuple)) or not tokens or not all(isinstance(token, str) for token in tokens):
        raise BlockvizError("the record's tokens must be a non-empty list of strings")
    if len(tokens) > config.max_tokens:
        raise BlockvizError(f"the record has {len(tokens)} tokens, more than max_tokens {config.max_tokens}")
    fields = fields_for(config) if fields is None else fields
    names = [spec.name for spec in fields]
    extra = sorted(set(tensors) - set(names))
    if extra:
        raise BlockvizError(f"the record has an unknown field {extra[0]!r}: known fields are {', '.join(names)}")
    dtype = dtype_of(config)
    for spec in fields:
        tensor = tensors.get(spec.name)
        if tensor is None:
            raise BlockvizError(f"the record lacks field {spec.name!r}: record it again with this version of blockviz")
        _check_tensor(spec.name, tensor, dtype, spec.sizes(len(tokens), config), allow_neg_inf=spec.neg_inf)
    _check_mask(tensors["mask"], tensors["masked_scores"], config)
    _check_weights(tensors["weights"], tensors["mask"])
    check_parameters(params, config, "the record", dtypes=(dtype,))


def _check_tensor(name: str, tensor, dtype: torch.dtype, shape: tuple[int, ...], allow_neg_inf: bool) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise BlockvizError(f"field {name!r} is a {type(tensor).__name__}, not a tensor")
    if tensor.dtype != dtype:
        raise BlockvizError(f"field {name!r} has dtype {str(tensor.dtype).removeprefix('torch.')}, expected {str(dtype).removeprefix('torch.')} (the config's dtype)")
    if tuple(tensor.shape) != shape:
        raise BlockvizError(f"field {name!r} has shape {list(tensor.shape)}, expected {list(shape)} for these tokens and this config")
    allowed = torch.isfinite(tensor) | (torch.isneginf(tensor) if allow_neg_inf else False)
    if not bool(allowed.all()):
        kinds = "NaN or +∞" if allow_neg_inf else "NaN or ±∞"
        raise BlockvizError(f"field {name!r} holds {kinds}: a value overflowed or the record was edited; every value must be a finite number")


WEIGHT_SUM_TOLERANCE = 1e-4
"""How far a row of weights may sum from 1 (float32 rounding of up to 512 terms stays far below)."""


def _check_weights(weights: torch.Tensor, mask: torch.Tensor) -> None:
    if not bool(((weights >= 0) & (weights <= 1)).all()) or bool((weights[:, torch.isneginf(mask)] != 0).any()):
        raise BlockvizError("field 'weights' is not a softmax: weights lie in [0, 1] and are exactly 0 where the mask blocks a key")
    sums = weights.double().sum(-1)
    worst = sums.flatten()[(sums - 1).abs().argmax()].item()
    if abs(worst - 1) > WEIGHT_SUM_TOLERANCE:
        raise BlockvizError(f"field 'weights' is not a softmax: a row sums to {worst:.6g}, not 1 (the record was edited)")


def _check_mask(mask: torch.Tensor, masked_scores: torch.Tensor, config: BlockConfig) -> None:
    n = mask.shape[0]
    expected = causal_mask(n, mask.dtype) if config.causal else open_mask(n, mask.dtype)
    if not torch.equal(mask, expected):
        kind = "causal (−∞ above the diagonal, 0 elsewhere)" if config.causal else "all 0 (bidirectional)"
        raise BlockvizError(f"field 'mask' does not match the config: it must be {kind}")
    if not torch.equal(torch.isneginf(masked_scores), torch.isneginf(mask).expand_as(masked_scores)):
        raise BlockvizError("field 'masked_scores' is not −∞ exactly where the mask blocks a key")
