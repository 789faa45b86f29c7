"""Named tensors in files: ``.safetensors`` (exact) and ``.json`` (standard JSON, −∞ as null).

JSON layout: ``{"tokens": [...], "config": {...}, "tensors": {name: nested lists}}``; a weights
file may also be a bare ``{name: nested lists}``. NaN and +∞ are never written; −∞ (the mask's
blocked cells) is written as ``null``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from safetensors import safe_open

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path

FORMATS = (".safetensors", ".json")


def check_format(path: str | Path) -> str:
    """The file's suffix, if blockviz reads and writes it; else :class:`BlockvizError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise BlockvizError(f"{str(path)!r} is neither .safetensors nor .json: name the file with one of those endings")
    return suffix


def write_tensors(path: str | Path, tensors: dict[str, torch.Tensor], header: dict) -> None:
    """Write ``tensors`` and a JSON-ready ``header`` (tokens, config, …) to ``path``, atomically.

    Raises :class:`BlockvizError` for an unknown suffix or an unwritable folder.
    """
    suffix = check_format(path)
    with atomic_path(path) as temporary:
        if suffix == ".safetensors":
            contiguous = {name: tensor.contiguous() for name, tensor in tensors.items()}
            save_file(contiguous, str(temporary), metadata={key: json.dumps(value) for key, value in header.items()})
        else:
            document = {**header, "tensors": {name: _to_json(tensor) for name, tensor in tensors.items()}}
            temporary.write_text(json.dumps(document, ensure_ascii=False, allow_nan=False), encoding="utf-8")


def read_tensors(path: str | Path) -> tuple[dict[str, torch.Tensor], dict]:
    """Read ``(tensors, header)`` from a file written by :func:`write_tensors` or by hand.

    JSON tensors are read as float64; ``null`` becomes −∞. Never unpickles anything.

    Raises
    ------
    BlockvizError
        If the file is missing, unreadable, of another format, or not laid out as above.
    """
    path = Path(path)
    suffix = check_format(path)
    if not path.is_file():
        raise BlockvizError(f"no file at {str(path)!r}: check the path")
    try:
        if suffix == ".safetensors":
            return _read_safetensors(path)
        return _read_json(path)
    except (OSError, UnicodeDecodeError) as error:
        raise BlockvizError(f"cannot read {str(path)!r} ({error}): check the file and its permissions") from None


def _read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    try:
        tensors = load_file(str(path))
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
        header = {key: json.loads(value) for key, value in metadata.items()}
    except (SafetensorError, json.JSONDecodeError, ValueError, RuntimeError) as error:
        raise BlockvizError(f"{str(path)!r} is not a valid .safetensors file ({_first_line(error)}): save it with safetensors") from None
    return tensors, header


def _read_json(path: Path) -> tuple[dict[str, torch.Tensor], dict]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError) as error:
        raise BlockvizError(f"{str(path)!r} is not valid JSON ({_first_line(error)}): fix the file") from None
    if not isinstance(document, dict):
        raise BlockvizError(f"{str(path)!r} must hold a JSON object of named tensors")
    raw = document.get("tensors", document) if isinstance(document.get("tensors"), dict) else document
    header = {key: value for key, value in document.items() if key != "tensors"} if raw is not document else {}
    return {name: _from_json(name, value, path) for name, value in raw.items()}, header


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
    try:
        return torch.tensor(_neg_inf_for_nulls(value), dtype=torch.float64)
    except (TypeError, ValueError):
        raise BlockvizError(f"tensor {name!r} in {str(path)!r} is not a rectangular list of numbers: fix the file") from None


def _neg_inf_for_nulls(values):
    if isinstance(values, list):
        return [_neg_inf_for_nulls(value) for value in values]
    if values is None:
        return -math.inf
    if isinstance(values, bool) or not isinstance(values, (int, float)):
        raise TypeError(values)
    return values


def _reject_constant(name: str):
    raise ValueError(f"{name} is not standard JSON; write −∞ as null")


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
