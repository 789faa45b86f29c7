"""The render pipeline: from a record and catalogued scene names to video (or PNG) files.

``renders/<sentence slug>/<scene>.<format>`` holds one file per scene, so two sentences never
share a file. Each scene renders in a fresh temporary media folder (no stale partial movies from
another sentence can be reused), and its file replaces the final name in one step. A render whose
inputs are unchanged — the record's inputs, the scene, the options and the code — is skipped
without importing torch or Manim. ``jobs > 1`` renders scenes in parallel processes.

A lecture (:func:`plan_lecture`, :func:`join_lecture`) is the title card and every scene, in
teaching order, rendered (or reused) as mp4 and joined by :func:`blockviz.lecture.write_lecture`
into ``renders/<sentence slug>/lecture.mp4`` with its chapters and captions beside it.

Imported by the CLI; imports scenes (and Manim) only inside the functions that render.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path, sentence_slug

QUALITIES = {"l": "low_quality", "m": "medium_quality", "h": "high_quality", "k": "fourk_quality"}
"""``-q`` letters → Manim quality names (480p15, 720p30, 1080p60, 2160p60)."""
FORMATS = ("mp4", "gif", "png")
"""Output formats; ``png`` saves the scene's last frame."""
CACHE_FOLDER = ".cache"
"""Inside each sentence's folder: the saved record, render stamps, temporary media."""


@dataclass(frozen=True)
class RenderOptions:
    """How to render: quality letter, file format, focus token, head, theme, size overrides.

    ``resolution`` ``(width, height)`` in pixels and ``fps`` replace the quality's own when given.
    """

    quality: str = "l"
    format: str = "mp4"
    token: str | None = None
    head: int = 0
    theme: str = "dark"
    resolution: tuple[int, int] | None = None
    fps: int | None = None

    def check(self) -> RenderOptions:
        """Raise :class:`BlockvizError` for an unknown quality or format."""
        if self.quality not in QUALITIES:
            raise BlockvizError(f"unknown quality {self.quality!r}: choose one of {', '.join(QUALITIES)}")
        if self.format not in FORMATS:
            raise BlockvizError(f"unknown format {self.format!r}: choose one of {', '.join(FORMATS)}")
        return self


@dataclass(frozen=True)
class RenderJob:
    """One scene to render: its catalogue name, where its file goes, and the key of its inputs."""

    scene: str
    output: Path
    stamp: Path
    key: str

    def is_fresh(self) -> bool:
        """True if the output exists and was rendered from the same inputs (nothing to do)."""
        try:
            return self.output.exists() and self.stamp.read_text() == self.key
        except OSError:
            return False


# -- planning (no torch, no Manim) --------------------------------------------------------------
def plan(scenes: list[str], sentence: str, record_inputs: dict, options: RenderOptions, out_dir: str | os.PathLike) -> list[RenderJob]:
    """The jobs of rendering ``scenes`` (catalogue names) of ``sentence`` into ``out_dir``.

    ``record_inputs`` are whatever determines the record (sentence, config fields, a weights
    or record file path); files among them are keyed by their content.
    """
    from blockviz.scenes.catalog import lookup

    folder = Path(out_dir) / sentence_slug(sentence)
    base = _digest({"record": _content_of(record_inputs), "options": asdict(options), "code": code_version()})
    return [
        RenderJob(
            scene=entry.name,
            output=folder / f"{entry.name}.{options.format}",
            stamp=folder / CACHE_FOLDER / f"{entry.name}.{options.format}.key",
            key=_digest({"base": base, "scene": entry.name, "class": f"{entry.module}.{entry.class_name}"}),
        )
        for entry in (lookup([name])[0] for name in scenes)
    ]


