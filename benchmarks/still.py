"""How much faster `--format png` (the last frame only) is than the mp4 of the same scene.

Run:  .venv/bin/python benchmarks/still.py [-q l m h] [--scenes softmax,multi-head] [--sentence S] [--token it]

For each quality and scene, in a fresh process each time: `blockviz render SENTENCE --scene NAME
--format png` and the same as mp4, into fresh folders, best of two; wall-clock and CPU seconds
(the process and its threads). Beside them, the floor every run pays before it draws: a process
that only imports torch, Manim and the CLI. The ratio is mp4 over png (issue 9's target: at
least 5); "scene only" takes the import floor off both. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from figures import timed  # benchmarks/figures.py: wall-clock and CPU seconds of a command

ROOT = Path(__file__).resolve().parent.parent
BLOCKVIZ = str(ROOT / ".venv/bin/blockviz")
SENTENCE = "The chicken didn't cross the road because it was too tired."


def best_of_two(command_for) -> tuple[float, float]:
    runs = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as out:
            runs.append(timed(command_for(out)))
    return min(runs, key=lambda run: run[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quality", nargs="+", default=["l", "m"], choices=["l", "m", "h", "k"])
    parser.add_argument("--scenes", default="softmax,multi-head,dot-products")
    parser.add_argument("--sentence", default=SENTENCE)
    parser.add_argument("--token", default="it")
    arguments = parser.parse_args()
    imports = best_of_two(lambda out: [sys.executable, "-c", "import torch, manim, blockviz.cli"])
    print(f"import floor (torch, Manim, the CLI): {imports[0]:.2f} s wall, {imports[1]:.2f} CPU s; load average {os.getloadavg()[0]:.1f}")
    print(f"{'scene':<18}{'-q':>3}{'png wall':>10}{'png CPU':>9}{'mp4 wall':>10}{'mp4 CPU':>9}{'ratio (CPU)':>13}{'scene only':>12}")
    for quality in arguments.quality:
        for scene in arguments.scenes.split(","):
            def command(file_format):
                return lambda out: [BLOCKVIZ, "render", arguments.sentence, "--scene", scene, "--token", arguments.token, "-q", quality, "--format", file_format, "-o", out]
            png, mp4 = best_of_two(command("png")), best_of_two(command("mp4"))
            scene_only = (mp4[1] - imports[1]) / max(png[1] - imports[1], 1e-9)
            print(f"{scene:<18}{quality:>3}{png[0]:>9.2f}s{png[1]:>8.2f}s{mp4[0]:>9.2f}s{mp4[1]:>8.2f}s{mp4[1] / png[1]:>12.2f}×{scene_only:>11.2f}×", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
