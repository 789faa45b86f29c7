"""`blockviz train` with its defaults makes the model blockviz ships, byte for byte, and `blockviz
record --save` the same record, on any x86-64 CPU with AVX2: the program pins torch's numerics before
loading it (:mod:`blockviz.numerics`).

Each run starts as on a CPU with only the instructions of one ATen capability — ATen's, MKL's
and oneDNN's instruction sets limited to it alike — for every capability this CPU offers. Without
the pin these runs part within the first 300 steps (measured on an AVX-512 EPYC: three other
weights for ``default``, ``avx2`` and ``avx512``; loss 0.5048 after 4,000 steps). The
three processes of a capability run side by side (a training of about 30 s of CPU, one of the copy
model of about 35 s, and the record); each capability is its own unit of ``make test``'s
scheduler (``SPLIT_BY_PARAMETER`` in ``tests/conftest.py``), so the two workers share them."""

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.toy import PACKAGED, PACKAGED_COPY
from blockviz.toy.folder import REPRODUCIBLE_FILES

SENTENCE = "The chicken didn't cross the road because it was too tired."
NEEDS = {
    "default": set(),
    "avx2": {"avx2", "fma"},
    "avx512": {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"},
}
"""The CPU flags (``/proc/cpuinfo``) each ATen capability needs."""
LIMITS = {
    "default": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx512": {"MKL_ENABLE_INSTRUCTIONS": "AVX512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
}
"""MKL's and oneDNN's instruction sets as on a CPU that offers no more than each capability."""
CPUINFO = Path("/proc/cpuinfo")


def offered_capabilities() -> list[str]:
    """The ATen capabilities this CPU offers, from ``default`` up."""
    lines = [line for line in CPUINFO.read_text().splitlines() if line.startswith("flags")]
    flags = set(lines[0].split(":", 1)[1].split()) if lines else set()
    return [capability for capability, needed in NEEDS.items() if needed <= flags]


pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64") or not CPUINFO.is_file() or "avx2" not in offered_capabilities(),
    reason="the promise is for x86-64 CPUs with AVX2, whose flags /proc/cpuinfo lists",
)


PIPES = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module", params=offered_capabilities() if CPUINFO.is_file() else [])
def run(request, tmp_path_factory):
    """A folder with ``model/`` and ``copy/`` (``blockviz train``, ``blockviz train --task copy``)
    and ``record.safetensors`` (``blockviz record --save``), each command run in a fresh process
    started with the environment of capability ``request.param``; the three at once."""
    capability = request.param
    folder = tmp_path_factory.mktemp(capability)
    program = [sys.executable, "-m", "blockviz.cli.program"]
    environment = {
        **os.environ,
        "ATEN_CPU_CAPABILITY": capability,
        **LIMITS[capability],
        "BLOCKVIZ_CACHE_DIR": str(folder / "cache"),  # its own: no record kept by another run is reused
    }
    started = [
        (arguments[0], subprocess.Popen([*program, *arguments], env=environment, **PIPES))
        for arguments in (
            ["train", "-o", str(folder / "model")],
            ["train", "--task", "copy", "-o", str(folder / "copy")],
            ["record", SENTENCE, "--save", str(folder / "record.safetensors")],
        )
    ]
    for command, process in started:
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, (capability, command, err)
        assert command != "train" or "every lesson goal met" in out or "every copy goal met" in out, (capability, out)
    return folder


@pytest.fixture(scope="module")
def pinned_record(tmp_path_factory) -> Path:
    """``blockviz record --save`` run in this process, pinned as the program pins itself (tests/conftest.py)."""
    path = tmp_path_factory.mktemp("pinned") / "record.safetensors"
    result = CliRunner().invoke(main, ["record", SENTENCE, "--save", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_training_gives_the_shipped_bytes_under_every_capability_the_cpu_offers(run):
    for name in REPRODUCIBLE_FILES:
        assert _sha256(run / "model" / name) == _sha256(PACKAGED / name), name
    card = json.loads((PACKAGED / "card.json").read_text())
    assert card["training"]["deterministic"].endswith("the same bytes on every x86-64 CPU with AVX2 or AVX-512")


def test_training_the_copy_model_gives_the_shipped_bytes_under_every_capability(run):
    for name in REPRODUCIBLE_FILES:
        assert _sha256(run / "copy" / name) == _sha256(PACKAGED_COPY / name), name


def test_a_saved_record_of_the_toy_is_the_same_bytes_under_every_capability(run, pinned_record):
    """Each capability's record is the bytes of the one this pinned process saves: all the same."""
    from blockviz.block_record import BlockRecord

    assert _sha256(run / "record.safetensors") == _sha256(pinned_record)
    record = BlockRecord.load(run / "record.safetensors")
    assert record.sentence == SENTENCE and record.tensors["probs"].shape == (13, 70)
