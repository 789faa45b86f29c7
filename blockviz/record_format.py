"""A record on disk: its header (format version, sentence, tokens, config) and its tensors.

Files are ``.safetensors`` (exact; the header in the metadata) or ``.json`` (standard JSON, −∞
as ``null``), written and read by :mod:`blockviz.tensorfile`. The header's ``format`` is
:data:`RECORD_FORMAT`; a file of an older or newer version is refused with a message saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from blockviz.architecture import Architecture
from blockviz.block_config import ARCHITECTURE_FIELDS, BlockConfig
from blockviz.errors import BlockvizError
from blockviz.source import Source
from blockviz.tensorfile import read_arrays, read_header, read_tensors, write_tensors

if TYPE_CHECKING:
    import torch

FORMAT_NAME = "blockviz-record"
FORMAT_VERSION = 2
"""2 added the LayerNorm statistics and the softmax steps (row_max, exp_scores, exp_sums).
Still 2, read both ways: the architecture fields of the config
(:data:`blockviz.block_config.ARCHITECTURE_FIELDS`) and the header's ``source`` were added later as
optional keys; a file without them is blockviz's toy block with seeded weights; so was the
header's ``special`` (which tokens the model's tokenizer added)."""
RECORD_FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
STACK_FORMAT_VERSION = 3
"""3: a record of several blocks — the header's ``n_blocks``, each block's tensors under
``blocks.K.name`` (safetensors) or in ``"blocks": [{…}, …]`` (JSON); a blockviz that reads only 2
refuses it with "written by a newer blockviz". A record of one block is still written as 2."""
STACK_FORMAT = f"{FORMAT_NAME}/{STACK_FORMAT_VERSION}"


def write_record(
    path: str | Path,
    sentence: str,
    tokens: list[str],
    config: BlockConfig,
    tensors: dict[str, torch.Tensor],
    source: Source | None = None,
    special: list[bool] | None = None,
    n_blocks: int = 1,
    lens: dict | None = None,
    weights: dict | None = None,
) -> None:
    """Write a record's header (with ``source`` and ``special``, one flag per token: the model's
    special tokens, when given) and ``tensors`` (activations and parameters) to ``path``, atomically.
    A record of ``n_blocks`` > 1 blocks is written as :data:`STACK_FORMAT`, its header saying how
    many; ``tensors`` then names each block's own as ``blocks.K.name``. ``lens``: a trained
    model's logit lens (:meth:`blockviz.logit_lens.LogitLens.to_dict`), in the header as ``logit_lens``.
    ``weights``: the package the parameters come from, when ``tensors`` holds none
    (:func:`blockviz.models.weights.weights_reference`), in the header as ``weights``.

    Raises :class:`BlockvizError` for a suffix other than .safetensors/.json or an unwritable folder.
    """
    header = {
        "format": STACK_FORMAT if n_blocks > 1 else RECORD_FORMAT,
        "sentence": sentence,
        "tokens": tokens,
        "config": config.to_dict(),
    }
    if n_blocks > 1:
        header["n_blocks"] = n_blocks
    if lens is not None:
        header["logit_lens"] = lens
    if weights is not None:
        header["weights"] = weights
    if source is not None:
        header["source"] = source.to_dict()
    if special is not None:
        header["special"] = [bool(flag) for flag in special]
    write_tensors(path, tensors, header)


def read_record(path: str | Path) -> tuple[str, list[str], BlockConfig, dict[str, torch.Tensor]]:
    """``(sentence, tokens, config, tensors)`` of the record file at ``path``. JSON tensors,
    which carry no dtype, come back in the config's dtype; safetensors tensors as stored.

    Raises
    ------
    BlockvizError
        If the file cannot be read, is not a blockviz record, is of another format version, or
        its header (sentence, tokens, config) is malformed.
    """
    return read_record_with_source(path)[:4]


def read_record_with_source(
    path: str | Path,
) -> tuple[str, list[str], BlockConfig, dict[str, torch.Tensor], Source, list[bool]]:
    """:func:`read_record`, the header's :class:`~blockviz.source.Source` (seeded when absent)
    and its special-token flags, one per token. A record saved before the flags were stored
    (no ``special`` key) gets them from the tokens' names when it is a model's (``[CLS]``,
    ``<|endoftext|>``: :func:`blockviz.selection.looks_special`), all ``False`` otherwise.

    Raises :class:`BlockvizError` as :func:`read_record`, and for a malformed source or flags.
    """
    told, tensors = read_record_file(path)
    return told.sentence, list(told.tokens), told.config, tensors, told.source, list(told.special)


def read_record_file(path: str | Path) -> tuple[RecordHeader, dict[str, torch.Tensor]]:
    """The :class:`RecordHeader` and the tensors of the record file at ``path`` (a record of
    several blocks names each block's own ``blocks.K.name``), as :func:`read_record_with_source`.

    Raises :class:`BlockvizError` as :func:`read_record_with_source`.
    """
    where = repr(str(path))
    # the version before the tensors: a stray file gets this message, not one about its tensors
    tensors, header = read_tensors(path, check_header=lambda header: check_version(header.get("format"), where))
    told = _told(header, where)
    if Path(path).suffix.lower() == ".json":
        for name in list(tensors):  # one at a time: memory holds one float64 tensor beside the converted ones
            tensors[name] = tensors[name].to(_dtype(told.config))
    return told, tensors


def read_record_arrays(path: str | Path) -> tuple[RecordHeader, dict]:
    """The :class:`RecordHeader` and the tensors of the ``.safetensors`` record file at ``path``
    as numpy arrays, without torch (:func:`blockviz.tensorfile.read_arrays`).

    Raises :class:`BlockvizError` as :func:`read_record_file`, and for a file numpy cannot hold
    (JSON, bfloat16).
    """
    where = repr(str(path))
    tensors, header = read_arrays(path)
    check_version(header.get("format"), where)
    return _told(header, where), tensors


@dataclass(frozen=True)
class RecordHeader:
    """What a record file says of itself besides its tensors: the sentence, its tokens (and which
            are the model's special tokens), the block's config and where its weights came from. Read
            without torch (:func:`read_record_header`): enough to choose a token, a numbered head and the
            scenes and words for the record (``architecture``, as :attr:`BlockRecord.architecture`), and
        how many blocks it holds (``n_blocks``; its config is every block's), and a trained model's
    logit lens as it is written (``lens``, :meth:`blockviz.logit_lens.LogitLens.to_dict`), unchecked,
    and the package its parameters come from when the file holds none (``weights``,
    :mod:`blockviz.models.weights`)."""

    sentence: str
    tokens: tuple[str, ...]
    config: BlockConfig
    source: Source
    special: tuple[bool, ...]
    n_blocks: int = 1
    lens: dict | None = None
    weights: dict | None = None

    @property
    def architecture(self) -> Architecture:
        """Which block this is, as :attr:`blockviz.block_record.BlockRecord.architecture` says."""
        return Architecture.of(self.config, model_layer=self.source.is_model)


def read_record_header(path: str | Path) -> RecordHeader:
    """The :class:`RecordHeader` of the record file at ``path``, its tensors left unread (no torch).

    Raises :class:`BlockvizError` as :func:`read_record_with_source` does for the header.
    """
    where = repr(str(path))
    header = read_header(path)
    check_version(header.get("format"), where)
    return _told(header, where)


def _told(header: dict, where: str) -> RecordHeader:
    """The record header ``header`` (a file's, named ``where`` in messages) holds, checked."""
    tokens = header.get("tokens")
    if not isinstance(tokens, list) or not tokens or not all(isinstance(token, str) for token in tokens):
        raise BlockvizError(f"{where} is not a valid record: its tokens must be a non-empty list of strings")
    sentence = header.get("sentence", " ".join(tokens))
    if not isinstance(sentence, str):
        raise BlockvizError(f"{where} is not a valid record: its sentence must be a string")
    config = _config(header.get("config"), where)
    try:
        source = Source.from_dict(header["source"]) if "source" in header else Source()
    except (BlockvizError, TypeError) as error:
        raise BlockvizError(f"{where} is not a valid record: {error}") from None
    special = _special(header, tokens, source, where)
    return RecordHeader(
        sentence,
        tuple(tokens),
        config,
        source,
        tuple(special),
        _n_blocks(header, where),
        header.get("logit_lens"),
        _weights(header, where),
    )


def _weights(header: dict, where: str) -> dict | None:
    weights = header.get("weights")
    if weights is None:
        return None
    if (
        not isinstance(weights, dict)
        or set(weights) != {"package", "version"}
        or not all(isinstance(value, str) for value in weights.values())
    ):
        raise BlockvizError(f"{where} is not a valid record: its weights must name a package and its version")
    return weights


def _n_blocks(header: dict, where: str) -> int:
    stacked = header.get("format") == STACK_FORMAT
    count = header.get("n_blocks", None if stacked else 1)
    if isinstance(count, float) and count.is_integer():  # a JSON header's numbers are read as tensors, floats
        count = int(count)
    if stacked != (count != 1) or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BlockvizError(
            f"{where} is not a valid record: a record of format {STACK_FORMAT_VERSION} says how many blocks it holds "
            f"(n_blocks, 2 or more), one of format {FORMAT_VERSION} holds one"
        )
    return count


def _special(header: dict, tokens: list[str], source: Source, where: str) -> list[bool]:
    from blockviz.selection import looks_special

    if "special" not in header:
        return [source.is_model and looks_special(token) for token in tokens]
    special = header["special"]
    if (
        not isinstance(special, list)
        or len(special) != len(tokens)
        or not all(isinstance(flag, bool) for flag in special)
    ):
        raise BlockvizError(
            f"{where} is not a valid record: its special-token flags must be {len(tokens)} booleans, one per token"
        )
    return special


def check_version(format_field, where: str) -> None:
    """Accept :data:`RECORD_FORMAT` and :data:`STACK_FORMAT` only; say whether another version is
    older or newer.

    Raises :class:`BlockvizError` otherwise.
    """
    if format_field in (RECORD_FORMAT, STACK_FORMAT):
        return
    match = re.fullmatch(rf"{FORMAT_NAME}/(\d+)", format_field) if isinstance(format_field, str) else None
    if match is None:
        raise BlockvizError(f"{where} is not a blockviz record: write one with `blockviz record … --save`")
    version = int(match[1])
    if version < FORMAT_VERSION:
        raise BlockvizError(
            f"{where} is a record of format {version}, written by an older blockviz; this one reads format {FORMAT_VERSION}: record it again with `blockviz record … --save`"
        )
    raise BlockvizError(
        f"{where} is a record of format {version}, written by a newer blockviz; this one reads formats {FORMAT_VERSION} and {STACK_FORMAT_VERSION}: upgrade blockviz"
    )


def _config(data, where: str) -> BlockConfig:
    if not isinstance(data, dict):
        raise BlockvizError(f"{where} is not a valid record: its config must be an object of named fields")
    missing = [f.name for f in fields(BlockConfig) if f.name not in data and f.name not in ARCHITECTURE_FIELDS]
    if missing:
        raise BlockvizError(f"{where} is not a valid record: its config lacks {missing[0]!r}")
    try:
        return BlockConfig.from_dict(data)
    except BlockvizError as error:
        raise BlockvizError(f"{where} is not a valid record: {error}") from None


def _dtype(config: BlockConfig) -> torch.dtype:
    from blockviz.tokens import dtype_of

    return dtype_of(config)
