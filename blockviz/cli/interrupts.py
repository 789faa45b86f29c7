"""Ending a command on SIGINT or SIGTERM: every time, cleanly, in one line.

While a command runs, both signals raise :class:`Interrupted` in the main thread (a
``BaseException``, so no ``except Exception`` stops it and click does not turn it into
"Aborted!"). Unwinding runs every cleanup on the way out: :func:`~blockviz.files.atomic_path`
and :func:`~blockviz.files.temporary_folder` remove their temporaries, worker pools are ended in
``finally``. At the top, whatever is left is swept up (worker processes still alive, temporaries
still registered), one line is printed to stderr — :data:`INTERRUPTED_LINE` — and the process
exits with 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.

The ``blockviz`` program ends at once on either signal from its first instruction
(:mod:`blockviz.cli.early_signals`) until it takes them over here, before any heavy import, so a signal
during start-up ends the same way. A signal that arrives while a module is being imported is not
raised there: a module left half-imported (numpy's, torch's, scipy's) breaks the next import of it
with a traceback (``cannot load module more than once per process``, ``RecursionError``). If
nothing can be half-written yet (no temporary file or folder, no worker process, no other thread),
the program ends at once; otherwise the signal is delivered again a moment later, until the
import is over.

A signal the process was started with ignored stays ignored, as Python leaves it: a script's
background job (``blockviz train -o m &``) has SIGINT ignored, and the system drops a SIGINT that
comes before the program's first instruction, so taking it over afterwards would end the run or
not depending on the moment (``kill -TERM`` ends such a job, or ``set -m`` in the script).

An ``Interrupted`` raised where Python cannot raise it (inside a finaliser, where it is "ignored")
is raised again, and a command that somehow finishes after a signal still ends as interrupted.

This module imports only the standard library's lightest modules (and :mod:`blockviz.processes`,
as light) at the top: the program imports it first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import NoReturn, TypeVar

from blockviz.cli.early_signals import INTERRUPTED_LINE
from blockviz.processes import STOP_SIGNALS

Result = TypeVar("Result")


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived while a command ran; ``exit_code`` is 128 + its number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _Signals:
    """The first signal that arrived (``None``: none yet); whether one still raises; whether the
    process is the ``blockviz`` program's own (it may then end at once, :func:`take_over_signals`)."""

    arrived: int | None = None
    raising: bool = False
    own_process: bool = False
    reported: bool = False


def _on_signal(signum, frame) -> None:
    if _Signals.arrived is None:
        _Signals.arrived = signum
    if not _Signals.raising:
        return
    if _importing(frame):
        if _Signals.own_process and _nothing_to_clean_up():
            _end_at_once()
        _signal_main_thread_soon(signum)  # raised once the import is over
        return
    raise Interrupted(_Signals.arrived)


def take_over_signals() -> None:
    """In the ``blockviz`` program, as its command starts (:func:`run_program`): SIGINT and SIGTERM
    end it as the module says from now on, for the whole process (handlers and hook are never put
    back); one the process was started with ignored stays ignored."""
    _Signals.own_process = True
    _install()


def signal_arrived() -> int | None:
    """The first SIGINT or SIGTERM this process received since it took them over, or ``None``."""
    return _Signals.arrived


def run_interruptibly(command: Callable[[], Result], restore: bool = True) -> Result:
    """``command()``, ended by SIGINT or SIGTERM as the module says (``SystemExit(130 or 143)``).

    ``restore``: put back the previous handlers afterwards (a command run inside another
    program, e.g. by tests); a process that is about to exit keeps ignoring late signals instead.
    Handlers can only be set in the main thread; elsewhere ``command()`` just runs. Inside a
    command already run so (the program's own, :func:`take_over_signals`), ``command()`` just runs.
    """
    if _Signals.raising:
        return command()
    try:
        previous, previous_hook = _install()
    except ValueError:  # not the main thread
        return command()
    try:
        with _ending_as_interrupted():
            return command()
    finally:
        _Signals.raising = False
        if restore:
            sys.unraisablehook = previous_hook
            for number, handler in previous.items():
                signal.signal(number, handler)


def run_program(command: Callable[[], object]) -> NoReturn:
    """``command()`` as the whole of the program: ended by SIGINT or SIGTERM as the module says
    (:func:`take_over_signals`, inside: no moment is left between the program's first handlers
    and these), and by :class:`SystemExit` otherwise (click's standalone mode always raises it)."""
    with _ending_as_interrupted():
        take_over_signals()
        command()
    sys.exit(0)


def end_if_signalled() -> None:
    """If a signal arrived after the command's end (while the process winds up), say the one
    line, once; the caller then exits with :func:`exit_code_after_signal`."""
    if _Signals.arrived is not None and not _Signals.reported:
        _report()


def exit_code_after_signal(code: int) -> int:
    """The exit code: 128 + the signal's number if one arrived, else ``code``."""
    return code if _Signals.arrived is None else 128 + _Signals.arrived


