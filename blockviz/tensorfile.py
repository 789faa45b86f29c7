"""Named tensors in files: ``.safetensors`` (exact) and ``.json`` (standard JSON, −∞ as null).

JSON layout: ``{"tokens": [...], "config": {...}, "tensors": {name: nested lists}}``; a
parameters file may also be a bare ``{name: nested lists}``. Tensors named ``blocks.K.name`` (a
record of several blocks) are written beside ``"tensors"`` as ``"blocks": [{name: nested lists},
…]``, block K the K-th object, and read back under the same names; safetensors keeps the names. NaN and +∞ are never written; −∞
(the mask's blocked cells) is written as ``null``. Files are refused before they are read if they
are larger than :data:`MAX_BYTES`, and JSON nested deeper than a tensor can be is refused too,
so a bad file is a one-line :class:`~blockviz.errors.BlockvizError`, never a crash.

A JSON file is read in one pass that turns each tensor's rows into numbers as it meets them
(:class:`_JsonDocument`): memory holds the file's text once and the numbers as float64, never the
whole document as Python lists (which took 14 times the file for short numbers).

Torch is imported only by the functions that make or take tensors: reading a header does not.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy
from safetensors import SafetensorError, safe_open

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path

if TYPE_CHECKING:
    import torch

FORMATS = (".safetensors", ".json")
MAX_BYTES = {".json": 64 * 2**20, ".safetensors": 4 * 2**30}
"""Largest file read, by format, checked before reading a byte: reading JSON holds the file's text
and its numbers as float64 (up to three times the file, for numbers as short as ``0,``), loading
safetensors about its size."""
MAX_TENSOR_DIMS = 8
"""Deepest nesting of lists a JSON tensor may have (blockviz's tensors have at most 4 dimensions)."""


class _TooDeep(ValueError):
    """A JSON tensor nested more than :data:`MAX_TENSOR_DIMS` deep."""


class _NotATensor(ValueError):
    """A JSON value that is not a number, null or a rectangular list of them."""


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
        fix = (
            "save it as .safetensors (blockviz record … --save FILE.safetensors)"
            if suffix == ".json"
            else "use a smaller block"
        )
        raise BlockvizError(
            f"{str(path)!r} is {size / 2**20:.0f} MB, more than the {limit // 2**20} MB a {suffix} file may hold: {fix}"
        )
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
                save_file(
                    contiguous, str(temporary), metadata={key: json.dumps(value) for key, value in header.items()}
                )
            except SafetensorError as error:
                raise os_error_inside(error) from None  # atomic_path names the path and the reason
            _sort_safetensors_header(temporary)
        else:
            document = {**header, **_json_tensors(tensors)}
            text = _escaped_surrogates(json.dumps(document, ensure_ascii=False, allow_nan=False)).encode("utf-8")
            if len(text) > MAX_BYTES[".json"]:  # a file blockviz would refuse to read back (a trained model's layer)
                raise BlockvizError(
                    f"as JSON these tensors take {len(text) / 2**20:.0f} MB, more than the {MAX_BYTES['.json'] // 2**20} MB blockviz reads back: "
                    f"save as .safetensors instead ({Path(path).with_suffix('.safetensors').name})"
                )
            temporary.write_bytes(text)


BLOCK_PREFIX = "blocks."
"""Tensors named ``blocks.K.name`` are block K's own (a record of several blocks)."""
_BLOCK_NAME = re.compile(r"blocks\.(\d+)\.(.+)", re.DOTALL)


def _json_tensors(tensors: dict[str, torch.Tensor]) -> dict:
    """``{"tensors": {…}}`` with, when some are named ``blocks.K.name``, ``"blocks": [{…}, …]``."""
    shared: dict[str, object] = {}
    blocks: dict[int, dict[str, object]] = {}
    for name, tensor in tensors.items():
        found = _BLOCK_NAME.fullmatch(name)
        if found is None:
            shared[name] = _to_json(tensor)
        else:
            blocks.setdefault(int(found[1]), {})[found[2]] = _to_json(tensor)
    if sorted(blocks) != list(range(len(blocks))):
        raise BlockvizError(
            f"the blocks' tensors are numbered {sorted(blocks)}: they must be 0, 1, … with none missing"
        )
    document: dict[str, object] = {"tensors": shared}
    if blocks:
        document["blocks"] = [blocks[index] for index in range(len(blocks))]
    return document


def _sort_safetensors_header(path: Path) -> None:
    """Rewrite a safetensors file's JSON header with its keys sorted, in place and at the same
    length (padded with spaces, as the format allows), so the same tensors and header give the
    same bytes: safetensors writes its metadata from a hash map, in an order that changes from
    one process to the next."""
    with open(path, "r+b") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
        text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if len(text) > size:  # written differently from safetensors' own JSON: keep its header
            return
        handle.seek(8)
        handle.write(text + b" " * (size - len(text)))


def read_tensors(
    path: str | Path, check_header: Callable[[dict], None] | None = None
) -> tuple[dict[str, torch.Tensor], dict]:
    """Read ``(tensors, header)`` from a file written by :func:`write_tensors` or by hand.

    JSON tensors are read as float64; ``null`` becomes −∞. Never unpickles anything. The size
    is checked before the file is read (:func:`check_file`), and a JSON file is read in one
    pass, its numbers stored as they are met, so memory stays bounded (about the file's size
    plus 8 bytes a number). ``check_header``, if given, is called with the header before any
    tensor is refused (a JSON file's header as far as it comes before its first bad tensor), so a
    file of the wrong kind gets the caller's message rather than one about its tensors.

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
            if check_header is not None:
                check_header(header)
            return _safetensors_tensors(path), header
        tensors, header, problem = _json_parts(path)
        if check_header is not None:
            check_header(header)
        if problem is not None:
            raise BlockvizError(problem)
        import torch

        return {name: torch.from_numpy(array) for name, array in tensors.items()}, header


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
        tensors, header, problem = _json_parts(path)
        if problem is not None:
            raise BlockvizError(problem)
        return header


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
        raise BlockvizError(
            f"{str(path)!r} is not a valid .safetensors file ({_first_line(error)}): save it with safetensors"
        ) from None
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
        raise BlockvizError(
            f"{str(path)!r} is not a valid .safetensors file ({_first_line(error)}): save it with safetensors"
        ) from None


def _to_json(tensor: torch.Tensor):
    values = tensor.double().tolist()
    return _nulls_for_neg_inf(values)


def _nulls_for_neg_inf(values):
    if isinstance(values, list):
        return [_nulls_for_neg_inf(value) for value in values]
    if math.isnan(values) or values == math.inf:
        raise BlockvizError("a tensor holds NaN or +∞, which standard JSON cannot hold")
    return None if values == -math.inf else values


def _reject_constant(name: str):
    raise ValueError(f"{name} is not standard JSON; write −∞ as null")


def _json_parts(path: Path) -> tuple[dict[str, torch.Tensor], dict, str | None]:
    """``(tensors, header, problem)`` of a JSON file: the ``"tensors"`` object and the other
    keys, or a bare object of named tensors and no header; ``problem`` is the message of the
    first tensor that is not a rectangular list of numbers (reading stops there), else ``None``.

    Raises :class:`BlockvizError` for a file that is not JSON, not an object, or nested too
    deeply (a tensor deeper than :data:`MAX_TENSOR_DIMS`).
    """
    where = repr(str(path))
    document = _JsonDocument(path.read_bytes())
    values: dict[str, object] = {}
    tensors: dict[str, torch.Tensor] | None = None
    blocks: dict[str, torch.Tensor] = {}
    try:
        if document.peek() != "{":
            if document.peek() and document.peek() in '["-0123456789tfn':
                raise BlockvizError(f"{where} must hold a JSON object of named tensors")
            raise json.JSONDecodeError("Expecting value", document.text, document.at)
        for key in document.members():
            if key == "tensors" and document.peek() == "{":
                tensors = {}
                for name in document.members():
                    try:
                        tensors[name] = document.tensor()
                    except _TooDeep:  # unreadable, as invalid JSON: said before the header is looked at
                        raise BlockvizError(
                            f"tensor {name!r} in {where} is nested too deeply (more than {MAX_TENSOR_DIMS} levels of lists): fix the file"
                        ) from None
                    except _NotATensor:
                        return (
                            tensors,
                            _header(values),
                            f"tensor {name!r} in {where} is not a rectangular list of numbers: fix the file",
                        )
            elif key == "blocks" and document.peek() == "[":
                problem = _json_blocks(document, blocks, where)
                if problem is not None:
                    return {**(tensors or {}), **blocks}, _header(values), problem
            else:
                values[key] = document.tensor_or_value()
        document.end()
    except RecursionError:
        raise BlockvizError(
            f"{where} is nested too deeply to be read (a tensor has at most {MAX_TENSOR_DIMS} levels of lists): fix the file"
        ) from None
    except (json.JSONDecodeError, ValueError) as error:
        raise BlockvizError(f"{where} is not valid JSON ({_first_line(error)}): fix the file") from None
    if tensors is not None:
        return {**tensors, **blocks}, _header(values), None
    if blocks:
        return blocks, _header(values), f'{where} holds blocks but no "tensors": fix the file'
    for name, value in values.items():  # a bare object of named tensors
        if not isinstance(value, _Tensor):
            return {}, {}, f"tensor {name!r} in {where} is not a rectangular list of numbers: fix the file"
    return {name: value.tensor for name, value in values.items()}, {}, None


def _json_blocks(document: _JsonDocument, blocks: dict[str, torch.Tensor], where: str) -> str | None:
    """Read the list ``"blocks": [{name: tensor}, …]`` here into ``blocks`` as ``blocks.K.name``;
    the message of the first entry that is not an object of tensors, else ``None``.

    Raises :class:`BlockvizError` for a tensor nested too deeply.
    """
    for index in document.elements():
        if document.peek() != "{":
            return f"block {index} in {where} is not an object of named tensors: fix the file"
        for name in document.members():
            try:
                blocks[f"{BLOCK_PREFIX}{index}.{name}"] = document.tensor()
            except _TooDeep:
                raise BlockvizError(
                    f"tensor {name!r} of block {index} in {where} is nested too deeply (more than {MAX_TENSOR_DIMS} levels of lists): fix the file"
                ) from None
            except _NotATensor:
                return f"tensor {name!r} of block {index} in {where} is not a rectangular list of numbers: fix the file"
    return None


class _Tensor:
    """A top-level value read as a tensor (it may still turn out to be a header's list of numbers)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


def _header(values: dict) -> dict:
    """The header's values as JSON values: a list of numbers read as a tensor back to a list."""
    return {
        key: _nulls_for_neg_inf(value.tensor.tolist()) if isinstance(value, _Tensor) else value
        for key, value in values.items()
    }


_DECODER = json.JSONDecoder(parse_constant=lambda name: _reject_constant(name))
"""Standard JSON only: NaN and Infinity are refused (−∞ is written as null)."""
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER_TYPES = frozenset({int, float, type(None)})


class _JsonDocument:
    """A JSON document walked once, its tensors turned into numbers row by row.

    The bytes are held as latin-1 text: one character per byte, so the text takes the file's
    size, its structure and numbers (ASCII) read as they are, and a value's own bytes are
    ``text[i:j].encode("latin-1")`` — strings (keys, the header) are decoded from those as UTF-8.
    Parsing is the standard library's (:meth:`json.JSONDecoder.raw_decode`); this class only
    walks the objects and the nested lists, so that no tensor becomes nested Python lists.
    """

    def __init__(self, data: bytes):
        self.text = data.decode("latin-1")
        self.at = 0

    def peek(self) -> str:
        """The next character that is not white space (``""`` at the end); ``at`` is on it."""
        self.at = _SPACE.match(self.text, self.at).end()
        return self.text[self.at : self.at + 1]

    def _expect(self, char: str) -> None:
        if self.peek() != char:
            raise json.JSONDecodeError(f"Expecting {char!r}", self.text, self.at)
        self.at += 1

    def end(self) -> None:
        """Raise unless only white space is left."""
        if self.peek():
            raise json.JSONDecodeError("Extra data", self.text, self.at)

    def value(self):
        """The JSON value here, its strings decoded from UTF-8."""
        self.peek()
        start = self.at
        _, self.at = _DECODER.raw_decode(self.text, start)
        return _DECODER.decode(self.text[start : self.at].encode("latin-1").decode("utf-8"))

    def members(self) -> Iterator[str]:
        """Each key of the object here, with ``at`` left on its value for the caller to read."""
        self._expect("{")
        if self.peek() == "}":
            self.at += 1
            return
        while True:
            if self.peek() != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", self.text, self.at)
            key = self.value()
            self._expect(":")
            yield key
            following = self.peek()
            self.at += 1
            if following == "}":
                return
            if following != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", self.text, self.at - 1)

    def elements(self) -> Iterator[int]:
        """The index of each element of the list here, with ``at`` left on it for the caller to read."""
        self._expect("[")
        if self.peek() == "]":
            self.at += 1
            return
        index = 0
        while True:
            yield index
            following = self.peek()
            self.at += 1
            if following == "]":
                return
            if following != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", self.text, self.at - 1)
            index += 1

    def tensor_or_value(self):
        """A :class:`_Tensor` if the value here is a number, null or a rectangular list of
        them, else the value itself (a header's string, object, list of strings …)."""
        self.peek()
        start = self.at
        try:
            return _Tensor(self.tensor())
        except (_NotATensor, _TooDeep):
            self.at = start
            return self.value()

    def tensor(self) -> numpy.ndarray:
        """The number, null or rectangular list of them here as a float64 array (null is −∞);
        numpy, not torch, so that reading a header needs no torch.

        Raises :class:`_NotATensor` or :class:`_TooDeep` (``at`` is then left anywhere).
        """

        numbers = array("d")
        sizes: dict[int, int] = {}
        if self.peek() != "[":
            start = self.at
            try:
                _, self.at = _DECODER.raw_decode(self.text, start)
            except json.JSONDecodeError:
                raise _NotATensor from None
            self._add_row(numbers, "[" + self.text[start : self.at] + "]")
            return numpy.array(numbers[0], dtype=numpy.float64)
        leaf_depth = self._list(0, sizes, numbers)
        shape = tuple(sizes[depth] for depth in range(leaf_depth + 1))
        if not numbers:
            return numpy.zeros(shape, dtype=numpy.float64)
        return numpy.frombuffer(numbers, dtype=numpy.float64).reshape(shape)

    def _list(self, depth: int, sizes: dict[int, int], numbers: array) -> int:
        """Read the list here (``at`` on its ``[``) into ``numbers``, its length into
        ``sizes[depth]`` (every list at one depth has one length); return the depth of its rows."""
        if depth >= MAX_TENSOR_DIMS:
            raise _TooDeep
        opening = self.at
        self.at += 1
        if self.peek() == "[":
            count, leaf_depth = 0, None
            while True:
                below = self._list(depth + 1, sizes, numbers)
                if leaf_depth is not None and below != leaf_depth:
                    raise _NotATensor
                leaf_depth, count = below, count + 1
                following = self.peek()
                self.at += 1
                if following == "]":
                    break
                if following != "," or self.peek() != "[":
                    raise _NotATensor
        else:  # a row of numbers: one standard-library parse, from "[" to its "]"
            close = self.text.find("]", self.at)
            if close < 0 or self.text.find("[", self.at, close) >= 0:
                raise _NotATensor
            count = self._add_row(numbers, self.text[opening : close + 1])
            self.at, leaf_depth = close + 1, depth
        if sizes.setdefault(depth, count) != count:
            raise _NotATensor
        return leaf_depth

    @staticmethod
    def _add_row(numbers: array, text: str) -> int:
        """Append the numbers of the JSON list ``text`` to ``numbers`` (null as −∞); their count."""
        try:
            row = _DECODER.decode(text)  # NaN or Infinity: ValueError, the file is not standard JSON
        except (json.JSONDecodeError, RecursionError):
            raise _NotATensor from None
        kinds = set(map(type, row))
        if not kinds <= _NUMBER_TYPES:  # bool is not int here: True is no number
            raise _NotATensor
        if type(None) in kinds:
            row = [-math.inf if value is None else value for value in row]
        try:
            numbers.extend(row)
        except OverflowError:
            raise _NotATensor from None
        return len(row)


def _escaped_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (a token from invalid UTF-8 in argv), which UTF-8
    cannot hold, written as its ``\\uXXXX`` escape; it reads back as the same character (a high
    surrogate right before a low one, as the character the pair encodes: so JSON reads escapes).

    >>> _escaped_surrogates('["caf\\udce9"]')
    '["caf\\\\udce9"]'
    """
    return _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def os_error_inside(error: Exception) -> OSError:
    """The ``OSError`` inside a safetensors error (its Rust I/O error names the errno:
    "… No space left on device (os error 28)"), or one holding its first line."""
    found = re.search(r"os error (\d+)|code: (\d+)", str(error))
    if found:
        number = int(found[1] or found[2])
        return OSError(number, os.strerror(number))
    return OSError(_first_line(error))


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