def record_file_sentence(path: str | os.PathLike) -> str:
    """The sentence stored in a saved record, read without torch.

    Raises :class:`BlockvizError` if the file is not a readable record.
    """
    path = Path(path)
    try:
        if path.suffix == ".json":
            header = json.loads(path.read_text(encoding="utf-8"))
            sentence = header.get("sentence") or " ".join(header["tokens"])
        else:
            from safetensors import safe_open

            with safe_open(str(path), framework="numpy") as handle:
                meta = handle.metadata() or {}
            sentence = json.loads(meta["sentence"]) if "sentence" in meta else " ".join(json.loads(meta["tokens"]))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BlockvizError(f"{str(path)!r} is not a blockviz record ({type(error).__name__}): write one with `blockviz record … --save`") from None
    return sentence


RENDER_SOURCES = ("attention", "block", "block_record", "config", "errors", "files", "rendering", "style", "tensorfile", "tokens", "params")
"""The blockviz modules a rendered frame depends on (with every module of ``scenes``)."""


def code_version() -> str:
    """A hash of the sources a frame depends on and the Manim version: a code change re-renders.

    The catalogue is left out (its titles, captions and descriptions are not drawn); each
    job's key holds its own scene's module and class instead.
    """
    root = Path(__file__).resolve().parent.parent
    scene_sources = [path for path in sorted((root / "scenes").rglob("*.py")) if path.name != "catalog.py"]
    sources = [root / "blockviz" / f"{name}.py" for name in RENDER_SOURCES] + scene_sources
    digest = hashlib.blake2b(digest_size=16)
    for source in sources:
        digest.update(source.relative_to(root).as_posix().encode())
        digest.update(source.read_bytes())
    digest.update(metadata.version("manim").encode())
    return digest.hexdigest()


def _content_of(record_inputs: dict) -> dict:
    keyed = {}
    for name, value in record_inputs.items():
        if isinstance(value, (str, os.PathLike)) and name in ("weights", "record_file"):
            keyed[name] = hashlib.blake2b(Path(value).read_bytes(), digest_size=16).hexdigest()
        else:
            keyed[name] = value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
    return keyed


def _digest(data: dict) -> str:
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


# -- the lecture (no torch, no Manim) ------------------------------------------------------------
LECTURE_NAME = "lecture"
"""The lecture's file stem: ``<sentence folder>/lecture.mp4``, ``lecture.srt``, …"""


@dataclass(frozen=True)
class LecturePlan:
    """One sentence's lecture: ``jobs`` renders the title card and every scene as mp4 in
    teaching order; ``output`` is the lecture video, ``stamp`` holds the ``key`` of everything
    it was joined from (the parts' keys, the chapter titles and captions, the joining code)."""

    jobs: list[RenderJob]
    output: Path
    stamp: Path
    key: str

    def files(self) -> list[Path]:
        """The lecture video, then its chapters (``.chapters.txt``, ``.chapters.json``) and captions (``.srt``)."""
        from blockviz.lecture import sidecar_paths

        return [self.output, *sidecar_paths(self.output)]

    def is_fresh(self) -> bool:
        """True if every lecture file exists and was joined from the same inputs."""
        try:
            return all(path.exists() for path in self.files()) and self.stamp.read_text() == self.key
        except OSError:
            return False


def plan_lecture(sentence: str, record_inputs: dict, options: RenderOptions, out_dir: str | os.PathLike) -> LecturePlan:
    """The lecture of ``sentence`` into ``out_dir``: its parts' render jobs and its files.

    Raises
    ------
    BlockvizError
        If ``options.format`` is not ``mp4`` (a lecture joins videos).
    """
    from blockviz.scenes.catalog import lecture_entries

    if options.format != "mp4":
        raise BlockvizError(f"a lecture joins mp4 videos, not {options.format}: drop --format {options.format}")
    lecture_parts = lecture_entries()
    jobs = plan([entry.name for entry in lecture_parts], sentence, record_inputs, options, out_dir)
    folder = jobs[0].output.parent
    joiner = Path(__file__).with_name("lecture.py").read_bytes()
    key = _digest({
        "parts": [job.key for job in jobs],
        "chapters": [(entry.name, entry.title, entry.caption, entry.encoder_caption) for entry in lecture_parts],
        "joiner": hashlib.blake2b(joiner, digest_size=16).hexdigest(),
        "av": metadata.version("av"),
    })
    return LecturePlan(jobs, folder / f"{LECTURE_NAME}.mp4", folder / CACHE_FOLDER / f"{LECTURE_NAME}.mp4.key", key)


