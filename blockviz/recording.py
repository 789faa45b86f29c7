"""The one front door for every record: :func:`record` (and :func:`attentions`), as the commands make them.

``blockviz.record("the cat sat")`` is the record ``blockviz record "the cat sat"`` prints: the
trained toy model by default, blockviz's seeded block when sizes are given or ``model="seeded"``,
and layer ``layer`` of a trained model for its name or folder. It dispatches to the record makers
(:func:`blockviz.block_record.record`, :func:`blockviz.toy.recording.record_toy`,
:func:`blockviz.models.recording.record_layer`), in the manner of TransformerLens's
``HookedTransformer.from_pretrained`` + ``run_with_cache``: one door, one cache of tensors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from blockviz.errors import BlockvizError

TOY = "toy"
"""The block a record is made of when nothing else is asked for: blockviz's trained toy model."""
SEEDED = "seeded"
"""blockviz's block with seeded random weights, sized by :class:`~blockviz.block_config.BlockConfig`."""


def record(
    sentence: str,
    model: str | Path | None = None,
    layer: int | str | None = None,
    *,
    config=None,
    params: str | Path | Mapping | None = None,
    trust_pickle: bool = False,
    dtype: str | None = None,
    lens_rows=None,
    check_every_layer: bool = False,
    **sizes,
):
    """Run ``sentence`` through one block and record every intermediate tensor.

    Parameters
    ----------
    sentence
        The text; tokens are the model's own (blockviz's word tokens for the toy and seeded blocks).
    model
        ``None`` (the default): the trained toy model, or the seeded block when ``config``,
        ``params`` or a size is given (as the CLI chooses). ``"toy"`` or a folder ``blockviz
        train`` wrote: that toy model. ``"seeded"``: blockviz's block with seeded random weights.
        A model name (``"minilm"``, ``"smollm2"``) or a GPT-2, BERT or Llama folder: one of its layers.
    layer
        The layer of a trained model to record, from 0 (needed for a model; the toy model and the
        seeded block have one, ``0`` or ``None``); ``"all"`` or a range ``"0-3"`` (both ends
        included): those layers, a record of several blocks
        (:func:`blockviz.models.recording.record_layers`; ``rec.blocks``, ``rec.block(k)``).
    config, sizes
        The seeded block's :class:`~blockviz.block_config.BlockConfig`, or its fields by name
        (``d_model=8, n_heads=2, d_ff=32, causal=False, …``); not with a trained model.
    params
        The seeded block's parameters, replacing the seeded ones (a ``.safetensors`` or ``.json``
        file, or named tensors: :func:`blockviz.block_record.record`); with ``model="toy"`` (or a
        toy model's folder) the toy model's, replacing its trained ones — the explorer's
        downloaded parameters, or a saved toy record (:func:`blockviz.toy.recording.record_toy`).
    trust_pickle, dtype
        For a trained model's folder: read pickled weights; the float type (default ``"float32"``).
    lens_rows
        With several layers of a decoder: the tokens (0-based positions, or words as ``--token``
        names them) whose prediction after each block the record's logit lens holds (default:
        the default focus token, the last word; each row costs a product with the whole
        unembedding per block).
    check_every_layer
        With several layers: run the model through the last of them and check every layer
        against the model's own output (default: only the first; the others are blockviz's
        block with the layer's weights, chained: :func:`blockviz.models.recording.record_layers`).

    Returns
    -------
    BlockRecord
        Every tensor as ``(n, d_model)`` rows or ``(n_heads, n, n)`` attention (rows = queries,
        columns = keys, no batch); ``rec.source`` says which block made it.

    Raises
    ------
    BlockvizError
        For sizes with a trained model, a layer the block lacks, a model without ``layer``, an
        unknown model, and as the record makers do (an empty or too-long sentence, …).

    Examples
    --------
    >>> record("the cat sat").source.kind, record("the cat sat", d_model=8).source.kind
    ('trained', 'seeded')
    >>> record("the cat sat", "seeded").weights.shape  # (n_heads, n, n)
    torch.Size([2, 3, 3])
    """
    chosen = _chosen_model(model, config is not None or params is not None or bool(sizes))
    if chosen == SEEDED:
        return _record_seeded(sentence, layer, config, params, trust_pickle, dtype, sizes)
    if _is_toy(chosen) and params is not None and config is None and not sizes:
        return _record_toy_with(sentence, chosen, layer, params, trust_pickle, dtype)
    what = "a toy model" if _is_toy(chosen) else "a trained model"
    given = [name for name, value in (("config", config), ("params", params)) if value is not None] + list(sizes)
    if given:
        raise BlockvizError(
            f"{given[0]} sizes blockviz's seeded block and {chosen!r} is {what} with its own: drop {given[0]}, or record model='seeded'"
        )
    from blockviz.layer_choice import is_several, parse_layers
    from blockviz.models.recording import record_layer, record_layers

    if layer is None and not _is_toy(chosen):  # a toy model's layer other than 0 is refused where it is recorded
        raise BlockvizError(f"model {chosen!r} needs layer=L: the layer to record, from 0")
    layer = None if layer is None else parse_layers(layer)
    if is_several(layer):
        return record_layers(
            sentence,
            model=chosen,
            layers=layer,
            trust_pickle=trust_pickle,
            dtype=dtype or "float32",
            lens_rows=lens_rows,
            check_every_layer=check_every_layer,
        )
    if lens_rows is not None:
        raise BlockvizError(
            "lens_rows goes with several layers (layer='all' or a range 'A-B'): one layer has no logit lens"
        )
    return record_layer(sentence, model=chosen, layer=layer or 0, trust_pickle=trust_pickle, dtype=dtype or "float32")


