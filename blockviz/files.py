"""Writing files safely, and naming them after sentences.

Every file blockviz writes goes through :func:`atomic_path` (a temporary file beside it, renamed
over it when complete) or lives in a :func:`temporary_folder`; both remove what they made on any
error or interruption, and an ``OSError`` while writing (a full disk, a read-only file system, no
permission, a name too long) becomes one :class:`BlockvizError` naming the path and the reason.
A process that must end at once (a worker told to stop) calls :func:`remove_temporaries`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from blockviz.errors import BlockvizError

_READABLE_SENTENCE = re.compile(r"[a-z0-9]+( [a-z0-9]+)*")
_TEMPORARY_NAME_BYTES = 120
"""A temporary file's name holds at most this much of the final name (in UTF-8 bytes), so a
final name that fits the file system's limit (usually 255 bytes) gives a temporary name that fits."""
_FIXES = {
    errno.ENOSPC: "free some space or choose another folder",
    errno.EDQUOT: "free some space or choose another folder",
    errno.EFBIG: "choose another folder",
    errno.EROFS: "choose a writable folder",
    errno.EACCES: "choose a writable folder",
    errno.EPERM: "choose a writable folder",
    errno.ENAMETOOLONG: "choose a shorter name",
}

_temporaries: dict[Path, int] = {}
"""Temporary files and folders being written, each with the id of the process writing it (a
forked child inherits the parent's entries and must leave them alone)."""


def output_error(path: str | os.PathLike, error: OSError, what: str = "write") -> BlockvizError:
    """The one-line error for ``error`` raised while writing ``path``: the path, the system's
    reason (:func:`os.strerror`) and what to do.

    >>> import errno
    >>> str(output_error("out/a.svg", OSError(errno.ENOSPC, "x")))
    "cannot write 'out/a.svg' (No space left on device): free some space or choose another folder"
    """
    reason = os.strerror(error.errno) if error.errno else (error.strerror or str(error) or type(error).__name__)
    return BlockvizError(f"cannot {what} {str(path)!r} ({reason}): {_FIXES.get(error.errno, 'choose another folder')}")


@contextlib.contextmanager
def writing(path: str | os.PathLike, what: str = "write") -> Iterator[None]:
    """Turn an ``OSError`` raised inside into :func:`output_error` for ``path``."""
    try:
        yield
    except OSError as error:
        raise output_error(path, error, what) from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one step.

    On any error or interruption the temporary file is removed and ``path`` is left as it was,
    so no half-written file ever stands under the final name. The temporary file is hidden:
    ``.<name>.<random>.part``.

    Raises
    ------
    BlockvizError
        If the folder does not exist or cannot be written, or writing fails (an ``OSError``
        inside the body too, e.g. a full disk): the message names ``path`` and the reason.
    """
    final = Path(path)
    folder = writable_folder(final.parent)
    stem = _shortened(final.name, _TEMPORARY_NAME_BYTES)
    with writing(final):
        temporary = _create(folder, f".{stem}.", ".part", _new_file)
    try:
        with writing(final):
            yield temporary
            os.chmod(temporary, 0o666 & ~_current_umask())  # a new file is 0600; give the usual mode
            os.replace(temporary, final)
    except BaseException:
        _remove(temporary)
        raise
    finally:
        _temporaries.pop(temporary, None)


@contextlib.contextmanager
def temporary_folder(parent: str | os.PathLike, prefix: str) -> Iterator[Path]:
    """A new, empty folder ``parent/<prefix><random>``, removed with everything in it afterwards
    (after an error or interruption too). ``parent`` is created if missing.

    Raises
    ------
    BlockvizError
        If ``parent`` cannot be created or written (the message names it and the reason).
    """
    parent = Path(parent)
    with writing(parent, "write to folder"):
        parent.mkdir(parents=True, exist_ok=True)
        folder = _create(parent, prefix, "", lambda path: os.mkdir(path, 0o700))
    try:
        yield folder
    except BaseException:
        _remove(folder)
        raise  # still registered: after an interruption the last sweep removes it again, should a writer still busy have made it anew
    _remove(folder)
    _temporaries.pop(folder, None)


def remove_temporaries() -> None:
    """Remove every temporary file and folder this process made (:func:`atomic_path`,
    :func:`temporary_folder`) and has not removed yet: for a process that ends without
    unwinding (a worker told to stop), and as a last sweep when a command is interrupted."""
    me = os.getpid()
    for path, owner in list(_temporaries.items()):
        if owner == me:
            _remove(path)
            _temporaries.pop(path, None)


def _create(folder: Path, prefix: str, suffix: str, make) -> Path:
    """``folder/<prefix><random><suffix>`` made by ``make(path)``, registered before it exists
    (an interruption between making it and registering it would leave it behind)."""
    while True:
        path = folder / f"{prefix}{secrets.token_hex(4)}{suffix}"
        _temporaries[path] = os.getpid()
        try:
            make(path)
            return path
        except FileExistsError:
            _temporaries.pop(path, None)
        except BaseException:
            _temporaries.pop(path, None)
            raise


def _shortened(name: str, limit: int) -> str:
    """The longest start of ``name`` that is at most ``limit`` bytes in the file system's encoding."""
    while len(os.fsencode(name)) > limit:
        name = name[:-1]
    return name