def join_lecture(lecture: LecturePlan, causal: bool, progress=None):
    """Join the lecture's rendered parts into its video, chapters and captions; stamp it.

    ``causal`` picks each scene's caption for a decoder or an encoder (the record's
    ``config.causal``). ``progress`` is a :class:`Progress` or ``None``. Returns the
    :class:`blockviz.lecture.Lecture` written.

    Raises
    ------
    BlockvizError
        If a part's video is missing or unreadable (see :func:`blockviz.lecture.write_lecture`).
    """
    from blockviz.lecture import LecturePart, write_lecture
    from blockviz.scenes.catalog import lookup

    by_name = {entry.name: entry for entry in lookup([job.scene for job in lecture.jobs])}
    parts = [LecturePart(job.scene, by_name[job.scene].title, by_name[job.scene].caption_for(causal), job.output) for job in lecture.jobs]
    progress = progress or Progress(enabled=False)
    with progress:
        written = write_lecture(parts, lecture.output, progress=progress.start_joining(len(parts)))
    with atomic_path(lecture.stamp) as partial:
        partial.write_text(lecture.key)
    return written


# -- rendering ---------------------------------------------------------------------------------
def check_request(record, options: RenderOptions) -> None:
    """Check the token and head against the record before anything renders.

    Raises :class:`BlockvizError` for a token not in the sentence or a head out of range.
    """
    from blockviz.scenes.focus import check_head, focus_index

    options.check()
    focus_index(record.tokens, options.token)
    check_head(options.head, record.config.n_heads)


def render_jobs(record, jobs: list[RenderJob], options: RenderOptions, processes: int = 1, progress=None) -> list[tuple[RenderJob, float]]:
    """Render every job; return each job with its seconds. Outputs appear atomically.

    ``progress`` is a :class:`Progress` (or ``None`` for silence). With ``processes > 1`` the
    scenes render in that many parallel processes, each reading the record from a saved file.

    Raises
    ------
    BlockvizError
        For a token not in the sentence or a head out of range (before anything renders).
    """
    check_request(record, options)
    if not jobs:
        return []
    cache = jobs[0].output.parent / CACHE_FOLDER
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BlockvizError(f"cannot write to folder {str(jobs[0].output.parent)!r} ({error.strerror}): choose a writable folder with -o") from None
    progress = progress or Progress(enabled=False)
    done = []
    with progress:
        progress.start_scenes(len(jobs))
        if processes <= 1 or len(jobs) == 1:
            for job in jobs:
                progress.start_scene(job.scene)
                done.append((job, render_one(record, job, options, progress.on_play)))
                progress.finish_scene(job.scene)
        else:
            done = _render_parallel(record, jobs, options, processes, cache, progress)
    return done


def _render_parallel(record, jobs, options, processes, cache, progress):
    # This process renders every `processes`-th scene itself (it has torch and the record
    # already); `processes - 1` fresh processes render the rest from the saved record.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    record_path = cache / f"record-{os.getpid()}.safetensors"
    record.save(record_path)
    here = jobs[::processes]
    elsewhere = [job for job in jobs if job not in here]
    done = []
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=processes - 1, mp_context=context) as pool:
            futures = {pool.submit(_render_from_file, str(record_path), job, options): job for job in elsewhere}
            for job in here:
                progress.start_scene(job.scene)
                done.append((job, render_one(record, job, options, progress.on_play)))
                progress.finish_scene(job.scene)
            for future in as_completed(futures):
                job = futures[future]
                done.append((job, future.result()))
                progress.finish_scene(job.scene)
    finally:
        record_path.unlink(missing_ok=True)
    order = {job.scene: index for index, job in enumerate(jobs)}
    return sorted(done, key=lambda pair: order[pair[0].scene])


