"""Rendering scenes of a sentence into a folder, in one call: :func:`render` plans the files
(:mod:`blockviz.render.plan`), leaves those up to date alone, renders the others
(:func:`~blockviz.render.run.render_jobs`) and, for a lecture, joins them
(:func:`~blockviz.render.run.join_lecture`). What ``blockviz render`` does; a notebook can call it.

The record is made only when something needs it: a scene to render, a lecture to join, or
scenes that must be chosen by what the record holds (:func:`blockviz.scenes.catalog.for_record`);
a rerun with nothing changed makes none.

>>> from blockviz.render.plan import RenderOptions
>>> rendered = render("the cat sat", ["mask"], RenderOptions(format="png"), "out")  # doctest: +SKIP
>>> rendered.files(), rendered.unchanged()  # doctest: +SKIP
([PosixPath('out/mask.png')], [])
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.ownership import refuse_foreign
from blockviz.render.plan import RenderJob, RenderOptions, default_folder, plan, plan_lecture, record_file_sentence
from blockviz.render.progress import Progress
from blockviz.render.run import join_lecture, render_jobs


@dataclass(frozen=True)
class RecordSource:
    """Where a render's record comes from: ``inputs``, everything the record is made from (the
    sentence, the block's options, a ``record_file``; a file is keyed by its bytes,
    :func:`~blockviz.render.plan.plan`), and ``make``, which makes it (:func:`render` calls it
    at most once, only when the record is needed). A command subclasses it to name its own
    options in :meth:`check`'s and :meth:`sentence`'s errors."""

    inputs: Mapping
    make: Callable[[], object]

    def check(self, record) -> None:
        """Called with the record before any scene renders: the scenes' own checks follow
        (:func:`~blockviz.render.run.check_request`), so nothing is checked here."""

    def sentence(self) -> str:
        """The sentence whose folder the files go to by default, found without making the record
        (a record file's from its header).

        Raises :class:`BlockvizError` for neither a sentence nor a record file, or both, or a
        record file that cannot be read (:func:`~blockviz.render.plan.record_file_sentence`).
        """
        sentence, record_file = self.inputs.get("sentence"), self.inputs.get("record_file")
        if (sentence is None) == (record_file is None):
            raise BlockvizError("give either a sentence or a record file, not both and not neither")
        return record_file_sentence(record_file) if record_file is not None else sentence

    def made_to_keep(self) -> bool:
        """Whether :attr:`make` would make the record now and keep it where a later ``make``
        reads it back without torch (:mod:`blockviz.record_cache`); here never."""
        return False


@dataclass(frozen=True)
class Rendered:
    """What :func:`render` left in its folder: ``jobs`` every scene planned, in teaching order,
    ``rendered`` those rendered now (the others were up to date); ``lecture`` the lecture's files
    (its video, chapters and captions; none without a lecture) and ``joined`` whether they were
    joined now."""

    jobs: list[RenderJob]
    rendered: list[RenderJob]
    lecture: list[Path]
    joined: bool

    def files(self) -> list[Path]:
        """Every file, in order: each scene's, then the lecture's."""
        return [job.output for job in self.jobs] + self.lecture

    def unchanged(self) -> list[Path]:
        """The files left as they were: up to date with their inputs."""
        kept = [job.output for job in self.jobs if job not in self.rendered]
        return kept + ([] if self.joined else self.lecture)


def render(
    record,
    scenes: Sequence[str] = ("all",),
    options: RenderOptions | None = None,
    folder: str | os.PathLike | None = None,
    *,
    lecture: bool = False,
    force: bool = False,
    processes: int = 1,
    progress: Progress | None = None,
    on_file: Callable[[Path, bool], object] | None = None,
) -> Rendered:
    """Render ``scenes`` of ``record`` into ``folder``, one file per scene: ``<folder>/<scene>.<format>``.

    Parameters
    ----------
    record
        A sentence (the trained toy model's record of it, :func:`blockviz.record`), a
        :class:`~blockviz.block_record.BlockRecord`, or a :class:`RecordSource`.
    scenes
        Catalogue names, or ``"all"``: every scene but the lecture-only ones, those that cannot
        show the record left out (a scene named that cannot is refused).
    options
        How to render (:class:`~blockviz.render.plan.RenderOptions`; default: mp4, low quality).
    folder
        Where the files go; default ``renders/<sentence slug>/``
        (:func:`~blockviz.render.plan.default_folder`).
    lecture
        Render the title card and every scene (``scenes`` unused), then join them into
        ``<folder>/lecture.mp4`` with its chapters and captions.
    force
        Render every scene, and join the lecture, even if up to date.
    processes, progress
        As :func:`~blockviz.render.run.render_jobs`.
    on_file
        Called with each file's path and whether it was left unchanged, as soon as it is
        known (each scene's once the scenes are rendered, the lecture's once joined).

    Returns
    -------
    Rendered
        The files planned, and which were rendered or joined now.

    Raises
    ------
    BlockvizError
        For a scene not in the catalogue or that cannot show the record, an option the scenes
        refuse (a token not in the sentence, a head out of range, a lecture that is not mp4), a
        file in the way that blockviz did not write, and as
        :func:`~blockviz.render.run.render_jobs` and :func:`~blockviz.render.run.join_lecture`.
    """
    from blockviz.render.record_beside import made_beside
    from blockviz.scenes.catalog import entries, for_record, lookup

    options = options or RenderOptions()
    source = _source(record)
    made = functools.cache(source.make)  # the record, made on first use
    chosen = entries() if lecture else lookup(scenes)  # a lecture: the title card and every scene
    if any(entry.needs for entry in chosen):  # what the record holds decides whether they can show it
        chosen = for_record(chosen, made(), () if lecture else scenes)
    names = [entry.name for entry in chosen]
    sentence = source.sentence()
    folder = Path(folder) if folder is not None else default_folder(sentence, source.inputs)
    lecture_plan = plan_lecture(source.inputs, options, folder, names) if lecture else None
    planned = lecture_plan.jobs if lecture_plan is not None else plan(names, source.inputs, options, folder)
    refuse_foreign([job.output for job in planned] + (lecture_plan.files() if lecture_plan is not None else []))
    pending = [job for job in planned if force or not job.is_fresh()]
    if pending:
        if options.format == "png" and source.made_to_keep():  # made and kept by another process, read back here
            made_beside(source.make, lambda: _import_scenes(pending))  # if it failed, made() makes it again
        rec = made()
        source.check(rec)
        render_jobs(rec, pending, options, processes=processes, progress=progress)
    for job in planned:
        _tell(on_file, job.output, job not in pending)
    if lecture_plan is None:
        return Rendered(planned, pending, [], False)
    from blockviz.scenes.wording import Wording

    joined = bool(pending) or force or not lecture_plan.is_fresh()
    if joined:
        join_lecture(lecture_plan, Wording.of(made()), progress=progress, burned_captions=options.burned_captions)
    for path in lecture_plan.files():
        _tell(on_file, path, not joined)
    return Rendered(planned, pending, lecture_plan.files(), joined)


def _import_scenes(jobs: list[RenderJob]) -> None:
    """Import Manim and the modules of the scenes ``jobs`` render, as rendering them would."""
    from blockviz.render.manim_import import import_manim
    from blockviz.scenes.catalog import lookup

    import_manim()
    for entry in lookup([job.scene for job in jobs]):
        entry.scene_class()


def _source(record) -> RecordSource:
    """``record`` as a :class:`RecordSource`: a sentence's is the toy model's record of it, a
    record's is itself, keyed by its numbers."""
    if isinstance(record, RecordSource):
        return record
    if isinstance(record, str):
        from blockviz.recording import record as record_of

        sentence = record
        return RecordSource({"sentence": sentence}, lambda: record_of(sentence))
    from blockviz.course.stamps import record_hash

    given = record
    return RecordSource({"sentence": given.sentence, "record": record_hash(given)}, lambda: given)


def _tell(on_file, path: Path, unchanged: bool) -> None:
    if on_file is not None:
        on_file(path, unchanged)
