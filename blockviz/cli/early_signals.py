"""The ``blockviz`` program's first handling of SIGINT and SIGTERM: from its first instruction
until :mod:`blockviz.cli.interrupts` (still to be imported) takes them over, either ends the
program at once, in the one line every interrupted command ends with, and with 128 + the
signal's number; nothing can be half-written yet. A signal the program was started with ignored
stays ignored.

Imports nothing at the top, and only ``_signal`` (the C module that ``signal`` wraps, loaded
when Python starts) to set the handlers: ``signal`` would first import ``enum`` and
``functools``, about 20 ms of start-up in which a Ctrl-C would still be Python's
``KeyboardInterrupt`` and its traceback.
"""

from __future__ import annotations

INTERRUPTED_LINE = "interrupted: earlier outputs kept"
"""The one line an interrupted ``blockviz`` command says on stderr."""


def end_at_once_on_signals() -> None:
    """SIGINT and SIGTERM end the program at once from now on (unless ignored)."""
    import _signal

    for number in (_signal.SIGINT, _signal.SIGTERM):
        if _signal.getsignal(number) != _signal.SIG_IGN:
            _signal.signal(number, _end_at_once)


def _end_at_once(signum, frame) -> None:
    import os

    try:
        os.write(2, f"{INTERRUPTED_LINE}\n".encode())
    except OSError:  # stderr closed: the exit status still says it
        pass
    os._exit(128 + signum)
