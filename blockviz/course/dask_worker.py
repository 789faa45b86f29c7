"""What a Dask worker does before a course's jobs: :class:`WarmWorker`, a worker plugin that
warms it as a local worker is warmed (on every worker, and on any that joins later); and in a
``LocalCluster`` made by ``blockviz course``, first of all (Dask's ``preload``: it calls
:func:`dask_setup`), signals.

A terminal's Ctrl-C reaches every process of the foreground group, the workers too; as blockviz's
own workers (:func:`blockviz.processes.start_worker`) they leave it to the course, which ends
them, instead of each printing a ``KeyboardInterrupt`` traceback.
"""

from __future__ import annotations

import signal
import threading

from distributed import WorkerPlugin


def dask_setup(worker) -> None:
    """Ignore SIGINT in this worker process (signals can only be set from its main thread), and
    make tqdm's lock (Manim's progress bars) a thread lock, as a local worker's: a
    ``multiprocessing`` one would be reported leaked when the worker is ended mid-job."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from tqdm import tqdm
    except ImportError:
        return
    tqdm.set_lock(threading.RLock())


class WarmWorker(WorkerPlugin):
    """Warm each worker for a course whose jobs record with ``models``
    (:func:`blockviz.course.work.warm_up`: imports, torch on one thread, the models loaded once)."""

    def __init__(self, models: tuple[str, ...]) -> None:
        self.models = tuple(models)

    def setup(self, worker) -> None:
        from blockviz.course.work import warm_up

        warm_up(self.models)
