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

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from blockviz.block import Block, Prediction
from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.logit_lens import LogitLens
from blockviz.numerics import pinned
from blockviz.params import learned_positions, load_params, parameter_shapes
from blockviz.read_only import ReadOnlyTensors
from blockviz.record_check import check_claims, check_record, check_stack
from blockviz.record_fields import (
    OPTIONAL_FIELDS,
    PREDICTION_FIELDS,
    STACK_FIELDS,
    STACK_PARAMETERS,
    docs_table,
    fields_for,
)
from blockviz.record_format import read_record_file, write_record
from blockviz.record_reading import RecordReading, optional_fields
from blockviz.source import Source
from blockviz.tensorfile import BLOCK_PREFIX
from blockviz.tokens import dtype_of, embed, sinusoidal_positions, tokenize


@dataclass(frozen=True, eq=False)
class BlockRecord(RecordReading):
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
        if not self.stack:  # a stack's are its last block's, checked when it was built: check_stack makes sure below
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
        if self.lens is not None and (
            self.lens.n_blocks != len(self.blocks)
            or (self.lens.rows is None and len(self.lens.words[0]) != self.n)
            or any(row >= self.n for row in self.lens.holds(self.n))
        ):
            raise BlockvizError(
                f"the record's logit lens has {self.lens.n_blocks} blocks of {len(self.lens.words[0])} rows: it must have one per block, "
                f"rows of its {self.n} tokens"
            )

    @classmethod
    def _adopted(cls, tensors: dict[str, torch.Tensor]) -> ReadOnlyTensors:
        return ReadOnlyTensors.adopting(tensors)

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
        names = [
            spec.name for spec in fields_for(config, model=self.source.is_model, optional=optional_fields(self.tensors))
        ]
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
        self,
        token: str | int | None = None,
        head: int | None = None,
        step: str | None = None,
        theme: str = "light",
        block: int | None = None,
    ):
        """The token-flow explorer of this record (a :class:`blockviz.explorer.Explorer`: ``.save(path)``,
        ``.html()``, and shown in a notebook), opening on ``token``, ``head``, ``step`` and ``block``
        (a record of several blocks; default the last). A trained toy model's page is the workbench.

        Raises :class:`BlockvizError` for a token, head, step, theme or block that does not exist.
        """
        from blockviz.explorer import explore

        return explore(self, token, head, step, theme, block)

    def _repr_html_(self) -> str:
        from blockviz.explorer import record_summary_html

        return record_summary_html(self)

    def save(self, path: str | Path) -> None:
        """Write the record to ``.safetensors`` (exact) or ``.json`` (−∞ as null), atomically.

        Raises :class:`BlockvizError` for another suffix or an unwritable folder.
        """
        source = None if self.source == Source() else self.source
        special = list(self.special) if self.source.is_model or any(self.special) else None
        weights = _weights_reference(self)
        tensors = (
            _stack_tensors(self.blocks, with_params=weights is None)
            if self.stack
            else {**self.activations(), **self.params}
        )
        lens = None if self.lens is None else self.lens.to_dict()
        write_record(
            path, self.sentence, self.tokens, self.config, tensors, source, special, len(self.blocks), lens, weights
        )

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
        params = None
        if header.weights is not None:
            from blockviz.models.weights import reloaded_parameters

            params = reloaded_parameters(header, repr(str(path)))
        try:
            loaded = cls._of_file(header, tensors, params)
            check_claims(loaded)
            return loaded
        except BlockvizError as error:
            raise BlockvizError(f"{str(path)!r} is not a valid record: {error}") from None


def _weights_reference(rec: BlockRecord) -> dict | None:
    """The package a record of several layers of a packaged model takes its parameters from
    (:func:`blockviz.models.weights.weights_reference`); ``None`` for any other record, or
    without the model support."""
    if not (rec.stack and rec.source.is_model):
        return None
    try:
        from blockviz.models.weights import weights_reference
    except ImportError:
        return None
    return weights_reference(rec)


def _stack_tensors(blocks: tuple[BlockRecord, ...], with_params: bool = True) -> dict[str, torch.Tensor]:
    """A record of several blocks as the named tensors of its file: what the stack has once (and
    the model's prediction) under their names, each block's own under ``blocks.K.name``;
    without the parameters unless ``with_params``."""
    last = blocks[-1]
    shared = {
        name: tensor for name, tensor in last.activations().items() if name in STACK_FIELDS or name in PREDICTION_FIELDS
    }
    if with_params:
        shared.update((name, tensor) for name, tensor in last.params.items() if name in STACK_PARAMETERS)
    for index, view in enumerate(blocks):
        for name, tensor in [*view.activations().items(), *(view.params.items() if with_params else ())]:
            kept_once = name in STACK_FIELDS or name in STACK_PARAMETERS or (view is last and name in PREDICTION_FIELDS)
            if not kept_once:
                shared[f"{BLOCK_PREFIX}{index}.{name}"] = tensor
    return shared


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
