"""A record read as numpy arrays, without torch: what a still reads from the record cache.

Importing torch takes longer than drawing a still, and a kept record
(:mod:`blockviz.record_cache`) needs no torch to be read back: :func:`read_kept` reads its file
with ``safetensors.numpy`` into an :class:`ArrayRecord`, which reads as a
:class:`~blockviz.block_record.BlockRecord` does (:class:`~blockviz.record_reading.RecordReading`:
``rec.weights``, ``rec.block(k)``, ``rec.scale_limit(name)`` …) with numpy arrays of the same
numbers, bit for bit. What needs the block itself (:meth:`ArrayRecord.counterpart`, which runs it
again) or torch's file writer (:meth:`ArrayRecord.save`) goes through :meth:`ArrayRecord.with_torch`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.logit_lens import LogitLens
from blockviz.parameter_shapes import parameter_shapes
from blockviz.record_format import read_record_arrays
from blockviz.record_reading import RecordReading
from blockviz.source import Source


@dataclass(frozen=True, eq=False)
class ArrayRecord(RecordReading):
    """A record whose ``tensors`` and ``params`` are read-only numpy arrays (the fields are
    :class:`~blockviz.block_record.BlockRecord`'s). Made by :func:`read_kept` from a record
    file that was checked when it was made; it is not checked again."""

    sentence: str
    tokens: tuple[str, ...]
    config: BlockConfig
    tensors: Mapping[str, np.ndarray]
    params: Mapping[str, np.ndarray] = field(default_factory=dict)
    source: Source = field(default_factory=Source)
    special: tuple[bool, ...] = ()
    stack: tuple[ArrayRecord, ...] = ()
    lens: LogitLens | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "special", tuple(self.special) if self.special else (False,) * len(self.tokens))
        object.__setattr__(self, "stack", tuple(self.stack))
        order = [name for name in parameter_shapes(self.config) if name in self.params]
        ordered = {name: self.params[name] for name in [*order, *(name for name in self.params if name not in order)]}
        object.__setattr__(self, "params", MappingProxyType(ordered))  # BlockRecord's order

    @classmethod
    def _adopted(cls, tensors: dict[str, np.ndarray]) -> Mapping[str, np.ndarray]:
        for array in tensors.values():
            array.flags.writeable = False
        return MappingProxyType(tensors)

    def with_torch(self):
        """The same record as a :class:`~blockviz.block_record.BlockRecord` (imports torch;
        checked as every record is when built)."""
        import torch

        from blockviz.block_record import BlockRecord

        views = [
            BlockRecord(
                sentence=view.sentence,
                tokens=view.tokens,
                config=view.config,
                tensors={name: torch.tensor(array) for name, array in view.tensors.items()},
                params={name: torch.tensor(array) for name, array in view.params.items()},
                source=view.source,
                special=view.special,
            )
            for view in self.blocks
        ]
        return BlockRecord.stacked(views, self.lens)

    def counterpart(self, causal: bool):
        """:meth:`BlockRecord.counterpart <blockviz.block_record.BlockRecord.counterpart>`: the
        record itself if its mask already is so, else (with torch) the block run again."""
        return self if self.config.causal == causal else self.with_torch().counterpart(causal)

    def save(self, path: str | Path) -> None:
        """:meth:`BlockRecord.save <blockviz.block_record.BlockRecord.save>` (with torch): the same bytes."""
        self.with_torch().save(path)


def read_kept(path: str | Path) -> ArrayRecord:
    """The record kept at ``path`` (a ``.safetensors`` record file) as numpy arrays, without torch.

    Its layout is checked (every field of its blocks; parameters of its block only, in their
    shapes), not its numbers: a kept record was checked when it was made.

    Raises
    ------
    BlockvizError
        If the file cannot be read as numpy arrays (JSON, bfloat16), is not a record, or its
        tensors are not its blocks' fields and parameters.
    """
    header, tensors = read_record_arrays(path)
    try:
        record = ArrayRecord._of_file(header, tensors)
        for view in record.blocks:
            _check_layout(view)
    except BlockvizError as error:
        raise BlockvizError(f"{str(path)!r} is not a valid record: {error}") from None
    return record


def _check_layout(view: ArrayRecord) -> None:
    """Every field ``view`` should hold, and only its block's parameters, each of its shape.

    Raises :class:`BlockvizError` naming the first field missing, or parameter extra or of another shape.
    """
    missing = [spec.name for spec in view.fields if spec.name not in view.tensors]
    if missing:
        raise BlockvizError(f"it lacks the field {missing[0]!r}")
    shapes = parameter_shapes(view.config)
    for name, array in view.params.items():
        if name not in shapes:
            raise BlockvizError(f"it holds {name!r}, not a parameter of its block")
        if tuple(array.shape) != shapes[name]:
            raise BlockvizError(f"its parameter {name!r} is {tuple(array.shape)}, not {shapes[name]}")
