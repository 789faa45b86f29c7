"""Carrying out a render plan: each job's Manim run, then (for a lecture) the joining of its parts.

Each scene renders in a fresh temporary media folder (no stale partial movies from another
sentence can be reused), and its file replaces the final name in one step. ``processes > 1``
renders scenes in parallel processes. An error or an interruption removes the media folders and
stops the worker processes (:mod:`blockviz.processes`); an ``OSError`` while rendering (a full
disk, a read-only folder) is a :class:`BlockvizError` naming the file and the reason. Imports
scenes (and Manim) only inside the functions that render.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path, output_error, temporary_folder, writable_folder, writing
from blockviz.head_choice import choose_head
from blockviz.ownership import output_file
from blockviz.render.plan import CACHE_FOLDER, QUALITIES, LecturePlan, RenderJob, RenderOptions
from blockviz.render.progress import Progress
from blockviz.selection import select_token


def check_request(record, options: RenderOptions) -> None:
    """Check the options, and the token and head against the record, before anything renders.

    The token is chosen as everywhere (:func:`blockviz.selection.select_token`): a word, its
    k-th occurrence ``word#k`` or a 0-based position.

    Raises :class:`BlockvizError` for a bad option, a token not in the sentence (the message
    lists the tokens) or a head out of range.
    """
    options.check()
    choose_head(record, options.head, select_token(record.tokens, options.token, record.special), options.to)


def render_jobs(
    record, jobs: list[RenderJob], options: RenderOptions, processes: int = 1, progress: Progress | None = None
) -> list[tuple[RenderJob, float]]:
    """Render every job; return each job with its seconds. Outputs appear atomically.

    ``progress`` is a :class:`Progress` (or ``None`` for silence). With ``processes > 1`` the
    scenes render in that many parallel processes, each reading the record from a saved file.

    Raises
    ------
    BlockvizError
        For a bad option, a token not in the sentence or a head out of range, or an output folder
        that cannot be written (before anything renders: :func:`check_request`), or a write
        that fails while rendering (a full disk).
    """
    check_request(record, options)
    if not jobs:
        return []
    writable_folder(jobs[0].output.parent)
    cache = writable_folder(jobs[0].output.parent / CACHE_FOLDER)
    progress = progress or Progress(enabled=False)
    done = []
    with progress:
        progress.start_scenes(len(jobs))
        if processes <= 1 or len(jobs) == 1:
            for job in jobs:
                progress.start_scene(job.scene)
                done.append((job, render_one(record, job, options, progress.on_play)))
                progress.finish_scene(job.scene)
        else:
            done = _render_parallel(record, jobs, options, processes, cache, progress)
    return done


def _render_parallel(record, jobs, options, processes, cache, progress):
    # This process renders scenes itself (it has torch and the record already) beside
    # `processes - 1` fresh processes reading the record from a saved file. Each takes the next
    # scene when it is free (a thread here waits for each worker's scene), so a long scene
    # holds no other back. The workers start while signals are deferred; they are stopped on an
    # error, Ctrl-C or SIGTERM here: they remove their media folders and exit, rather than
    # finishing their scenes as `with pool` would wait for.
    import multiprocessing
    import threading
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    from blockviz.processes import end_pool, signals_deferred, start_worker

    waiting, lock = deque(jobs), threading.Lock()
    done, failures = [], []

    def next_job():
        with lock:
            return waiting.popleft() if waiting and not failures else None

    def wait_and_feed(job, future, submit):
        while job is not None:
            try:
                seconds = future.result()
            except BaseException as error:
                with lock:
                    failures.append(error)
                return
            done.append((job, seconds))
            progress.finish_scene(job.scene)
            job = next_job()
            future = submit(job) if job is not None else None

    with temporary_folder(cache, "record-") as shared:
        record_path = shared / "record.safetensors"
        record.save(record_path)
        with (
            signals_deferred()
        ):  # made whole or not at all: its queues' semaphores are registered, then given a finaliser
            pool = ProcessPoolExecutor(
                max_workers=processes - 1, mp_context=multiprocessing.get_context("spawn"), initializer=start_worker
            )

        def submit(job):
            return pool.submit(_render_from_file, str(record_path), job, options)

        try:
            with signals_deferred():  # every worker starts here, on its first scene
                first = [job for job in (next_job() for _ in range(processes - 1)) if job is not None]
                feeders = [
                    threading.Thread(target=wait_and_feed, args=(job, submit(job), submit), daemon=True)
                    for job in first
                ]
            for feeder in feeders:
                feeder.start()
            while (job := next_job()) is not None:
                progress.start_scene(job.scene)
                done.append((job, render_one(record, job, options, progress.on_play)))
                progress.finish_scene(job.scene)
            for feeder in feeders:
                feeder.join()
            if failures:
                raise failures[0]
        except BaseException:
            with lock:
                waiting.clear()
            end_pool(pool)
            raise
        pool.shutdown(wait=True)
    order = {job.scene: index for index, job in enumerate(jobs)}
    return sorted(done, key=lambda pair: order[pair[0].scene])


def _render_from_file(record_path: str, job: RenderJob, options: RenderOptions) -> float:
    from blockviz.block_record import BlockRecord

    return render_one(BlockRecord.load(record_path), job, options)


def render_one(record, job: RenderJob, options: RenderOptions, on_play=None) -> float:
    """Render one scene of ``record`` to ``job.output`` (atomically) and stamp it; return seconds.

    Manim writes into a fresh temporary media folder beside the output, removed afterwards (after
    an error or interruption too), so no partial movie of an earlier render (another sentence)
    can end up in this one.

    Raises :class:`BlockvizError` naming ``job.output`` if the media folder cannot be made or
    a write fails while rendering (a full disk, a read-only file system).
    """
    from blockviz.render.manim_import import import_manim

    tempconfig = import_manim().tempconfig  # first: the modules below import Manim
    from blockviz.render.encoding import renderer
    from blockviz.scenes.catalog import lookup

    if options.format != "png":
        # PyAV now, before anything is made: Manim's encoder would import it mid-render, where a
        # signal during the import met Manim's half-made encoder (a traceback, not the one line)
        import av  # noqa: F401

    started = time.perf_counter()
    entry = lookup([job.scene])[0]
    scene_class = entry.scene_class()
    with temporary_folder(job.output.parent / CACHE_FOLDER, "media-") as media, writing(job.output):
        try:
            with tempconfig(manim_settings(str(media), entry.class_name, options)):
                scene = scene_class(
                    record=record, renderer=renderer(), voice=_voice(options), **options.scene_options()
                )
                if on_play is not None:
                    scene.play_listeners.append(on_play)
                scene.render()
        except Exception as error:
            if isinstance(error, OSError) or not _is_full(media):
                raise
            raise output_error(
                job.output, OSError(errno.ENOSPC, "")
            ) from None  # e.g. a text SVG cut short, then unreadable
        produced = _produced_file(media, entry.class_name, "mp4" if options.format == "gif" else options.format)
        with output_file(job.output) as partial:
            if options.format == "gif":
                _write_gif(produced, partial, options, getattr(scene, "captions", []))
            else:
                os.replace(produced, partial)
    with atomic_path(job.captions) as partial:  # the captions it showed, for the lecture's .srt
        partial.write_text(
            json.dumps(
                {
                    "duration": float(scene.renderer.time),
                    "captions": getattr(scene, "captions", []),
                    "numbers": scene.numbers_to_read() if hasattr(scene, "numbers_to_read") else "",
                },
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
    with atomic_path(job.stamp) as partial:
        partial.write_text(job.key)
    return time.perf_counter() - started


def _voice(options: RenderOptions):
    """The voice that speaks the captions (``options.narrate``), or ``None``."""
    if not options.narrate or options.format != "mp4":
        return None
    import logging

    from blockviz.narration.voice import Voice

    for handler in logging.getLogger().handlers + logging.getLogger("manim").handlers:  # PyAV logs through the root
        handler.addFilter(_unused_sound_options)
    return Voice(options.voice)


def _unused_sound_options(record) -> bool:
    """PyAV warns, as Manim 0.22 muxes a scene's sound, that two of Manim's options were not used: not ours to say."""
    return not str(record.getMessage()).startswith("Some options were not used")


FULL_BYTES = 64 * 1024
"""Free space below which a failed render is blamed on a full disk."""


def _is_full(folder: Path) -> bool:
    """True if the file system holding ``folder`` has (nearly) no space left for a user."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < FULL_BYTES


