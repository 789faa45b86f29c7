"""The program imports what each command needs when it needs it: help and the version import
neither torch nor Manim (measured on the real program with ``python -X importtime``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BLOCKVIZ = Path(sys.executable).with_name("blockviz")


def imported(*args: str) -> set[str]:
    """Every module the ``blockviz`` program imports to run ``blockviz ARGS``."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", str(BLOCKVIZ), *args], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in run.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["render", "--help"],
        ["record", "--help"],
        ["explore", "--help"],
        ["figures", "--help"],
        ["heads", "--help"],
        ["course", "--help"],
        ["compare", "--help"],
    ],
)
def test_help_imports_neither_torch_nor_manim(args):
    modules = imported(*args)
    assert "click" in modules  # the measurement sees the program's imports
    assert not {"torch", "manim", "matplotlib", "transformers"} & modules
