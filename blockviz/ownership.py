"""Which files blockviz wrote, so that it never replaces or deletes a file it did not write.

Every folder blockviz writes an output into keeps a hidden manifest, ``.blockviz-files.json``:
the name of each file blockviz wrote there and the SHA-256 of its bytes. A file is blockviz's own
while it is listed with the hash it has now; a file the user made, or changed after blockviz
wrote it, is *foreign*, and no command replaces or removes it — not with ``--force`` either: the
command refuses before any work, in one line naming the first foreign file. A folder is
blockviz's own when every file under it is.

Outputs are written through :func:`output_file` (an :func:`~blockviz.files.atomic_path` that
refuses a foreign file and lists what it wrote), or written elsewhere and listed with
:func:`remember` before they are moved into place; commands call :func:`refuse_foreign` on
everything they are about to write before they start. Manifests are updated under an exclusive
``flock``, so render workers writing into one folder at once lose no entry.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path, writing

MANIFEST = ".blockviz-files.json"
"""The manifest's name, in every folder blockviz writes outputs into."""


def refuse_foreign(paths: Iterable[str | os.PathLike]) -> None:
    """Raise for the first of ``paths`` that exists and is not blockviz's own; a missing path is fine.

    Raises
    ------
    BlockvizError
        "'DIR/notes.txt' was not written by blockviz (or was changed since): …", naming the first
        foreign file (inside a folder, the first foreign file under it); or
        :func:`~blockviz.files.output_error` for a path that cannot be looked at (a name too long).
    """
    for path in paths:
        with writing(path):  # a name too long, a folder that cannot be read
            foreign = first_foreign(path)
        if foreign is not None:
            raise foreign_error(foreign)


def foreign_error(path: Path) -> BlockvizError:
    """The one-line refusal for the foreign file ``path``."""
    return BlockvizError(
        f"{str(path)!r} was not written by blockviz (or was changed since) and blockviz never replaces it: "
        "move it away or choose another output folder"
    )


def first_foreign(path: str | os.PathLike) -> Path | None:
    """The first file at or under ``path`` that blockviz did not write (in name order), or ``None``.

    A symbolic link is foreign (blockviz never writes one), and so is anything that is neither a
    file nor a folder.
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not (path.is_file() or path.is_dir()):
        return path
    if path.is_file():
        return None if is_own(path) else path
    for child in sorted(path.iterdir()):
        if child.name == MANIFEST and not child.is_symlink():
            continue
        foreign = first_foreign(child)
        if foreign is not None:
            return foreign
    return None


def is_own(path: str | os.PathLike) -> bool:
    """True if the file ``path`` is listed in its folder's manifest with the hash it has now."""
    path = Path(path)
    listed = _read(path.parent / MANIFEST).get(path.name)
    return listed is not None and path.is_file() and not path.is_symlink() and listed == file_hash(path)


def remember(paths: Iterable[str | os.PathLike]) -> None:
    """List ``paths`` (files, or folders: every file under them) as written by blockviz, each in
    its own folder's manifest.

    Raises :class:`BlockvizError` if a manifest cannot be written (naming it and the reason).
    """
    by_folder: dict[Path, dict[str, str]] = {}
    for path in paths:
        for file in _files_under(Path(path)):
            by_folder.setdefault(file.parent, {})[file.name] = file_hash(file)
    for folder, hashes in by_folder.items():
        _update(folder / MANIFEST, lambda files, hashes=hashes: files.update(hashes))


def forget(paths: Iterable[str | os.PathLike]) -> None:
    """Drop ``paths`` (files blockviz removed) from their folders' manifests."""
    for path in map(Path, paths):
        _update(path.parent / MANIFEST, lambda files, name=path.name: files.pop(name, None))


@contextlib.contextmanager
def output_file(path: str | os.PathLike) -> Iterator[Path]:
    """:func:`~blockviz.files.atomic_path` for an output: refuse a foreign file at ``path``
    first, and list the new file in its folder's manifest afterwards.

    Raises
    ------
    BlockvizError
        If a foreign file stands at ``path`` (:func:`refuse_foreign`), or as
        :func:`~blockviz.files.atomic_path`.
    """
    refuse_foreign([path])
    with atomic_path(path) as temporary:
        yield temporary
        refuse_foreign([path])  # a file the user put there meanwhile
    remember([path])


def remove_own(path: str | os.PathLike) -> None:
    """Remove the file or folder ``path`` if it is blockviz's own, else refuse; a missing path is fine.

    Raises :class:`BlockvizError` naming the first foreign file under ``path``.
    """
    import shutil

    path = Path(path)
    refuse_foreign([path])
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
        forget([path])


def file_hash(path: str | os.PathLike) -> str:
    """The SHA-256 of the file's bytes, as 64 hex digits."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _files_under(path: Path) -> Iterator[Path]:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*")):
            if child.is_file() and not child.is_symlink() and child.name != MANIFEST:
                yield child
    elif path.is_file():
        yield path


def _read(manifest: Path) -> dict[str, str]:
    """The manifest's ``{name: sha256}``; empty if it is missing or damaged (then nothing there
    counts as blockviz's own: the safe way to be wrong)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {name: digest for name, digest in files.items() if isinstance(digest, str)}


def _update(manifest: Path, change) -> None:
    """Apply ``change`` to the manifest's ``{name: sha256}`` under an exclusive lock, in place."""
    with writing(manifest), open(os.open(manifest, os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        files = _read(manifest)
        change(files)
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"files": dict(sorted(files.items()))}, indent=1) + "\n")
        handle.flush()
