"""A still whose record is not kept makes it in a forked process (blockviz.render.record_beside)
while it imports Manim: that process never imports torch, draws the same PNG, and a failure there
is made again, and reported, here."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.render.record_beside import made_beside

STILL = ["render", "the cat sat", "--scene", "softmax", "--format", "png", "--resolution", "320x180"]
TORCH_ONLY_BESIDE = """
import os, sys

MAIN = os.getpid()


class TorchOnlyBeside:  # `import torch` fails in this process, not in one forked from it
    def find_spec(self, name, path=None, target=None):
        if os.getpid() == MAIN and (name == "torch" or name.startswith("torch.")):
            raise ImportError(f"{name} imported")


sys.meta_path.insert(0, TorchOnlyBeside())
sys.argv = ["blockviz", *sys.argv[1:]]
from blockviz.cli.program import main

main()
"""


def raises() -> None:
    print("the reason", file=sys.stderr)
    raise ValueError("no record")


def warns() -> None:
    print("warning: kept", file=sys.stderr)


def test_what_the_process_printed_is_printed_here_once_it_made_the_record(capfd):
    ran = []
    assert made_beside(warns, lambda: ran.append("meanwhile")) is True
    assert ran == ["meanwhile"]
    assert capfd.readouterr().err == "warning: kept\n"


def test_a_failure_there_is_silent_and_says_so():
    assert made_beside(raises, lambda: None) is False


def test_a_failure_here_ends_the_process_there(tmp_path):
    marker = tmp_path / "ended"

    def slow() -> None:
        time.sleep(30)
        marker.write_text("not ended")

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        made_beside(slow, lambda: (_ for _ in ()).throw(KeyboardInterrupt))
    assert time.monotonic() - started < 10 and not marker.exists()


@pytest.mark.render
def test_a_cold_still_makes_its_record_beside_without_torch_here_and_draws_the_same_png(tmp_path):
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "BLOCKVIZ_CACHE_DIR": str(tmp_path / "cache")}
    cold = subprocess.run(
        [sys.executable, "-c", TORCH_ONLY_BESIDE, *STILL, "-o", str(tmp_path / "cold")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert cold.returncode == 0, cold.stderr[-2000:]  # this process would fail on an `import torch`
    assert len(list((tmp_path / "cache" / "records").glob("*.safetensors"))) == 1  # kept by the other
    fresh = CliRunner().invoke(main, [*STILL, "-o", str(tmp_path / "fresh")])  # in one process, with torch
    assert fresh.exit_code == 0, fresh.output
    assert (tmp_path / "cold" / "softmax.png").read_bytes() == (tmp_path / "fresh" / "softmax.png").read_bytes()
