"""How long the lecture takes, against the floor: bare PyAV encoding the lecture's own frames.

Run:  .venv/bin/python benchmarks/lecture.py [-q l h] [--sentence "the cat sat"] [--jobs N]

For each quality, in a fresh folder: renders the title card and every scene as mp4 (timing each
scene), joins them into the lecture (timed), and reports the lecture's total time beside the sum
of its scenes' render times. Then, in the same run, the floor: every frame of the lecture is
decoded (not timed) and encoded again by bare PyAV with manim's settings (libx264, crf 23,
yuv420p, as ``shared/measure/encode_floor.py``); the ratio is the lecture's total over that
(issue 9's target: at most 2.0 at -q l, 1.3 at -q h). Then it times `blockviz render … --lecture`
run again with nothing changed (everything reused) and with only the lecture file removed
(scenes reused, joined again). Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BLOCKVIZ = str(ROOT / ".venv/bin/blockviz")


def cli_seconds(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([BLOCKVIZ, *args], check=True, capture_output=True)
    return time.perf_counter() - started


def cli_record_inputs(sentence: str) -> dict:
    """The record options `blockviz render SENTENCE` uses, so its runs find our files unchanged."""
    from blockviz.cli import main
    from blockviz.cli.options import pop_record_options

    with main.commands["render"].make_context("render", [sentence]) as context:
        return pop_record_options(dict(context.params))


def lecture_timings(sentence: str, quality: str, jobs: int, out: str) -> dict:
    """Render and join one lecture in this process, as `blockviz render --lecture` does; every
    time in seconds."""
    from blockviz.cli.options import build_record
    from blockviz.render.plan import RenderOptions, plan_lecture
    from blockviz.render.run import join_lecture, render_jobs

    started = time.perf_counter()
    record_inputs = cli_record_inputs(sentence)
    rec = build_record(**record_inputs)
    options = RenderOptions(quality=quality)
    lecture = plan_lecture(record_inputs, options, out)
    rendered = render_jobs(rec, lecture.jobs, options, processes=jobs)
    join_started = time.perf_counter()
    written = join_lecture(lecture, rec.config.causal)
    finished = time.perf_counter()
    return {
        "scenes": {job.scene: seconds for job, seconds in rendered},
        "join": finished - join_started,
        "total": finished - started,
        "video": written.duration,
        "output": lecture.output,
    }


def encode_floor(video: Path, out: Path) -> tuple[int, float]:
    """``(frames, seconds)``: bare PyAV encoding ``video``'s decoded frames again (libx264, crf 23,
    yuv420p, its size and rate; one ``VideoFrame.from_ndarray(rgba)`` per frame). The decoding is not timed."""
    from fractions import Fraction

    import av

    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        rate = stream.average_rate or Fraction(15)
        width, height = stream.codec_context.width, stream.codec_context.height
        frames = [frame.to_ndarray(format="rgba") for frame in container.decode(stream)]
    started = time.perf_counter()
    with av.open(str(out), mode="w", format="mp4") as output:
        encoder = output.add_stream("libx264", rate=Fraction(rate), options={"crf": "23"})
        encoder.pix_fmt, encoder.width, encoder.height = "yuv420p", width, height
        for index, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(pixels, format="rgba")
            frame.pts, frame.time_base = index, 1 / Fraction(rate)
            for packet in encoder.encode(frame):
                output.mux(packet)
        for packet in encoder.encode():
            output.mux(packet)
    return len(frames), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quality", nargs="+", default=["l", "h"], choices=["l", "m", "h", "k"], help="qualities to time")
    parser.add_argument("--sentence", default="the cat sat")
    parser.add_argument("--jobs", type=int, default=1, help="scenes rendered in parallel processes")
    arguments = parser.parse_args()
    for quality in arguments.quality:
        with tempfile.TemporaryDirectory() as out:
            timings = lecture_timings(arguments.sentence, quality, arguments.jobs, out)
            scenes = timings["scenes"]
            print(f"-q{quality}: {arguments.sentence!r}, {len(scenes)} parts, {timings['video']:.1f} s of video"
                  f" (packets copied, not re-encoded), --jobs {arguments.jobs}")
            for name, seconds in scenes.items():
                print(f"  {name:<25}{seconds:>8.1f} s")
            print(f"  {'sum of scene renders':<25}{sum(scenes.values()):>8.1f} s")
            print(f"  {'joining the lecture':<25}{timings['join']:>8.2f} s")
            print(f"  {'lecture total':<25}{timings['total']:>8.1f} s  (record + scenes + joining)")
            frames, floor = encode_floor(timings["output"], Path(out) / "floor.mp4")
            print(f"  {'bare PyAV encode':<25}{floor:>8.1f} s  ({frames} frames: the floor)")
            print(f"  {'ratio to the floor':<25}{timings['total'] / floor:>8.2f} ×  (target ≤ {2.0 if quality == 'l' else 1.3})")
            command = ["render", arguments.sentence, "--lecture", "-q", quality, "-o", out]
            print(f"  {'again, all unchanged':<25}{cli_seconds(*command):>8.2f} s  (CLI: every file reused)")
            timings["output"].unlink()
            print(f"  {'again, lecture removed':<25}{cli_seconds(*command):>8.2f} s  (CLI: scenes reused, joined again)")


if __name__ == "__main__":
    main()
