"""How fast the catalogued scenes render, against a plain Manim scene doing the naive thing.

Run:  .venv/bin/python benchmarks/scenes.py [--quick]

The plain scene fades in an n × n grid of labelled cells, recolours every cell and sweeps a
highlight row by row by recolouring each row (what one writes without caring for speed). For
each blockviz scene the script renders it at -ql, counts its frames and its number labels, and
renders the plain scene with as many labelled cells (best of two runs); the ratio compares
seconds per frame (target: at most 0.6). The scenes are the catalogue's ``--scene all``. It also
times `blockviz --help`, `blockviz render --list`, a skipped unchanged render, and `--jobs 2`
against `--jobs 1`. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from private_cache import use_private_cache  # benchmarks/private_cache.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SENTENCES = {3: "the cat sat", 12: "The chicken didn't cross the road because it was tired."}


def plain_scene_class(n: int):
    """The naive scene: fade in an n × n labelled grid, recolour it, sweep rows by recolouring."""
    from manim import BLUE, RED, YELLOW, FadeIn, Rectangle, Scene, Text, VGroup

    class PlainGrid(Scene):
        def construct(self):
            cells = VGroup(
                *(
                    VGroup(
                        Rectangle(width=0.8, height=0.45, fill_color=BLUE, fill_opacity=1),
                        Text(f"{(i * n + j) / 10:.2f}", font_size=16),
                    )
                    for i in range(n)
                    for j in range(n)
                )
            ).arrange_in_grid(n, n, buff=0)
            cells.scale_to_fit_height(min(cells.height, 6.5))
            if cells.width > 13:
                cells.scale_to_fit_width(13)
            self.play(FadeIn(cells))
            self.play(*(cell[0].animate.set_fill(RED) for cell in cells))
            for row in range(n):
                self.play(*(cells[row * n + j][0].animate.set_fill(YELLOW) for j in range(n)), run_time=0.5)

    return PlainGrid


def render_timed(make_scene, settings: dict) -> tuple[float, int, object]:
    """Render the scene ``make_scene()`` builds; return seconds, frames written and the scene."""
    import av
    from manim import tempconfig

    with tempfile.TemporaryDirectory() as media:
        with tempconfig({**settings, "media_dir": media}):
            started = time.perf_counter()
            scene = make_scene()
            scene.render()
            seconds = time.perf_counter() - started
        movie = next(path for path in Path(media).rglob("*.mp4") if "partial_movie_files" not in path.parts)
        with av.open(str(movie)) as container:
            frames = sum(1 for _ in container.decode(container.streams.video[0]))
    return seconds, frames, scene


def number_labels(scene) -> int:
    return sum(
        1 for mobject in scene.mobjects for member in mobject.get_family() if getattr(member, "value", None) is not None
    )


def command_seconds(*args: str, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([str(ROOT / ".venv/bin/blockviz"), *args], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    use_private_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 3-token sentence and two scenes")
    arguments = parser.parse_args()
    from blockviz.block_record import record
    from blockviz.render.plan import QUALITIES
    from blockviz.scenes.catalog import entries, lookup

    settings = {
        "quality": QUALITIES["l"],
        "disable_caching": True,
        "progress_bar": "none",
        "verbosity": "ERROR",
        "write_to_movie": True,
        "format": "mp4",
    }
    sentences = {3: SENTENCES[3]} if arguments.quick else SENTENCES
    every_scene = [entry.name for entry in entries() if not entry.lecture_only]
    names = every_scene[2:4] if arguments.quick else every_scene
    plain_cache: dict[int, tuple[float, int]] = {}
    print(
        f"{'scene':<25}{'tokens':>7}{'labels':>8}{'frames':>8}{'seconds':>9}{'plain s/frame':>15}{'ours s/frame':>14}{'ratio':>7}"
    )
    for n, sentence in sentences.items():
        rec = record(sentence)
        for entry in lookup(names):
            seconds, frames, scene = render_timed(lambda: entry.scene_class()(record=rec), settings)
            labels = number_labels(scene)
            side = max(2, round(math.sqrt(labels)))
            if side not in plain_cache:  # best of two: the baseline should not be slowed by noise
                runs = [render_timed(plain_scene_class(side), settings)[:2] for _ in range(2)]
                plain_cache[side] = min(runs)
            plain_seconds, plain_frames = plain_cache[side]
            ours, plain = seconds / frames, plain_seconds / plain_frames
            print(
                f"{entry.name:<25}{n:>7}{labels:>8}{frames:>8}{seconds:>9.1f}{plain * 1000:>12.1f} ms{ours * 1000:>11.1f} ms{ours / plain:>7.2f}"
            )
    for side, (plain_seconds, plain_frames) in sorted(plain_cache.items()):
        print(f"plain {side}×{side} grid: {plain_seconds:.1f} s for {plain_frames} frames")
    print(
        f"blockviz --help: {command_seconds('--help'):.2f} s; blockviz render --list: {command_seconds('render', '--list'):.2f} s"
    )
    with tempfile.TemporaryDirectory() as out:
        scenes = [argument for name in names for argument in ("--scene", name)]
        render = [str(ROOT / ".venv/bin/blockviz"), "render", "the cat sat", *scenes, "-q", "l", "-o", out]
        started = time.perf_counter()
        subprocess.run([*render, "--jobs", "1"], check=True, capture_output=True)
        one_job = time.perf_counter() - started
        print(f"unchanged render skipped in {command_seconds(*render[1:]):.2f} s")
        started = time.perf_counter()
        subprocess.run([*render, "--jobs", "2", "--force"], check=True, capture_output=True)
        print(
            f"{len(names)} scenes of 'the cat sat' at -ql: --jobs 1 {one_job:.1f} s, --jobs 2 {time.perf_counter() - started:.1f} s"
        )


if __name__ == "__main__":
    main()
