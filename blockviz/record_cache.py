"""Records kept between runs: a repeated command reads its record back instead of running the block.

A record of blockviz's seeded block (``--params FILE`` included) is kept in
:func:`blockviz.models.cache.cache_dir` ``/records/<key>.safetensors``, in the record's own file
format, which loads back bit for bit (:meth:`~blockviz.block_record.BlockRecord.load`). The key
is a hash of everything the record is made from (:func:`record_key`): the sentence, every record
option, the parameters file's path (the record names it) and bytes, blockviz's code and version,
and the versions of torch and safetensors. Any change is another key, so a kept record is always
the one the block would make now. A trained model's layer (``--model``) and a record read from a
file (``--record``) are not kept.

Records are written atomically; at most :data:`MAX_RECORDS` are kept, the least recently used
removed first. A kept record that cannot be read back is made again and replaces it; a cache
folder that cannot be written only means nothing is kept.

What this saves is the block's run and its checks, tens of milliseconds, and, for a caller that
reads numpy arrays (``arrays=True``: a still, ``blockviz render --format png``), torch's import
(1–2 s): the kept record is read with ``safetensors.numpy`` as an
:class:`~blockviz.record_arrays.ArrayRecord`. A command that needs only what the record says of itself (its tokens, config
and source: ``blockviz slides`` from unchanged renders) reads the kept file's header, without
torch (:func:`cached_header`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import prune_least_recent

MAX_RECORDS = 256
"""Records kept at most (a record of the seeded block is a few kilobytes)."""
NOT_KEPT = ("model", "layer", "record_file")
"""Record options whose record is not kept: a trained model's layer, a record read from a file
(but the packaged toy model's records are: :data:`PACKAGED_MODEL`)."""
PACKAGED_MODEL = "toy"
"""``--model toy``, the default block: its records are kept, keyed by the shipped model's bytes."""
PARAMETER_FILE = "params"
"""The record option that names a parameters file: keyed by its path and its bytes."""


def records_folder() -> Path:
    """Where kept records are: ``<blockviz's cache folder>/records``."""
    from blockviz.models.cache import cache_dir

    return cache_dir() / "records"


def record_key(inputs: dict) -> str | None:
    """The key of the record that ``inputs`` (every record option by name, as the CLI passes them
    to :func:`blockviz.cli.options.build_record`) make; ``None`` if that record is not kept
    (:data:`NOT_KEPT`, or a parameters file that cannot be read: building the record says why)."""
    packaged = inputs.get("model") == PACKAGED_MODEL and inputs.get("layer") is None
    if (
        inputs.get("sentence") is None
        or any(inputs.get(name) is not None for name in NOT_KEPT if not (packaged and name == "model"))
        or inputs.get("trust_pickle")
    ):
        return None
    keyed = {name: _plain(value) for name, value in inputs.items()}
    if packaged:
        from blockviz.toy import PACKAGED

        keyed["model bytes"] = [_file_digest(path) for path in sorted(Path(PACKAGED).iterdir()) if path.is_file()]
    if inputs.get(PARAMETER_FILE) is not None:
        digest = _file_digest(Path(inputs[PARAMETER_FILE]))
        if digest is None:
            return None
        keyed["params bytes"] = digest
    keyed["code"] = code_stamp()
    return hashlib.blake2b(
        json.dumps(keyed, sort_keys=True).encode("utf-8", "surrogatepass"), digest_size=16
    ).hexdigest()


def cached_record(inputs: dict, build: Callable[[], object], arrays: bool = False):
    """The record ``inputs`` make: read back if kept, else ``build()`` and kept.

    ``build`` makes the record from ``inputs`` (and raises what it raises: a kept record only
    exists for inputs that made one before). With ``arrays``, a kept record is read without
    torch, as numpy arrays (:func:`blockviz.record_arrays.read_kept`), when numpy can hold it.
    Raises nothing of its own.
    """
    key = record_key(inputs)
    if key is None:
        return build()
    path = records_folder() / f"{key}.safetensors"
    kept = (arrays and _read_arrays(path, inputs["sentence"])) or _read(path, inputs["sentence"])
    if kept is not None:
        return kept
    made = build()
    _keep(made, path)
    return made


def cached_header(inputs: dict):
    """The :class:`~blockviz.record_format.RecordHeader` of the record ``inputs`` make, read from
    the kept file without torch; ``None`` if that record is not kept or cannot be read."""
    key = record_key(inputs)
    if key is None:
        return None
    path = records_folder() / f"{key}.safetensors"
    if not path.is_file():
        return None
    from blockviz.record_format import read_record_header

    try:
        header = read_record_header(path)
    except (BlockvizError, OSError, ValueError):
        return None
    if header.sentence != inputs["sentence"]:  # a key collision, or a file put there by hand
        return None
    with contextlib.suppress(OSError):  # removed meanwhile by another process
        os.utime(path)  # recently used: pruned last
    return header


def code_stamp() -> dict:
    """What a record's numbers also depend on besides its inputs: every file of the installed
    blockviz package (name, size and modification time: an edit changes them), blockviz's,
    torch's and safetensors' versions, and the processor's architecture."""
    root = Path(__file__).resolve().parent
    files = []
    for path in sorted(root.rglob("*.py")):
        with contextlib.suppress(OSError):  # removed meanwhile by another process
            stat = path.stat()
            files.append((path.relative_to(root).as_posix(), stat.st_size, stat.st_mtime_ns))
    files_digest = hashlib.blake2b(json.dumps(files).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    from blockviz import __version__

    return {
        "files": files_digest,
        "blockviz": __version__,
        "torch": _version("torch"),
        "safetensors": _version("safetensors"),
        "machine": platform.machine(),
    }


def _read(path: Path, sentence: str):
    """The record kept at ``path``, or ``None`` if there is none or it cannot be read back."""
    if not path.is_file():
        return None
    from blockviz.block_record import BlockRecord

    try:
        kept = BlockRecord.load(path)
    except (BlockvizError, OSError, ValueError):
        return None
    if kept.sentence != sentence:  # a key collision, or a file put there by hand
        return None
    if not _holds_only_the_blocks_parameters(kept):
        return None
    with contextlib.suppress(OSError):  # removed meanwhile by another process
        os.utime(path)  # recently used: pruned last
    return kept


def _read_arrays(path: Path, sentence: str):
    """The record kept at ``path`` as numpy arrays, or ``None`` if there is none or numpy cannot
    read it (then :func:`_read` tries with torch)."""
    if not path.is_file():
        return None
    from blockviz.record_arrays import read_kept

    try:
        kept = read_kept(path)
    except (BlockvizError, OSError, ValueError):
        return None
    if kept.sentence != sentence:  # a key collision, or a file put there by hand
        return None
    with contextlib.suppress(OSError):  # removed meanwhile by another process
        os.utime(path)  # recently used: pruned last
    return kept


def _holds_only_the_blocks_parameters(kept) -> bool:
    """Whether ``kept``'s parameters are its block's and no others (a record holds them in the
    block's order, however it was made: :class:`~blockviz.block_record.BlockRecord`)."""
    from blockviz.params import parameter_shapes

    return set(kept.params) <= set(parameter_shapes(kept.config))


def _keep(record, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        record.save(path)
    except Exception:  # noqa: BLE001 — a record that cannot be kept (a full disk, a file safetensors refuses) is only not kept
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Remove the least recently used records beyond :data:`MAX_RECORDS`."""
    prune_least_recent(folder, "*.safetensors", MAX_RECORDS)


def _plain(value):
    return value if isinstance(value, (int, float, str, bool, type(None))) else str(value)


def _file_digest(path: Path) -> str | None:
    from blockviz.tensorfile import check_file

    try:
        check_file(path)  # a known format, within its size limit
        digest = hashlib.blake2b(digest_size=16)
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(2**20), b""):
                digest.update(chunk)
    except (BlockvizError, OSError):
        return None
    return digest.hexdigest()


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
