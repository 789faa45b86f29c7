"""A course expanded into jobs, each with where its outputs go and the key of its inputs.

One job per sentence × scene × quality × format, one per sentence's figure set, explorer page
and slide deck, and one comparison per sentence with a contrast sentence (its explorer page then
shows the contrast too). Outputs go to ``<output>/<lesson>/<sentence slug>/``:

- ``scenes-<quality>/<scene>.<format>``: a scene render (the names ``blockviz render -o`` writes);
- ``figures/<figure>.<format>``, ``explorer.html``, ``slides/``;
- ``compare/compare.json`` and ``compare/compare.<figure format>`` (:mod:`blockviz.course.contrast`).

A job's key is a hash of everything its outputs are made from: its kind and options, the
record's inputs (sentence, model — a model folder by its files' names, sizes and times — and
layer) and the code (:func:`blockviz.render.plan.code_version`: every file of the package, the
toy model's weights included, and Manim's version). The record itself is not made to plan: it is
a function of those inputs, and a rerun with nothing changed stays a matter of seconds. Its hash
is written in the stamp beside the key, to say which numbers the outputs show
(:mod:`blockviz.course.stamps`). Nothing here imports torch or Manim.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from blockviz.course.schema import SEEDED, Course, LessonSettings
from blockviz.errors import quoted
from blockviz.files import sentence_slug

KINDS = ("scene", "figures", "explorer", "compare", "slides")
"""The kinds of job, in the order a sentence's jobs are listed."""
STAMPS = Path(".course") / "stamps"
"""Inside the output folder: one stamp per job, ``<lesson>/<slug>/<job>.json``."""


@dataclass(frozen=True)
class CourseJob:
    """One job: ``kind`` (:data:`KINDS`), ``lesson`` and ``sentence``, ``name`` (the scene;
    the kind for the others), ``quality`` and ``format`` (scenes), the lesson's ``settings``,
    ``folder`` (the sentence's folder), ``root`` (the course's output folder), ``key``, and
    ``contrast`` the sentence's contrast sentence (explorer and compare jobs; else ``None``)."""

    kind: str
    lesson: str
    sentence: str
    name: str
    settings: LessonSettings
    folder: Path
    root: Path
    quality: str | None = None
    format: str | None = None
    key: str = ""
    contrast: str | None = None

    @property
    def id(self) -> str:
        """Unique within the course and stable across runs: ``<lesson>/<slug>/<job>``."""
        return f"{self.lesson}/{self.folder.name}/{self.stem}"

    @property
    def stem(self) -> str:
        if self.kind == "scene":
            return f"{self.name}-{self.quality}.{self.format}"
        return self.kind

    @property
    def label(self) -> str:
        """How the job is named to a person: ``attention: softmax (l, mp4) on 'the cat sat'`` (a
        long sentence shortened, :func:`~blockviz.errors.quoted`)."""
        what = f"{self.name} ({self.quality}, {self.format})" if self.kind == "scene" else self.kind
        against = f" against {quoted(self.contrast)}" if self.kind == "compare" else ""
        return f"{self.lesson}: {what} on {quoted(self.sentence)}{against}"

    @property
    def stamp(self) -> Path:
        return self.root / STAMPS / self.lesson / self.folder.name / f"{self.stem}.json"

    @property
    def target(self) -> Path:
        """The job's output: a file (scene, explorer) or a folder (figures, slides)."""
        if self.kind == "scene":
            return self.folder / f"scenes-{self.quality}" / f"{self.name}.{self.format}"
        names = {"figures": "figures", "explorer": "explorer.html", "compare": "compare", "slides": "slides"}
        return self.folder / names[self.kind]

    @property
    def skip_reason(self) -> str | None:
        """Why the job is not run at all (``None``: it is)."""
        return None

    def options(self) -> dict:
        """What the job's outputs depend on besides the record and the code."""
        settings = self.settings
        focus = {"token": settings.token, "head": settings.head, "theme": settings.theme}
        if self.kind == "scene":
            return {
                "scene": self.name,
                "quality": self.quality,
                "format": self.format,
                "resolution": settings.resolution,
                "fps": settings.fps,
                **focus,
                **self.narration(),
            }
        if self.kind == "figures":
            return {"figures": settings.figures, "formats": settings.figure_formats, **focus}
        if self.kind == "slides":
            return {"quality": settings.qualities[0], **focus, **self.narration()}
        if self.kind == "compare":
            return {"contrast": self.contrast, "query": settings.token, "formats": settings.figure_formats}
        if self.contrast is not None:
            return {**focus, "contrast": self.contrast}
        return focus

    def narration(self) -> dict:
        """The voice that speaks this job's captions, as key material: for an mp4 scene or the
        slides of a lesson with ``narration``, ``{"narration": [voice path, size, mtime]}``
        (the packaged voice's file when none is given); else nothing, so the key of a job
        without narration is what it was before narration existed."""
        if not self.settings.narration or (self.kind == "scene" and self.format != "mp4"):
            return {}
        return {"narration": _voice_identity(self.settings.voice)}

    def record_inputs(self) -> dict:
        """What the record is made from: the sentence, the model and the layer."""
        return {"sentence": self.sentence, "model": self.settings.model, "layer": self.settings.layer}


