"""Ending a command on SIGINT or SIGTERM: every time, cleanly, in one line.

While a command runs, both signals raise :class:`Interrupted` in the main thread (a
``BaseException``, so no ``except Exception`` stops it and click does not turn it into
"Aborted!"). Unwinding runs every cleanup on the way out: :func:`~blockviz.files.atomic_path`
and :func:`~blockviz.files.temporary_folder` remove their temporaries, worker pools are ended in
``finally``. At the top, whatever is left is swept up (worker processes still alive, temporaries
still registered), one line is printed to stderr — :data:`INTERRUPTED_LINE` — and the process
exits with 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM.

An ``Interrupted`` raised where Python cannot raise it (inside a finaliser, where it is "ignored")
is raised again, and a command that somehow finishes after a signal still ends as interrupted.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from typing import Callable, Iterator, TypeVar

import click

from blockviz.files import remove_temporaries
from blockviz.processes import STOP_SIGNALS, end_processes

INTERRUPTED_LINE = "interrupted: earlier outputs kept"
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
    """The first signal that arrived (``None``: none yet), and whether one still raises."""

    arrived: int | None = None
    raising: bool = False


def _raise_interrupted(signum, frame) -> None:
    if _Signals.arrived is None:
        _Signals.arrived = signum
    if _Signals.raising:
        raise Interrupted(_Signals.arrived)


def run_interruptibly(command: Callable[[], Result], restore: bool = True) -> Result:
    """``command()``, ended by SIGINT or SIGTERM as the module says (``SystemExit(130 or 143)``).

    ``restore``: put back the previous handlers afterwards (a command run inside another
    program, e.g. by tests); a process that is about to exit keeps ignoring late signals instead.
    Handlers can only be set in the main thread; elsewhere ``command()`` just runs.
    """
    try:
        previous = {number: signal.signal(number, _raise_interrupted) for number in STOP_SIGNALS}
    except ValueError:  # not the main thread
        return command()
    previous_hook = sys.unraisablehook
    _Signals.arrived, _Signals.raising = None, True
    sys.unraisablehook = _raise_again(previous_hook)
    try:
        with _ending_as_interrupted():
            return command()
    finally:
        _Signals.raising = False
        if restore:
            sys.unraisablehook = previous_hook
            for number, handler in previous.items():
                signal.signal(number, handler)


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
    end_processes()
    _wait_for_writers()
    remove_temporaries()
    click.echo(INTERRUPTED_LINE, err=True)
    sys.exit(128 + _Signals.arrived)


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
            _signal_main_thread_soon(unraisable.exc_value.signum)

    return hook


REDELIVERY_SECONDS = 0.01
"""How long after a swallowed signal it is sent again: time for the hook to return."""


def _signal_main_thread_soon(signum: int) -> None:
    """Send ``signum`` to the main thread from another thread, shortly: not from the hook itself,
    where Python would run the handler at once (``signal.raise_signal``, ``os.kill`` and even
    ``_thread.interrupt_main`` check for signals on return) and its exception be swallowed again."""

    def send() -> None:
        time.sleep(REDELIVERY_SECONDS)
        if _Signals.raising:
            signal.pthread_kill(threading.main_thread().ident, signum)

    threading.Thread(target=send, name="blockviz-signal-again", daemon=True).start()
