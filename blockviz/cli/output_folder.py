"""``-o DIR``: the folder a command writes into, refused in one line when it names a file."""

from __future__ import annotations

import os
from pathlib import Path

import click


class OutputFolder(click.Path):
    """A folder path (:class:`pathlib.Path`), new or existing; an existing file is a usage error
    (exit 2) naming the option and a folder to give instead, since blockviz never writes into a
    file's place."""

    name = "directory"

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(self, value, param, ctx) -> Path:
        folder = super().convert(value, param, ctx)
        if os.path.isfile(folder):  # False for a name too long: writing reports that
            self.fail(f"{str(folder)!r} is a file, not a folder: {_instead(folder)}", param, ctx)
        return folder


def _instead(file: Path) -> str:
    """The fix for a folder option that names ``file``: a folder beside it named after it, if free."""
    beside = file.with_suffix("") if file.suffix else file.with_name(f"{file.name}-files")
    if os.path.exists(beside) and not os.path.isdir(beside):
        return "give a folder, new or existing"
    return f"give a folder, new or existing, e.g. {beside}"
