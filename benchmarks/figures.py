"""`blockviz figures` against bare matplotlib, side by side (a benchmark, not a test):
run `.venv/bin/python benchmarks/figures.py [ROUNDS]`.

Each round runs, in fresh processes and one right after the other,
1. `blockviz figures` on the 13-token sentence: every figure of the registry, PNG + SVG
   (the default page width and -j);
2. `../shared/measure/bare_figures.py TOTAL FIGURES OUTDIR`: bare matplotlib saving as many
   annotated cells (TOTAL: the text elements counted in blockviz's SVG files, as the measuring
   tool's README says) in as many figures, PNG (200 dpi) + SVG, in one process.

Rounds alternate which of the two runs first. It prints each round's wall-clock (and CPU)
seconds and their ratio, then the ratio of the fastest runs (the least disturbed by other work
on a shared machine; target ≤ 1.0), the median of the rounds' ratios, and the ratio of the CPU
seconds (blockviz's over all its processes: what -j costs), with the load average.
The in-process split of blockviz's time (draw, PNG, SVG per figure) follows with `--split`.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The chicken didn't cross the road because it was too tired."
BARE = ROOT.parent / "shared" / "measure" / "bare_figures.py"
TEXT_ELEMENT = re.compile(rb'<g id="text_[0-9]*"')


def timed(command: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (the process and its workers) of ``command``."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def blockviz_run(folder: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds of `blockviz figures SENTENCE --format png,svg -o folder` in a new process."""
    return timed([str(Path(sys.executable).with_name("blockviz")), "figures", SENTENCE, "--format", "png,svg", "-o", str(folder)])


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
    from blockviz import record
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


def main() -> None:
    rounds = int(next((argument for argument in sys.argv[1:] if argument.isdigit()), "3"))
    load = lambda: " ".join(f"{value:.2f}" for value in os.getloadavg())  # noqa: E731
    print(f"load average {load()} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        ours, bare, ratios = [], [], []
        texts = figures = 0
        for index in range(rounds):
            bare_first = index % 2 == 1  # alternate which runs first, so a change in the machine's load falls on both alike
            if bare_first:
                bare.append(bare_run(texts, figures, folder / f"bare{index}"))
            ours.append(blockviz_run(folder / f"blockviz{index}"))
            texts, figures = count_texts(folder / f"blockviz{index}")
            if not bare_first:
                bare.append(bare_run(texts, figures, folder / f"bare{index}"))
            (wall, cpu), (bare_wall, bare_cpu) = ours[-1], bare[-1]
            ratios.append(wall / bare_wall)
            print(f"round {index + 1}: blockviz figures {wall:.2f} s ({cpu:.2f} CPU s), bare matplotlib ({texts} texts in {figures} figures) "
                  f"{bare_wall:.2f} s ({bare_cpu:.2f} CPU s): ratio {ratios[-1]:.2f}")
        fastest, bare_fastest = min(wall for wall, _ in ours), min(wall for wall, _ in bare)
        least, bare_least = min(cpu for _, cpu in ours), min(cpu for _, cpu in bare)
        print(f"fastest: blockviz {fastest:.2f} s, bare {bare_fastest:.2f} s: ratio {fastest / bare_fastest:.2f} (target \u2264 1.0); "
              f"median of the rounds' ratios {statistics.median(ratios):.2f}; "
              f"CPU seconds {least:.2f} against {bare_least:.2f} ({least / bare_least:.2f}); load average {load()}")
        if "--split" in sys.argv:
            split(folder / "split")


if __name__ == "__main__":
    main()