def _render_from_file(record_path: str, job: RenderJob, options: RenderOptions) -> float:
    from blockviz.block_record import BlockRecord

    return render_one(BlockRecord.load(record_path), job, options)


def render_one(record, job: RenderJob, options: RenderOptions, on_play=None) -> float:
    """Render one scene of ``record`` to ``job.output`` (atomically) and stamp it; return seconds.

    Manim writes into a fresh temporary media folder beside the output, removed afterwards, so
    no partial movie of an earlier render (another sentence) can end up in this one.
    """
    from manim import tempconfig

    from blockviz.scenes.catalog import lookup

    started = time.perf_counter()
    entry = lookup([job.scene])[0]
    scene_class = entry.scene_class()
    cache = job.output.parent / CACHE_FOLDER
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix="media-") as media:
        with tempconfig(manim_settings(media, entry.class_name, options)):
            scene = scene_class(record=record, token=options.token, head=options.head, theme=options.theme)
            if on_play is not None:
                scene.play_listeners.append(on_play)
            scene.render()
        produced = _produced_file(Path(media), entry.class_name, options.format)
        with atomic_path(job.output) as partial:
            os.replace(produced, partial)
    with atomic_path(job.stamp) as partial:
        partial.write_text(job.key)
    return time.perf_counter() - started


def manim_settings(media: str, output_name: str, options: RenderOptions) -> dict:
    """Manim config for one render into ``media``: quality, format, size, no caching, quiet."""
    settings = {
        "media_dir": media,
        "quality": QUALITIES[options.quality],
        "output_file": output_name,
        "disable_caching": True,
        "progress_bar": "none",
        "verbosity": "WARNING",
        "preview": False,
    }
    if options.format == "png":
        settings.update(save_last_frame=True, write_to_movie=False, format="png")
    else:
        settings.update(write_to_movie=True, format=options.format)
    if options.resolution is not None:
        settings.update(pixel_width=options.resolution[0], pixel_height=options.resolution[1])
    if options.fps is not None:
        settings["frame_rate"] = options.fps
    return settings


def _produced_file(media: Path, output_name: str, file_format: str) -> Path:
    found = [path for path in media.rglob(f"{output_name}*.{file_format}") if "partial_movie_files" not in path.parts]
    if not found:
        raise BlockvizError(f"Manim wrote no {file_format} file for {output_name}: run it alone with -v to see why")
    return max(found, key=lambda path: path.stat().st_mtime)


class Progress:
    """Scene and animation progress on the terminal (stderr), drawn by :mod:`rich`; silent if
    disabled or if stderr is not a terminal. ``on_play`` is a :class:`~blockviz.scenes.base.RecordScene`
    play listener."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar = None
        self._scenes = self._animations = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn, TextColumn, TimeElapsedColumn

            # On stderr, so the printed file paths are all that stdout holds; and only on a
            # terminal (elsewhere rich would leave a stray blank line among the paths).
            console = Console(stderr=True)
            if not console.is_terminal:
                return self
            self._bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                     transient=True, console=console)
            self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def start_scenes(self, total: int) -> None:
        if self._bar is not None:
            self._scenes = self._bar.add_task("scenes", total=total)

    def start_scene(self, name: str) -> None:
        if self._bar is not None:
            if self._animations is not None:
                self._bar.remove_task(self._animations)
            self._animations = self._bar.add_task(f"  {name}: animations", total=None)

    def on_play(self, scene) -> None:
        if self._bar is not None and self._animations is not None:
            self._bar.advance(self._animations)

    def finish_scene(self, name: str) -> None:
        if self._bar is not None:
            self._bar.advance(self._scenes)

    def start_joining(self, total: int):
        """A bar for joining ``total`` lecture parts; returns the ``progress(done, total)`` callback
        :func:`blockviz.lecture.write_lecture` calls."""
        task = self._bar.add_task("joining the lecture", total=total) if self._bar is not None else None

        def advance(done: int, total: int) -> None:
            if self._bar is not None and task is not None:
                self._bar.update(task, completed=done)

        return advance
