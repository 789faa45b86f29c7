"""A still's record made in a second process while this one imports Manim and the scenes.

A still whose record is not kept yet makes it first (torch's import, about 1.2 CPU s, and the
block, 0.06) and then imports Manim and its scene (about 0.8): neither needs the other.
:func:`made_beside` makes the record in a forked process, which keeps it
(:mod:`blockviz.record_cache`), while this one imports Manim and the scene modules; this one then
reads the kept record back as numpy arrays, as a still from a kept record does: the same numbers,
the same PNG (``tests/test_still_without_torch.py``). With a core free the two run at once; on a
busy machine they take turns, as they did in one process. That process imports torch without
``torch.export`` and the ``Meta`` device's kernels (:func:`~blockviz.render.torch_import.import_torch`:
1.36 CPU s rather than 1.67 at load 16): it only makes a record the cache keeps, of blockviz's own
block, and exits.

If that process fails, the record is made here, so an error is reported as before, once; what it
printed (a warning) is printed here when it succeeds. It ignores Ctrl-C (the terminal's SIGINT
reaches both processes; this one decides) and is stopped with this one.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable


def made_beside(make: Callable[[], object], meanwhile: Callable[[], object]) -> bool:
    """Call ``make`` in a forked process while ``meanwhile()`` runs in this one; wait for both.

    Returns
    -------
    bool
        Whether ``make`` returned (``False``: it raised, or the process was ended); what it
        wrote to stderr is written to this process's stderr only then.

    Raises whatever ``meanwhile`` raises (the forked process ended first).
    """
    import multiprocessing

    from blockviz.processes import end_processes, signals_deferred

    with tempfile.TemporaryFile() as printed:
        with signals_deferred():  # no signal before the process has its own handlers
            process = multiprocessing.get_context("fork").Process(
                target=_make, args=(make, printed.fileno()), daemon=True
            )
            process.start()
        try:
            meanwhile()
            process.join()
        except BaseException:
            end_processes([process])
            raise
        if process.exitcode != 0:
            return False
        printed.seek(0)
        sys.stderr.write(printed.read().decode("utf-8", "replace"))
        return True


def _make(make: Callable[[], object], printed: int) -> None:
    """In the forked process: ``make()``, its stderr into the file ``printed``; exit 0 if it
    returned, 1 if it raised (quietly: this process makes the record again and reports why)."""
    from blockviz.processes import start_worker
    from blockviz.render.torch_import import import_torch

    start_worker()
    os.dup2(printed, 2)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    try:
        import_torch()  # before ``make`` imports it whole
        make()
    except BaseException:  # noqa: BLE001 — reported by this process's own attempt
        code = 1
    else:
        code = 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
