"""Drawing figures from a record and writing them to a folder, one file per figure and format.

Figures are independent, so :func:`write_figures` draws them in several processes at once
(forked, so they start with everything already imported and computed); each figure is drawn
and saved by the same code either way, so the files are the same bytes.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from matplotlib.figure import Figure

from blockviz.figures.context import figure_context
from blockviz.figures.cores import cores_free
from blockviz.figures.glyphs import warn_missing_glyphs
from blockviz.figures.registry import FIGURE_NAMES, figure_spec
from blockviz.figures.request import FigureRequest
from blockviz.figures.saving import DEFAULT_DPI, FORMATS, save_figure
from blockviz.ownership import refuse_foreign
from blockviz.processes import end_pool, signals_deferred, start_worker


def draw_figure(name: str, request: FigureRequest) -> Figure:
    """The figure called ``name`` (see :data:`~blockviz.figures.registry.FIGURES`) for ``request``.

    Raises
    ------
    BlockvizError
        For an unknown name.
    """
    spec = figure_spec(name)
    with figure_context(request.theme):
        return spec.draw(request)


def write_figures(
    request: FigureRequest,
    folder: str | Path,
    names: Iterable[str] | None = None,
    formats: Iterable[str] = ("png", "svg"),
    dpi: int = DEFAULT_DPI,
    jobs: int | None = None,
) -> Iterator[Path]:
    """Draw each figure in ``names`` (``None``: every figure the record can draw,
    :func:`~blockviz.figures.registry.skip_reason`) and write ``folder/<name>.<format>`` for each format,
    yielding each path once it is written, in the order of ``names``. Warns once
    (:class:`MissingGlyphWarning`) if the font lacks characters of some token.

    ``jobs`` processes draw figures side by side (``None``: one per CPU core free now,
    :func:`blockviz.figures.cores.cores_free`, at most one per figure; 1: all in this process).
    Parallel drawing needs the "fork" start method (Linux); elsewhere figures are drawn one
    after another.

    Raises
    ------
    BlockvizError
        For an unknown figure name or format, ``jobs`` under 1, a file blockviz did not write
        standing at one of the paths (:mod:`blockviz.ownership`; all before drawing anything), or
        an unwritable folder.
    """
    if names is None:
        from blockviz.figures.registry import skip_reason

        names = [name for name in FIGURE_NAMES if skip_reason(name, request.record, request.whole) is None]
    names, formats = list(names), list(formats)
    for name in names:
        figure_spec(name)
    for fmt in formats:
        if fmt not in FORMATS:
            from blockviz.errors import BlockvizError

            raise BlockvizError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    workers = _worker_count(jobs, len(names))
    folder = Path(folder)
    refuse_foreign(folder / f"{name}.{fmt}" for name in names for fmt in formats)
    warn_missing_glyphs(request.record.tokens)
    with _heap_frozen():
        yield from _write(request, folder, names, formats, dpi, workers)


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Leave what exists before drawing (torch, matplotlib, the record: some 240,000 objects) out
    of the garbage collector's passes while figures are drawn (:func:`gc.freeze`): the collector
    then only walks the figures' own objects (half its time here), and forked workers do not
    copy the pages it would otherwise touch, as the ``gc`` documentation advises before a fork."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _write(
    request: FigureRequest, folder: Path, names: list[str], formats: list[str], dpi: int, workers: int
) -> Iterator[Path]:
    if workers <= 1:
        for name in names:
            yield from _draw_and_save(name, request, folder, formats, dpi)
        return
    # the other mask's record (causal-vs-bidirectional) is computed by the worker that draws it, beside the other figures
    job = (request, folder, formats, dpi)  # forked workers inherit it: nothing is pickled but figure names and paths
    executor = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker, initargs=(job,)
    )
    try:
        with signals_deferred():  # the workers are forked here (at the first submit) and unblock once set up
            drawn = [executor.submit(_draw_and_save_job, name) for name in names]
        for figure in drawn:  # not executor.map, which cancels what is left and races end_pool (Python 3.11)
            yield from figure.result()
    except (
        BaseException
    ):  # an error, Ctrl-C, SIGTERM or the caller stopping early: end the workers now, not after their figures
        end_pool(executor)
        raise
    executor.shutdown(wait=True)


def _draw_and_save(name: str, request: FigureRequest, folder: Path, formats: list[str], dpi: int) -> list[Path]:
    figure = draw_figure(name, request)
    return [save_figure(figure, folder / f"{name}.{fmt}", fmt, dpi, title=f"blockviz {name}") for fmt in formats]


_JOB: tuple | None = None
"""In a worker process: what it draws, (request, folder, formats, dpi)."""


def _draw_and_save_job(name: str) -> list[Path]:
    return _draw_and_save(name, *_JOB)


def _start_worker(job: tuple) -> None:
    global _JOB
    start_worker()  # SIGINT is the parent's to handle; SIGTERM removes this worker's temporary files and exits
    _JOB = job  # formulas are laid out by the worker's own TextToPath (blockviz.figures.labels.text_paths), not the parent's
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)  # as PyTorch's DataLoader workers do: no thread pool inherited across fork


def _worker_count(jobs: int | None, figures: int) -> int:
    if jobs is not None:
        if jobs < 1:
            from blockviz.errors import BlockvizError

            raise BlockvizError(f"jobs must be at least 1, not {jobs}")
        return min(jobs, figures) if _can_fork() else 1
    if not _can_fork():
        return 1
    return max(1, min(cores_free(), figures))


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()