def expand(course: Course) -> list[CourseJob]:
    """Every job of ``course``, lesson by lesson, sentence by sentence (scenes in teaching order,
    then figures, explorer, slides), each with its key.

    Two lessons may share a sentence: each has its own folder, so their outputs never collide.
    """
    from blockviz.render.plan import code_version
    from blockviz.scenes.catalog import lookup

    code = code_version()
    jobs = []
    for lesson in course.lessons:
        settings = lesson.settings
        scenes = [entry.name for entry in lookup(settings.scenes)]
        model = _model_identity(settings.model)
        contrasts = dict(lesson.contrasts)
        for sentence in lesson.sentences:
            folder = course.output / lesson.name / sentence_slug(sentence)
            contrast = contrasts.get(sentence)
            made = [
                CourseJob("scene", lesson.name, sentence, scene, settings, folder, course.output, quality, fmt)
                for quality in settings.qualities
                for fmt in settings.formats
                for scene in scenes
            ]
            if settings.figures:
                made.append(CourseJob("figures", lesson.name, sentence, "figures", settings, folder, course.output))
            if settings.explorer:
                made.append(
                    CourseJob(
                        "explorer",
                        lesson.name,
                        sentence,
                        "explorer",
                        settings,
                        folder,
                        course.output,
                        contrast=contrast,
                    )
                )
            if contrast is not None:
                made.append(
                    CourseJob(
                        "compare", lesson.name, sentence, "compare", settings, folder, course.output, contrast=contrast
                    )
                )
            if settings.slides:
                made.append(CourseJob("slides", lesson.name, sentence, "slides", settings, folder, course.output))
            jobs.extend(_keyed(job, model, code) for job in made)
    return jobs


def _keyed(job: CourseJob, model: object, code: str) -> CourseJob:
    from dataclasses import replace

    from blockviz import __version__

    inputs = {**job.record_inputs(), "model": model}
    material = {"kind": job.kind, "options": job.options(), "record": inputs, "code": code, "blockviz": __version__}
    return replace(job, key=_digest(material))


def _model_identity(model: str) -> object:
    """The model as key material: its name, and for a folder its files' names, sizes and
    modification times (hashing gigabytes of weights on every run would cost more than it saves)."""
    if model in (SEEDED, "toy"):
        return model  # both are code: covered by code_version
    from blockviz.models.resolve import resolve_model

    folder = resolve_model(model).folder
    if folder is None or not Path(folder).is_dir():
        return model
    files = sorted(path for path in Path(folder).rglob("*") if path.is_file())
    return [model, [(str(path.relative_to(folder)), path.stat().st_size, path.stat().st_mtime_ns) for path in files]]


@functools.lru_cache(maxsize=8)
def _voice_identity(voice: str | None) -> list:
    """The voice file (``None``: the packaged voice) by its path, size and modification time,
    as a model folder's files are keyed (:func:`_model_identity`)."""
    from blockviz.narration.voice import packaged_voice

    path = Path(voice) if voice is not None else packaged_voice()
    try:
        stat = path.stat()
    except OSError:
        return [str(path)]
    return [str(path), stat.st_size, stat.st_mtime_ns]


def _digest(data: dict) -> str:
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()
