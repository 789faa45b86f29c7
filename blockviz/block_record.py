"""The record: every real intermediate tensor of one block, or of a stack of blocks, on one sentence.

This is the single source of numbers for the CLI, the figures and the scenes: they read it,
they never recompute it. Its fields are declared once, in :mod:`blockviz.record_fields`.

A record of several blocks (a model's layers, a toy model of N blocks) is a
:class:`BlockRecord` too, and reads as its last block: ``rec.weights`` … are the last block's,
so everything that reads one block reads it unchanged. Besides:

- ``rec.blocks``: every block's view, in order, each a one-block :class:`BlockRecord` of the
  same sentence, tokens, config, special flags and source (but a model layer's ``layer``)
  (``(rec,)`` for a record of one block);
  ``len(rec.blocks)`` is the number of blocks; ``rec.block(k)`` is block k's view (0-based;
  a :class:`~blockviz.errors.BlockvizError` for k out of range), what ``--block K`` focuses on.
- A view holds its block's fields and parameters under today's names, plus what the stack has
  once (:data:`~blockviz.record_fields.STACK_FIELDS` ``embed``, ``pos_embed``;
  :data:`~blockviz.record_fields.STACK_PARAMETERS` ``W_E``, ``W_pos``, ``ln_f.*``, ``W_U``),
  the same tensors in every view. With an unembedding, block k's prediction fields
  (:data:`~blockviz.record_fields.PREDICTION_FIELDS` ``ln_f_*``, ``logits``, ``probs``) are its
  output through the final LayerNorm and W_U — the logit lens; the last block's are the model's
  prediction (a figure or scene of an earlier block's view still calls them "the prediction":
  say "after block k" where it matters). A model layer's view says its layer in
  ``source.layer``; a trained decoder's record adds ``rec.lens`` (:mod:`blockviz.logit_lens`).
- The residual stream is one sequence: block k + 1's ``resid_pre`` is block k's output
  (``resid_post``; post-norm, ``resid_post_norm``), exactly (:func:`blockviz.record_check.check_stack`, run when the record is built).
- Making one: record each block as a one-block :class:`BlockRecord` (block 0's ``resid_pre``
  from the embeddings, block k's the output tensor of block k − 1), then
  :meth:`BlockRecord.stacked` ``(views)``.
- On disk (:meth:`BlockRecord.save`): a record of one block keeps its layout (format 2);
  several blocks are format 3, the header's ``n_blocks`` says how many; JSON holds
  ``"tensors"`` (what the stack has once, and the model's prediction) and ``"blocks": [{…}, …]``
  (each block's own fields and parameters, and an earlier block's logit lens); safetensors names
  block k's ``blocks.k.name``. :meth:`BlockRecord.load` reads both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import torch

from blockviz.architecture import Architecture
from blockviz.block import Block, Prediction
from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.logit_lens import LogitLens
from blockviz.numerics import pinned
from blockviz.params import learned_positions, load_params, parameter_shapes
from blockviz.read_only import ReadOnlyTensors
from blockviz.record_check import check_claims, check_record, check_stack
from blockviz.record_fields import (
    BY_NAME,
    NORM_PARAMETER_SCALE,
    OPTIONAL_FIELDS,
    PARAMETER_SCALE,
    PREDICTION_FIELDS,
    STACK_FIELDS,
    STACK_PARAMETERS,
    RecordField,
    docs_table,
    fields_for,
    parameter_scale,
)
from blockviz.record_format import RecordHeader, read_record_file, write_record
from blockviz.scale_limits import BOUNDED_FAMILIES, ScaleLimit, robust_limit
from blockviz.source import Source
from blockviz.tensorfile import BLOCK_PREFIX
from blockviz.tokens import dtype_of, embed, sinusoidal_positions, tokenize


@dataclass(frozen=True, eq=False)
class BlockRecord:
    """Every intermediate tensor of one pre-norm decoder block on one sentence.

    No batch dimension; heads first; in ``(…, n, n)`` tensors rows are query positions and
    columns key positions. ``n`` = number of tokens, ``d_head = d_model // n_heads``. Each
    tensor is an attribute (``rec.weights``) and an entry of ``rec.tensors``:

    {table}

    ``params`` holds the parameters used, by their :class:`~blockviz.block.Block` names
    (``ln1.weight`` = γ, ``ln1.bias`` = β, ``attn.W_Q`` … ``attn.b_O``, ``ln2.*``,
    ``ffn.W_in`` … ``ffn.b_out``, and ``W_pos`` ``(max_tokens, d_model)`` for learned positions),
    in the order of :func:`~blockviz.params.parameter_shapes` however the record was made, so a
    record saved twice is the same bytes.

    Other architectures (a trained model's layer, :func:`blockviz.models.record_layer`) hold the
    fields of :func:`blockviz.record_fields.fields_for` ``(rec.architecture)`` — ``rec.fields``
    lists them — and say which block they are in ``rec.architecture`` (an
    :class:`~blockviz.architecture.Architecture`: norm kind and placement, positions, FFN, key/value
    heads, biases, embeddings, whether a model's layer): post-norm adds ``resid_mid_norm`` and
    ``resid_post_norm`` (no ``ln1``/``ln2``); RMSNorm has ``ln*_mean_sq`` instead of mean,
    centred and variance; rotary positions add ``rope_cos``, ``rope_sin``, ``query_rot``,
    ``key_rot`` (scores are q·k of the rotated ones; no ``pos_embed``); a model's layer L > 0 has
    ``prev_output``, layer L − 1's output as the model returned it; a gated FFN has
    ``ffn_gate``, ``ffn_gate_act``, ``ffn_up`` instead of ``ffn_pre``; with grouped-query attention
    ``key``/``value`` are each query head's own (``config.kv_head_of(h)`` names the shared head).
    ``source`` says where the weights came from (:class:`~blockviz.source.Source`).
    A trained toy model's record (``rec.architecture.unembedding``, :func:`blockviz.toy.recording.record_toy`)
    adds the prediction: ``ln_f_*``, ``logits`` and ``probs`` ``(n, vocab_size)``, whose columns
    are ``source.vocabulary``; its ``params`` add ``W_E``, ``ln_f.*`` and ``W_U``.
    ``special`` says, per token, whether it is one the model's tokenizer adds (``[CLS]``,
    ``[SEP]``, ``<|endoftext|>`` …); all ``False`` for blockviz's own tokens.

    A record of several blocks reads as its last block; ``stack`` holds every block's view
    (empty for one block): use ``blocks``, ``block(k)`` and :meth:`stacked` (the module's
    docstring says how such a record is laid out).

    A record cannot be changed once checked: ``tokens`` and ``special`` are tuples, ``tensors``
    and ``params`` are :class:`~blockviz.read_only.ReadOnlyTensors` (no item can be set, and each
    access hands out a fresh copy, so changing what it gives leaves the record as it was), the
    config and source are frozen. A record built from tensors keeps copies of them.

    Raises
    ------
    BlockvizError
        When built from tensors that do not form a record (see
        :func:`blockviz.record_check.check_record`): the message names the field.
    """

    sentence: str
    tokens: tuple[str, ...]
    config: BlockConfig
    tensors: Mapping[str, torch.Tensor]
    params: Mapping[str, torch.Tensor] = field(default_factory=dict)
    source: Source = field(default_factory=Source)
    special: tuple[bool, ...] = ()
    stack: tuple[BlockRecord, ...] = ()
    lens: LogitLens | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.source, Source):
            raise BlockvizError(f"the record's source must be a Source, got {type(self.source).__name__}")
        if isinstance(self.tokens, (list, tuple)):
            object.__setattr__(self, "tokens", tuple(self.tokens))
        for name in ("tensors", "params"):  # copies, checked below: nothing the caller still holds can change them
            given = getattr(self, name)
            if not isinstance(given, ReadOnlyTensors):
                object.__setattr__(self, name, ReadOnlyTensors(given) if isinstance(given, Mapping) else given)
        check_record(self.tokens, self.config, self.tensors, self.params, self.fields)
        # one order however the record was made (computed, read back): it is the order it is saved and listed in
        object.__setattr__(self, "params", self.params.reordered(parameter_shapes(self.config)))
        words = self.source.vocabulary
        if words is not None and len(words) != self.config.vocab_size:
            raise BlockvizError(
                f"the record's vocabulary has {len(words)} words, but its config's vocab_size is {self.config.vocab_size}"
            )
        special = tuple(self.special) if self.special else (False,) * len(self.tokens)
        if len(special) != len(self.tokens) or not all(isinstance(flag, bool) for flag in special):
            raise BlockvizError(f"the record's special-token flags must be {len(self.tokens)} booleans, one per token")
        object.__setattr__(self, "special", special)
        object.__setattr__(self, "stack", tuple(self.stack))
        if self.stack:
            check_stack(self)
        if self.lens is not None and (self.lens.n_blocks != len(self.blocks) or len(self.lens.words[0]) != self.n):
            raise BlockvizError(
                f"the record's logit lens has {self.lens.n_blocks} blocks of {len(self.lens.words[0])} rows: it must have one per block, one row per token"
            )

    @classmethod
    def stacked(cls, views: Sequence[BlockRecord], lens: LogitLens | None = None) -> BlockRecord:
        """The record of several blocks whose views are ``views`` (block 0 first): it reads as
        the last block; ``lens``: a trained model's logit lens (:class:`~blockviz.logit_lens.LogitLens`),
        computed when it was recorded. One view without a lens is returned as it is.

        Raises
        ------
        BlockvizError
            If the views are not one stack (:func:`blockviz.record_check.check_stack`): another
            sentence, tokens or config, or a ``resid_pre`` that is not the previous ``resid_post``.
        """
        views = tuple(views)
        if not views:
            raise BlockvizError("a record holds at least one block")
        if len(views) == 1 and lens is None:
            return views[0]
        last = views[-1]
        return cls(
            sentence=last.sentence,
            tokens=last.tokens,
            config=last.config,
            tensors=last.tensors,
            params=last.params,
            source=last.source,
            special=last.special,
            stack=views if len(views) > 1 else (),
            lens=lens,
        )

    @property
    def blocks(self) -> tuple[BlockRecord, ...]:
        """Every block's view, block 0 first: each a one-block record (``(self,)`` for one block)."""
        return self.stack or (self,)

    def block(self, index: int) -> BlockRecord:
        """Block ``index``'s view (0-based): a one-block record of its fields, what ``--block`` focuses on.

        Raises
        ------
        BlockvizError
            For an index out of range (the message names the blocks there are).
        """
        count = len(self.blocks)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            there = "one block, block 0" if count == 1 else f"{count} blocks, 0–{count - 1}"
            raise BlockvizError(f"block {index} is out of range: the record has {there}")
        return self.blocks[index]

    def __getattr__(self, name: str) -> torch.Tensor:
        # Only reached when normal lookup fails: the recorded tensors by name.
        tensors = self.__dict__.get("tensors")
        if tensors is not None and name in BY_NAME and name in tensors:
            return tensors[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")

    @property
    def fields(self) -> tuple[RecordField, ...]:
        """The fields this record holds, in data-flow order (:data:`~blockviz.record_fields.FIELDS`
        for blockviz's own block)."""
        return fields_for(self.architecture, optional=_optional(self.tensors))

    @cached_property
    def architecture(self) -> Architecture:
        """Which block this is (:class:`~blockviz.architecture.Architecture`): norm kind and placement,
        positions, FFN, key/value heads, biases, mask, embeddings, whether a model's layer."""
        return Architecture.of(self.config, model_layer=self.source.is_model)

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    def activations(self) -> dict[str, torch.Tensor]:
        """The recorded activations by name, in data-flow order."""
        return {spec.name: self.tensors[spec.name] for spec in self.fields}

    def scale_limit(self, name: str) -> float:
        """Half-width of the one colour scale of quantity ``name`` in this record (it spans
        ``[-limit, limit]``): :meth:`scale_of` ``(name).limit``.

        Raises ``KeyError`` for a name that is neither a field nor a parameter.
        """
        return self.scale_of(name).limit

    def scale_of(self, name: str) -> ScaleLimit:
        """The one colour scale of quantity ``name`` in this record, shared by every field of its
        colour-scale family (the norms' γ and β, ``ln1.*``, ``ln2.*``, ``ln_f.*``, are of the
        family :data:`~blockviz.record_fields.NORM_PARAMETER_SCALE`, every other parameter of
        :data:`~blockviz.record_fields.PARAMETER_SCALE`; either name is a name of its family
        too): the largest finite ``|value|`` of the
        family, or, when that one is an outlier, a percentile of them, with ``clipped`` set
        (:func:`blockviz.scale_limits.robust_limit`; never for the bounded families, weights …).
        Computed once per family and record (the record's tensors are not to be changed in place).

        Raises ``KeyError`` for a name that is neither a field nor a parameter.
        """
        if name in BY_NAME and name in self.tensors:
            family = next(spec.scale for spec in self.fields if spec.name == name)
        elif name in self.params or name in (PARAMETER_SCALE, NORM_PARAMETER_SCALE):
            family = parameter_scale(name)
        else:
            raise KeyError(name)
        if family not in self._scales:
            if family in (PARAMETER_SCALE, NORM_PARAMETER_SCALE):
                members = [value for key, value in self.params.items() if parameter_scale(key) == family]
            else:
                # prev_output repeats resid_pre: a record's scales are the same with it or without it
                members = [
                    self.tensors[spec.name]
                    for spec in self.fields
                    if spec.scale == family and spec.name not in OPTIONAL_FIELDS
                ]
            self._scales[family] = robust_limit(members, robust=family not in BOUNDED_FAMILIES)
        return self._scales[family]

    @cached_property
    def _scales(self) -> dict[str, ScaleLimit]:
        return {}

    def qk_products(self, head: int, query: int) -> torch.Tensor:
        """The element-wise products of query ``query``'s vector with every key of ``head``,
        ``(n, d_head)``: row j holds q_i ⊙ k_j, whose sum is ``scores[head, query, j]`` (with
        rotary positions, of the rotated ``query_rot`` and ``key_rot``)."""
        rotary = self.architecture.rotary
        return (
            self.tensors["query_rot" if rotary else "query"][head, query]
            * self.tensors["key_rot" if rotary else "key"][head]
        )

    def weighted_values(self, head: int, query: int) -> torch.Tensor:
        """Every value row of ``head`` scaled by query ``query``'s weight on it, ``(n, d_head)``:
        row j holds weights[head, query, j] · value[head, j]; the rows add up to
        ``head_outputs[head, query]``."""
        return self.tensors["weights"][head, query][:, None] * self.tensors["value"][head]

    def input_products(self, role: str, head: int, query: int) -> torch.Tensor:
        """The terms of token ``query``'s ``role`` (``"query"``, ``"key"`` or ``"value"``) in
        ``head``, ``(d_model, d_head)``: entry (m, c) is x[query, m] · W[g, m, c], with x what
        attention reads (``ln1``; post-norm, ``resid_pre``), W the role's ``attn.W_Q``/``W_K``/
        ``W_V`` and g its head (for key and value, the key/value head ``head`` reads); column c
        adds up, with b[g, c] where the block has biases, to ``role[head, query, c]`` (before
        any rotary turn).

        Raises
        ------
        KeyError
            ``role`` is not one of ``"query"``, ``"key"``, ``"value"``.
        """
        letter = {"query": "Q", "key": "K", "value": "V"}[role]
        x = self.tensors[self.architecture.attention_input][query]
        g = head if role == "query" else self.config.kv_head_of(head)
        return x[:, None] * self.params[f"attn.W_{letter}"][g]

    def projection_products(self, query: int) -> torch.Tensor:
        """The terms of query ``query``'s output projection, ``(d_model, d_model)``: entry (i, j)
        is concat[query, i] · W_O[i, j]; column j adds up, with b_O[j], to ``attn_out[query, j]``."""
        return self.tensors["concat"][query][:, None] * self.params["attn.W_O"]

    def counterpart(self, causal: bool) -> BlockRecord:
        """The same sentence through the same block (same parameters) with the causal mask on
        (``causal=True``) or off; the record itself if its mask already is so.

        Raises
        ------
        BlockvizError
            If the sentence no longer splits into the record's tokens (a record saved by
            another version of blockviz).
        """
        if self.config.causal == causal:
            return self
        if not self.architecture.is_toy:
            return self._rerun(replace(self.config, causal=causal))
        other = record(self.sentence, replace(self.config, causal=causal), params=self.params)
        if other.tokens != self.tokens:
            raise BlockvizError(
                "the record's sentence no longer splits into its tokens: record it again with this version of blockviz"
            )
        return other

    def _rerun(self, config: BlockConfig) -> BlockRecord:
        """The record's own input (``resid_pre``, and ``rope_cos``/``rope_sin``) through the
        block of ``config`` with the record's parameters: no model needed."""
        block = Block(config, seeded=False)
        block.load_state_dict({name: self.params[name] for name in block.state_dict()}, assign=True)
        rotary = (self.tensors["rope_cos"], self.tensors["rope_sin"]) if config.architecture.rotary else None
        cache: dict[str, torch.Tensor] = {
            name: self.tensors[name] for name in ("embed", "pos_embed", *OPTIONAL_FIELDS) if name in self.tensors
        }
        with torch.no_grad():
            output = block(self.tensors["resid_pre"], cache, rotary)
            if config.architecture.unembedding:  # the trained toy model's prediction, from the record's ln_f and W_U
                prediction = Prediction(config)
                prediction.load_state_dict({name: self.params[name] for name in prediction.state_dict()}, assign=True)
                prediction(output, cache)
        names = [spec.name for spec in fields_for(config, model=self.source.is_model, optional=_optional(self.tensors))]
        return BlockRecord(
            sentence=self.sentence,
            tokens=self.tokens,
            config=config,
            tensors=ReadOnlyTensors.adopting({name: cache[name] for name in names}),
            params=self.params,
            source=self.source,
            special=self.special,
        )

    def explore(
        self, token: str | int | None = None, head: int | None = None, step: str | None = None, theme: str = "light"
    ):
        """The token-flow explorer of this record (a :class:`blockviz.explorer.Explorer`: ``.save(path)``,
        ``.html()``, and shown in a notebook), opening on ``token``, ``head`` and ``step``.

        Raises :class:`BlockvizError` for a token, head, step or theme that does not exist.
        """
        from blockviz.explorer import explore

        return explore(self, token, head, step, theme)

    def _repr_html_(self) -> str:
        from blockviz.explorer import record_summary_html

        return record_summary_html(self)

    def save(self, path: str | Path) -> None:
        """Write the record to ``.safetensors`` (exact) or ``.json`` (−∞ as null), atomically.

        Raises :class:`BlockvizError` for another suffix or an unwritable folder.
        """
        source = None if self.source == Source() else self.source
        special = list(self.special) if self.source.is_model or any(self.special) else None
        tensors = _stack_tensors(self.blocks) if self.stack else {**self.activations(), **self.params}
        lens = None if self.lens is None else self.lens.to_dict()
        write_record(path, self.sentence, self.tokens, self.config, tensors, source, special, len(self.blocks), lens)

    @classmethod
    def load(cls, path: str | Path) -> BlockRecord:
        """Read a record written by :meth:`save`; ``.safetensors`` loads back bit for bit.

        The record is checked for what it claims (:func:`blockviz.record_check.check_claims`):
        its tokens are its sentence's, and its activations what its parameters make of its input.

        Raises
        ------
        BlockvizError
            If the file is missing, unreadable, not a blockviz record, of another format
            version, does not form a valid record, or is not what it claims: tokens that are not
            its sentence's, a value or parameter that differs from its recomputation (the
            message names the field and by how much).
        """
        header, tensors = read_record_file(path)
        try:
            lens = None if header.lens is None else LogitLens.from_dict(header.lens)
            if header.n_blocks == 1:
                loaded = cls.stacked([cls._from_tensors(header, header.source, tensors)], lens)
            else:
                loaded = cls.stacked(_views(cls, header, tensors), lens)
            check_claims(loaded)
            return loaded
        except BlockvizError as error:
            raise BlockvizError(f"{str(path)!r} is not a valid record: {error}") from None

    @classmethod
    def _from_tensors(cls, header: RecordHeader, source: Source, tensors: dict[str, torch.Tensor]) -> BlockRecord:
        """The one-block record of ``header`` from ``tensors`` (its activations and parameters), adopted."""
        config = header.config
        names = [spec.name for spec in fields_for(config, model=source.is_model, optional=_optional(tensors))]
        activations = {name: tensors.pop(name) for name in names if name in tensors}
        return cls(
            sentence=header.sentence,
            tokens=header.tokens,
            config=config,
            tensors=ReadOnlyTensors.adopting(activations),
            params=ReadOnlyTensors.adopting(tensors),
            source=source,
            special=header.special,
        )


def _optional(tensors: Mapping[str, torch.Tensor]) -> tuple[str, ...]:
    """The :data:`~blockviz.record_fields.OPTIONAL_FIELDS` among ``tensors``."""
    return tuple(name for name in OPTIONAL_FIELDS if name in tensors)


def _stack_tensors(blocks: tuple[BlockRecord, ...]) -> dict[str, torch.Tensor]:
    """A record of several blocks as the named tensors of its file: what the stack has once (and
    the model's prediction) under their names, each block's own under ``blocks.K.name``."""
    last = blocks[-1]
    shared = {
        name: tensor for name, tensor in last.activations().items() if name in STACK_FIELDS or name in PREDICTION_FIELDS
    }
    shared.update((name, tensor) for name, tensor in last.params.items() if name in STACK_PARAMETERS)
    for index, view in enumerate(blocks):
        for name, tensor in [*view.activations().items(), *view.params.items()]:
            kept_once = name in STACK_FIELDS or name in STACK_PARAMETERS or (view is last and name in PREDICTION_FIELDS)
            if not kept_once:
                shared[f"{BLOCK_PREFIX}{index}.{name}"] = tensor
    return shared


def _views(cls, header: RecordHeader, tensors: dict[str, torch.Tensor]) -> list[BlockRecord]:
    """Every block's view of a record file of several blocks (:func:`_stack_tensors` read back).

    Raises :class:`BlockvizError` for blocks other than the header's ``n_blocks``.
    """
    count = header.n_blocks
    own: list[dict[str, torch.Tensor]] = [{} for _ in range(count)]
    shared: dict[str, torch.Tensor] = {}
    for name, tensor in tensors.items():
        if not name.startswith(BLOCK_PREFIX):
            shared[name] = tensor
            continue
        index, _, field_name = name.removeprefix(BLOCK_PREFIX).partition(".")
        if not index.isdigit() or int(index) >= count or not field_name:
            raise BlockvizError(f"tensor {name!r} names no block of the {count} the record holds")
        own[int(index)][field_name] = tensor
    views = []
    for index, block_tensors in enumerate(own):
        if not block_tensors:
            raise BlockvizError(f"the record holds no tensor of block {index} of {count}")
        last = index == count - 1
        taken = {
            name: tensor
            for name, tensor in shared.items()
            if name in STACK_FIELDS or name in STACK_PARAMETERS or (last and name in PREDICTION_FIELDS)
        }
        source = header.source
        if source.layer is not None:
            if source.layer < count - 1:
                raise BlockvizError(f"the record's source says layer {source.layer}, but it holds {count} layers")
            source = replace(source, layer=source.layer - (count - 1 - index))
        views.append(cls._from_tensors(header, source, {**taken, **block_tensors}))
    unused = sorted(name for name in shared if name not in STACK_FIELDS + STACK_PARAMETERS + PREDICTION_FIELDS)
    if unused:
        raise BlockvizError(f"the record has an unknown field {unused[0]!r} outside its blocks")
    return views


BlockRecord.__doc__ = BlockRecord.__doc__.replace("{table}", docs_table().replace("\n", "\n    "))


def record(
    sentence: str, config: BlockConfig | None = None, params: str | Path | Mapping[str, torch.Tensor] | None = None
) -> BlockRecord:
    """Run ``sentence`` through one block and record every intermediate tensor.

    Parameters
    ----------
    sentence
        Text; split into word and punctuation tokens by :func:`blockviz.tokens.tokenize`.
    config
        Sizes and choices; :class:`BlockConfig` defaults if omitted.
    params
        Parameters replacing the seeded ones: a ``.safetensors`` or ``.json`` file, or named
        tensors (e.g. another record's ``params``); names as in ``BlockRecord.params``.

    Raises
    ------
    BlockvizError
        For an empty sentence, more than ``config.max_tokens`` tokens, a bad parameters file,
        or parameters that make a value overflow (the message names the first such tensor).
    """
    config = config or BlockConfig()
    if config.architecture.unembedding:
        raise BlockvizError(
            "a config with vocab_size is a trained toy model's: record it with blockviz.toy.recording.record_toy (--model toy or DIR)"
        )
    tokens = tokenize(sentence, config.max_tokens)
    dtype = dtype_of(config)
    block = Block(config).to(dtype)
    position_table = learned_positions(config) if config.architecture.learned_positions else None
    if params is not None:
        position_table = load_params(params, block, config)
    with torch.no_grad(), pinned():
        token_vectors = embed(tokens, config)
        if config.architecture.rotary:  # positions turn q and k inside attention instead
            cache: dict[str, torch.Tensor] = {"embed": token_vectors}
            block(token_vectors, cache)
        else:
            if position_table is None:
                positions = sinusoidal_positions(len(tokens), config.d_model, dtype)
            else:
                positions = position_table[: len(tokens)].to(dtype)
            cache = {"embed": token_vectors, "pos_embed": positions}
            block(token_vectors + positions, cache)
    used = {name: tensor.detach().clone() for name, tensor in block.state_dict().items()}
    if position_table is not None:
        used["W_pos"] = position_table.to(dtype)
    if params is None:
        source = Source()
    else:
        source = Source("given") if isinstance(params, Mapping) else Source("file", path=str(params))
    names = [spec.name for spec in fields_for(config)]
    return BlockRecord(
        sentence=sentence,
        tokens=tokens,
        config=config,
        tensors={name: cache[name] for name in names},
        params=used,
        source=source,
    )
