"""Doing one course job, in whichever process runs it: a local worker, a Dask worker, or the
course's own process.

:func:`run_job` never raises for a job that fails: it returns a :class:`JobResult` with the
one-line error, so one failure stops no other job. Each process records a sentence once and
keeps it (:func:`course_record`; loading a model is itself kept per process by
:func:`blockviz.models.loading.load_model` and :func:`blockviz.toy.folder.load_toy`), and runs
torch on one thread: the workers share the machine's cores between them.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from blockviz.course.jobs import CourseJob
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
            return JobResult(job.id, SKIPPED, seconds, skipped)
    except Exception as error:  # noqa: BLE001 — isolated: reported as the job's one line
        return JobResult(job.id, FAILED, time.perf_counter() - started, one_line(error))
    return JobResult(job.id, DONE, seconds, _unknown_words(caught), tuple(outputs))


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


@functools.lru_cache(maxsize=16)
def course_record(sentence: str, model: str, layer: int | None):
    """The record of ``sentence`` on ``model`` (``"seeded"``: blockviz's seeded block with its
    default sizes; else :func:`blockviz.models.recording.record_layer`, ``layer`` 0 unless given),
    kept for the life of this process."""
    if model == "seeded":
        from blockviz.block_record import record

        return record(sentence)
    from blockviz.models.recording import record_layer

    return record_layer(sentence, model=model, layer=layer or 0)


class _Worker:
    threads_set = False


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
    from blockviz.explorer import Explorer

    settings = job.settings
    page = Explorer(rec, token=settings.token, head=settings.head, theme=settings.theme)
    return [page.save(job.target)], None


def _slides(job: CourseJob, rec) -> tuple[list[Path], str | None]:
    """The deck by ``blockviz slides`` itself, in a child process (its library interface is not
    settled yet), written into a temporary folder that then takes the final name."""
    from blockviz.files import temporary_folder

    settings = job.settings
    model = ["--model", settings.model] + (["--layer", str(settings.layer)] if settings.layer is not None else [])
    with temporary_folder(job.folder / ".cache", "slides-") as partial:
        command = [sys.executable, "-c", "from blockviz.cli.program import main; main()", "slides", "--", job.sentence]
        focus = (["--token", str(settings.token)] if settings.token is not None else []) + (
            ["--head", str(settings.head)] if settings.head is not None else []
        )
        scenes = ["--scene", ",".join(settings.scenes)]  # the lesson's scenes, as its videos
        options = [*model, *scenes, *focus, "--theme", settings.theme, "-q", settings.qualities[0], "-o", str(partial)]
        done = subprocess.run(command[:-2] + options + command[-2:], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["blockviz slides failed"])[-1]
            raise BlockvizError(last.removeprefix("Error: "))
        if job.target.exists():
            shutil.rmtree(job.target)
        os.replace(partial, job.target)
    return sorted(path for path in job.target.rglob("*") if path.is_file()), None


_MAKERS = {"scene": _scene, "figures": _figures, "explorer": _explorer, "slides": _slides}
