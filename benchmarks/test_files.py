"""What the heaviest test files cost, each alone (a benchmark, not a test): run
`.venv/bin/python benchmarks/test_files.py [FILE …] [--top N] [--anchor FILE] [--store]`.

Each file runs alone in a fresh interpreter, one pytest worker (``pytest -q FILE -p
no:cacheprovider``), one after another; printed are its CPU seconds (user + system of the child
and its children, from ``resource.getrusage``: on a shared machine wall seconds measure the
other jobs), its wall seconds and its CPU seconds as a ratio to the anchor file's in the same run.
Without files: the ``--top`` (default 15) heaviest of ``tests/durations.json``.

``--store`` writes each file's CPU seconds into ``tests/durations.json`` (the order
``make test``'s workers take the files in, ``tests/conftest.py``), and scales every other entry
by the anchor's CPU seconds over its old entry, so that the shares stay comparable; the anchor
should be a file not changed since its entry was written. A file of a ``SHARED_BUILDS`` unit
alone pays for builds the unit's other files would share: its seconds overstate its share.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DURATIONS = ROOT / "tests" / "durations.json"


def cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_alone(path: str) -> tuple[float, float, int]:
    """``(CPU seconds, wall seconds, exit code)`` of ``pytest -q path`` in a fresh interpreter."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    command = [sys.executable, "-m", "pytest", "-q", path, "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cpu_seconds() - cpu, time.perf_counter() - wall, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: the --top heaviest of tests/durations.json)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--anchor", default="tests/test_render.py", help="the file the ratios are to")
    parser.add_argument("--store", action="store_true", help="write the CPU seconds into tests/durations.json")
    arguments = parser.parse_args()
    stored = json.loads(DURATIONS.read_text(encoding="utf-8"))
    files = arguments.files or sorted(stored, key=stored.get, reverse=True)[: arguments.top]
    files = [path for path in files if "[" not in path]  # a parameter's unit runs with its file
    if arguments.anchor not in files:
        files.insert(0, arguments.anchor)
    print(f"load average {os.getloadavg()[0]:.1f}; each file alone, one worker")
    seconds = {}
    for path in files:
        cpu, wall, code = run_alone(path)
        seconds[path] = cpu
        failed = "" if code == 0 else f"  (exit {code})"
        print(f"{path:45s} {cpu:8.1f} CPU s {wall:8.1f} s wall{failed}", flush=True)
    anchor = seconds[arguments.anchor]
    print(f"load average {os.getloadavg()[0]:.1f}; CPU seconds over {arguments.anchor}'s ({anchor:.1f}):")
    for path, cpu in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{path:45s} {cpu / anchor:6.2f}")
    if arguments.store:
        scale = anchor / stored[arguments.anchor]
        kept = {unit: round(value * scale, 1) for unit, value in stored.items()}
        kept.update({path: round(cpu, 1) for path, cpu in seconds.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {DURATIONS.relative_to(ROOT)} (other entries × {scale:.3f})")


if __name__ == "__main__":
    main()
