"""Writing files safely, and naming them after sentences."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Iterator

from blockviz.errors import BlockvizError

_READABLE_SENTENCE = re.compile(r"[a-z0-9]+( [a-z0-9]+)*")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one step.

    On any error the temporary file is removed and ``path`` is left as it was, so no
    half-written file ever stands under the final name.

    Raises
    ------
    BlockvizError
        If the folder does not exist or cannot be written.
    """
    final = Path(path)
    folder = writable_folder(final.parent)
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{final.name}.", suffix=".part")
    except OSError as error:
        raise BlockvizError(f"cannot write to folder {str(folder)!r} ({error.strerror}): choose a writable folder") from None
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, 0o666 & ~_current_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def writable_folder(folder: str | os.PathLike) -> Path:
    """``folder``, created with its parents if missing, once it is known to be writable.

    Raises
    ------
    BlockvizError
        If part of the path is a file, or the folder cannot be created or written.
    """
    folder = Path(folder) if str(folder) else Path(".")
    blocking_file = next((part for part in (folder, *folder.parents) if part.exists() and not part.is_dir()), None)
    if blocking_file is not None:
        raise BlockvizError(f"{str(blocking_file)!r} is a file, not a folder: choose another folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BlockvizError(f"cannot create folder {str(folder)!r} ({error.strerror}): choose a writable folder") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BlockvizError(f"cannot write to folder {str(folder)!r} (permission denied): choose a writable folder")
    return folder


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
    digest = hashlib.blake2b(sentence.encode("utf-8"), digest_size=4).hexdigest()
    return f"{readable}-{digest}"
