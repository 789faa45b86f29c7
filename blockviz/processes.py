"""Worker processes that a signal never leaves behind, half-started or with temporary files.

A pool's workers are started while SIGINT and SIGTERM are held back (:func:`signals_deferred`): the
signal mask survives ``fork`` and ``exec``, so a worker cannot be reached by a signal before
:func:`start_worker` (the pool's initializer) has set its own handlers, and the parent is not
interrupted half-way through starting one. A worker ignores SIGINT
(a terminal's Ctrl-C reaches every process of the group; the parent decides) and on SIGTERM
removes the temporary files and folders it made and exits at once. :func:`end_pool` stops a
pool's workers now, abandoning their work, and waits until they are gone; :func:`end_processes`
does so for any child processes.

Workers forked from ``multiprocessing``'s fork server (the course's) inherit its signal mask: it is
started with the signals held back too, and waited for — while it imports its preloaded modules,
seconds — with them not held back (:func:`fork_server_ready`), so a signal then ends the wait at
once. :func:`stop_fork_server` ends it without its seconds of tearing down those modules. A program
a worker runs (:func:`run_child`) is ended with the worker.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
WORKER_EXIT_SECONDS = 5.0
"""How long :func:`end_pool` waits for a worker told to stop before killing it (a spawned worker
still importing handles the signal only once its initializer runs)."""


def cores_available() -> int:
    """CPU cores this process may run on (its affinity where the system tells it, else every
    core; at least 1): the default number of parallel workers."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """While worker processes are started: SIGINT and SIGTERM wait until the block ends.

    They are blocked in this thread, so a child starts with them blocked, and (as another thread
    may take a signal sent to the process) this process's handlers only note them meanwhile; a
    noted signal is raised again once the block ends, with the handlers back in place.
    """
    noted: list[int] = []
    previous = {}
    with contextlib.suppress(ValueError):  # handlers can only be set in the main thread
        for number in STOP_SIGNALS:
            previous[number] = signal.signal(number, lambda signum, frame: noted.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if mask is not None:  # a signal pending here now goes to the handler put back
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if noted:
            signal.raise_signal(noted[0])


def fork_server_ready(context) -> None:
    """Start the fork server of ``context`` (a ``multiprocessing`` ``forkserver`` context) if it
    is not running, with SIGINT and SIGTERM held back (:func:`signals_deferred`), and return once
    it has imported its preloaded modules and can fork workers at once: the first process started
    from it waits for that, so this starts one that does nothing. Meanwhile a signal is raised at
    once, by this process's handlers; the caller then stops the fork server (:func:`stop_fork_server`)."""
    from multiprocessing import forkserver

    with signals_deferred():
        forkserver.ensure_running()
    probe = context.Process(target=_nothing, name="blockviz-fork-server-ready")
    probe.start()
    probe.join()


def _nothing() -> None:
    """What :func:`fork_server_ready`'s process does."""


def stop_fork_server() -> None:
    """End this process's ``multiprocessing`` fork server now, if one runs (a later pool starts a
    new one). It is killed: it holds nothing to clean up, and asked to stop it would first tear
    down every module it imported (torch's, Manim's: seconds), keeping this program's stdout and
    stderr open meanwhile. Its workers must have ended first (:func:`end_pool`): once it is gone,
    ``multiprocessing`` takes them for ended."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    server = getattr(forkserver, "_forkserver", None)  # its one instance: the standard library has no public stop
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None:
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        server._stop()  # closes its pipe, reaps it, forgets it (the standard library's own tests stop it so)


_children: set = set()
"""The programs this process runs through :func:`run_child` now."""


def run_child(command: list[str]) -> subprocess.CompletedProcess:
    """``command`` run to its end, its output captured as text (``subprocess.run``), in a worker
    whose SIGTERM then ends the program too (told to stop and waited for,
    :data:`WORKER_EXIT_SECONDS` at most, before the worker removes its temporaries and exits):
    left running, it would write on into a temporary folder just removed. The program inherits
    the worker's ignored SIGINT, as the worker does: the course's own process decides."""
    import subprocess

    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        _children.add(child)
        try:
            stdout, stderr = child.communicate()
        except BaseException:  # interrupted (a course's own process, -j 1): the program ends cleanly too
            _end_children()
            raise
        finally:
            _children.discard(child)
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)


def start_worker() -> None:
    """In a worker process, first: ignore SIGINT, end cleanly on SIGTERM, then unblock both."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _end_worker(signum, frame) -> None:
    _end_children()
    files = sys.modules.get("blockviz.files")  # not imported yet: no temporaries yet (and no import inside a handler)
    if files is not None:
        files.remove_temporaries()
    os._exit(128 + signum)


def _end_children() -> None:
    """Tell the programs :func:`run_child` runs to stop; wait for them (killed if they must be)."""
    if not _children:
        return
    timed_out = sys.modules["subprocess"].TimeoutExpired  # imported by run_child (no import inside a handler)
    for child in list(_children):
        with contextlib.suppress(OSError):
            child.terminate()
    for child in list(_children):
        try:
            child.wait(WORKER_EXIT_SECONDS)
        except timed_out:
            child.kill()
            child.wait()


def end_pool(executor) -> None:
    """Stop a ``ProcessPoolExecutor``'s workers now (:func:`end_processes`) and wait until the
    pool has shut down: its work not done fails as a broken pool, which nobody waits for."""
    # Not shutdown(cancel_futures=True): the pool's thread, finding its workers gone, would set an
    # exception on futures just cancelled (InvalidStateError, printed from that thread, Python 3.11).
    end_processes(
        (getattr(executor, "_processes", None) or {}).values()
    )  # Python 3.14 has terminate_workers(); 3.10 to 3.13 do not
    executor.shutdown(wait=True)


def end_processes(processes: Iterable | None = None) -> None:
    """Stop ``processes`` (``multiprocessing`` processes; by default every child process of
    this one that ``multiprocessing`` started and that is still alive): SIGTERM, then SIGKILL
    for any still alive after :data:`WORKER_EXIT_SECONDS`; return once all have exited."""
    import multiprocessing

    processes = multiprocessing.active_children() if processes is None else list(processes)
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.terminate()
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.join(WORKER_EXIT_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
