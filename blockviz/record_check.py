"""Is this a record? Tokens, every field's presence, dtype and shape, finiteness, and the mask.

Run whenever a :class:`~blockviz.block_record.BlockRecord` is built (computed or loaded), so a
bad record is a one-line error naming the field, never a traceback later in a figure or scene.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from blockviz.attention import causal_mask, open_mask
from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.params import check_parameters, is_finite
from blockviz.record_fields import RecordField, dimension_sizes, fields_for
from blockviz.tokens import dtype_of


def check_record(
    tokens,
    config: BlockConfig,
    tensors: Mapping[str, torch.Tensor],
    params: Mapping[str, torch.Tensor],
    fields: tuple[RecordField, ...] | None = None,
) -> None:
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
    finite_known = bool(getattr(params, "known_finite", False))
    tensors, params = _stored(tensors), _stored(params)
    names = [spec.name for spec in fields]
    extra = sorted(set(tensors) - set(names))
    if extra:
        raise BlockvizError(f"the record has an unknown field {extra[0]!r}: known fields are {', '.join(names)}")
    dtype = dtype_of(config)
    dimensions = dimension_sizes(len(tokens), config)
    for spec in fields:
        tensor = tensors.get(spec.name)
        if tensor is None:
            raise BlockvizError(f"the record lacks field {spec.name!r}: record it again with this version of blockviz")
        _check_tensor(spec.name, tensor, dtype, spec.sizes(len(tokens), config, dimensions), allow_neg_inf=spec.neg_inf)
    _check_mask(tensors["mask"], tensors["masked_scores"], config)
    _check_weights(tensors["weights"], config)
    check_parameters(params, config, "the record", dtypes=(dtype,), finite_known=finite_known)


def _check_tensor(name: str, tensor, dtype: torch.dtype, shape: tuple[int, ...], allow_neg_inf: bool) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise BlockvizError(f"field {name!r} is a {type(tensor).__name__}, not a tensor")
    if tensor.dtype != dtype:
        raise BlockvizError(
            f"field {name!r} has dtype {str(tensor.dtype).removeprefix('torch.')}, expected {str(dtype).removeprefix('torch.')} (the config's dtype)"
        )
    if tuple(tensor.shape) != shape:
        raise BlockvizError(
            f"field {name!r} has shape {list(tensor.shape)}, expected {list(shape)} for these tokens and this config"
        )
    finite = _finite_or_blocked(tensor) if allow_neg_inf else is_finite(tensor)
    if not finite:
        kinds = "NaN or +∞" if allow_neg_inf else "NaN or ±∞"
        raise BlockvizError(
            f"field {name!r} holds {kinds}: a value overflowed or the record was edited; every value must be a finite number"
        )


def _finite_or_blocked(tensor: torch.Tensor) -> bool:
    """No NaN and no +∞ (−∞ marks a blocked cell): the largest entry is neither, ``max`` giving NaN when any entry is."""
    largest = float(tensor.max()) if tensor.numel() else 0.0
    return not math.isnan(largest) and largest != math.inf


def check_stack(rec) -> None:
    """Raise :class:`BlockvizError` unless the views of a record of several blocks
    (``rec.stack``, each a checked one-block record) form one stack that reads as ``rec``.

    Checks: two blocks or more, none a stack itself; every view of ``rec``'s sentence, tokens,
    special flags, config, and source but for its layer (a model's layers in order, the last
    ``rec``'s); the last view's tensors and parameters are ``rec``'s; what the stack has once
    (:data:`~blockviz.record_fields.STACK_FIELDS`,
    :data:`~blockviz.record_fields.STACK_PARAMETERS`) is the same in every view; and the
    residual stream is one sequence: block k + 1's ``resid_pre`` equals block k's output exactly
    (``resid_post``; post-norm, ``resid_post_norm``: ``architecture.block_output``; ``torch.equal``:
    it is the same tensor passed on, not a recomputation).
    """
    from blockviz.record_fields import STACK_FIELDS, STACK_PARAMETERS

    views = rec.stack
    if len(views) < 2 or any(view.stack for view in views):
        raise BlockvizError("a record's stack holds two blocks or more, each of one block")
    last = views[-1]
    model = _without_layer(rec.source)
    for index, view in enumerate(views):
        same = (
            view.sentence == rec.sentence
            and view.tokens == rec.tokens
            and view.special == rec.special
            and view.config == rec.config
            and _without_layer(view.source) == model
        )
        if not same:
            raise BlockvizError(
                f"block {index} of the record is of another sentence, tokens, config or model than the record: a stack is one model on one sentence"
            )
        layer = view.source.layer
        if layer is not None and layer != rec.source.layer - (len(views) - 1 - index):
            raise BlockvizError(
                f"block {index} of the record is layer {layer}: a stack holds a model's layers in order"
            )
    for name in ("tensors", "params"):
        theirs, ours = _stored(getattr(last, name)), _stored(getattr(rec, name))
        if list(theirs) != list(ours) or any(not _same(theirs[key], ours[key]) for key in ours):
            raise BlockvizError(f"the record's {name} are not its last block's: a stack reads as its last block")
    for index, view in enumerate(views[:-1]):
        for name in (*STACK_FIELDS, *STACK_PARAMETERS):
            mine, lasts = _shared_tensor(view, name), _shared_tensor(last, name)
            if (mine is None) != (lasts is None) or (mine is not None and not _same(mine, lasts)):
                raise BlockvizError(f"block {index}'s {name!r} is not the stack's: a stack holds it once")
    output = rec.architecture.block_output
    for index in range(len(views) - 1):
        before = _stored(views[index].tensors)[output]
        after = _stored(views[index + 1].tensors)["resid_pre"]
        if not torch.equal(before, after):
            gap = (after.double() - before.double()).abs()
            gap = torch.nan_to_num(gap, nan=math.inf)
            where = [int(i) for i in torch.unravel_index(gap.argmax(), gap.shape)]
            raise BlockvizError(
                f"block {index + 1}'s resid_pre is not block {index}'s {output}: they differ by {float(gap.max()):.3g} at {where} "
                "(the residual stream of a stack is one sequence; the record was edited)"
            )


def _without_layer(source) -> tuple:
    """What a source says but for its layer: the same for every view of a model's stack."""
    from dataclasses import fields

    return tuple(getattr(source, field.name) for field in fields(source) if field.name != "layer")


def _same(one: torch.Tensor, other: torch.Tensor) -> bool:
    """Equal tensors (``torch.equal``); the very same tensor (a view's, handed on) at once: a record's tensors are
    finite, checked when it was built, so a tensor equals itself."""
    return one is other or torch.equal(one, other)


def _shared_tensor(view, name: str) -> torch.Tensor | None:
    for mapping in (view.tensors, view.params):
        stored = _stored(mapping)
        if name in stored:
            return stored[name]
    return None


WEIGHT_SUM_TOLERANCE = 1e-4
"""How far a row of weights may sum from 1 (float32 rounding of up to 512 terms stays far below)."""


def _check_weights(weights: torch.Tensor, config: BlockConfig) -> None:
    """Weights in [0, 1], exactly 0 where the mask (checked to be the config's: causal, −∞ above
    the diagonal, or open) blocks a key, each row summing to 1 within :data:`WEIGHT_SUM_TOLERANCE`."""
    low, high = torch.aminmax(weights)
    blocked = bool(torch.triu(weights, diagonal=1).any()) if config.causal else False
    if not (0 <= float(low) and float(high) <= 1) or blocked:
        raise BlockvizError(
            "field 'weights' is not a softmax: weights lie in [0, 1] and are exactly 0 where the mask blocks a key"
        )
    sums = weights.sum(-1, dtype=torch.float64)
    gaps = (sums - 1).abs()
    if float(gaps.max()) > WEIGHT_SUM_TOLERANCE:
        worst = sums.flatten()[gaps.argmax()].item()
        raise BlockvizError(
            f"field 'weights' is not a softmax: a row sums to {worst:.6g}, not 1 (the record was edited)"
        )


def _check_mask(mask: torch.Tensor, masked_scores: torch.Tensor, config: BlockConfig) -> None:
    n = mask.shape[0]
    expected = causal_mask(n, mask.dtype) if config.causal else open_mask(n, mask.dtype)
    if not torch.equal(mask, expected):
        kind = "causal (−∞ above the diagonal, 0 elsewhere)" if config.causal else "all 0 (bidirectional)"
        raise BlockvizError(f"field 'mask' does not match the config: it must be {kind}")
    if not torch.equal(torch.isneginf(masked_scores), torch.isneginf(mask).expand_as(masked_scores)):
        raise BlockvizError("field 'masked_scores' is not −∞ exactly where the mask blocks a key")


RECOMPUTE_TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
"""Largest difference allowed between a loaded record's value and its recomputation, relative to
the field's largest magnitude (at least 1): rounding on another machine (another order of the
sums) stays far below; an edited value does not."""

_SHOWN_WHITESPACE = frozenset("␣⏎⇥")
"""How :mod:`blockviz.models.tokens` shows a token that covers only white space."""


def check_claims(rec) -> None:
    """Raise :class:`BlockvizError` unless a record (one that passed :func:`check_record`) is what
    it says it is; run once when a record is loaded from a file.

    - Tokens: blockviz's own block's are exactly what :func:`blockviz.tokens.tokenize` makes of
      the sentence. A trained model's (source ``model``) are checked without the model: every
      token that is not special (``rec.special``) nor named like one (``[UNK]``) nor white space
      (``␣``) is a piece of the sentence, the pieces in order; the model's tokenizer is not
      loaded (it would add the seconds of importing ``transformers`` to every load).
    - Parameters: a seeded record's (source ``seeded``) are the seeded ones of ``config.seed``.
    - Activations: blockviz's :class:`~blockviz.block.Block` with the record's parameters,
      run on the record's input, gives every field within :data:`RECOMPUTE_TOLERANCE`. The input
      is ``embed`` + ``pos_embed`` recomputed from the tokens (token embeddings of
      :func:`blockviz.tokens.embed`, or for blockviz's trained toy model the rows of its ``W_E``
      for the tokens' ids in ``source.vocabulary``; sinusoidal positions, or ``W_pos``'s first
      n rows), or,
      for a model's layer, the record's own ``resid_pre`` (and ``rope_cos``/``rope_sin``);
      there ``embed`` (the model's embedding table) is not checked, ``pos_embed`` is
      ``W_pos``'s first rows and ``prev_output`` equals ``resid_pre``. With an unembedding
      (the trained toy model) the final LayerNorm, ``logits`` and ``probs`` are recomputed from
      the record's ``ln_f.*`` and ``W_U`` too.
    - A record of several blocks: each block as above, block k > 0 from its own ``resid_pre``
      (:func:`check_stack` has made sure it is block k − 1's ``resid_post``), its prediction
      fields (the logit lens) from its output, and where it holds them, the parts of its scores
      that came from the embeddings and each head of block k − 1 (:mod:`blockviz.key_sources`).

    The message names the first field (in data-flow order) or parameter that differs and by how much.
    """
    if rec.source.is_model:
        _check_model_tokens(rec.sentence, rec.tokens, rec.special)
    else:
        _check_own_tokens(rec.sentence, rec.tokens, rec.config)
    if rec.source.kind == "seeded":
        if rec.stack:
            raise BlockvizError("blockviz's seeded block is one block: a record of seeded weights holds no stack")
        _check_seeded_parameters(_stored(rec.params), rec.config)
    for index, view in enumerate(rec.blocks):
        _check_recomputed(view, own_input=index > 0)
        if index > 0:
            _check_key_sources(rec.blocks[index - 1], view)


def _check_key_sources(before, view) -> None:
    """Block ``view``'s split of its scores by where its keys came from
    (:func:`blockviz.key_sources.score_sources`), where it holds one, recomputed from the block ``before``."""
    from blockviz.key_sources import SOURCE_FIELDS, score_sources

    tensors = _stored(view.tensors)
    if not any(name in tensors for name in SOURCE_FIELDS):
        return
    expected = score_sources(
        _stored(before.tensors), _stored(before.params), tensors, _stored(view.params), view.config.ln_eps
    )
    for name in SOURCE_FIELDS:
        difference = _difference(tensors[name], expected[name])
        if difference is not None:
            raise BlockvizError(
                f"field {name!r} is not what the record's parameters make of its input: it differs from its recomputation by {difference} "
                "(the file was edited, or its parameters were)"
            )


def _stored(tensors: Mapping[str, torch.Tensor]) -> Mapping[str, torch.Tensor]:
    """The record's own tensors to read, not copies of them (a check reads each once)."""
    return tensors.stored() if hasattr(tensors, "stored") else tensors


def _check_own_tokens(sentence: str, tokens: tuple[str, ...], config: BlockConfig) -> None:
    from blockviz.tokens import tokenize

    expected = tuple(tokenize(sentence, config.max_tokens))
    if expected != tuple(tokens):
        raise BlockvizError(
            f"the record's tokens are not what its sentence splits into: {_first_token_difference(tokens, expected)}"
        )


def _first_token_difference(tokens, expected) -> str:
    for index, (token, wanted) in enumerate(zip(tokens, expected)):
        if token != wanted:
            return f"token {index} is {token!r}, the sentence gives {wanted!r}"
    return f"{len(tokens)} tokens, the sentence gives {len(expected)}"


def _check_model_tokens(sentence: str, tokens: tuple[str, ...], special: tuple[bool, ...]) -> None:
    from blockviz.selection import looks_special

    text = sentence.encode("utf-8", "replace").decode("utf-8")  # as blockviz.models.tokens gives it to the tokenizer
    start = 0
    for index, token in enumerate(tokens):
        if special[index] or looks_special(token) or (token and set(token) <= _SHOWN_WHITESPACE):
            continue
        found = text.find(token, start)
        if not token or found < 0:
            raise BlockvizError(
                f"the record's token {index} {token!r} is not the next piece of its sentence: the tokens are not its model's tokens of the sentence"
            )
        start = found  # not past it: a character split over two tokens shows whole in both


def _check_seeded_parameters(params: Mapping[str, torch.Tensor], config: BlockConfig) -> None:
    from blockviz.block import Block
    from blockviz.params import learned_positions

    seeded = {name: tensor.detach() for name, tensor in Block(config).to(dtype_of(config)).state_dict().items()}
    if config.architecture.learned_positions:
        seeded["W_pos"] = learned_positions(config)
    for name, expected in seeded.items():
        difference = _difference(params[name], expected)
        if difference is not None:
            raise BlockvizError(
                f"parameter {name!r} is not the seeded one of seed {config.seed}: it differs by {difference} (the file was edited)"
            )


def _check_recomputed(rec, own_input: bool = False) -> None:
    """Recompute ``rec``'s fields from its input: the embeddings, or (a model's layer, or
    ``own_input``: a block after the first of a stack) its own ``resid_pre``."""
    from blockviz.block import Block, Prediction
    from blockviz.tokens import embed, sinusoidal_positions

    config, arch, tensors, params = rec.config, rec.architecture, _stored(rec.tensors), _stored(rec.params)
    dtype = dtype_of(config)
    expected: dict[str, torch.Tensor] = {}
    if own_input and not arch.model_layer:
        resid_pre = tensors["resid_pre"]
    elif arch.model_layer:
        resid_pre = tensors["resid_pre"]
        if "pos_embed" in tensors:
            expected["pos_embed"] = params["W_pos"][: rec.n]
        if "prev_output" in tensors:
            expected["prev_output"] = resid_pre
    else:
        expected["embed"] = _table_rows(rec, params["W_E"]) if arch.unembedding else embed(list(rec.tokens), config)
        if arch.rotary:
            resid_pre = expected["embed"]
        else:
            positions = (
                params["W_pos"][: rec.n]
                if arch.learned_positions
                else sinusoidal_positions(rec.n, config.d_model, dtype)
            )
            expected["pos_embed"] = positions
            resid_pre = expected["embed"] + positions
    rotary = (tensors["rope_cos"], tensors["rope_sin"]) if arch.model_layer and arch.rotary else None
    block = Block(config, seeded=False)
    block.load_state_dict({name: params[name] for name in block.state_dict()}, assign=True)
    with torch.no_grad():
        output = block(resid_pre, expected, rotary)
        if arch.unembedding:
            prediction = Prediction(config)
            prediction.load_state_dict({name: params[name] for name in prediction.state_dict()}, assign=True)
            prediction(output, expected)
    for spec in rec.fields:
        if spec.name not in expected:
            continue
        difference = _difference(tensors[spec.name], expected[spec.name])
        if difference is not None:
            raise BlockvizError(
                f"field {spec.name!r} is not what the record's parameters make of its input: it differs from its recomputation by {difference} "
                "(the file was edited, or its parameters were)"
            )


def _table_rows(rec, table: torch.Tensor) -> torch.Tensor:
    """The trained toy model's token embeddings: the rows of its table ``W_E`` for the record's
    tokens, looked up in its vocabulary (``rec.source.vocabulary``) as the model reads them."""
    from blockviz.toy.vocabulary import Vocabulary

    if rec.source.vocabulary is None:
        raise BlockvizError(
            "the record has an unembedding but its source names no vocabulary: record it again with this version of blockviz"
        )
    ids, _ = Vocabulary(rec.source.vocabulary).ids(list(rec.tokens))
    return table[torch.tensor(ids)]


def _difference(found: torch.Tensor, expected: torch.Tensor) -> str | None:
    """``None`` if ``found`` is ``expected`` within :data:`RECOMPUTE_TOLERANCE`; else the largest
    difference and where, e.g. ``"1e+06 at [0, 0]"``."""
    expected = expected.to(found.dtype)
    if torch.equal(found, expected):  # the usual case, in one pass: the same sums on the same machine
        return None
    same_infinity = torch.isneginf(found) & torch.isneginf(expected)
    gaps = torch.where(same_infinity, torch.zeros((), dtype=found.dtype), (found - expected).abs())
    gaps = torch.nan_to_num(gaps, nan=math.inf)
    finite = expected[torch.isfinite(expected)]
    scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
    tolerance = RECOMPUTE_TOLERANCE[str(found.dtype).removeprefix("torch.")] * scale
    if gaps.numel() == 0 or float(gaps.max()) <= tolerance:
        return None
    where = [int(index) for index in torch.unravel_index(gaps.argmax(), gaps.shape)]
    return f"{float(gaps.max()):.3g} at {where}"
