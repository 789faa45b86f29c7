"""Worker processes that a signal never leaves behind, half-started or with temporary files.

A pool's workers are started while SIGINT and SIGTERM are blocked (:func:`signals_blocked`): the
signal mask survives ``fork`` and ``exec``, so a worker cannot be reached by a signal before
:func:`start_worker` (the pool's initializer) has set its own handlers. A worker ignores SIGINT
(a terminal's Ctrl-C reaches every process of the group; the parent decides) and on SIGTERM
removes the temporary files and folders it made and exits at once. :func:`end_pool` stops a
pool's workers now, abandoning their work, and waits until they are gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Iterator

from blockviz.files import remove_temporaries

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORKER_EXIT_SECONDS = 5.0
"""How long :func:`end_pool` waits for a worker told to stop before killing it (a spawned worker
still importing handles the signal only once its initializer runs)."""


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Block SIGINT and SIGTERM in this thread while worker processes are started; a signal
    that arrives meanwhile is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def start_worker() -> None:
    """In a worker process, first: ignore SIGINT, end cleanly on SIGTERM, then unblock both."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _end_worker(signum, frame) -> None:
    remove_temporaries()
    os._exit(128 + signum)


def end_pool(executor) -> None:
    """Stop a ``ProcessPoolExecutor``'s workers now (SIGTERM; SIGKILL after
    :data:`WORKER_EXIT_SECONDS`), cancel what has not started, and wait until all are gone."""
    processes = list((getattr(executor, "_processes", None) or {}).values())  # Python 3.14 has terminate_workers(); 3.10 to 3.13 do not
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.join(WORKER_EXIT_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
    executor.shutdown(wait=True, cancel_futures=True)
