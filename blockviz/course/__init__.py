"""Courses: one TOML file of lessons, expanded into jobs and run, resumably, on local processes
or on a Dask cluster (``blockviz course COURSE.toml``).

- :mod:`~blockviz.course.schema`: the file, loaded and checked before anything runs;
- :mod:`~blockviz.course.jobs`: the jobs it expands into, each with its key;
- :mod:`~blockviz.course.stamps`: what each job's outputs were made from, for resuming;
- :mod:`~blockviz.course.work`: one job, in whichever process runs it;
- :mod:`~blockviz.course.executors`: this process, a local pool, or Dask;
- :mod:`~blockviz.course.lock`, :mod:`~blockviz.course.index`, :mod:`~blockviz.course.report`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from blockviz.course.jobs import CourseJob, expand
from blockviz.course.schema import Course, CourseError, load_course
from blockviz.course.work import FRESH, SKIPPED, JobResult

__all__ = ["Course", "CourseError", "CourseJob", "CourseRun", "expand", "load_course", "plan_course", "run_course"]


@dataclass
class CourseRun:
    """The jobs of a course and what became of each, by job id."""

    jobs: list[CourseJob]
    results: dict[str, JobResult]

    def count(self, status: str) -> int:
        return sum(result.status == status for result in self.results.values())


def plan_course(course: Course, force: bool = False) -> tuple[list[CourseJob], dict[str, JobResult]]:
    """Every job of ``course``, and the results known without running: skipped jobs (unless
    ``force``, scenes the same inputs could not show last time), and (unless ``force``) jobs
    whose outputs are up to date."""
    from blockviz.course.stamps import is_fresh, stamped_skip

    jobs = expand(course)
    known = {}
    for job in jobs:
        if job.skip_reason:
            known[job.id] = JobResult(job.id, SKIPPED, message=job.skip_reason)
        elif not force and (reason := stamped_skip(job)):
            known[job.id] = JobResult(job.id, SKIPPED, message=reason)
        elif not force and is_fresh(job):
            known[job.id] = JobResult(job.id, FRESH)
    return jobs, known


def run_course(
    course: Course,
    workers: int = 1,
    dask: bool = False,
    scheduler: str | None = None,
    force: bool = False,
    on_result: Callable[[CourseJob, JobResult], None] | None = None,
    dask_processes: bool = True,
) -> CourseRun:
    """Run every job of ``course`` not up to date, then write its index page; hold the output
    folder's lock meanwhile. What jobs killed mid-way left there (their temporary files and
    folders, :mod:`~blockviz.course.leftovers`) is removed before the jobs start and after they end. ``workers``: local processes (1: this process), or the workers of a
    Dask ``LocalCluster`` (``dask``) made here; ``scheduler``: a Dask scheduler's address.
    ``on_result(job, result)`` is called for each job run, as it ends.

    Raises
    ------
    BlockvizError
        If another run holds the folder's lock, a file blockviz did not write stands where an
        output goes (:mod:`blockviz.ownership`; before any job runs), the folder cannot be written, or Dask is asked
        for and not installed or not reachable. A job's own failure is its result, not raised.
    """
    from blockviz.course import executors
    from blockviz.course.index import INDEX, write_index
    from blockviz.course.leftovers import remove_leftovers
    from blockviz.course.lock import course_lock
    from blockviz.ownership import refuse_foreign

    with course_lock(course.output):
        remove_leftovers(course.output)  # of an earlier run, whose worker or whole course was killed
        jobs, results = plan_course(course, force)
        pending = executors.longest_first([job for job in jobs if job.id not in results])
        refuse_foreign([course.output / INDEX] + [job.target for job in pending if job.kind != "figures"])

        def collect(job: CourseJob, result: JobResult) -> None:
            results[job.id] = result
            if on_result is not None:
                on_result(job, result)

        if pending and (dask or scheduler):
            executors.run_dask(pending, collect, scheduler=scheduler, workers=workers, processes=dask_processes)
        elif pending:
            executors.run_local(pending, workers, collect)
        remove_leftovers(course.output)  # of a worker killed in this run: its job was tried again
        write_index(course, jobs, results)
    return CourseRun(jobs, results)


def pending_jobs(jobs: Sequence[CourseJob], results: dict[str, JobResult]) -> list[CourseJob]:
    """The jobs ``results`` does not settle: those a run would do."""
    return [job for job in jobs if job.id not in results]
