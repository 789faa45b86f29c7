"""A course run on the terminal: a progress bar over jobs, then a summary table, the failures
one line each, the jobs tried again and the slowest jobs by name (:mod:`rich`, as the render's
progress)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from blockviz.course.jobs import CourseJob
from blockviz.course.work import DONE, FAILED, FRESH, SKIPPED, JobResult
from blockviz.errors import quoted

SLOWEST = 3
"""How many of the slowest jobs the summary names."""
NOT_SLOW = 0.05
"""Seconds under which a job is not named among the slowest (it shows as "0.0 s")."""


class CourseProgress:
    """A bar over the course's jobs on stderr (only on a terminal); ``advance`` after each."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total, self.enabled = total, enabled
        self._bar = self._task = None

    def __enter__(self):
        if self.enabled and self.total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(stderr=True)
            if console.is_terminal:
                self._bar = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    transient=True,
                    console=console,
                )
                self._bar.__enter__()
                self._task = self._bar.add_task("course jobs", total=self.total)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def advance(self, job: CourseJob) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=f"course jobs (last: {job.name})")


def summary_table(jobs: Sequence[CourseJob], results: dict[str, JobResult]):
    """A :class:`rich.table.Table`: per kind of job, how many were done, up to date, skipped, failed."""
    from rich.table import Table

    statuses = (DONE, FRESH, SKIPPED, FAILED)
    counts = Counter((job.kind, results[job.id].status) for job in jobs if job.id in results)
    table = Table(title="course", title_justify="left")
    table.add_column("jobs")
    for status in statuses:
        table.add_column(status, justify="right")
    for kind in dict.fromkeys(job.kind for job in jobs):
        table.add_row(kind, *(str(counts[kind, status]) for status in statuses))
    table.add_row("all", *(str(sum(counts[kind, status] for kind in {k for k, _ in counts})) for status in statuses))
    return table


def failures(jobs: Sequence[CourseJob], results: dict[str, JobResult]) -> list[tuple[str, str]]:
    """The failed jobs as ``(who, error)``, one row per lesson, sentence and error: a sentence whose
    record cannot be made fails every job of it with one error, said once
    (``one: 6 jobs on 'the cat sat'``)."""
    groups: dict[tuple[str, str, str], list[CourseJob]] = {}
    for job in jobs:
        result = results.get(job.id)
        if result is not None and result.status == FAILED:
            groups.setdefault((job.lesson, job.sentence, result.message), []).append(job)
    return [
        (failed[0].label if len(failed) == 1 else f"{lesson}: {len(failed)} jobs on {quoted(sentence)}", message)
        for (lesson, sentence, message), failed in groups.items()
    ]


def failures_table(jobs: Sequence[CourseJob], results: dict[str, JobResult]):
    """A :class:`rich.table.Table` of the :func:`failures`, each with its one-line error; ``None`` if no job failed."""
    from rich.table import Table

    rows = failures(jobs, results)
    if not rows:
        return None
    table = Table(title="failed", title_justify="left")
    table.add_column("job")
    table.add_column("error")
    for who, message in rows:
        table.add_row(who, message)
    return table


def slowest(
    jobs: Sequence[CourseJob], results: dict[str, JobResult], count: int = SLOWEST
) -> list[tuple[CourseJob, float]]:
    """The ``count`` slowest jobs run (done or failed), slowest first, with their seconds; none
    quicker than :data:`NOT_SLOW` (a job that failed at once)."""
    ran = [
        (job, results[job.id].seconds)
        for job in jobs
        if results.get(job.id) and results[job.id].status in (DONE, FAILED) and results[job.id].seconds >= NOT_SLOW
    ]
    return sorted(ran, key=lambda pair: -pair[1])[:count]


def retried(jobs: Sequence[CourseJob], results: dict[str, JobResult]) -> list[str]:
    """One line per job started more than once (a worker process died while it ran), in the
    jobs' order: ``retried: <job>: a worker process died while it ran; done on try 2``."""
    return [
        f"retried: {job.label}: a worker process died while it ran; {results[job.id].status} on try {results[job.id].tries}"
        for job in jobs
        if job.id in results and results[job.id].tries > 1
    ]
