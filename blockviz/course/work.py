"""Doing one course job, in whichever process runs it: a local worker, a Dask worker, or the
course's own process.

:func:`run_job` never raises for a job that fails: it returns a :class:`JobResult` with the
one-line error, so one failure stops no other job. Each process records a sentence once and
keeps it (:func:`course_record`; loading a model is itself kept per process by
:func:`blockviz.models.loading.load_model` and :func:`blockviz.toy.folder.load_toy`), and runs
torch on one thread: the workers share the machine's cores between them.

A worker is warmed before its first job (:func:`warm_up`, a pool's initializer or a Dask worker
plugin): torch, Manim and the scene modules imported, the course's models loaded. That fixed
start-up is then paid once per worker, by all workers at once, not inside the first job each
takes. :func:`worker_state` says what a process has loaded, and each result carries it.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from blockviz.course.jobs import CourseJob
from blockviz.course.records import course_record
from blockviz.errors import BlockvizError

DONE, FAILED, SKIPPED, FRESH = "done", "failed", "skipped", "up to date"
"""A job's status after a run; ``FRESH``: not run, its outputs were up to date."""


@dataclass(frozen=True)
class JobResult:
    """What became of one job: ``status`` (:data:`DONE`, :data:`FAILED`, :data:`SKIPPED`,
    :data:`FRESH`), its ``seconds``, a one-line ``message`` (the error, why it was skipped, or
    for a job done a warning about its record) and the ``outputs`` it wrote."""

    job_id: str
    status: str
    seconds: float = 0.0
    message: str = ""
    outputs: tuple[Path, ...] = field(default=())
    worker: dict = field(default_factory=dict, compare=False)
    """:func:`worker_state` of the process that ran the job, after it (empty if not run)."""
    tries: int = 1
    """How many times the job was started: more than 1 if a worker process died while it ran."""


def run_job(job: CourseJob) -> JobResult:
    """Make ``job``'s outputs (each written atomically) and stamp them; any error becomes a
    :data:`FAILED` result with one line. ``BaseException`` (an interruption) goes through."""
    from blockviz.course.stamps import record_hash, write_stamp

    _one_thread()
    started = time.perf_counter()
    if job.skip_reason:
        return JobResult(job.id, SKIPPED, message=job.skip_reason)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # kept for the result's one line, not printed by the worker
            rec = course_record(job.sentence, job.settings.model, job.settings.layer)
            outputs, skipped = _MAKERS[job.kind](job, rec)
        seconds = time.perf_counter() - started
        write_stamp(job, outputs, record_hash(rec), seconds, skipped)  # a skip is stamped too: not redone
        if skipped:
            return JobResult(job.id, SKIPPED, seconds, skipped, worker=worker_state())
    except Exception as error:  # noqa: BLE001 — isolated: reported as the job's one line
        return JobResult(job.id, FAILED, time.perf_counter() - started, one_line(error), worker=worker_state())
    return JobResult(job.id, DONE, seconds, _unknown_words(caught), tuple(outputs), worker_state())


def _unknown_words(caught: list) -> str:
    """The toy model's warning about words outside its vocabulary, if the record gave one
    (the only warning a course repeats: it says the numbers are of ``<unk>``)."""
    from blockviz.toy.recording import UnknownWordsWarning

    return next((str(w.message) for w in caught if issubclass(w.category, UnknownWordsWarning)), "")


