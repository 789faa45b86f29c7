"""A course run on the terminal: a progress bar over jobs, then a summary table, the failures
one line each, the jobs tried again and the slowest jobs by name (:mod:`rich`, as the render's
progress)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from blockviz.course.jobs import CourseJob
from blockviz.course.work import DONE, FAILED, FRESH, SKIPPED, JobResult

SLOWEST = 3
"""How many of the slowest jobs the summary names."""


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


def failures_table(jobs: Sequence[CourseJob], results: dict[str, JobResult]):
    """A :class:`rich.table.Table` of the jobs that failed, each with its one-line error; ``None`` if none did."""
    from rich.table import Table

    failed = [job for job in jobs if job.id in results and results[job.id].status == FAILED]
    if not failed:
        return None
    table = Table(title="failed", title_justify="left")
    table.add_column("job")
    table.add_column("error")
    for job in failed:
        table.add_row(job.label, results[job.id].message)
    return table


def slowest(
    jobs: Sequence[CourseJob], results: dict[str, JobResult], count: int = SLOWEST
) -> list[tuple[CourseJob, float]]:
    """The ``count`` slowest jobs run (done or failed), slowest first, with their seconds."""
    ran = [
        (job, results[job.id].seconds)
        for job in jobs
        if results.get(job.id) and results[job.id].status in (DONE, FAILED)
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
