"""Timings of `blockviz figures` (a benchmark, not a test): run `.venv/bin/python benchmarks/figures.py`.

Prints, in seconds:
1. a bare matplotlib annotated heatmap saved as PNG (3 × 3 and 12 × 12), the issue's baseline;
2. `blockviz figures` on the 13-token example, every figure of the registry in PNG and SVG, in a fresh
   process (start-up included; target < 5 s), drawing figures in parallel (the default, one
   process per core) and in one process (`--jobs 1`), with the CPU seconds each used;
3. the same figures in-process, split into drawing, PNG and SVG time per figure;
4. the weights figure of a 64-token sentence as PNG (target < 3 s).
The machine's load average is printed too: timings on a shared machine vary with it (CPU
seconds much less so).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from blockviz.figures.registry import FIGURE_NAMES

LONG = "The chicken didn't cross the road because it was too tired."
SIXTY_FOUR = " ".join(f"w{index}" for index in range(64))


def bare_heatmap(n: int) -> float:
    """Seconds to draw and save an n × n annotated heatmap as PNG with plain matplotlib."""
    import numpy as np
    from matplotlib.figure import Figure

    start = time.perf_counter()
    values = np.random.default_rng(0).normal(size=(n, n))
    figure = Figure(figsize=(max(3, n * 0.5), max(3, n * 0.5)))
    ax = figure.add_subplot()
    ax.imshow(values, cmap="RdBu_r")
    for (row, col), value in np.ndenumerate(values):
        ax.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=8)
    figure.savefig(io.BytesIO(), format="png", dpi=100)
    return time.perf_counter() - start


def whole_command(folder: Path, *options: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds (all processes) of `blockviz figures LONG --format png,svg` in a new process."""
    command = [str(Path(sys.executable).with_name("blockviz")), "figures", LONG, "--format", "png,svg", "-o", str(folder), *options]
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def per_figure(folder: Path) -> None:
    from blockviz import record
    from blockviz.figures import FigureRequest, draw_figure, save_figure

    request = FigureRequest(record(LONG))
    request.other_mask_record  # computed once, outside the timings
    totals = [0.0, 0.0, 0.0]
    print(f"{'figure':<25} {'draw':>6} {'png':>6} {'svg':>6}")
    for name in FIGURE_NAMES:  # in this process, one after another
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


def weights_64(folder: Path) -> float:
    from blockviz import record
    from blockviz.figures import FigureRequest, draw_figure, save_figure

    rec = record(SIXTY_FOUR)
    start = time.perf_counter()
    save_figure(draw_figure("weights", FigureRequest(rec)), folder / "weights-64.png", "png")
    return time.perf_counter() - start


def main() -> None:
    print(f"load average: {' '.join(f'{load:.2f}' for load in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        print(f"bare matplotlib heatmap PNG: 3 × 3 {bare_heatmap(3):.3f} s, 12 × 12 {bare_heatmap(12):.3f} s")
        for label, options in (("parallel (default)", ()), ("one process, --jobs 1", ("--jobs", "1"))):
            wall, cpu = whole_command(folder / "cli", *options)
            print(f"blockviz figures (13 tokens, {len(FIGURE_NAMES)} figures, PNG + SVG, fresh process), {label}: {wall:.2f} s ({cpu:.2f} CPU s)")
        print(f"load average: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
        per_figure(folder)
        print(f"weights figure, 64 tokens, PNG: {weights_64(folder):.2f} s")


if __name__ == "__main__":
    main()
