"""blockviz's cache folder, and GGUF models kept there as safetensors folders.

Loading a GGUF file dequantises every tensor (20–75 s for SmolLM2-135M); the result is written
once as an ordinary Hugging Face folder (``config.json``, ``model.safetensors``, the tokenizer)
under :func:`cache_dir` ``/models``, and later loads read that (under 2 s).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from blockviz.errors import BlockvizError

COMPLETE = "blockviz-complete.json"
"""Written last into a cached folder: a folder without it is an interrupted conversion."""


def cache_dir() -> Path:
    """blockviz's cache folder: ``$BLOCKVIZ_CACHE_DIR``, else the user cache directory of
    ``platformdirs`` (on Linux ``$XDG_CACHE_HOME/blockviz``, by default ``~/.cache/blockviz``)."""
    if os.environ.get("BLOCKVIZ_CACHE_DIR"):
        return Path(os.environ["BLOCKVIZ_CACHE_DIR"])
    try:
        import platformdirs
    except ImportError:  # the XDG rule platformdirs follows on Linux
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "blockviz"
    return Path(platformdirs.user_cache_dir("blockviz", appauthor=False))


def gguf_cache_folder(gguf_path: Path) -> Path:
    """The cache folder of the GGUF file ``gguf_path``: named after the file, its size and
    modification time (a changed file gets a new folder)."""
    status = gguf_path.stat()
    digest = hashlib.blake2b(
        f"{gguf_path.resolve()}\0{status.st_size}\0{status.st_mtime_ns}".encode("utf-8", "surrogatepass"), digest_size=8
    ).hexdigest()
    return cache_dir() / "models" / f"{gguf_path.stem}-{digest}"


def cached_gguf(gguf_path: Path, convert) -> Path:
    """The safetensors folder of ``gguf_path``, made by ``convert(folder)`` the first time
    (into a temporary folder renamed into place, so an interrupted conversion leaves nothing).

    Raises :class:`BlockvizError` if the cache folder cannot be written.
    """
    folder = gguf_cache_folder(gguf_path)
    if (folder / COMPLETE).is_file():
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    except OSError as error:
        raise BlockvizError(
            f"cannot write blockviz's cache folder {str(folder.parent)!r} ({error.strerror}): set XDG_CACHE_HOME or BLOCKVIZ_CACHE_DIR to a writable folder"
        ) from None
    try:
        convert(temporary)
        (temporary / COMPLETE).write_text(json.dumps({"gguf": str(gguf_path)}), encoding="utf-8")
        if folder.exists() and not (folder / COMPLETE).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # an interrupted conversion of an older blockviz
        try:
            os.replace(temporary, folder)
        except OSError:
            if not (
                folder / COMPLETE
            ).is_file():  # another process converting at the same time finished first: use its copy
                raise BlockvizError(
                    f"cannot write blockviz's cache folder {str(folder)!r}: set XDG_CACHE_HOME or BLOCKVIZ_CACHE_DIR to a writable folder"
                ) from None
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    return folder
