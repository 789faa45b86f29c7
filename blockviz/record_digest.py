"""A record's digest: one short string that changes with any number, token or setting it holds.

What a picture of a record shows depends on the record's content only (its tensors, parameters,
tokens, config, source, special flags, logit lens), so a plan made for one record
(:mod:`blockviz.scenes.kept_plans`) is found again by this digest, whichever object holds the
record and whether its arrays are torch tensors (:class:`~blockviz.block_record.BlockRecord`)
or numpy arrays (:class:`~blockviz.record_arrays.ArrayRecord`): the same numbers give the same
digest. Hashing a toy record's few hundred kilobytes takes about a millisecond.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping


def record_digest(record) -> str:
    """The BLAKE2b digest (32 hex digits) of ``record``'s content: its sentence, tokens, special
    flags, config and logit lens, and each block's source, tensors and parameters (by name: dtype,
    shape and bytes). Torch tensors and numpy arrays of the same numbers hash alike."""
    digest = hashlib.blake2b(digest_size=16)

    def text(value) -> None:
        encoded = repr(value).encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)

    text((record.sentence, tuple(record.tokens), tuple(record.special), record.config, record.lens))
    for view in record.blocks:
        text(view.source)
        for kind, arrays in (("tensors", view.tensors), ("params", view.params)):
            _arrays(digest, text, kind, arrays)
    return digest.hexdigest()


def _arrays(digest, text, kind: str, arrays: Mapping) -> None:
    names = sorted(arrays)
    text((kind, names))
    for name in names:
        dtype, shape, data = _raw(arrays[name])
        text((name, dtype, shape, len(data)))
        digest.update(data)


def _raw(array) -> tuple[str, tuple[int, ...], bytes | memoryview]:
    """``array``'s dtype name (``"float32"`` for torch's and numpy's alike), shape and bytes;
    anything else (a plain value) by its ``repr``."""
    if hasattr(array, "untyped_storage"):  # a torch tensor, of any dtype numpy may lack (bfloat16)
        import torch

        flat = array.detach().contiguous().reshape(-1).view(torch.uint8)
        return str(array.dtype).removeprefix("torch."), tuple(array.shape), flat.numpy().data
    if hasattr(array, "dtype") and hasattr(array, "tobytes"):
        import numpy as np

        contiguous = np.ascontiguousarray(array)
        return str(contiguous.dtype), tuple(contiguous.shape), contiguous.reshape(-1).view(np.uint8).data
    return type(array).__name__, (), repr(array).encode("utf-8", "surrogatepass")
