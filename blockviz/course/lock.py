"""One ``blockviz course`` run per output folder at a time.

The lock is an advisory lock (:func:`fcntl.flock`) on ``<output>/.course/lock``, held for the
whole run. The system releases it when the process ends, however it ends (``kill -9`` too), so
a run that died never blocks the next one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import writable_folder, writing

LOCK = Path(".course") / "lock"


@contextlib.contextmanager
def course_lock(folder: str | os.PathLike) -> Iterator[Path]:
    """Hold the lock of the course output ``folder`` (created if missing) while the block runs.

    Raises
    ------
    BlockvizError
        If another run holds it (one line naming the folder), or the folder cannot be written.
    """
    path = Path(folder) / LOCK
    writable_folder(path.parent)
    with writing(path):
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BlockvizError(
                f"another blockviz course is running on {str(folder)!r}: wait for it to end, or give another output folder"
            ) from None
        yield path
    finally:
        os.close(handle)  # closing releases the lock
