"""Recording a sentence through a trained toy model: the block's record plus the prediction
(a toy model of several blocks, such as ``--model copy``: a stack, one view per block,
:meth:`blockviz.block_record.BlockRecord.stacked`).

The record is blockviz's own block (:func:`blockviz.record_fields.fields_for`) with the toy
model's numbers: ``embed`` the rows of its learned ``W_E`` for the sentence's tokens (looked up
in lower case; a word outside the vocabulary is the unknown token's row), ``pos_embed`` the rows
of its learned ``W_pos``, the block's trained weights, and the prediction fields — ``ln_f_*``,
``logits``, ``probs`` — whose columns are the vocabulary's words (``rec.source.vocabulary``).
The labels (``rec.tokens``) keep the text as typed. The model runs pinned
(:func:`blockviz.numerics.pinned`), so its record is the same bytes on every x86-64 CPU with AVX2 when this
process's torch is pinned too, as in the ``blockviz`` program.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import torch

from blockviz.block_record import BlockRecord
from blockviz.errors import BlockvizError, quoted
from blockviz.key_sources import score_sources
from blockviz.numerics import pinned
from blockviz.params import check_parameters
from blockviz.record_fields import fields_for
from blockviz.source import Source
from blockviz.tensorfile import read_tensors
from blockviz.tokens import tokenize
from blockviz.toy import toy_folder
from blockviz.toy.folder import ToyFolder, load_toy
from blockviz.toy.model import STACK_SHARED, ToyModel, file_shapes
from blockviz.toy.vocabulary import unknown_words_message


class UnknownWordsWarning(UserWarning):
    """Some words of the sentence are not in the toy model's vocabulary: they became the unknown token."""


def describe(loaded: ToyFolder) -> str:
    """The one-line description of a toy model (its card's ``about``): "trained: one block, N
    parameters, on M generated sentences, loss X"."""
    return loaded.card.get("about") or "trained: one block"


def toy_tokens(sentence: str, max_tokens: int) -> list[str]:
    """``sentence``'s tokens for a toy model with ``max_tokens`` positions (:func:`~blockviz.tokens.tokenize`).

    Raises
    ------
    BlockvizError
        For an empty sentence, or one longer than the model's positions (saying that the seeded
        block takes up to 64 tokens).
    """
    try:
        return tokenize(sentence, max_tokens)
    except BlockvizError as error:
        if "more than max_tokens" not in str(error):
            raise
        raise BlockvizError(
            f"{error} (the toy model has {max_tokens} positions), or record it with --model seeded (up to 64 tokens)"
        ) from None


def readable_ids(loaded: ToyFolder, tokens: list[str]) -> tuple[list[int], list[str]]:
    """The vocabulary ids of ``tokens`` and the unknown ones (:meth:`~blockviz.toy.vocabulary.Vocabulary.ids`).

    Raises
    ------
    BlockvizError
        When no token is in the vocabulary: the model could read nothing of the sentence.
    """
    ids, unknown = loaded.vocabulary.ids(tokens)
    if len(unknown) == len(set(tokens)) and all(id_ == 0 for id_ in ids):
        raise BlockvizError(
            f"no word of the sentence is in the toy model's vocabulary ({', '.join(quoted(word) for word in unknown[:5])}"
            f'{" …" if len(unknown) > 5 else ""}): try "The chicken didn\'t cross the road because it was too tired.", '
            "or --model seeded for any words"
        )
    return ids, unknown


