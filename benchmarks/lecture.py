"""How long the lecture takes, against the floor: bare PyAV encoding the lecture's own frames.

Run:  .venv/bin/python benchmarks/lecture.py [-q l h] [--sentence "the cat sat"] [--jobs N] [--parts A,B] [--again] [--warm-text]

For each quality, in a fresh folder and with a fresh text-outline cache (``--warm-text`` keeps
the one on disk): renders the title card and every scene as mp4 (timing each
scene), joins them into the lecture (timed), and reports the lecture's total time beside the sum
of its scenes' render times. Then, in the same run, the floor: every frame of the lecture is
decoded (not timed) and encoded again by bare PyAV with manim's settings (libx264, crf 23,
yuv420p, as ``shared/measure/encode_floor.py``); the ratio is the lecture's total over that
(issue 9's target: at most 2.0 at -q l, 1.3 at -q h). Each time is printed as it is known, with
the load average. With ``--again`` it then times `blockviz render … --lecture` run again with
nothing changed (everything reused) and with only the lecture file removed (scenes reused,
joined again). Not a test: timings depend on the machine.
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
sys.path.insert(0, str(ROOT))
BLOCKVIZ = str(ROOT / ".venv/bin/blockviz")

from blockviz.processes import cores_available  # noqa: E402  (after the path above)


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


def lecture_timings(sentence: str, quality: str, jobs: int, out: str, parts: list[str] | None = None) -> dict:
    """Render and join one lecture in this process, as `blockviz render --lecture` does, printing
    each time as it is known; then time the floor. Every time in seconds. ``parts`` (scene
    names) keeps only those parts, for a quicker measure."""
    import dataclasses

    from blockviz.cli.options import build_record
    from blockviz.render.plan import RenderOptions, plan_lecture
    from blockviz.render.run import join_lecture, render_jobs

    print(f"-q{quality}: {sentence!r}, {'parts ' + ','.join(parts) if parts else 'every part'}, --jobs {jobs}, load average {load()} at the start", flush=True)
    started, cpu_started = time.perf_counter(), cpu_seconds()
    record_inputs = cli_record_inputs(sentence)
    rec = build_record(**record_inputs)
    options = RenderOptions(quality=quality)
    lecture = plan_lecture(record_inputs, options, out)
    if parts:
        lecture = dataclasses.replace(lecture, jobs=[job for job in lecture.jobs if job.scene in parts])
    rendered = render_jobs(rec, lecture.jobs, options, processes=jobs)
    for job, seconds in rendered:
        print(f"  {job.scene:<25}{seconds:>8.1f} s")
    print(f"  {'sum of scene renders':<25}{sum(seconds for _, seconds in rendered):>8.1f} s", flush=True)
    join_started = time.perf_counter()
    written = join_lecture(lecture, rec.config.causal)
    finished, cpu = time.perf_counter(), cpu_seconds() - cpu_started
    print(f"  {'joining the lecture':<25}{finished - join_started:>8.2f} s  ({written.duration:.1f} s of video, packets copied, not re-encoded)")
    print(f"  {'lecture total':<25}{finished - started:>8.1f} s  (record + scenes + joining; {cpu:.1f} CPU s; load average {load()})", flush=True)
    frames, floor, floor_cpu = encode_floor(lecture.output, Path(out) / "floor.mp4")
    print(f"  {'bare PyAV encode':<25}{floor:>8.1f} s  ({frames} frames: the floor; {floor_cpu:.1f} CPU s; load average {load()})")
    print(f"  {'CPU seconds, ratio':<25}{cpu / floor_cpu:>8.2f} ×  (lecture's over the floor's)")
    return {"total": finished - started, "floor": floor, "output": lecture.output}


def cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process, its threads and its ended children."""
    import resource

    return sum(usage.ru_utime + usage.ru_stime for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def load() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. ``"6.1 5.2 3.0"``."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


FLOOR_CHUNK_BYTES = 2**30
"""Decoded frames held at a time for the floor (a GiB): all 5,000 frames of -q l at once would
take 8 GB. The encoder's few frames still in its threads at the end of a chunk are a few per
cent of a chunk (640 frames at 480p, 128 at 1080p)."""


def encode_floor(video: Path, out: Path) -> tuple[int, float, float]:
    """``(frames, seconds, CPU seconds)``: bare PyAV encoding ``video``'s decoded frames again (libx264, crf 23,
    yuv420p, its size and rate; one ``VideoFrame.from_ndarray(rgba)`` per frame), as
    ``shared/measure/encode_floor.py`` does. The decoding is not timed: a chunk of frames
    (:data:`FLOOR_CHUNK_BYTES`) is decoded, then encoded (timed), and so on."""
    from fractions import Fraction
    from itertools import islice

    import av

    seconds, cpu, count = 0.0, 0.0, 0
    with av.open(str(video)) as container, av.open(str(out), mode="w", format="mp4") as output:
        stream = container.streams.video[0]
        rate = stream.average_rate or Fraction(15)
        encoder = output.add_stream("libx264", rate=Fraction(rate), options={"crf": "23"})
        encoder.pix_fmt, encoder.width, encoder.height = "yuv420p", stream.codec_context.width, stream.codec_context.height
        decoded, chunk_frames = container.decode(stream), max(1, FLOOR_CHUNK_BYTES // (4 * encoder.width * encoder.height))
        while chunk := [frame.to_ndarray(format="rgba") for frame in islice(decoded, chunk_frames)]:
            started, cpu_started = time.perf_counter(), cpu_seconds()
            for pixels in chunk:
                frame = av.VideoFrame.from_ndarray(pixels, format="rgba")
                frame.pts, frame.time_base = count, 1 / Fraction(rate)
                count += 1
                for packet in encoder.encode(frame):
                    output.mux(packet)
            seconds, cpu = seconds + time.perf_counter() - started, cpu + cpu_seconds() - cpu_started
        started, cpu_started = time.perf_counter(), cpu_seconds()
        for packet in encoder.encode():
            output.mux(packet)
        seconds, cpu = seconds + time.perf_counter() - started, cpu + cpu_seconds() - cpu_started
    return count, seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-q", "--quality", nargs="+", default=["l", "h"], choices=["l", "m", "h", "k"], help="qualities to time")
    parser.add_argument("--sentence", default="the cat sat")
    parser.add_argument("--jobs", type=int, default=cores_available(), help="scenes rendered in parallel processes (default: one per core, as the CLI)")
    parser.add_argument("--parts", type=lambda value: value.split(","), help="only these parts (scene names, comma-separated): a quicker, partial measure")
    parser.add_argument("--again", action="store_true", help="then time the CLI with every file reused, and with the lecture removed")
    parser.add_argument("--warm-text", action="store_true", help="reuse the text outlines already on disk (default: build them from nothing)")
    arguments = parser.parse_args()
    user_tmpdir = os.environ.get("TMPDIR")
    for quality in arguments.quality:
        with tempfile.TemporaryDirectory() as out:
            if not arguments.warm_text:  # scenes/text.py keeps outlines under the temporary folder: a fresh one
                tempfile.tempdir = os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="text-cache-", dir=out)  # TMPDIR: for --jobs' worker processes too
            print(f"text outlines: {'already on disk' if arguments.warm_text else 'built from nothing'}", flush=True)
            timings = lecture_timings(arguments.sentence, quality, arguments.jobs, out, arguments.parts)
            print(f"  {'ratio to the floor':<25}{timings['total'] / timings['floor']:>8.2f} ×  (target ≤ {2.0 if quality == 'l' else 1.3})", flush=True)
            if arguments.again:
                command = ["render", arguments.sentence, "--lecture", "-q", quality, "-o", out]
                print(f"  {'again, all unchanged':<25}{cli_seconds(*command):>8.2f} s  (CLI: every file reused)")
                timings["output"].unlink()
                print(f"  {'again, lecture removed':<25}{cli_seconds(*command):>8.2f} s  (CLI: scenes reused, joined again)")
            tempfile.tempdir = None
            if user_tmpdir is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = user_tmpdir


if __name__ == "__main__":
    main()
