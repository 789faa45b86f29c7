"""The record: every real intermediate tensor of one block on one sentence.

This is the single source of numbers for the CLI, the figures and the scenes: they read it,
they never recompute it. Its fields are declared once, in :mod:`blockviz.record_fields`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import torch

from blockviz.architecture import Architecture
from blockviz.block import Block, Prediction
from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.numerics import pinned
from blockviz.params import learned_positions, load_params, parameter_shapes
from blockviz.read_only import ReadOnlyTensors
from blockviz.record_check import check_claims, check_record
from blockviz.record_fields import (
    BY_NAME,
    NORM_PARAMETER_SCALE,
    OPTIONAL_FIELDS,
    PARAMETER_SCALE,
    RecordField,
    docs_table,
    fields_for,
    parameter_scale,
)
from blockviz.record_format import read_record_with_source, write_record
from blockviz.scale_limits import BOUNDED_FAMILIES, ScaleLimit, robust_limit
from blockviz.source import Source
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
        write_record(
            path, self.sentence, self.tokens, self.config, {**self.activations(), **self.params}, source, special
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
        sentence, tokens, config, tensors, source, special = read_record_with_source(path)
        names = [spec.name for spec in fields_for(config, model=source.is_model, optional=_optional(tensors))]
        activations = {name: tensors.pop(name) for name in names if name in tensors}
        try:
            loaded = cls(
                sentence=sentence,
                tokens=tokens,
                config=config,
                tensors=ReadOnlyTensors.adopting(activations),
                params=ReadOnlyTensors.adopting(tensors),
                source=source,
                special=tuple(special),
            )
            check_claims(loaded)
            return loaded
        except BlockvizError as error:
            raise BlockvizError(f"{str(path)!r} is not a valid record: {error}") from None


def _optional(tensors: Mapping[str, torch.Tensor]) -> tuple[str, ...]:
    """The :data:`~blockviz.record_fields.OPTIONAL_FIELDS` among ``tensors``."""
    return tuple(name for name in OPTIONAL_FIELDS if name in tensors)


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
