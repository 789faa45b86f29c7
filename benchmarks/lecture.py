"""How long the lecture takes, against the floors: x264 alone, and bare PyAV, encoding the lecture's own frames.

Run:  .venv/bin/python benchmarks/lecture.py [-q l h] [--sentence "the cat sat"] [--jobs N] [--parts A,B] [--rounds N]
      [--encode-only PATH] [--again] [--warm-text] [--scene NAME | --narrate]

For each quality, in a fresh folder, with a fresh text-outline cache (``--warm-text`` keeps
the one on disk) and an empty record cache (no record, no colour-scale plan kept): renders the title card and every scene as mp4 (timing each
scene), joins them into the lecture (timed), and reports the lecture's total time beside the sum
of its scenes' render times. Then, in the same run, the floors, on the lecture's frames at its
frame rate — every timestamp's picture, as a player shows it (a held picture is one encoded frame
in blockviz's videos; here it counts once per frame, as x264 would encode it at a constant rate):

* x264 alone: ``shared/measure/encode_only.py`` (frames already in yuv420p, only libx264 timed;
  issue 25's target: the lecture at most 1.5× this at -q l), run as a separate process on a
  constant-rate copy of the lecture (written, not timed: :func:`write_constant_rate`);
* x264 alone again, in this process, a chunk of frames at a time, for its CPU seconds (the
  lecture's CPU seconds over these: a ratio a busy machine disturbs less than wall-clock time);
* bare PyAV: every frame encoded again from RGBA with manim's settings (libx264, crf 23,
  yuv420p, as ``shared/measure/encode_floor.py``; issue 9's target: at most 2.0 at -q l, 1.3 at -q h).

``encode_only.py`` holds every frame in memory: it is skipped when they would take more than
half the memory available (-q h). ``--rounds N`` repeats all of it N times and prints the
median ratios. Each time is printed as it is known, with the load average. With ``--again`` it
then times `blockviz render … --lecture` run again with nothing changed (everything reused) and
with only the lecture file removed (scenes reused, joined again).

``--scene NAME`` times one scene instead, as a user renders it: `blockviz render SENTENCE --scene
NAME -q Q` in a fresh process (text outlines and record built from nothing unless
``--warm-text``), then the same floors on its frames (issue 32's bar: at most 1.5× x264 alone at
-q h). ``--narrate`` times the lecture with ``--narrate`` against the plain one instead, each
from nothing but the speech (an untimed narrated lecture synthesises it first, as any second
render finds it), the order alternating each round (issue 32's bar: at most 1.5×). Not a test:
timings depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BLOCKVIZ = str(ROOT / ".venv/bin/blockviz")
ENCODE_ONLY = next(
    (
        folder / "shared/measure/encode_only.py"
        for folder in ROOT.parents
        if (folder / "shared/measure/encode_only.py").is_file()
    ),
    ROOT.parent / "shared/measure/encode_only.py",
)
"""x264 alone on frames already in yuv420p: the shared measuring tool, in ``shared/measure/`` beside
the checkout or a folder above it."""

from private_cache import use_private_cache  # noqa: E402  benchmarks/private_cache.py

from blockviz.processes import cores_available  # noqa: E402  (after the path above)


def cli_seconds(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([BLOCKVIZ, *args], check=True, capture_output=True)
    return time.perf_counter() - started


PROGRAM = [sys.executable, "-c", "import sys; from blockviz.cli.program import main; sys.exit(main())"]
"""The blockviz program, as this checkout's ``python -m blockviz`` would run it (the current folder first on the path)."""