def _new_file(path: Path) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for _ in range(
            40
        ):  # a writer still busy inside (Manim's encoder thread, when interrupted) may add a file meanwhile
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                return
            time.sleep(0.05)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def prune_least_recent(folder: Path, pattern: str, keep: int) -> None:
    """Remove the files of ``folder`` matching ``pattern`` beyond the ``keep`` most recently used
    (by modification time: a cache marks a file used with :func:`os.utime`); a file another
    process removes meanwhile is passed over."""
    kept = []
    for path in folder.glob(pattern):
        with contextlib.suppress(OSError):
            kept.append((path.stat().st_mtime_ns, path))
    for _, path in sorted(kept, reverse=True)[keep:]:
        with contextlib.suppress(OSError):
            path.unlink()


def writable_folder(folder: str | os.PathLike) -> Path:
    """``folder``, created with its parents if missing, once it is known to be writable.

    Writability is tried, not asked (``os.access`` says yes for a root user on a read-only file
    system): a file is made in the folder and removed.

    Raises
    ------
    BlockvizError
        If part of the path is a file, or the folder cannot be created or written; the message
        gives the system's reason (e.g. "Read-only file system", "Permission denied"), or says
        "not writable" where the system says a folder that exists does not (``/proc``: "No such
        file or directory").
    """
    folder = Path(folder) if str(folder) else Path(".")
    with writing(folder, "create folder"):  # a name too long fails already here
        blocking_file = next((part for part in (folder, *folder.parents) if part.exists() and not part.is_dir()), None)
    if blocking_file is not None:
        raise BlockvizError(f"{str(blocking_file)!r} is a file, not a folder: choose another folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileNotFoundError:  # /proc, /sys: the folder above exists but takes no new names
        existing = next(part for part in folder.parents if part.is_dir())
        raise BlockvizError(
            f"cannot create folder {str(folder)!r}: {str(existing)!r} is not writable, choose another folder"
        ) from None
    except OSError as error:
        raise output_error(folder, error, "create folder") from None
    try:
        probe = _create(folder, ".blockviz-probe-", "", _new_file)
    except FileNotFoundError:
        raise BlockvizError(
            f"cannot write to folder {str(folder)!r}: it is not writable, choose another folder"
        ) from None
    except OSError as error:
        raise output_error(folder, error, "write to folder") from None
    _remove(probe)
    _temporaries.pop(probe, None)
    return folder


def writable_file(path: str | os.PathLike) -> Path:
    """``path``, once its folder is known to be writable (:func:`writable_folder`) and its name
    to fit the file system, so a write that would fail is refused before any work.

    Raises
    ------
    BlockvizError
        As :func:`writable_folder`, or for a name too long (the message names the path).
    """
    path = Path(path)
    folder = writable_folder(path.parent)
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):  # no such limit here
        return path
    if len(os.fsencode(path.name)) > limit:
        raise output_error(path, OSError(errno.ENAMETOOLONG, ""))
    return path


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sentence_slug(sentence: str, max_length: int = 48) -> str:
    """A safe folder name for a sentence, different for different sentences.

    ``"the cat sat"`` → ``"the-cat-sat"``; any sentence that is not lower-case ASCII words
    separated by single spaces gets a short hash of its exact text appended
    (``"The cat sat."`` → ``"the-cat-sat-1f3c…"``), so two sentences never share a folder.
    """
    ascii_text = unicodedata.normalize("NFKD", sentence).encode("ascii", "ignore").decode().lower()
    readable = re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-")[:max_length].strip("-") or "sentence"
    if _READABLE_SENTENCE.fullmatch(sentence) and len(sentence) <= max_length:
        return readable
    digest = hashlib.blake2b(
        sentence.encode("utf-8", "surrogatepass"), digest_size=4
    ).hexdigest()  # a lone surrogate: invalid UTF-8 in argv
    return f"{readable}-{digest}"