def attentions(sentence: str, model: str | Path | None = None, *, trust_pickle: bool = False, **options):
    """Every layer's attention weights on ``sentence`` under ``model``, for ranking and comparing
    heads: a :class:`~blockviz.models.recording.ModelAttentions`, ``weights`` ``(n_layers,
    n_heads, n, n)`` (one layer for the toy and seeded blocks; ``options`` as :func:`record`).

    Raises :class:`BlockvizError` as :func:`record`, or
    :class:`~blockviz.models.recording.NoAttentionWeights` for a model that gives none.
    """
    from blockviz.models.recording import block_attentions, model_attentions

    chosen = _chosen_model(model, bool(options))
    if chosen == SEEDED or _is_toy(chosen):
        return block_attentions(record(sentence, chosen, trust_pickle=trust_pickle, **options))
    if options:
        raise BlockvizError(
            f"{next(iter(options))} sizes blockviz's seeded block and {chosen!r} is a trained model with its own: drop it"
        )
    return model_attentions(sentence, model=chosen, trust_pickle=trust_pickle)


def _chosen_model(model, sized: bool) -> str | Path:
    if model is None:
        return SEEDED if sized else TOY
    if isinstance(model, str) and model.strip().lower() == SEEDED:
        return SEEDED
    return model


def _is_toy(model) -> bool:
    from blockviz.toy import is_toy_model

    return is_toy_model(model)


def _record_toy_with(sentence, model, layer, params, trust_pickle, dtype):
    from blockviz.models.recording import record_toy_layer

    if trust_pickle:
        raise BlockvizError("trust_pickle goes with a trained model's folder: the toy model's weights are safetensors")
    return record_toy_layer(sentence, model, layer, dtype or "float32", params)


def _record_seeded(sentence, layer, config, params, trust_pickle, dtype, sizes):
    from blockviz.block_config import BlockConfig
    from blockviz.block_record import record as record_seeded

    if layer not in (None, 0):
        raise BlockvizError(f"layer {layer} is out of range: blockviz's seeded block is one block, layer 0")
    if trust_pickle:
        raise BlockvizError("trust_pickle goes with a trained model's folder: the seeded block has no file to read")
    if config is not None and sizes:
        raise BlockvizError(f"give either config or sizes ({next(iter(sizes))}=…), not both")
    if config is None:
        fields = {field.name for field in dataclasses.fields(BlockConfig)}
        unknown = [name for name in sizes if name not in fields]
        if unknown:
            raise BlockvizError(
                f"{unknown[0]!r} is not a size of the seeded block: choose from {', '.join(sorted(fields))}"
            )
        config = BlockConfig(**sizes, **({"dtype": dtype} if dtype is not None else {}))
    elif dtype is not None and dtype != config.dtype:
        config = dataclasses.replace(config, dtype=dtype)
    return record_seeded(sentence, config=config, params=params)