def program_seconds(*args: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds (the process, its threads and its workers) of the program run
    with ``args`` in a fresh process."""
    before, started = os.times(), time.perf_counter()
    subprocess.run([*PROGRAM, *args], check=True, capture_output=True)
    wall, after = time.perf_counter() - started, os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def cli_record_inputs(sentence: str) -> dict:
    """The record options `blockviz render SENTENCE` uses, so its runs find our files unchanged."""
    from blockviz.cli import main
    from blockviz.cli.options import pop_record_options

    with main.commands["render"].make_context("render", [sentence]) as context:
        return pop_record_options(dict(context.params))


def lecture_timings(
    sentence: str,
    quality: str,
    jobs: int,
    out: str,
    parts: list[str] | None = None,
    script: Path = ENCODE_ONLY,
    narrate: bool = False,
    floors: bool = True,
) -> dict:
    """Render and join one lecture in this process, as `blockviz render --lecture` does (with
    ``narrate``, as `--narrate` does), printing each time as it is known; then, with ``floors``,
    time the floors. Every time in seconds. ``parts`` (scene names) keeps only those parts, for
    a quicker measure."""
    import dataclasses

    from blockviz.cli.options import build_record
    from blockviz.render.plan import RenderOptions, plan_lecture
    from blockviz.render.run import join_lecture, render_jobs
    from blockviz.scenes.catalog import entries, for_record
    from blockviz.scenes.wording import Wording

    print(
        f"-q{quality}{' --narrate' if narrate else ''}: {sentence!r}, {'parts ' + ','.join(parts) if parts else 'every part'}, --jobs {jobs}, load average {load()} at the start",
        flush=True,
    )
    started, cpu_started = time.perf_counter(), cpu_seconds()
    record_inputs = cli_record_inputs(sentence)
    rec = build_record(**record_inputs)
    options = RenderOptions(quality=quality, narrate=narrate)
    scenes = [entry.name for entry in for_record(entries(), rec)]  # as `render --lecture` chooses them
    lecture = plan_lecture(record_inputs, options, out, scenes)
    if parts:
        lecture = dataclasses.replace(lecture, jobs=[job for job in lecture.jobs if job.scene in parts])
    rendered = render_jobs(rec, lecture.jobs, options, processes=jobs)
    for job, seconds in rendered:
        print(f"  {job.scene:<25}{seconds:>8.1f} s")
    print(f"  {'sum of scene renders':<25}{sum(seconds for _, seconds in rendered):>8.1f} s", flush=True)
    join_started = time.perf_counter()
    written = join_lecture(lecture, Wording.of(rec))
    finished, cpu = time.perf_counter(), cpu_seconds() - cpu_started
    total = finished - started
    print(
        f"  {'joining the lecture':<25}{finished - join_started:>8.2f} s  ({written.duration:.1f} s of video, packets copied, not re-encoded)"
    )
    print(
        f"  {'lecture total':<25}{total:>8.1f} s  (record + scenes + joining; {cpu:.1f} CPU s; load average {load()})",
        flush=True,
    )
    sizes = sum(job.output.stat().st_size for job in lecture.jobs)
    encoded = video_frames(lecture.output)
    print(
        f"  {'files':<25}{lecture.output.stat().st_size / 1e6:>8.2f} MB  lecture ({sizes / 1e6:.2f} MB its scenes); {encoded} frames encoded"
    )
    timings = {"total": total, "cpu": cpu, "output": lecture.output}
    if floors:
        timings.update(x264_floors(lecture.output, total, cpu, quality, out, script))
    return timings


def x264_floors(video: Path, total: float, cpu: float, quality: str, out: str, script: Path) -> dict:
    """Time the floors on ``video``'s frames at its frame rate (a constant-rate copy written
    first, untimed, as ``out/constant-rate.mp4``) and print each against ``total`` seconds and
    ``cpu`` CPU seconds of rendering it. Returns the floors' seconds."""
    timings = {}
    reference = Path(out) / "constant-rate.mp4"
    frames = write_constant_rate(video, reference)
    print(f"  {'frames shown':<25}{frames:>8d}  (at the video's frame rate)")
    only = encode_only(reference, Path(out) / "encode-only.mp4", frames, script)
    if only is not None:
        timings["encode_only"] = only
        print(
            f"  {'x264 alone':<25}{only:>8.1f} s  ({frames} frames in yuv420p, encode_only.py; load average {load()})"
        )
        print(f"  {'ratio to x264 alone':<25}{total / only:>8.2f} ×  (target ≤ 1.5)", flush=True)
    _, x264, timings["x264_cpu"] = encode_floor(reference, Path(out) / "x264.mp4", from_rgba=False)
    timings["x264"] = x264
    print(
        f"  {'x264 alone, CPU':<25}{timings['x264_cpu']:>8.1f} CPU s  (the same here, {x264:.1f} s; load average {load()})"
    )
    print(f"  {'ratio to x264 here':<25}{total / x264:>8.2f} ×  (wall clock, x264 alone in this process)")
    print(
        f"  {'CPU ratio to x264 alone':<25}{cpu / timings['x264_cpu']:>8.2f} ×  (the lecture's CPU seconds over x264's)",
        flush=True,
    )
    floor_frames, floor, floor_cpu = encode_floor(reference, Path(out) / "floor.mp4")
    timings["floor"], timings["floor_cpu"] = floor, floor_cpu
    print(
        f"  {'bare PyAV encode':<25}{floor:>8.1f} s  ({floor_frames} frames from RGBA; {floor_cpu:.1f} CPU s; load average {load()})"
    )
    print(
        f"  {'ratio to bare PyAV':<25}{total / floor:>8.2f} ×  (target ≤ {2.0 if quality == 'l' else 1.3}; CPU seconds {cpu / floor_cpu:.2f} ×)",
        flush=True,
    )
    return timings


