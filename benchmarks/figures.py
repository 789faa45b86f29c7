"""`blockviz figures` against bare matplotlib, side by side (a benchmark, not a test):
run `.venv/bin/python benchmarks/figures.py [ROUNDS] [--busy N] [--jobs N[,N…]] [--split]`.

Each round runs, in fresh processes and one right after the other,
1. `blockviz figures` on the 13-token sentence: every figure of the registry, PNG + SVG
   (the default page width and -j: one worker per core free; `--jobs 1,2,default` runs each);
2. `../shared/measure/bare_figures.py TOTAL FIGURES OUTDIR`: bare matplotlib saving as many
   annotated cells (TOTAL: the text elements counted in blockviz's SVG files, as the measuring
   tool's README says) in as many figures, PNG (200 dpi) + SVG, in one process.

The order of the runs turns each round. It prints each round's wall-clock (and CPU)
seconds and their ratio, then the ratio of the fastest runs (the least disturbed by other work
on a shared machine; target ≤ 1.0), the median of the rounds' ratios, and the ratio of the CPU
seconds (blockviz's over all its processes: what -j costs), with the load average.
The in-process split of blockviz's time (draw, PNG, SVG per figure) follows with `--split`.

`--busy N` measures a busy machine: N processes spinning on a core each run through every
round, started a minute before the first (the 1-minute load average the default -j reads
then counts them) and stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from private_cache import use_private_cache  # benchmarks/private_cache.py

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The chicken didn't cross the road because it was too tired."
BARE = next(
    (
        folder / "shared" / "measure" / "bare_figures.py"
        for folder in ROOT.parents
        if (folder / "shared" / "measure" / "bare_figures.py").exists()
    ),
    ROOT.parent / "shared" / "measure" / "bare_figures.py",
)
"""The measuring tool beside the checkout (``../shared/measure``), or beside the folder of a git worktree."""
TEXT_ELEMENT = re.compile(rb'<g id="text_[0-9]*"')


def timed(command: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (the process and its workers) of ``command``."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def blockviz_run(folder: Path, jobs: str | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of `blockviz figures SENTENCE --format png,svg -o folder [-j jobs]` in a new process."""
    return timed(
        [str(Path(sys.executable).with_name("blockviz")), "figures", SENTENCE, "--format", "png,svg", "-o", str(folder)]
        + (["-j", jobs] if jobs else [])
    )


@contextlib.contextmanager
def busy_loops(count: int, settle: float = 60.0):
    """``count`` processes spinning on a core each while the block runs; the first round starts
    ``settle`` seconds after them, once the 1-minute load average has seen them."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        if loops:
            time.sleep(settle)
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def count_texts(folder: Path) -> tuple[int, int]:
    """(text elements, figures) of the SVG files in ``folder``."""
    svgs = sorted(folder.glob("*.svg"))
    return sum(len(TEXT_ELEMENT.findall(path.read_bytes())) for path in svgs), len(svgs)


def bare_run(texts: int, figures: int, folder: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds of the bare-matplotlib anchor in a new process (start-up included)."""
    folder.mkdir(parents=True, exist_ok=True)
    return timed([sys.executable, str(BARE), str(texts), str(figures), str(folder)])