def record_toy(
    sentence: str, model: str | Path = "toy", params: str | Path | Mapping[str, torch.Tensor] | None = None
) -> BlockRecord:
    """Run ``sentence`` through the toy model ``model`` (``"toy"`` or a folder ``blockviz
    train`` wrote) and record every intermediate tensor and the prediction.

    ``params``: the model's parameters to use instead of its trained ones — a ``.safetensors``
    or ``.json`` file of named tensors (the explorer's "download these parameters", or a saved
    toy record), or named tensors (a record's ``params``); every parameter of the model
    (:func:`~blockviz.params.parameter_shapes`, ``W_E`` … ``W_U``; a model of several blocks
    names block K's ``blocks.K.attn.W_Q`` …, :func:`~blockviz.toy.model.file_shapes`) of its
    shape, finite; other names are ignored. Its vocabulary and positions stay the model's.

    Shapes as every record, plus ``logits`` and ``probs`` ``(n, n_vocab)``: row i scores the
    token after token i. Warns once (:class:`UnknownWordsWarning`) naming the words outside the
    vocabulary.

    Raises
    ------
    BlockvizError
        As :func:`~blockviz.toy.folder.load_toy`; for an empty sentence, one longer than the
        model's positions, or one made only of words outside its vocabulary; for ``params`` as
        :func:`~blockviz.params.check_parameters` (a missing, misshapen or non-finite parameter)
        or a file that cannot be read.
    """
    loaded = load_toy(toy_folder(model))
    config = loaded.config
    tokens = toy_tokens(sentence, config.max_tokens)
    ids, unknown = readable_ids(loaded, tokens)
    if unknown:
        warnings.warn(UnknownWordsWarning(unknown_words_message(unknown, loaded.vocabulary.words[0])), stacklevel=2)
    note = describe(loaded) if params is None else f"{describe(loaded)}; parameters from {_where(params)}"
    source = Source("trained", model=str(model), path=str(loaded.folder), note=note, vocabulary=loaded.vocabulary.words)
    names = [spec.name for spec in fields_for(config)]
    network = loaded.model if params is None else _with_params(config, params, loaded.n_blocks)
    if loaded.n_blocks > 1:
        return _record_stack(network, loaded.config, sentence, tokens, ids, source, names)
    cache: dict[str, torch.Tensor] = {}
    with torch.no_grad(), pinned():
        network(torch.tensor(ids), cache)
    used = {name: tensor.detach().clone() for name, tensor in network.parameters_by_name().items()}
    return BlockRecord(
        sentence=sentence,
        tokens=tokens,
        config=config,
        tensors={name: cache[name] for name in names},
        params=used,
        source=source,
    )


def _record_stack(
    model: ToyModel, config, sentence: str, tokens: list[str], ids: list[int], source: Source, names: list[str]
) -> BlockRecord:
    """The record of toy model ``model`` of several blocks: one view per block, each its block's
    fields and parameters, the embeddings, and its output through the final LayerNorm and W_U
    (the last block's is the model's prediction, the earlier ones' the logit lens); block k > 0
    adds where its keys came from (:func:`blockviz.key_sources.score_sources`)."""
    cache: dict[str, torch.Tensor] = {}
    block_caches = [{} for _ in range(model.n_blocks)]
    with torch.no_grad(), pinned():
        model(torch.tensor(ids), cache, block_caches)
        for block_cache in block_caches:
            model.unembed(block_cache["resid_post"], block_cache)
    every = {name: tensor.detach().clone() for name, tensor in model.parameters_by_name().items()}
    shared = {name: every[name] for name in STACK_SHARED}
    views = []
    for index, block_cache in enumerate(block_caches):
        prefix = f"blocks.{index}."
        own = {name.removeprefix(prefix): tensor for name, tensor in every.items() if name.startswith(prefix)}
        tensors = {**block_cache, "embed": cache["embed"], "pos_embed": cache["pos_embed"]}
        kept = {name: tensors[name] for name in names}
        if views:
            before = views[-1]
            kept.update(score_sources(before.tensors, before.params, tensors, own, config.ln_eps))
        views.append(
            BlockRecord(
                sentence=sentence,
                tokens=tokens,
                config=config,
                tensors=kept,
                params={**own, **shared},
                source=source,
            )
        )
    return BlockRecord.stacked(views)


def _where(params) -> str:
    return "the given tensors" if isinstance(params, Mapping) else repr(str(params))


def _with_params(config, params, n_blocks: int = 1) -> ToyModel:
    """A toy model of ``config`` and ``n_blocks`` blocks holding ``params`` (a file or named
    tensors; a stack's named as its model file, ``blocks.K.attn.W_Q`` …), checked."""
    if isinstance(params, Mapping):
        tensors, where = dict(params), "the given parameters"
    else:
        tensors, where = read_tensors(params)[0], f"parameters file {str(params)!r}"
    shapes = file_shapes(config, n_blocks)
    check_parameters(tensors, config, where, extra_allowed=True, shapes=shapes)
    network = ToyModel(config, seeded=False, n_blocks=n_blocks)
    with torch.no_grad():
        network.load_parameters({name: tensors[name].to(torch.float32) for name in shapes})
    return network
