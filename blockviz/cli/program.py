"""The ``blockviz`` program: the console script's entry point (``blockviz.cli.program:main``).

Kept tiny, as is the package it lives in, so that its first instruction — before any import —
already ends SIGINT and SIGTERM in the one line every command ends them with
(:mod:`blockviz.cli.early_signals`), until :mod:`blockviz.cli.interrupts` takes them over. Only
Python's own start-up comes before it (a Ctrl-C there is Python's ``KeyboardInterrupt``). Then:

* torch's numerics are pinned before torch is loaded (:func:`blockviz.numerics.pin_environment`),
  so ``train``'s files and the toy's and the seeded block's records are the same bytes on every
  x86-64 CPU with AVX2;
* the cyclic garbage collector runs less often (:data:`COLLECT_AFTER`): importing torch and Manim
  makes over a million objects, and at Python's default threshold the collector walks them again
  and again on the way;
* the command group runs (:mod:`blockviz.cli.group`), importing what each command needs when it
  needs it;
* the process ends as Python ends it — other threads joined, ``atexit`` callbacks run, stdout and
  stderr flushed — but without then freeing every module and library one by one, which after
  torch and Manim takes longer than drawing a still (:func:`_exit_without_teardown`).
"""

from __future__ import annotations

from blockviz.cli.early_signals import end_at_once_on_signals

COLLECT_AFTER = 10_000
"""The collector's first threshold (Python's default: 700 allocations of container objects
less deallocations): the youngest generation is collected after this many."""


class _Ending:
    code = 1
    """The exit status the program ends with: set from its ``SystemExit``; 1 after a traceback."""


def main() -> None:
    """Run the ``blockviz`` command given by ``sys.argv``; end the process (never returns)."""
    end_at_once_on_signals()  # the first instruction: before any import
    from blockviz.cli.interrupts import run_program

    try:
        run_program(_command_group)
    except SystemExit as ending:
        _Ending.code = _status_of(ending.code)
        raise


def _command_group() -> None:
    import atexit
    import gc

    from blockviz.numerics import pin_environment

    pin_environment()  # before torch loads

    atexit.register(_exit_without_teardown)  # registered before any library's, so it runs last
    gc.set_threshold(COLLECT_AFTER)
    from blockviz.cli.group import main as blockviz
    from blockviz.cli.records import reuse_records

    reuse_records()
    blockviz.main()


def _status_of(code) -> int:
    """The exit status Python gives ``SystemExit(code)``: ``None`` is 0, an int itself, anything
    else (printed to stderr by Python) 1."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _exit_without_teardown() -> None:
    """The last ``atexit`` callback: Python has joined the other threads and run every other
    callback (multiprocessing's, logging's, temporary files'); say the one line if a signal came
    after the command ended, flush stdout and stderr, and end the process now."""
    import os
    import sys

    from blockviz.cli.interrupts import end_if_signalled, exit_code_after_signal

    end_if_signalled()
    code = exit_code_after_signal(_Ending.code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a pipe whose reader left: Python ends with 120 then
            code = code or 120
    os._exit(code)


if __name__ == "__main__":  # python -m blockviz.cli.program
    main()