def split(folder: Path) -> None:
    """Per figure, in this process: seconds to draw, to save as PNG and as SVG."""
    from blockviz.block_record import record
    from blockviz.figures import FIGURE_NAMES, FigureRequest, draw_figure, save_figure
    from blockviz.figures.registry import skip_reason

    request = FigureRequest(record(SENTENCE))
    request.other_mask_record  # computed once, outside the timings
    totals = [0.0, 0.0, 0.0]
    print(f"{'figure':<25} {'draw':>6} {'png':>6} {'svg':>6}")
    for name in FIGURE_NAMES:
        if skip_reason(name, request.record):
            continue  # the trained toy model's own figures
        times = []
        start = time.perf_counter()
        figure = draw_figure(name, request)
        times.append(time.perf_counter() - start)
        for fmt in ("png", "svg"):
            start = time.perf_counter()
            save_figure(figure, folder / f"{name}.{fmt}", fmt)
            times.append(time.perf_counter() - start)
        totals = [total + spent for total, spent in zip(totals, times)]
        print(f"{name:<25} " + " ".join(f"{spent:6.2f}" for spent in times))
    print(f"{'total':<25} " + " ".join(f"{spent:6.2f}" for spent in totals))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="blockviz figures against bare matplotlib")
    parser.add_argument("rounds", type=int, nargs="?", default=3, help="rounds of the two runs (default 3)")
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="N busy loops running through every round")
    parser.add_argument(
        "--jobs",
        default=None,
        metavar="N[,N…]",
        help="blockviz figures -j N; several (e.g. default,1,2) are each run every round (default: its own default)",
    )
    parser.add_argument("--split", action="store_true", help="then blockviz's time per figure: draw, PNG, SVG")
    return parser.parse_args()


def main() -> None:
    use_private_cache()
    args = arguments()
    configurations = [None if jobs == "default" else jobs for jobs in (args.jobs or "default").split(",")]
    name = lambda jobs: f"-j {jobs}" if jobs else "-j default"  # noqa: E731
    load = lambda: " ".join(f"{value:.2f}" for value in os.getloadavg())  # noqa: E731
    with busy_loops(args.busy), tempfile.TemporaryDirectory() as temporary:
        from blockviz.figures.writing import cores_free

        print(
            f"load average {load()} on {os.cpu_count()} cores, {args.busy} busy loops; blockviz {', '.join(map(name, configurations))} "
            f"(the default now: {cores_free()} workers)"
        )
        folder = Path(temporary)
        ours: dict = {jobs: [] for jobs in configurations}
        bare, ratios = [], {jobs: [] for jobs in configurations}
        texts = figures = 0
        for index in range(args.rounds):
            runs = configurations + ["bare"]
            runs = (
                runs[index % len(runs) :] + runs[: index % len(runs)] if index else runs
            )  # the order turns each round, so a change in the machine's load falls on all alike
            walls = {}
            for run in runs:
                if run == "bare":
                    bare.append(bare_run(texts, figures, folder / f"bare{index}"))
                else:
                    ours[run].append(blockviz_run(folder / f"blockviz{index}{run or ''}", run))
                    texts, figures = count_texts(folder / f"blockviz{index}{run or ''}")
                    walls[run] = ours[run][-1]
            bare_wall, bare_cpu = bare[-1]
            parts = []
            for jobs, (wall, cpu) in walls.items():
                ratios[jobs].append(wall / bare_wall)
                parts.append(f"blockviz {name(jobs)} {wall:.2f} s ({cpu:.2f} CPU s): ratio {ratios[jobs][-1]:.2f}")
            print(
                f"round {index + 1}: bare matplotlib ({texts} texts in {figures} figures) {bare_wall:.2f} s ({bare_cpu:.2f} CPU s); "
                + "; ".join(parts)
            )
        bare_fastest, bare_least = min(wall for wall, _ in bare), min(cpu for _, cpu in bare)
        for jobs in configurations:
            fastest, least = min(wall for wall, _ in ours[jobs]), min(cpu for _, cpu in ours[jobs])
            print(
                f"blockviz {name(jobs)}: fastest {fastest:.2f} s against bare {bare_fastest:.2f} s: ratio {fastest / bare_fastest:.2f} (target \u2264 1.0); "
                f"median of the rounds' ratios {statistics.median(ratios[jobs]):.2f}; CPU seconds {least:.2f} against {bare_least:.2f} ({least / bare_least:.2f})"
            )
        print(f"load average {load()}")
        if args.split:
            split(folder / "split")


if __name__ == "__main__":
    main()