def _install():
    """Raise :class:`Interrupted` on SIGINT and SIGTERM (not on one this process ignores); the
    handlers and unraisable hook they replace.

    Raises
    ------
    ValueError
        Outside the main thread, where handlers cannot be set (nothing is changed then).
    """
    if threading.current_thread() is not threading.main_thread():
        raise ValueError("signal handlers can only be set in the main thread")
    _Signals.arrived, _Signals.raising, _Signals.reported = None, True, False  # before a handler can note one
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _raise_again(previous_hook)
    previous = {}
    for number in STOP_SIGNALS:
        if signal.getsignal(number) != signal.SIG_IGN:
            previous[number] = signal.signal(number, _on_signal)
    return previous, previous_hook


@contextlib.contextmanager
def _ending_as_interrupted() -> Iterator[None]:
    try:
        yield
    except Interrupted:
        pass
    except SystemExit:
        if _Signals.arrived is None:
            raise
    else:
        if _Signals.arrived is None:
            return
    # A signal arrived: raised and unwound to here, or (rarely) swallowed on the way.
    _Signals.raising = False
    from blockviz.files import remove_temporaries
    from blockviz.processes import end_processes

    end_processes()
    _wait_for_writers()
    remove_temporaries()
    _report()
    if _Signals.own_process and _writers_alive():
        _end_without_joining()
    sys.exit(128 + _Signals.arrived)


def _writers_alive() -> bool:
    """Whether a thread that Python would join at exit is still running (a writer stuck past
    :data:`WRITERS_SECONDS`: joining it could keep the process alive after its one line)."""
    return any(
        thread is not threading.current_thread() and not thread.daemon and thread.is_alive()
        for thread in threading.enumerate()
    )


def _end_without_joining() -> NoReturn:
    """End the program without joining its stuck threads: the ``atexit`` callbacks run
    (multiprocessing's releases, the program's own last one, which ends the process with the
    signal's code), then ``os._exit`` in case none did."""
    import atexit

    atexit._run_exitfuncs()
    os._exit(128 + _Signals.arrived)


def _report() -> None:
    _Signals.reported = True
    with contextlib.suppress(
        OSError, ValueError
    ):  # stdout closed (a pipe whose reader left): the line still goes to stderr
        sys.stdout.flush()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(INTERRUPTED_LINE + "\n")
        sys.stderr.flush()


def _importing(frame) -> bool:
    """True if the main thread, stopped at ``frame``, is importing a module (importlib's own
    frames are on its stack: they run every import, ``import`` statements and C extensions' alike)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _nothing_to_clean_up() -> bool:
    """True if ending the process now leaves nothing behind: no temporary file or folder of
    this process, no child process nor anything of multiprocessing's to release at exit (a
    semaphore never released is reported by its resource tracker after the process ends), no
    thread besides this one and daemons. A module asked may itself be half-imported (the signal
    came during its import): what it lacks yet, it has not made yet."""
    try:
        temporaries = getattr(sys.modules.get("blockviz.files"), "_temporaries", {})
        if any(owner == os.getpid() for owner in temporaries.values()):
            return False
        active_children = getattr(sys.modules.get("multiprocessing.process"), "active_children", None)
        if active_children is not None and active_children():
            return False
        if getattr(
            sys.modules.get("multiprocessing.util"), "_finalizer_registry", None
        ):  # semaphores and queues to release at exit
            return False
        return all(thread is threading.current_thread() or thread.daemon for thread in threading.enumerate())
    except Exception:  # noqa: BLE001 — in doubt, the signal waits for the import to end and unwinds
        return False


def _end_at_once() -> NoReturn:
    """End the program now, mid-import, without unwinding: the one line, then ``os._exit``."""
    _Signals.raising = False
    _report()
    os._exit(128 + _Signals.arrived)


WRITERS_SECONDS = 5.0
"""How long an interrupted command waits for its other threads (Manim's video encoders) to end
before its last sweep of temporary files."""


def _wait_for_writers() -> None:
    """Let the threads still running (Manim's partial-movie encoders finish or drop their
    segments) end, within :data:`WRITERS_SECONDS`, so none writes into a temporary folder after
    the last sweep has removed it."""
    deadline = time.monotonic() + WRITERS_SECONDS
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))


def _raise_again(previous_hook):
    """An unraisable-exception hook that delivers a swallowed :class:`Interrupted` again instead
    of printing it (:func:`_signal_main_thread_soon`)."""

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            previous_hook(unraisable)
        elif _Signals.raising:
            while True:  # a signal raised while the hook starts the sender (a busy machine): start another
                try:
                    _signal_main_thread_soon(unraisable.exc_value.signum)
                    return
                except Interrupted:
                    continue

    return hook


REDELIVERY_SECONDS = 0.01
"""How long after a signal that could not be raised it is sent again: time for the hook to
return, or for a few more lines of the module being imported."""


def _signal_main_thread_soon(signum: int) -> None:
    """Send ``signum`` to the main thread from another thread, shortly: not from the hook itself,
    where Python would run the handler at once (``signal.raise_signal``, ``os.kill`` and even
    ``_thread.interrupt_main`` check for signals on return) and its exception be swallowed again."""

    started = threading.Event()

    def send() -> None:
        started.wait()  # not while the main thread still waits in Thread.start
        time.sleep(REDELIVERY_SECONDS)
        if _Signals.raising:
            signal.pthread_kill(threading.main_thread().ident, signum)

    threading.Thread(target=send, name="blockviz-signal-again", daemon=True).start()
    started.set()