def video_frames(video: Path) -> int:
    """How many frames ``video`` holds (packets, not decoded)."""
    import av

    with av.open(str(video)) as container:
        return sum(1 for packet in container.demux(video=0) if packet.pts is not None)


def write_constant_rate(video: Path, out: Path) -> int:
    """Write ``video``'s picture at every timestamp of its frame rate (FFmpeg's ``fps`` filter,
    as a player resamples) into ``out`` with manim's settings (libx264, crf 23, yuv420p); return
    the frames written. Not timed.

    The floors read it. A decoded frame keeps its picture type (I, P, B), and libx264 obeys it in
    the frames it is given: ``encode_only.py`` re-encodes its input's frames with their types. So
    the types here are x264's own at a constant rate (each frame's type cleared before encoding:
    a held I frame repeated would otherwise force an I frame at every timestamp of the hold), and
    ``encode_only.py`` times x264 making the choices it makes alone. (Before holds were one frame
    the floor read the lecture itself, with the types of its per-segment encoding.)"""
    from fractions import Fraction

    import av
    from av.video.frame import PictureType

    with av.open(str(video)) as container, av.open(str(out), mode="w", format="mp4") as output:
        stream = container.streams.video[0]
        rate = Fraction(stream.codec_context.framerate or stream.guessed_rate)
        encoder = output.add_stream("libx264", rate=rate, options={"crf": "23"})
        encoder.pix_fmt, encoder.width, encoder.height = (
            "yuv420p",
            stream.codec_context.width,
            stream.codec_context.height,
        )
        graph = av.filter.Graph()
        source, sink = graph.add_buffer(template=stream), graph.add("buffersink")
        resample = graph.add("fps", f"fps={rate}")
        source.link_to(resample)
        resample.link_to(sink)
        graph.configure()
        count = 0

        def drain() -> None:
            nonlocal count
            while True:
                try:
                    frame = graph.pull()
                except (av.error.BlockingIOError, av.error.EOFError):
                    return
                frame.pts, frame.time_base, frame.pict_type = count, 1 / rate, PictureType.NONE
                count += 1
                output.mux(encoder.encode(frame))

        for frame in container.decode(stream):
            graph.push(frame)
            drain()
        graph.push(None)
        drain()
        output.mux(encoder.encode())
    return count


def encode_only(reference: Path, out: Path, frames: int, script: Path = ENCODE_ONLY) -> float | None:
    """Seconds of ``script`` (``shared/measure/encode_only.py``: x264 alone) on ``reference``'s frames, run as
    its own process; ``None`` (said why) if it is missing or the frames would not fit in half the
    memory available (it holds them all)."""
    import av

    with av.open(str(reference)) as container:
        context = container.streams.video[0].codec_context
        needed = frames * context.width * context.height * 3 // 2  # yuv420p
    available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if not script.is_file() or needed > available // 2:
        why = (
            f"{script} is missing"
            if not script.is_file()
            else f"its {frames} frames need {needed / 1e9:.1f} GB, {available / 1e9:.1f} GB free"
        )
        print(f"  {'x264 alone':<25}{'skipped':>8}  ({why})", flush=True)
        return None
    result = subprocess.run(
        [sys.executable, str(script), str(reference), str(out)], check=True, capture_output=True, text=True
    )
    counted, seconds = result.stdout.split()
    if int(counted) != frames:
        raise RuntimeError(f"encode_only.py encoded {counted} frames, not {frames}")
    return float(seconds)


def cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process, its threads and its ended children."""
    import resource

    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def load() -> str:
    """The 1-, 5- and 15-minute load averages, e.g. ``"6.1 5.2 3.0"``."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


FLOOR_CHUNK_BYTES = 2**30
"""Decoded frames held at a time for the floor (a GiB): all 5,000 frames of -q l at once would
take 8 GB. The encoder's few frames still in its threads at the end of a chunk are a few per
cent of a chunk (640 frames at 480p, 128 at 1080p)."""


