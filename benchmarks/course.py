"""How fast ``blockviz course`` runs a course of 8 scene jobs: 2 local workers against 1, a Dask
LocalCluster against the local pool, and a rerun with nothing changed.

Run:  .venv/bin/python benchmarks/course.py [--quick] [--rounds N]

The course is 2 sentences × 4 scenes (mask, softmax, qkv, dot-products) at ``-q l`` mp4 on the
toy block (``--quick``: 160x90 at 5 fps). Each measurement is the wall clock of a fresh
``blockviz course`` process on a fresh output folder (the rerun: on the folder just made); the
fastest of ``--rounds`` rounds counts. Targets (issue 23): ``-j 2`` at least 1.7× faster than
``-j 1``; ``--cluster local -j 2`` within 10 % of ``-j 2``; a rerun at most 3 s. Needs the
cluster extra (``pip install 'blockviz[cluster]'``). Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = "from blockviz.cli.program import main; main()"

COURSE = """
title = "benchmark"
[defaults]
formats = ["mp4"]
figures = false
explorer = false
{tiny}
[[lesson]]
name = "attention"
sentences = ["the cat sat", "the dog sat on the mat"]
scenes = ["mask", "softmax", "qkv", "dot-products"]
"""


def run_course(course: Path, output: Path, *options: str) -> float:
    """Seconds of wall clock for one ``blockviz course`` process; fails loudly if the run does."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, "course", str(course), "-o", str(output), *options],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"blockviz course {' '.join(options)} failed:\n{done.stderr}{done.stdout}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="160x90 at 5 fps instead of -q l")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each measurement; the fastest counts")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        course = folder / "course.toml"
        course.write_text(COURSE.format(tiny='resolution = "160x90"\nfps = 5' if arguments.quick else ""))
        print(f"load average at the start: {os.getloadavg()[0]:.2f}")
        times: dict[str, list[float]] = {"-j 1": [], "-j 2": [], "dask -j 2": [], "rerun": []}
        for round_number in range(arguments.rounds):
            for name, options in (
                ("-j 1", ["-j", "1"]),
                ("-j 2", ["-j", "2"]),
                ("dask -j 2", ["-j", "2", "--cluster", "local"]),
            ):
                output = folder / f"out-{round_number}-{name.replace(' ', '')}"
                times[name].append(run_course(course, output, *options))
                if name == "-j 2":
                    times["rerun"].append(run_course(course, output, "-j", "2"))
        best = {name: min(values) for name, values in times.items()}
        for name, seconds in best.items():
            print(f"{name:>10}: {seconds:6.1f} s  (rounds: {', '.join(f'{value:.1f}' for value in times[name])})")
        print(f"-j 2 speed-up over -j 1: {best['-j 1'] / best['-j 2']:.2f}x (target >= 1.7)")
        print(f"Dask LocalCluster / local pool: {best['dask -j 2'] / best['-j 2']:.2f} (target <= 1.10)")
        print(f"rerun with nothing changed: {best['rerun']:.2f} s (target <= 3)")
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