def one_line(error: BaseException) -> str:
    """A :class:`BlockvizError`'s own message; anything else as ``Type: first line``."""
    if isinstance(error, BlockvizError):
        return str(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def warm_modules() -> list[str]:
    """The modules a worker imports before its first job: torch, Manim, rendering and every
    scene module (their names read from the catalogue, without importing them here)."""
    from blockviz.scenes.catalog import entries

    heavy = ["torch", "manim", "blockviz.course.work", "blockviz.render.run", "blockviz.toy.recording"]
    return heavy + sorted({entry.module for entry in entries()})


def warm_up(models: tuple[str, ...] = ()) -> None:
    """Pay a worker's fixed start-up before its first job: torch on one thread, Manim and every
    scene module imported, and each of ``models`` (course model names) loaded into the loaders'
    per-process caches, where the jobs' records then find it. A model that cannot be loaded is
    left to the jobs that need it, to fail with their one-line error: a warm-up never raises."""
    started = time.perf_counter()
    _one_thread()
    import importlib

    for module in warm_modules():  # already imported in a worker forked from the fork server
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001, S110 — the jobs that need it report it, one line each
            pass
    for model in models:
        try:
            _load_model(model)
        except Exception:  # noqa: BLE001, S110 — as above: the model's jobs report it
            pass
    _Worker.warm_seconds += time.perf_counter() - started
    _Worker.warm_cpu_seconds = time.process_time()


def _load_model(model: str) -> None:
    """Load ``model`` into its loader's per-process cache (the seeded block has none: it is code)."""
    if model == "seeded":
        return
    from blockviz.models.resolve import resolve_model

    if resolve_model(model).toy:
        from blockviz.toy import toy_folder
        from blockviz.toy.folder import load_toy

        load_toy(toy_folder(model))
    else:
        from blockviz.models.loading import load_model

        load_model(model)


def worker_state() -> dict:
    """What this process has loaded: ``pid``, ``records`` (sentences recorded by
    :func:`course_record`), ``models`` (model loads: misses of the toy and model loaders' own
    caches, so a second load of one model would count), ``warm_seconds`` (:func:`warm_up`'s
    wall clock), ``cpu_seconds_warm`` (this process's CPU seconds when warmed) and
    ``cpu_seconds`` (so far)."""
    models = 0
    for module in ("blockviz.toy.folder", "blockviz.models.loading"):
        loaded = sys.modules.get(module)  # not imported: nothing loaded through it
        if loaded is not None:
            models += loaded._load.cache_info().misses
    return {
        "pid": os.getpid(),
        "records": course_record.cache_info().misses,
        "models": models,
        "warm_seconds": round(_Worker.warm_seconds, 3),
        "cpu_seconds_warm": round(_Worker.warm_cpu_seconds, 3),
        "cpu_seconds": round(time.process_time(), 3),
    }


class _Worker:
    threads_set = False
    warm_seconds = 0.0
    warm_cpu_seconds = 0.0


def _one_thread() -> None:
    if not _Worker.threads_set:
        import torch

        torch.set_num_threads(1)  # as PyTorch's DataLoader workers: the workers share the cores
        _Worker.threads_set = True


def _scene(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    from blockviz.render.plan import CACHE_FOLDER, RenderJob, RenderOptions
    from blockviz.render.run import check_request, render_one
    from blockviz.scenes.catalog import lookup

    settings = job.settings
    entry = lookup([job.name])[0]
    reason = entry.missing_for(rec)
    if reason is not None:
        if job.name in settings.scenes:
            raise BlockvizError(f"scene {job.name!r} cannot be drawn: {reason}")
        return [], f"scene {job.name}: {reason}"  # came with "all": left out, as render leaves it out
    options = RenderOptions(
        quality=job.quality,
        format=job.format,
        token=settings.token,
        head=settings.head or 0,
        theme=settings.theme,
        resolution=settings.resolution,
        fps=settings.fps,
        narrate="narration" in job.narration(),  # mp4 only: a GIF or PNG has no sound
        voice=settings.voice if "narration" in job.narration() else None,
    )
    check_request(rec, options)
    output = job.target
    render_job = RenderJob(job.name, output, output.parent / CACHE_FOLDER / f"{output.name}.key", job.key)
    render_one(rec, render_job, options)
    return [output], None


def _figures(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    from blockviz.figures.registry import FIGURE_NAMES, applies_to, skip_reason
    from blockviz.figures.request import FigureRequest
    from blockviz.figures.writing import write_figures
    from blockviz.style import theme

    settings = job.settings
    asked = FIGURE_NAMES if settings.figures is True else settings.figures
    names = [name for name in asked if applies_to(name, rec) and skip_reason(name, rec) is None]
    if not names:
        return [], "figures: none of those asked can be drawn from this record"
    request = FigureRequest(rec, theme(settings.theme), token=settings.token, head=settings.head)
    return list(write_figures(request, job.target, names, settings.figure_formats, jobs=1)), None


def _explorer(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    """The page (``blockviz explore``); with a contrast sentence, its overview puts that
    sentence's weights rows beside these (``explore --contrast``): every layer of a trained model."""
    from blockviz.explorer import Explorer

    settings = job.settings
    overview = {}
    if job.contrast is not None:
        from blockviz.course.contrast import sentence_attentions

        every_layer = rec.source.kind == "model"  # a toy or seeded block: the record is its own overview
        mine, _ = sentence_attentions(job.sentence, settings.model, settings.layer)
        theirs, _ = sentence_attentions(job.contrast, settings.model, settings.layer, every_block=every_layer)
        overview = {"attentions": mine if every_layer else None, "contrast": theirs, "contrast_sentence": job.contrast}
    page = Explorer(rec, token=settings.token, head=settings.head, theme=settings.theme, **overview)
    return [page.save(job.target)], None


def _compare(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    """The sentence against its contrast sentence, as ``blockviz compare`` (:mod:`blockviz.course.contrast`)."""
    from blockviz.course.contrast import compare_pair, default_query, write_comparison
    from blockviz.files import temporary_folder

    settings = job.settings
    query = (
        settings.token if settings.token is not None else default_query(job.sentence, settings.model, settings.layer)
    )
    comparison = compare_pair(job.sentence, job.contrast, str(query), settings.model, settings.layer)
    with temporary_folder(job.folder, f".{job.target.name}-") as partial:  # hidden beside it, as a file being written
        write_comparison(comparison, partial, settings.figure_formats)
        _replace_own(partial, job.target)
    return _files_in(job.target), None


def _slides(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    """The deck by ``blockviz slides`` itself, in a child process (its library interface is not
    settled yet), written into a temporary folder that then takes the final name."""
    from blockviz.files import temporary_folder
    from blockviz.processes import run_child

    settings = job.settings
    model = ["--model", settings.model] + (["--layer", str(settings.layer)] if settings.layer is not None else [])
    with temporary_folder(job.folder, f".{job.target.name}-") as partial:  # hidden beside it, as a file being written
        command = [sys.executable, "-c", "from blockviz.cli.program import main; main()", "slides", "--", job.sentence]
        focus = (["--token", str(settings.token)] if settings.token is not None else []) + (
            ["--head", str(settings.head)] if settings.head is not None else []
        )
        scenes = ["--scene", ",".join(settings.scenes)]  # the lesson's scenes, as its videos
        voice = ["--voice", settings.voice] if settings.voice is not None else []
        narration = ["--narrate", *voice] if settings.narration else []
        options = [*model, *scenes, *focus, *narration, "--theme", settings.theme, "-q", settings.qualities[0]]
        options += ["-o", str(partial)]
        done = run_child(command[:-2] + options + command[-2:])  # ended with the worker
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["blockviz slides failed"])[-1]
            raise BlockvizError(last.removeprefix("Error: "))
        _replace_own(partial, job.target)
    return _files_in(job.target, recursive=True), None


def _files_in(folder: Path, recursive: bool = False) -> list[Path]:
    """The outputs in ``folder`` (in its subfolders too if ``recursive``), blockviz's manifests left out."""
    from blockviz.ownership import MANIFEST

    found = folder.rglob("*") if recursive else folder.iterdir()
    return sorted(path for path in found if path.is_file() and path.name != MANIFEST)


def _replace_own(partial: Path, target: Path) -> None:
    """Put the finished folder ``partial`` in ``target``'s place, if everything there is blockviz's
    own (:mod:`blockviz.ownership`), with its files listed as blockviz's."""
    from blockviz.ownership import remember, remove_own

    remember([partial])
    remove_own(target)
    os.replace(partial, target)


_MAKERS = {"scene": _scene, "figures": _figures, "explorer": _explorer, "compare": _compare, "slides": _slides}
