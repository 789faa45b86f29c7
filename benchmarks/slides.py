"""How long ``blockviz slides`` takes once the scenes are rendered (issue 22: ≤ 5 s for "the cat sat").

Run:  .venv/bin/python benchmarks/slides.py [-q l] [--sentence "the cat sat"] [--rounds 3] [--folder DIR]

Renders the deck once (scenes rendered if not fresh in ``--folder``, by default a temporary
folder), then times ``blockviz slides`` again ``--rounds`` times in a fresh process each (every
scene reused: only the record, the cuts and the three decks), and in this process
:func:`blockviz.slides.deck.write_deck` alone. Prints the median wall-clock and CPU seconds
(issue 32's bar: at most 5 CPU s), the slides' count and the sizes of the files written, with
the load average. Not a test: timings depend on
the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from private_cache import use_private_cache  # benchmarks/private_cache.py

PROGRAM = [sys.executable, "-c", "import sys; from blockviz.cli.program import main; sys.exit(main())"]


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    use_private_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quality", default="l")
    parser.add_argument("--sentence", default="the cat sat")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="blockviz-slides-"))
    command = [*PROGRAM, "slides", args.sentence, "-q", args.quality, "-o", str(folder)]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    print(f"first deck (scenes rendered unless fresh): {time.perf_counter() - started:.1f} s")
    rounds, cpus = [], []
    for _ in range(args.rounds):
        before, started = os.times(), time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        rounds.append(time.perf_counter() - started)
        after = os.times()
        cpus.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    print(
        f"`blockviz slides` with every scene reused: median {statistics.median(rounds):.2f} s of {[round(r, 2) for r in rounds]}, "
        f"{statistics.median(cpus):.2f} CPU s of {[round(c, 2) for c in cpus]} (target ≤ 5 CPU s; load average {os.getloadavg()[0]:.1f})"
    )
    print(done.stdout.strip().splitlines()[-1])

    from blockviz.render.plan import RenderOptions, plan
    from blockviz.render.run import lecture_parts
    from blockviz.scenes.catalog import entries
    from blockviz.scenes.wording import toy_wording
    from blockviz.slides.deck import write_deck

    jobs = [
        job
        for job in plan(
            [e.name for e in entries()],
            {"sentence": args.sentence},
            RenderOptions(quality=args.quality, theme="light"),
            folder,
        )
        if job.output.exists()
    ]
    with tempfile.TemporaryDirectory() as other:
        started = time.perf_counter()
        deck = write_deck(lecture_parts(jobs, toy_wording()), other)
        print(f"write_deck alone ({len(deck.clips)} slides): {time.perf_counter() - started:.2f} s")
    for name in ("slides.html", "slides.pptx", "slides", "reveal.js"):
        if (folder / name).exists():
            print(f"{name}: {size(folder / name) / 1e6:.2f} MB")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
