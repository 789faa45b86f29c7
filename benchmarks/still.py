"""Is a still ≥ 5× faster than the video of the same scene? Issue 25's bar, measured as a user runs it.

Run:  .venv/bin/python benchmarks/still.py [--scenes softmax,qkv|all] [--caches cold,warm] [-q m] [--rounds 3] [--sentence S] [--token it] [--program PATH]

Every scene once, warm only (does each meet the bar?): ``--scenes all --caches warm --rounds 1``;
``all`` is the scenes ``render --scene all`` makes of the sentence.

For each scene: `blockviz render SENTENCE --scene NAME --token it -q m --format png`, and the same
with `--format mp4`, each from a fresh process into a fresh folder (no render reused), wall clock,
the median of ``--rounds`` runs; png and mp4 runs alternate, so both meet the same load. Each pair
runs twice:

* cold: an empty record cache (``BLOCKVIZ_CACHE_DIR`` a new folder each run), so the run makes
  its record and plans its colour scales (a dry build of the scene);
* warm: the record cache holds the record and the scene's colour-scale plan (a run made them
  before, :mod:`blockviz.scenes.kept_plans`), so the run reads them back and builds the scene
  once, not twice.

The ratio is mp4 over png (the bar: at least 5). Beside it the CPU seconds (the process and its
threads and workers) and, first, the floor every run pays: a process that only imports torch,
Manim and the CLI and exits as the program does. Manim's text outlines (kept in the temporary
folder) are made by an untimed first run, as a user's previews find them. Not a test: timings
depend on the machine; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from figures import timed  # benchmarks/figures.py: wall-clock and CPU seconds of a command
from private_cache import use_private_cache  # benchmarks/private_cache.py

from blockviz.scenes.catalog import entries

ROOT = Path(__file__).resolve().parent.parent
BLOCKVIZ = str(ROOT / ".venv/bin/blockviz")
SENTENCE = "The chicken didn't cross the road because it was too tired."
FLOOR = "import torch, manim, blockviz.cli.group, os; os._exit(0)"


def median_runs(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds."""
    return statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs)


def render(arguments, scene: str, file_format: str, cache: str | None) -> tuple[float, float]:
    """One render from a fresh process into a fresh folder; ``cache``: the record cache folder
    (``None``: a new, empty one)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as empty:
        os.environ["BLOCKVIZ_CACHE_DIR"] = cache or empty
        return timed(
            [
                arguments.program,
                "render",
                arguments.sentence,
                "--scene",
                scene,
                "--token",
                arguments.token,
                "-q",
                arguments.quality,
                "--format",
                file_format,
                "-o",
                out,
            ]
        )


def every_scene(arguments, cache: str) -> list[str]:
    """The scenes ``render SENTENCE --scene all`` makes (as PNGs, untimed: their text outlines
    made and ``cache`` filled on the way)."""
    with tempfile.TemporaryDirectory() as out:
        os.environ["BLOCKVIZ_CACHE_DIR"] = cache
        subprocess.run(
            [arguments.program, "render", arguments.sentence, "--scene", "all", "--token", arguments.token]
            + ["-q", arguments.quality, "--format", "png", "-j", "1", "-o", out],
            check=True,
            capture_output=True,
        )
        made = {path.stem for path in Path(out).glob("*.png")}
    return [entry.name for entry in entries() if entry.name in made]  # in the catalogue's order


def main() -> None:
    use_private_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", default="softmax,qkv", help="scene names, or all")
    parser.add_argument("--caches", default="cold,warm", help="cold, warm or both")
    parser.add_argument("-q", "--quality", default="m", choices=["l", "m", "h", "k"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sentence", default=SENTENCE)
    parser.add_argument("--token", default="it")
    parser.add_argument(
        "--program", default=BLOCKVIZ, help="the blockviz program to time (another checkout's, to compare)"
    )
    arguments = parser.parse_args()
    print(f"load average at the start {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} cores")
    floor = median_runs([timed([sys.executable, "-c", FLOOR]) for _ in range(arguments.rounds)])
    print(f"start-up floor (import torch, Manim, the CLI): {floor[0]:.2f} s wall, {floor[1]:.2f} CPU s")
    print(
        f"{'scene':<24}{'cache':<6}{'png wall':>10}{'mp4 wall':>10}{'ratio':>8}{'png CPU':>9}{'mp4 CPU':>9}{'ratio':>8}"
    )
    with tempfile.TemporaryDirectory() as warm:
        scenes = every_scene(arguments, warm) if arguments.scenes == "all" else arguments.scenes.split(",")
        for scene in scenes:
            for file_format in (
                ("png", "mp4") if arguments.scenes != "all" else ()
            ):  # untimed: text outlines made, the warm cache filled
                render(arguments, scene, file_format, warm)
            for label, cache in (("cold", None), ("warm", warm)):
                if label not in arguments.caches.split(","):
                    continue
                runs = {"png": [], "mp4": []}
                for _ in range(arguments.rounds):
                    for file_format in runs:
                        runs[file_format].append(render(arguments, scene, file_format, cache))
                png, mp4 = median_runs(runs["png"]), median_runs(runs["mp4"])
                print(
                    f"{scene:<24}{label:<6}{png[0]:>9.2f}s{mp4[0]:>9.2f}s{mp4[0] / png[0]:>7.2f}×{png[1]:>8.2f}s{mp4[1]:>8.2f}s{mp4[1] / png[1]:>7.2f}×",
                    flush=True,
                )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
