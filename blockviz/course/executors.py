"""Where a course's jobs run: this process, a pool of local processes, or a Dask cluster.

Each executor calls ``on_result`` with every :class:`~blockviz.course.work.JobResult` as it
arrives, on the calling thread, and returns once every job has one.

- :func:`run_here`: one job after another in this process (``-j 1``).
- :func:`run_local`: ``workers`` local processes (:mod:`concurrent.futures`), forked from a
  ``multiprocessing`` fork server that has imported torch, Manim and the scene modules once
  (:data:`~blockviz.course.work.WARM_MODULES`), each then warmed by the pool's initializer
  (:func:`~blockviz.course.work.warm_up`: the course's models, once per worker, all workers at
  once) and given a new job when it finishes one, so exactly the jobs in flight are running.
  A worker that dies
  (killed, out of memory) breaks the pool: the jobs it held are tried once more in a new pool,
  then reported failed (the result's ``tries``). Workers are started with signals held back and
  ended on any error, Ctrl-C or SIGTERM (:mod:`blockviz.processes`): they remove their temporary
  files and exit. The fork server is waited for before the first worker starts, so a signal
  while it imports ends the run at once, and it is killed at the end.
- :func:`run_dask`: the jobs as Dask futures on a ``LocalCluster`` (its workers forked from a
  fork server as the local pool's) or a scheduler's address
  (``pip install 'blockviz[cluster]'``), each worker warmed as a local one by a worker plugin
  (:class:`~blockviz.course.dask_worker.WarmWorker`, also on workers that join later); a job
  whose worker dies is rescheduled once (``distributed.scheduler.allowed-failures``, set so for
  a cluster made here), then reported.

Jobs are not grouped per sentence: a worker keeps each sentence's record (a toy record takes
under 0.1 s, a model's one forward pass) and the model, so a sentence's second job on a worker
costs no load; grouping would only leave workers idle when a course has fewer sentences than
workers, or sentences of unequal work.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from blockviz.course.jobs import CourseJob
from blockviz.course.work import FAILED, JobResult, run_job
from blockviz.errors import BlockvizError

OnResult = Callable[[CourseJob, JobResult], None]
ATTEMPTS = 2
"""Times a job is tried when its worker dies under it: once, then once more."""
WORKER_DIED = "its worker process died twice (killed, or out of memory)"


def run_here(jobs: Sequence[CourseJob], on_result: OnResult) -> None:
    """Run ``jobs`` one after another in this process, warmed first as a worker is (so a job's
    seconds are its own here too, not the imports')."""
    from blockviz.course.work import warm_up

    warm_up(course_models(jobs))
    for job in jobs:
        on_result(job, run_job(job))


def run_local(jobs: Sequence[CourseJob], workers: int, on_result: OnResult) -> None:
    """Run ``jobs`` on ``workers`` local processes (:func:`run_pool`), or in this process for
    one worker or one job."""
    if workers <= 1 or len(jobs) <= 1:
        run_here(jobs, on_result)
    else:
        run_pool(jobs, workers, on_result)


GUESSED_SECONDS = {"slides": 60.0, "scene": 10.0}
"""A job's seconds when it has never run here, by kind: rough -q l times; the others take about one."""


def longest_first(jobs: Sequence[CourseJob]) -> list[CourseJob]:
    """``jobs`` in the order to hand them out, longest first (Graham's longest-processing-time
    rule: no long job is left to the end while the other workers sit idle): a job's seconds are
    those its last run here took (its stamp, whatever its inputs), else :data:`GUESSED_SECONDS`.
    Jobs of equal seconds keep their order."""
    from blockviz.course.stamps import read_stamp

    def expected(job: CourseJob) -> float:
        seconds = (read_stamp(job) or {}).get("seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            return float(seconds)
        return GUESSED_SECONDS.get(job.kind, 1.0)

    return sorted(jobs, key=lambda job: -expected(job))


def course_models(jobs: Sequence[CourseJob]) -> tuple[str, ...]:
    """The models ``jobs`` record with, each once, in the jobs' order: what a worker loads as it starts."""
    return tuple(dict.fromkeys(job.settings.model for job in jobs))


def run_pool(jobs: Sequence[CourseJob], workers: int, on_result: OnResult) -> None:
    """Run ``jobs`` on a pool of ``workers`` processes, each warmed as it starts: forked from a
    fork server (not from this process: nothing of its state, threads or locks is inherited)
    that imported the heavy modules once, instead of each worker importing them again."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from blockviz.course.work import warm_modules
    from blockviz.processes import end_pool, fork_server_ready, signals_deferred, stop_fork_server

    waiting = deque(jobs)
    models = course_models(jobs)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(warm_modules())  # read when the server starts: once per course process
    attempts = {job.id: 0 for job in jobs}
    workers = min(workers, len(jobs))

    def new_pool():
        with signals_deferred():  # made whole or not at all, as render's pool
            return ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=start_course_worker,
                initargs=(models,),
            )

    def settle(job: CourseJob, future) -> bool:
        """Report ``job``'s result; ``True`` if its pool broke under it (it is then tried again, or failed)."""
        try:
            result = future.result()
        except BrokenProcessPool:
            if attempts[job.id] >= ATTEMPTS:
                on_result(job, JobResult(job.id, FAILED, message=WORKER_DIED, tries=attempts[job.id]))
            else:
                waiting.appendleft(job)
            return True
        on_result(job, replace(result, tries=attempts[job.id]))
        return False

    pool = None
    running = {}
    try:
        fork_server_ready(context)  # its seconds of imports, interruptible: not inside a worker's start
        pool = new_pool()
        while waiting or running:
            while waiting and len(running) < workers:
                job = waiting.popleft()
                attempts[job.id] += 1
                with signals_deferred():  # a worker may be started here
                    running[pool.submit(run_job, job)] = job
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            broken = [settle(running.pop(future), future) for future in finished]
            if any(broken):  # every job still held by the pool fails with it: those are tried again in a new one
                for future in wait(running).done:
                    settle(running.pop(future), future)
                end_pool(pool)
                pool = new_pool()
    except BaseException:
        if pool is not None:
            end_pool(pool)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        stop_fork_server()  # left to end by itself, it would tear down torch and Manim for seconds


def start_course_worker(models: tuple[str, ...] = ()) -> None:
    """A local worker's first act: signals as every blockviz worker (:func:`blockviz.processes.start_worker`),
    tqdm's lock (Manim's progress bars) a thread lock instead of a ``multiprocessing`` one (a
    worker told to stop exits at once, and a semaphore it made would be reported leaked), then
    :func:`~blockviz.course.work.warm_up` with the course's ``models``."""
    import threading

    from blockviz.course.work import warm_up
    from blockviz.processes import start_worker

    start_worker()
    try:
        from tqdm import tqdm
    except ImportError:
        pass
    else:
        tqdm.set_lock(threading.RLock())
    warm_up(models)


def run_dask(
    jobs: Sequence[CourseJob], on_result: OnResult, scheduler: str | None = None, workers: int = 2, processes=True
) -> None:
    """Run ``jobs`` on Dask: the scheduler at ``scheduler`` (``tcp://host:8786``), or a
    ``LocalCluster`` of ``workers`` single-threaded workers made here (``processes=False``:
    threads of this process, for tests of the plumbing only: Manim's settings are per process).

    Raises
    ------
    BlockvizError
        If Dask's distributed scheduler is not installed, or the scheduler cannot be reached.
    """
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise BlockvizError("Dask is not installed: pip install 'blockviz[cluster]'") from None
    cluster = client = None
    futures = []
    try:
        if scheduler is None:
            import logging

            # A cluster made here is the run's own business: its workers' routine warnings (e.g. on
            # their ending at Ctrl-C) would only clutter the course's lines; errors still show.
            logging.getLogger("distributed").setLevel(logging.ERROR)
            settings = {
                "distributed.scheduler.allowed-failures": ATTEMPTS - 1,
                # its statistical profiler samples every worker thread 100 times a second: CPU a course's jobs want
                "distributed.worker.profile.enabled": False,
                # Dask's default also sets MALLOC_TRIM_THRESHOLD_=65536: glibc then hands a frame's
                # memory back and maps it again for every frame Manim draws (a third more CPU at 480p)
                "distributed.nanny.pre-spawn-environ": {
                    "OMP_NUM_THREADS": 1,
                    "MKL_NUM_THREADS": 1,
                    "OPENBLAS_NUM_THREADS": 1,
                },
            }
            if processes:
                settings["distributed.worker.multiprocessing-method"] = "forkserver"
            with (
                dask.config.set(settings),
                _environment(DASK_LOGGING__DISTRIBUTED="error"),  # read by the worker processes as they start
            ):
                if processes:
                    _preload_fork_server()
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=processes,
                    dashboard_address=None,
                    preload=["blockviz.course.dask_worker"] if processes else [],
                )
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as error:
                raise BlockvizError(
                    f"cannot reach the Dask scheduler at {scheduler!r} ({error}): check the address, e.g. tcp://host:8786"
                ) from None
        from blockviz.course.dask_worker import WarmWorker

        client.register_plugin(WarmWorker(course_models(jobs)), name="blockviz-course-warm")  # every worker, at once
        by_key = {}
        for job in jobs:
            future = client.submit(run_job, job, pure=False, key=f"blockviz-course-{job.id}-{job.key}")
            by_key[future.key] = job
            futures.append(future)
        for future in as_completed(futures):
            job = by_key[future.key]
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 — KilledWorker, or the job's function lost on the way
                from blockviz.course.work import one_line

                died = type(error).__name__ == "KilledWorker"
                result = JobResult(job.id, FAILED, message=WORKER_DIED if died else one_line(error))
            on_result(job, result)
    finally:
        if client is not None:
            if futures:
                client.cancel(futures)
            client.close()
        if cluster is not None:
            cluster.close()
            from blockviz.processes import stop_fork_server

            stop_fork_server()  # its workers' (processes=True): left to end by itself, seconds of teardown


def _preload_fork_server() -> None:
    """The workers of a ``LocalCluster`` made here forked, as the local pool's, from a fork
    server that imported torch, Manim and the scenes once (with Dask itself), instead of each
    worker importing them as it is warmed. Dask sets its fork server's modules once per process
    (``distributed.utils.get_mp_context``): asked first, then given ours, read as the server starts."""
    from distributed.utils import get_mp_context

    from blockviz.course.work import warm_modules

    get_mp_context().set_forkserver_preload(["distributed", *warm_modules()])


@contextlib.contextmanager
def _environment(**variables: str) -> Iterator[None]:
    """``os.environ`` with ``variables`` set while the block runs (child processes started in it see them)."""
    previous = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