ENCODERS_IN_FLIGHT = 4
"""Plays whose video Manim may still be encoding (on threads) while the next is drawn: drawing
and encoding overlap, as Manim's documentation suggests (its default, 1, waits after every play)."""


def manim_settings(media: str, output_name: str, options: RenderOptions) -> dict:
    """Manim config for one render into ``media``: quality, format, size, no caching, quiet,
    encoding beside drawing (:data:`ENCODERS_IN_FLIGHT`)."""
    settings = {
        "media_dir": media,
        "quality": QUALITIES[options.quality],
        "output_file": output_name,
        "disable_caching": True,
        "max_inflight_encoders": ENCODERS_IN_FLIGHT,
        "progress_bar": "none",
        "verbosity": "WARNING",
        "preview": False,
    }
    if options.format == "png":
        settings.update(save_last_frame=True, write_to_movie=False, format="png")
    else:  # a GIF is made from the video (blockviz.render.gif)
        settings.update(write_to_movie=True, format="mp4" if options.format == "gif" else options.format)
    if options.resolution is not None:
        settings.update(pixel_width=options.resolution[0], pixel_height=options.resolution[1])
    if options.fps is not None:
        settings["frame_rate"] = options.fps
    return settings


def _write_gif(video: Path, output: Path, options: RenderOptions, captions: list) -> None:
    """The scene's ``video`` as the GIF ``output``, shaped by ``options`` (width, frame rate,
    first step, last hold); ``captions`` ``(time, text)`` mark where each step starts.

    Raises
    ------
    BlockvizError
        If ``options.from_step`` is beyond the scene's steps.
    """
    import av

    from blockviz.render.gif import GIF_FPS, video_to_gif

    starts = [float(time) for time, _ in captions] or [0.0]
    if options.from_step > len(starts):
        raise BlockvizError(
            f"--from-step {options.from_step}: the scene has {len(starts)} steps, choose 1 … {len(starts)}"
        )
    with av.open(str(video)) as source:
        width = options.width or source.streams.video[0].codec_context.width
    start = starts[options.from_step - 1] if options.from_step > 1 else 0.0
    video_to_gif(video, output, options.fps or GIF_FPS, width - width % 2, start, options.hold_last)


