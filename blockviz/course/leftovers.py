"""What course jobs killed mid-way left in the output folder, found and removed.

A job writes through :func:`~blockviz.files.atomic_path` (``.<name>.<random>.part`` beside the
output) and into temporary folders in a ``.cache`` folder (Manim's ``media-…``, a record's
``record-…``, a deck's ``slides-…``, a comparison's ``compare-…``), all removed as the job ends,
however it ends — unless its process is killed (``kill -9``, out of memory): then none of its code
runs again, and they stay. A course run holds the output folder's lock
(:mod:`~blockviz.course.lock`), so before its jobs start, and once its workers are gone, any
such file or folder there is a leftover of a killed job: :func:`remove_leftovers` removes them.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from blockviz.render.plan import CACHE_FOLDER

_TEMPORARY_FILE = re.compile(r"\..+\.[0-9a-f]{8}\.part|\.blockviz-probe-[0-9a-f]{8}")
""":func:`~blockviz.files.atomic_path`'s files and :func:`~blockviz.files.writable_folder`'s probe."""
_TEMPORARY_FOLDER = re.compile(r"[a-z]+-[0-9a-f]{8}")
""":func:`~blockviz.files.temporary_folder`'s folders (its prefix, 8 random hexadecimal digits)."""


def leftovers(output: str | os.PathLike) -> list[Path]:
    """The temporary files under ``output`` and the temporary folders in its ``.cache`` folders,
    sorted (not what is inside a temporary folder: it goes with it)."""
    found = []
    for folder, subfolders, files in os.walk(output):
        here = Path(folder)
        if here.name == CACHE_FOLDER:
            temporary = [name for name in subfolders if _TEMPORARY_FOLDER.fullmatch(name)]
            found += [here / name for name in temporary]
            subfolders[:] = [name for name in subfolders if name not in temporary]
        found += [here / name for name in files if _TEMPORARY_FILE.fullmatch(name)]
    return sorted(found)


def remove_leftovers(output: str | os.PathLike) -> list[Path]:
    """Remove :func:`leftovers` of ``output`` and return them; call it only while holding the
    course's lock with no job running (they would be its temporaries in use)."""
    found = leftovers(output)
    for path in found:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return found