def encode_floor(video: Path, out: Path, from_rgba: bool = True) -> tuple[int, float, float]:
    """``(frames, seconds, CPU seconds)``: bare PyAV encoding ``video``'s decoded frames again (libx264, crf 23,
    yuv420p, its size and rate). ``from_rgba``: one ``VideoFrame.from_ndarray(rgba)`` per frame,
    as ``shared/measure/encode_floor.py`` does; else frames already in yuv420p, only x264 timed,
    as ``shared/measure/encode_only.py`` does (but a chunk at a time, and with CPU seconds). The
    decoding is not timed: a chunk of frames (:data:`FLOOR_CHUNK_BYTES`) is decoded, then encoded
    (timed), and so on."""
    from fractions import Fraction
    from itertools import islice

    import av

    seconds, cpu, count = 0.0, 0.0, 0
    with av.open(str(video)) as container, av.open(str(out), mode="w", format="mp4") as output:
        stream = container.streams.video[0]
        rate = stream.average_rate or Fraction(15)
        encoder = output.add_stream("libx264", rate=Fraction(rate), options={"crf": "23"})
        encoder.pix_fmt, encoder.width, encoder.height = (
            "yuv420p",
            stream.codec_context.width,
            stream.codec_context.height,
        )
        frame_bytes = encoder.width * encoder.height * (4 if from_rgba else 3 / 2)
        decoded, chunk_frames = container.decode(stream), max(1, int(FLOOR_CHUNK_BYTES // frame_bytes))
        unpack = (
            (lambda frame: frame.to_ndarray(format="rgba"))
            if from_rgba
            else (lambda frame: frame.reformat(format="yuv420p"))
        )
        while chunk := [unpack(frame) for frame in islice(decoded, chunk_frames)]:
            started, cpu_started = time.perf_counter(), cpu_seconds()
            for pixels in chunk:
                frame = av.VideoFrame.from_ndarray(pixels, format="rgba") if from_rgba else pixels
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
    use_private_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-q", "--quality", nargs="+", default=["l", "h"], choices=["l", "m", "h", "k"], help="qualities to time"
    )
    parser.add_argument("--sentence", default="the cat sat")
    parser.add_argument(
        "--jobs",
        type=int,
        default=cores_available(),
        help="scenes rendered in parallel processes (default: one per core, as the CLI)",
    )
    parser.add_argument(
        "--parts",
        type=lambda value: value.split(","),
        help="only these parts (scene names, comma-separated): a quicker, partial measure",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="times to measure each quality (each from nothing); the median ratios are printed",
    )
    parser.add_argument(
        "--encode-only", type=Path, default=ENCODE_ONLY, help=f"the shared measuring tool (default: {ENCODE_ONLY})"
    )
    parser.add_argument(
        "--again", action="store_true", help="then time the CLI with every file reused, and with the lecture removed"
    )
    parser.add_argument(
        "--warm-text",
        action="store_true",
        help="reuse the text outlines already on disk (default: build them from nothing)",
    )
    parser.add_argument(
        "--scene",
        help="time this one scene instead, rendered by `blockviz render --scene SCENE` in a fresh process, against x264 alone on its frames",
    )
    parser.add_argument(
        "--narrate",
        action="store_true",
        help="time the narrated lecture (--narrate) against the plain one instead, rounds alternating (speech already synthesised)",
    )
    arguments = parser.parse_args()
    for quality in arguments.quality:
        if arguments.scene:
            scene_rounds(arguments, quality)
        elif arguments.narrate:
            narrated_rounds(arguments, quality)
        else:
            lecture_rounds(arguments, quality)


@contextlib.contextmanager
def fresh_caches(out: str, warm: bool, records: bool = False):
    """Inside, the text outlines (kept under the temporary folder: scenes/text.py) are built from
    nothing in ``out`` — and, with ``records``, blockviz's record cache is empty — unless ``warm``.
    Set in the environment too, for worker and program processes."""
    saved = {name: os.environ.get(name) for name in ("TMPDIR", "BLOCKVIZ_CACHE_DIR")}
    if not warm:
        tempfile.tempdir = os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="text-cache-", dir=out)
        if records:
            os.environ["BLOCKVIZ_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=out)
    print(f"text outlines{' and records' if records else ''}: {'already on disk' if warm else 'built from nothing'}")
    try:
        yield
    finally:
        tempfile.tempdir = None
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def lecture_rounds(arguments, quality: str) -> None:
    """The lecture from nothing against the floors, ``--rounds`` times; the median ratios."""
    rounds = []
    for _ in range(arguments.rounds):
        with tempfile.TemporaryDirectory() as out, fresh_caches(out, arguments.warm_text, records=True):
            timings = lecture_timings(
                arguments.sentence, quality, arguments.jobs, out, arguments.parts, arguments.encode_only
            )
            rounds.append(timings)
            if arguments.again:
                command = ["render", arguments.sentence, "--lecture", "-q", quality, "-o", out]
                print(f"  {'again, all unchanged':<25}{cli_seconds(*command):>8.2f} s  (CLI: every file reused)")
                timings["output"].unlink()
                print(
                    f"  {'again, lecture removed':<25}{cli_seconds(*command):>8.2f} s  (CLI: scenes reused, joined again)"
                )
    print_medians(f"-q{quality} lecture", rounds)


def scene_rounds(arguments, quality: str) -> None:
    """One scene rendered by the program in a fresh process (text outlines and record from nothing
    unless ``--warm-text``), then x264 alone on its frames, ``--rounds`` times; the median ratios."""
    rounds = []
    for _ in range(arguments.rounds):
        with tempfile.TemporaryDirectory() as out, fresh_caches(out, arguments.warm_text, records=True):
            folder = Path(out) / "render"
            print(f"-q{quality}: {arguments.scene} of {arguments.sentence!r}, load average {load()} at the start")
            wall, cpu = program_seconds(
                "render", arguments.sentence, "--scene", arguments.scene, "-q", quality, "-o", str(folder)
            )
            video = folder / f"{arguments.scene}.mp4"
            print(
                f"  {'render, fresh process':<25}{wall:>8.1f} s  ({cpu:.1f} CPU s, {video_frames(video)} frames encoded; load average {load()})",
                flush=True,
            )
            rounds.append(
                {"total": wall, "cpu": cpu, **x264_floors(video, wall, cpu, quality, out, arguments.encode_only)}
            )
    print_medians(f"-q{quality} {arguments.scene}", rounds)


def narrated_rounds(arguments, quality: str) -> None:
    """The lecture with --narrate against the plain one, each from nothing but the speech (an
    untimed narrated lecture first fills the speech cache, as a second render finds it),
    alternating which goes first; the median ratios."""
    with tempfile.TemporaryDirectory() as out, fresh_caches(out, True):
        print("untimed: the narrated lecture once, to synthesise its speech")
        lecture_timings(arguments.sentence, quality, arguments.jobs, out, arguments.parts, narrate=True, floors=False)
    ratios, cpu_ratios = [], []
    for number in range(arguments.rounds):
        timings = {}
        for narrate in (False, True) if number % 2 == 0 else (True, False):
            with tempfile.TemporaryDirectory() as out, fresh_caches(out, arguments.warm_text):
                timings[narrate] = lecture_timings(
                    arguments.sentence, quality, arguments.jobs, out, arguments.parts, narrate=narrate, floors=False
                )
        ratios.append(timings[True]["total"] / timings[False]["total"])
        cpu_ratios.append(timings[True]["cpu"] / timings[False]["cpu"])
        print(
            f"  {'narrated / plain':<25}{ratios[-1]:>8.2f} ×  (CPU seconds {cpu_ratios[-1]:.2f} ×; target ≤ 1.5)",
            flush=True,
        )
    print(
        f"-q{quality}, {len(ratios)} rounds: narrated over plain, median {statistics.median(ratios):.2f} × "
        f"({', '.join(f'{r:.2f}' for r in ratios)}); CPU seconds {statistics.median(cpu_ratios):.2f} ×",
        flush=True,
    )


def print_medians(what: str, rounds: list[dict]) -> None:
    """The median ratios of several rounds (nothing for one round: its ratios are printed already)."""
    if len(rounds) < 2:
        return
    ratios = [t["total"] / t["encode_only"] for t in rounds if "encode_only" in t]
    here = [t["total"] / t["x264"] for t in rounds]
    shown = (
        f"x264 alone {statistics.median(ratios):.2f} × ({', '.join(f'{r:.2f}' for r in ratios)})"
        if ratios
        else "x264 alone (encode_only.py) skipped"
    ) + f", to x264 alone here {statistics.median(here):.2f} × ({', '.join(f'{r:.2f}' for r in here)})"
    floors = [t["total"] / t["floor"] for t in rounds]
    cpu_ratios = [t["cpu"] / t["x264_cpu"] for t in rounds]
    print(
        f"{what}, {len(rounds)} rounds: median ratio to {shown}; CPU seconds to x264 alone {statistics.median(cpu_ratios):.2f} × "
        f"({', '.join(f'{r:.2f}' for r in cpu_ratios)}); to bare PyAV {statistics.median(floors):.2f} ×",
        flush=True,
    )


if __name__ == "__main__":
    main()
