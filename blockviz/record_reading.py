"""What every record reads the same way, whatever holds its numbers: torch tensors
(:class:`~blockviz.block_record.BlockRecord`) or numpy arrays
(:class:`~blockviz.record_arrays.ArrayRecord`, a kept record read without torch).

:class:`RecordReading` is the reading side of a record: its tensors by name, its fields and
architecture, its blocks, its colour scales and the products a scene draws term by term. A
subclass is a frozen dataclass with the fields ``sentence``, ``tokens``, ``config``, ``tensors``,
``params``, ``source``, ``special``, ``stack`` and ``lens``, and says in :meth:`RecordReading._adopted`
how it holds a file's freshly read tensors. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property

from blockviz.architecture import Architecture
from blockviz.errors import BlockvizError
from blockviz.logit_lens import LogitLens
from blockviz.record_fields import (
    BY_NAME,
    NORM_PARAMETER_SCALE,
    OPTIONAL_FIELDS,
    PARAMETER_SCALE,
    PREDICTION_FIELDS,
    STACK_FIELDS,
    STACK_PARAMETERS,
    RecordField,
    fields_for,
    parameter_scale,
)
from blockviz.record_format import RecordHeader
from blockviz.scale_limits import BOUNDED_FAMILIES, ScaleLimit, robust_limit
from blockviz.source import Source
from blockviz.tensorfile import BLOCK_PREFIX


class RecordReading:
    """The reading methods every record has (:class:`~blockviz.block_record.BlockRecord`
    documents them); ``tensors`` and ``params`` hold torch tensors or numpy arrays, and what these
    methods hand out is of the same kind."""

    @classmethod
    def stacked(cls, views: Sequence[RecordReading], lens: LogitLens | None = None) -> RecordReading:
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
    def blocks(self) -> tuple[RecordReading, ...]:
        """Every block's view, block 0 first: each a one-block record (``(self,)`` for one block)."""
        return self.stack or (self,)

    def block(self, index: int) -> RecordReading:
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

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: the recorded tensors by name.
        tensors = self.__dict__.get("tensors")
        if tensors is not None and name in BY_NAME and name in tensors:
            return tensors[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")

    @property
    def fields(self) -> tuple[RecordField, ...]:
        """The fields this record holds, in data-flow order (:data:`~blockviz.record_fields.FIELDS`
        for blockviz's own block)."""
        return fields_for(self.architecture, optional=optional_fields(self.tensors))

    @cached_property
    def architecture(self) -> Architecture:
        """Which block this is (:class:`~blockviz.architecture.Architecture`): norm kind and placement,
        positions, FFN, key/value heads, biases, mask, embeddings, whether a model's layer."""
        return Architecture.of(self.config, model_layer=self.source.is_model)

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    def activations(self) -> dict:
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

    def qk_products(self, head: int, query: int):
        """The element-wise products of query ``query``'s vector with every key of ``head``,
        ``(n, d_head)``: row j holds q_i ⊙ k_j, whose sum is ``scores[head, query, j]`` (with
        rotary positions, of the rotated ``query_rot`` and ``key_rot``)."""
        rotary = self.architecture.rotary
        return (
            self.tensors["query_rot" if rotary else "query"][head, query]
            * self.tensors["key_rot" if rotary else "key"][head]
        )

    def weighted_values(self, head: int, query: int):
        """Every value row of ``head`` scaled by query ``query``'s weight on it, ``(n, d_head)``:
        row j holds weights[head, query, j] · value[head, j]; the rows add up to
        ``head_outputs[head, query]``."""
        return self.tensors["weights"][head, query][:, None] * self.tensors["value"][head]

    def input_products(self, role: str, head: int, query: int):
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

    def projection_products(self, query: int):
        """The terms of query ``query``'s output projection, ``(d_model, d_model)``: entry (i, j)
        is concat[query, i] · W_O[i, j]; column j adds up, with b_O[j], to ``attn_out[query, j]``."""
        return self.tensors["concat"][query][:, None] * self.params["attn.W_O"]

    @classmethod
    def _from_tensors(
        cls, header: RecordHeader, source: Source, tensors: dict, params: dict | None = None
    ) -> RecordReading:
        """The one-block record of ``header`` from ``tensors`` (its activations and parameters),
        adopted; ``params``: its parameters taken from elsewhere (a packaged model's, already
        read-only: :mod:`blockviz.models.weights`), ``tensors`` then its activations."""
        config = header.config
        names = [spec.name for spec in fields_for(config, model=source.is_model, optional=optional_fields(tensors))]
        activations = {name: tensors.pop(name) for name in names if name in tensors}
        if params is not None and tensors:
            raise BlockvizError(
                f"the record names the package its parameters come from but holds {sorted(tensors)[0]!r} too: save it again"
            )
        return cls(
            sentence=header.sentence,
            tokens=header.tokens,
            config=config,
            tensors=cls._adopted(activations),
            params=cls._adopted(tensors) if params is None else params,
            source=source,
            special=header.special,
        )

    @classmethod
    def _of_file(cls, header: RecordHeader, tensors: dict, params: list[dict] | None = None) -> RecordReading:
        """The record a file of ``header`` and ``tensors`` holds, unchecked beyond its layout;
        ``params``: each block's parameters, when the file names the package they come from
        (:mod:`blockviz.models.weights`).

        Raises :class:`BlockvizError` for tensors that do not fit the header's blocks, or a
        malformed logit lens.
        """
        lens = None if header.lens is None else LogitLens.from_dict(header.lens)
        if header.n_blocks == 1:
            return cls.stacked([cls._from_tensors(header, header.source, tensors)], lens)
        return cls.stacked(stack_views(cls, header, tensors, params), lens)

    @classmethod
    def _adopted(cls, tensors: dict) -> Mapping:
        """``tensors``, just read from a file and held by nobody else, as the record keeps them."""
        raise NotImplementedError


def optional_fields(tensors: Mapping) -> tuple[str, ...]:
    """The :data:`~blockviz.record_fields.OPTIONAL_FIELDS` among ``tensors``."""
    return tuple(name for name in OPTIONAL_FIELDS if name in tensors)


def stack_views(cls, header: RecordHeader, tensors: dict, params: list[dict] | None = None) -> list[RecordReading]:
    """Every block's view of a record file of several blocks (what :meth:`BlockRecord.save <blockviz.block_record.BlockRecord.save>` wrote, read back);
    ``params``: each block's parameters, when the file holds none (:mod:`blockviz.models.weights`).

    Raises :class:`BlockvizError` for blocks other than the header's ``n_blocks``.
    """
    count = header.n_blocks
    own: list[dict] = [{} for _ in range(count)]
    shared: dict = {}
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
        views.append(
            cls._from_tensors(header, source, {**taken, **block_tensors}, None if params is None else params[index])
        )
    unused = sorted(name for name in shared if name not in STACK_FIELDS + STACK_PARAMETERS + PREDICTION_FIELDS)
    if unused:
        raise BlockvizError(f"the record has an unknown field {unused[0]!r} outside its blocks")
    return views
