"""Named tensors that cannot be changed through what they hand out: a record stays as it was checked.

Torch has no read-only tensor, so :class:`ReadOnlyTensors` keeps its own copies and hands out a
fresh copy on every access: ``rec.tensors["weights"][0, 0, 0] = 9``, ``rec.weights.add_(1)`` or
a figure writing into ``rec.weights.numpy()`` change that copy only, never the record. A copy of
a 64-token toy record's largest tensor (``weights``, 2 × 64 × 64 float32) costs a few
microseconds, about as much as indexing it once (``benchmarks/records.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

import torch


class ReadOnlyTensors(Mapping):
    """A read-only mapping of names to tensors: no item can be set or deleted, and every
    ``mapping[name]`` is a new copy (``clone``) of the stored tensor, so changing it in place
    leaves the mapping as it was.

    Built from a mapping, it stores detached, contiguous copies that share no memory with the
    caller's tensors or with each other (:meth:`adopting` skips the copy for tensors nobody else
    holds). Iteration follows the given order.

    >>> tensors = ReadOnlyTensors({"x": torch.zeros(2)})
    >>> tensors["x"][0] = 5.0
    >>> tensors["x"].tolist()
    [0.0, 0.0]
    """

    __slots__ = ("_tensors", "_finite")

    def __init__(self, tensors: Mapping[str, torch.Tensor] = ()):
        copies = {}
        for name, tensor in dict(tensors).items():
            copies[name] = (
                tensor.detach().clone(memory_format=torch.contiguous_format)
                if isinstance(tensor, torch.Tensor)
                else tensor
            )
        self._tensors = copies
        self._finite = False

    @classmethod
    def adopting(cls, tensors: dict[str, torch.Tensor]) -> ReadOnlyTensors:
        """The mapping of ``tensors`` without copying them: only for tensors the caller made
        and holds no other reference to (a file just read, a block's fresh cache). A tensor that
        shares memory with another one is still copied (safetensors refuses to save such pairs)."""
        mapping = cls.__new__(cls)
        seen: set[int] = set()
        stored = {}
        for name, tensor in tensors.items():
            if not isinstance(tensor, torch.Tensor):
                stored[name] = tensor
                continue
            storage = tensor.untyped_storage()
            pointer = storage.data_ptr() if tensor.numel() else None
            if pointer is not None and (
                pointer in seen or storage.nbytes() != tensor.nbytes or not tensor.is_contiguous()
            ):  # the whole of its own storage, or copied
                tensor = tensor.detach().clone(memory_format=torch.contiguous_format)
                pointer = tensor.untyped_storage().data_ptr()
            if pointer is not None:
                seen.add(pointer)
            stored[name] = _detached(tensor)
        mapping._tensors = stored
        mapping._finite = False
        return mapping

    @classmethod
    def sharing(cls, tensors: dict[str, torch.Tensor], finite: bool = False) -> ReadOnlyTensors:
        """The mapping of ``tensors`` kept as they are, views included: only for tensors nobody
        changes while the mapping lives (a loaded model's weights, which blockviz never
        trains): a record of a model's 30 layers then holds no second copy of their 405 MB.
        ``finite``: every entry is known finite already (the model's weights were checked once
        when it was loaded), so a record's checks need not read them again (:attr:`known_finite`)."""
        mapping = cls.__new__(cls)
        mapping._tensors = {
            name: _detached(tensor) if isinstance(tensor, torch.Tensor) else tensor for name, tensor in tensors.items()
        }
        mapping._finite = finite
        return mapping

    @property
    def known_finite(self) -> bool:
        """Whether every entry is known finite (:meth:`sharing`)."""
        return self._finite

    def reordered(self, names: Iterable[str]) -> ReadOnlyTensors:
        """The same tensors (not copied again) with ``names`` first, in that order (those it
        holds), then the others in their order.

        >>> list(ReadOnlyTensors({"b": torch.zeros(1), "a": torch.zeros(1), "c": torch.zeros(1)}).reordered(["a", "b", "x"]))
        ['a', 'b', 'c']
        """
        first = [name for name in names if name in self._tensors]
        mapping = type(self).__new__(type(self))
        mapping._tensors = {
            name: self._tensors[name] for name in [*first, *(n for n in self._tensors if n not in first)]
        }
        mapping._finite = self._finite
        return mapping

    def stored(self) -> Mapping[str, torch.Tensor]:
        """The stored tensors themselves, not copies, for code that only reads them once (a
        record's own checks on a large record); changing one of them changes the mapping."""
        return MappingProxyType(self._tensors)

    def __getitem__(self, name: str) -> torch.Tensor:
        tensor = self._tensors[name]
        return tensor.clone() if isinstance(tensor, torch.Tensor) else tensor

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    def __contains__(self, name: object) -> bool:
        return name in self._tensors

    def __repr__(self) -> str:
        shapes = ", ".join(
            f"{name}: {tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__}"
            for name, t in self._tensors.items()
        )
        return f"{type(self).__name__}({{{shapes}}})"

    def __getstate__(self):
        return self._tensors

    def __setstate__(self, state) -> None:
        self._tensors = state
        self._finite = False


def _detached(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` outside autograd: itself when it needs no gradient (no new tensor object to make)."""
    return tensor.detach() if tensor.requires_grad else tensor