def _produced_file(media: Path, output_name: str, file_format: str) -> Path:
    found = [path for path in media.rglob(f"{output_name}*.{file_format}") if "partial_movie_files" not in path.parts]
    if not found:
        raise BlockvizError(f"Manim wrote no {file_format} file for {output_name}: run it alone with -v to see why")
    return max(found, key=lambda path: path.stat().st_mtime)


def shown_captions(job: RenderJob) -> tuple[tuple[float, str], ...]:
    """The captions ``job``'s scene showed, ``(seconds from its start, text)``, as its render
    logged them beside its stamp; ``()`` if it logged none (the title card) or the log is
    missing or unreadable (the lecture then gives the scene one cue)."""
    try:
        logged = json.loads(job.captions.read_text(encoding="utf-8"))
        return tuple((float(at), str(said)) for at, said in logged["captions"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return ()


def shown_numbers(job: RenderJob) -> str:
    """The numbers ``job``'s scene gives its presenter to read out, as its render logged them
    (:meth:`~blockviz.scenes.shown.Shown.numbers_to_read`); "" if none or no log."""
    try:
        return str(json.loads(job.captions.read_text(encoding="utf-8")).get("numbers", ""))
    except (OSError, ValueError, AttributeError, RecursionError):
        return ""


def lecture_parts(jobs: list[RenderJob], wording):
    """Each rendered job as a :class:`~blockviz.lecture.LecturePart`: its scene, chapter title and
    caption in the record's ``wording`` (:class:`~blockviz.scenes.wording.Wording`), its file,
    the captions it showed (:func:`shown_captions`) and the numbers it gives to read out (:func:`shown_numbers`)."""
    from blockviz.lecture import LecturePart
    from blockviz.scenes.catalog import lookup

    by_name = {entry.name: entry for entry in lookup([job.scene for job in jobs])}
    return [
        LecturePart(
            job.scene,
            by_name[job.scene].title_for(wording),
            by_name[job.scene].caption_for(wording),
            job.output,
            shown_captions(job),
            shown_numbers(job),
        )
        for job in jobs
    ]


def join_lecture(lecture: LecturePlan, wording, progress: Progress | None = None, burned_captions: bool = True):
    """Join the lecture's rendered parts into its video, chapters and captions; stamp it.

    ``wording`` (the record's :class:`~blockviz.scenes.wording.Wording`, ``Wording.of(rec)``)
    picks each scene's chapter title and caption for the record's architecture (an encoder's
    mask chapter is not "The causal mask"); the ``.srt`` gets one cue per caption each scene showed
    (:func:`shown_captions`), at the top unless the scenes drew no captions (``burned_captions``).
    Returns the :class:`blockviz.lecture.Lecture` written.

    Raises
    ------
    BlockvizError
        If a part's video is missing or unreadable (see :func:`blockviz.lecture.write_lecture`).
    """
    from blockviz.lecture import write_lecture

    parts = lecture_parts(lecture.jobs, wording)
    progress = progress or Progress(enabled=False)
    with progress:
        written = write_lecture(
            parts, lecture.output, progress=progress.start_joining(len(parts)), burned_captions=burned_captions
        )
    with atomic_path(lecture.stamp) as partial:
        partial.write_text(lecture.key)
    return written
