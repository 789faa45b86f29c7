"""Named tensors in files: ``.safetensors`` (exact) and ``.json`` (standard JSON, −∞ as null).

JSON layout: ``{"tokens": [...], "config": {...}, "tensors": {name: nested lists}}``; a
parameters file may also be a bare ``{name: nested lists}``. NaN and +∞ are never written; −∞
(the mask's blocked cells) is written as ``null``. Files are refused before they are read if they
are larger than :data:`MAX_BYTES`, and JSON nested deeper than a tensor can be is refused too,
so a bad file is a one-line :class:`~blockviz.errors.BlockvizError`, never a crash.

Torch is imported only by the functions that make or take tensors: reading a header does not.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from safetensors import SafetensorError, safe_open

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path

if TYPE_CHECKING:
    import torch

FORMATS = (".safetensors", ".json")
MAX_BYTES = {".json": 64 * 2**20, ".safetensors": 4 * 2**30}
"""Largest file read, by format, checked before reading a byte: parsing JSON holds about four
times the file in memory, loading safetensors about its size."""
MAX_TENSOR_DIMS = 8
"""Deepest nesting of lists a JSON tensor may have (blockviz's tensors have at most 4 dimensions)."""


class _TooDeep(ValueError):
    """A JSON tensor nested more than :data:`MAX_TENSOR_DIMS` deep."""


def check_format(path: str | Path) -> str:
    """The file's suffix, if blockviz reads and writes it; else :class:`BlockvizError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise BlockvizError(f"{str(path)!r} is neither .safetensors nor .json: name the file with one of those endings")
    return suffix


def check_file(path: str | Path) -> str:
    """The suffix of ``path`` once it is known to be a file of a known format and of a size it
    may have (:data:`MAX_BYTES`), found without reading it.

    Raises
    ------
    BlockvizError
        For another suffix, a missing file, or a file larger than its format's limit.
    """
    suffix = check_format(path)
    path = Path(path)
    if not path.is_file():
        raise BlockvizError(f"no file at {str(path)!r}: check the path")
    size, limit = path.stat().st_size, MAX_BYTES[suffix]
    if size > limit:
        fix = "save it as .safetensors (blockviz record … --save FILE.safetensors)" if suffix == ".json" else "use a smaller block"
        raise BlockvizError(f"{str(path)!r} is {size / 2**20:.0f} MB, more than the {limit // 2**20} MB a {suffix} file may hold: {fix}")
    return suffix


def write_tensors(path: str | Path, tensors: dict[str, torch.Tensor], header: dict) -> None:
    """Write ``tensors`` and a JSON-ready ``header`` (tokens, config, …) to ``path``, atomically.

    Raises :class:`BlockvizError` for an unknown suffix, an unwritable folder or a failed write
    (a full disk, …: the message names the path and the reason).
    """
    from safetensors.torch import save_file

    suffix = check_format(path)
    with atomic_path(path) as temporary:
        if suffix == ".safetensors":
            contiguous = {name: tensor.contiguous() for name, tensor in tensors.items()}
            try:
                save_file(contiguous, str(temporary), metadata={key: json.dumps(value) for key, value in header.items()})
            except SafetensorError as error:
                raise _os_error(error) from None  # atomic_path names the path and the reason
        else:
            document = {**header, "tensors": {name: _to_json(tensor) for name, tensor in tensors.items()}}
            text = _escaped_surrogates(json.dumps(document, ensure_ascii=False, allow_nan=False)).encode("utf-8")
            if len(text) > MAX_BYTES[".json"]:  # a file blockviz would refuse to read back (a trained model's layer)
                raise BlockvizError(f"as JSON these tensors take {len(text) / 2**20:.0f} MB, more than the {MAX_BYTES['.json'] // 2**20} MB blockviz reads back: "
                                    f"save as .safetensors instead ({Path(path).with_suffix('.safetensors').name})")
            temporary.write_bytes(text)


def read_tensors(path: str | Path) -> tuple[dict[str, torch.Tensor], dict]:
    """Read ``(tensors, header)`` from a file written by :func:`write_tensors` or by hand.

    JSON tensors are read as float64; ``null`` becomes −∞. Never unpickles anything. The size
    is checked before the file is read (:func:`check_file`), so memory stays bounded.

    Raises
    ------
    BlockvizError
        If the file is missing, too large, unreadable, of another format, truncated, nested too
        deeply, or not laid out as above.
    """
    path = Path(path)
    suffix = check_file(path)
    with _reading(path):
        if suffix == ".safetensors":
            header = _safetensors_header(path)
            return _safetensors_tensors(path), header
        raw, header = _split(_json_document(path))
        return {name: _from_json(name, value, path) for name, value in raw.items()}, header


def read_header(path: str | Path) -> dict:
    """The header of a file :func:`read_tensors` reads (``{}`` for bare named tensors), without
    turning its tensors into torch tensors: a safetensors file's metadata only, or a JSON
    document without its ``"tensors"``.

    Raises :class:`BlockvizError` as :func:`read_tensors` does.
    """
    path = Path(path)
    suffix = check_file(path)
    with _reading(path):
        if suffix == ".safetensors":
            return _safetensors_header(path)
        return _split(_json_document(path))[1]


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    try:
        yield
    except (OSError, UnicodeDecodeError) as error:
        raise BlockvizError(f"cannot read {str(path)!r} ({error}): check the file and its permissions") from None


def _safetensors_header(path: Path) -> dict:
    """The metadata, each value read as JSON (a value that is not JSON stays a string)."""
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
    except (SafetensorError, ValueError, RuntimeError) as error:
        raise BlockvizError(f"{str(path)!r} is not a valid .safetensors file ({_first_line(error)}): save it with safetensors") from None
    return {key: _json_or_text(value) for key, value in metadata.items()}


def _json_or_text(text: str):
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def _safetensors_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except (SafetensorError, ValueError, RuntimeError, TypeError) as error:
        raise BlockvizError(f"{str(path)!r} is not a valid .safetensors file ({_first_line(error)}): save it with safetensors") from None


def _json_document(path: Path) -> dict:
    try:
        document = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise BlockvizError(f"{str(path)!r} is nested too deeply to be read (a tensor has at most {MAX_TENSOR_DIMS} levels of lists): fix the file") from None
    except (json.JSONDecodeError, ValueError) as error:
        raise BlockvizError(f"{str(path)!r} is not valid JSON ({_first_line(error)}): fix the file") from None
    if not isinstance(document, dict):
        raise BlockvizError(f"{str(path)!r} must hold a JSON object of named tensors")
    return document


def _split(document: dict) -> tuple[dict, dict]:
    """``(named tensors as lists, header)``: the ``"tensors"`` object and the rest, or a bare
    object of named tensors and no header."""
    if isinstance(document.get("tensors"), dict):
        return document["tensors"], {key: value for key, value in document.items() if key != "tensors"}
    return document, {}


def _to_json(tensor: torch.Tensor):
    values = tensor.double().tolist()
    return _nulls_for_neg_inf(values)


def _nulls_for_neg_inf(values):
    if isinstance(values, list):
        return [_nulls_for_neg_inf(value) for value in values]
    if math.isnan(values) or values == math.inf:
        raise BlockvizError("a tensor holds NaN or +∞, which standard JSON cannot hold")
    return None if values == -math.inf else values


def _from_json(name: str, value, path: Path) -> torch.Tensor:
    import torch

    try:
        return torch.tensor(_neg_inf_for_nulls(value), dtype=torch.float64)
    except _TooDeep:
        raise BlockvizError(f"tensor {name!r} in {str(path)!r} is nested too deeply (more than {MAX_TENSOR_DIMS} levels of lists): fix the file") from None
    except (TypeError, ValueError, RuntimeError):
        raise BlockvizError(f"tensor {name!r} in {str(path)!r} is not a rectangular list of numbers: fix the file") from None


def _neg_inf_for_nulls(values, depth: int = 1):
    if isinstance(values, list):
        if depth > MAX_TENSOR_DIMS:
            raise _TooDeep
        return [_neg_inf_for_nulls(value, depth + 1) for value in values]
    if values is None:
        return -math.inf
    if isinstance(values, bool) or not isinstance(values, (int, float)):
        raise TypeError(values)
    return values


def _reject_constant(name: str):
    raise ValueError(f"{name} is not standard JSON; write −∞ as null")


def _escaped_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (a token from invalid UTF-8 in argv), which UTF-8
    cannot hold, written as its ``\\uXXXX`` escape; it reads back as the same character (a high
    surrogate right before a low one, as the character the pair encodes: so JSON reads escapes).

    >>> _escaped_surrogates('["caf\\udce9"]')
    '["caf\\\\udce9"]'
    """
    return _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _os_error(error: Exception) -> OSError:
    """The ``OSError`` inside a safetensors error (its Rust I/O error names the errno:
    "… No space left on device (os error 28)"), or one holding its first line."""
    found = re.search(r"os error (\d+)|code: (\d+)", str(error))
    if found:
        number = int(found[1] or found[2])
        return OSError(number, os.strerror(number))
    return OSError(_first_line(error))


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
