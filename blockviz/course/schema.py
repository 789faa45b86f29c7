"""A course file: TOML that lists lessons, each with its sentences and what to make of them.

Loaded and checked in one go (:func:`load_course`) before anything runs: a file that is not
TOML, an unknown key, a value of the wrong kind, an empty sentence list, an unknown model,
scene, figure, quality or format is one :class:`CourseError` naming the lesson and the key.
Nothing here imports torch, Manim or matplotlib.

.. code-block:: toml

    title = "One transformer block"
    output = "build"                # the folder everything goes into, relative to this file

    [defaults]                      # every lesson's, unless the lesson says otherwise
    model = "toy"                   # toy, seeded, minilm, smollm2, a model folder or hub id
    scenes = ["mask", "softmax"]    # or "all"
    qualities = ["l"]               # l, m, h, k
    formats = ["mp4"]               # mp4, gif, png

    [[lesson]]
    name = "attention"              # the lesson's folder: lower-case letters, digits, dashes (≤ 100)
    title = "Who attends to whom"
    sentences = ["the cat sat"]
    contrast = ["the dog sat"]      # one per sentence: compared with it, and made as the sentences
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError, did_you_mean, quoted

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

QUALITY_LETTERS = ("l", "m", "h", "k")
"""``qualities``: Manim's 480p15, 720p30, 1080p60, 2160p60 (as ``blockviz render -q``)."""
SCENE_FORMATS = ("mp4", "gif", "png")
"""``formats``: as ``blockviz render --format``."""
THEMES = ("dark", "light")
SEEDED = "seeded"
"""``model = "seeded"``: blockviz's own block with seeded random weights."""
LESSON_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
LESSON_NAME_MOST = 100
"""The longest lesson name, in characters: it names a folder, and file systems take 255 bytes at most."""


@dataclass(frozen=True)
class LessonSettings:
    """What a lesson makes of each sentence; every field can be set in ``[defaults]`` or a lesson.

    ``model`` and ``layer`` choose the block (``layer`` only for a trained model's layer);
    ``scenes`` (catalogue names) × ``qualities`` × ``formats`` are the scene renders, with
    ``resolution`` ``(width, height)`` pixels and ``fps`` replacing the quality's own when given;
    ``token`` and ``head`` the focus; ``figures`` ``True`` (every figure the record can draw),
    ``False`` or figure names, written as ``figure_formats``; ``explorer`` one page per
    sentence; ``slides`` one deck per sentence of the lesson's scenes (``blockviz slides``);
    ``narration`` each caption spoken (as ``blockviz render --narrate``) in the mp4 scenes and
    the slides, by the Piper voice ``voice`` (an absolute ``.onnx`` path; ``None``: the packaged
    voice).
    """

    model: str = "toy"
    layer: int | None = None
    scenes: tuple[str, ...] = ("all",)
    qualities: tuple[str, ...] = ("l",)
    formats: tuple[str, ...] = ("mp4",)
    resolution: tuple[int, int] | None = None
    fps: int | None = None
    token: str | int | None = None
    head: int | None = None
    theme: str = "dark"
    figures: bool | tuple[str, ...] = True
    figure_formats: tuple[str, ...] = ("png",)
    explorer: bool = True
    slides: bool = False
    narration: bool = False
    voice: str | None = None


SETTING_KEYS = tuple(LessonSettings.__dataclass_fields__)
LESSON_ONLY_KEYS = ("name", "title", "sentences", "contrast")
TOP_KEYS = ("title", "output", "defaults", "lesson")


@dataclass(frozen=True)
class Lesson:
    """One lesson: its folder ``name``, ``title``, ``sentences`` (the contrast sentences after
    the others, each once), its :class:`LessonSettings` and ``contrasts``: ``(sentence,
    contrast sentence)`` pairs, the file's ``contrast`` matched to its ``sentences`` by position."""

    name: str
    title: str
    sentences: tuple[str, ...]
    settings: LessonSettings
    contrasts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Course:
    """A checked course file: ``title``, the ``output`` folder (absolute), the ``lessons``, and
    ``source`` the file it was read from."""

    title: str
    output: Path
    lessons: tuple[Lesson, ...]
    source: Path


class CourseError(BlockvizError):
    """A course file that cannot be run, in one line: the file, the lesson and key, the fix."""


def load_course(path: str | Path, output: str | Path | None = None) -> Course:
    """Read and check the course file ``path``; ``output`` (a folder) replaces the file's own.

    The file's ``output`` is relative to the file's folder; without either, ``renders/<file stem>``
    relative to the current folder.

    Raises
    ------
    CourseError
        For a file that cannot be read or is not TOML, or any key or value the schema refuses:
        one line naming the file, the lesson (``[defaults]`` or the top) and the key.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CourseError(f"cannot read {str(path)!r} ({error.strerror}): give a course file (TOML)") from None
    except UnicodeDecodeError:
        raise CourseError(f"{str(path)!r} is not UTF-8 text: a course file is TOML") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{path.name}: not TOML ({error}): see docs/courses.md for the format") from None
    except RecursionError:
        raise CourseError(f"{path.name}: nested too deep to read: see docs/courses.md for the format") from None
    where = _Where(path.name, path.parent)
    _known(data, TOP_KEYS, where.top())
    title = _string(data.get("title", path.stem), where.top(), "title")
    defaults_table = data.get("defaults", {})
    if not isinstance(defaults_table, dict):
        raise where.top().error("defaults", "must be a table: [defaults]")
    _known(defaults_table, SETTING_KEYS, where.defaults())
    defaults = _settings(defaults_table, LessonSettings(), where.defaults())
    tables = data.get("lesson")
    if not isinstance(tables, list) or not tables or not all(isinstance(table, dict) for table in tables):
        raise where.top().error("lesson", "give at least one lesson: a [[lesson]] table with name and sentences")
    lessons, names = [], set()
    for number, table in enumerate(tables, start=1):
        lesson = _lesson(table, defaults, where.lesson(table.get("name"), number))
        if lesson.name in names:
            raise where.lesson(lesson.name, number).error("name", "is used by an earlier lesson: give each its own")
        names.add(lesson.name)
        lessons.append(lesson)
    if output is not None:
        folder = Path(output)
    elif "output" in data:
        folder = path.parent / _string(data["output"], where.top(), "output")
    else:
        folder = Path("renders") / path.stem
    return Course(title=title, output=folder.resolve(), lessons=tuple(lessons), source=path.resolve())


@dataclass(frozen=True)
class _Place:
    file: str
    what: str
    folder: Path = Path()
    """The course file's folder: paths in it are relative to it."""

    def error(self, key: str, problem: str) -> CourseError:
        return CourseError(f"{self.file}: {self.what}: {key} {problem}")


@dataclass(frozen=True)
class _Where:
    file: str
    folder: Path = Path()

    def top(self) -> _Place:
        return _Place(self.file, "top level", self.folder)

    def defaults(self) -> _Place:
        return _Place(self.file, "[defaults]", self.folder)

    def lesson(self, name, number: int) -> _Place:
        what = f"lesson {quoted(name)}" if isinstance(name, str) and name else f"lesson {number}"
        return _Place(self.file, what, self.folder)


def _known(table: dict, keys: tuple[str, ...], place: _Place) -> None:
    for key in table:
        if key not in keys:
            raise place.error(repr(key), f"is not a key here: {did_you_mean(key, keys)}choose from {', '.join(keys)}")


def _lesson(table: dict, defaults: LessonSettings, place: _Place) -> Lesson:
    _known(table, LESSON_ONLY_KEYS + SETTING_KEYS, place)
    if "name" not in table:
        raise place.error("name", 'is missing: give the lesson\'s folder name, e.g. name = "attention"')
    name = _string(table["name"], place, "name")
    if not LESSON_NAME.fullmatch(name):
        raise place.error("name", f"{quoted(name)} is not a folder name: use lower-case letters, digits and dashes")
    if len(name) > LESSON_NAME_MOST:
        raise place.error(
            "name", f"is too long for a folder name ({len(name)} characters): use at most {LESSON_NAME_MOST}"
        )
    title = _string(table.get("title", name), place, "title")
    if "sentences" not in table:
        raise place.error("sentences", 'is missing: give the lesson\'s sentences, e.g. sentences = ["the cat sat"]')
    sentences = _strings(table["sentences"], place, "sentences")
    contrast = _strings(table.get("contrast", []), place, "contrast", allow_empty=True)
    for key, given in (("sentences", sentences), ("contrast", contrast)):
        for sentence in given:
            if not sentence.strip():
                raise place.error(key, "holds an empty sentence: write the words")
    if contrast and len(contrast) != len(sentences):
        raise place.error(
            "contrast",
            f"has {len(contrast)} sentences for {len(sentences)}: give one per sentence, in the same order",
        )
    for sentence, other in zip(sentences, contrast):
        if sentence.strip() == other.strip():
            raise place.error("contrast", f"{other!r} is its sentence itself: change a word")
    settings = _settings({key: table[key] for key in SETTING_KEYS if key in table}, defaults, place)
    pairs = tuple(zip(sentences, contrast))
    return Lesson(name, title, tuple(dict.fromkeys(sentences + contrast)), settings, pairs)


def _settings(table: dict, base: LessonSettings, place: _Place) -> LessonSettings:
    """``base`` with the keys of ``table`` (each one checked) in its place."""
    from blockviz.figures.registry import FIGURE_NAMES
    from blockviz.figures.registry import FORMATS as FIGURE_FORMATS
    from blockviz.scenes.catalog import lookup

    values = {}
    for key, value in table.items():
        if key == "model":
            values[key] = _model(value, place)
        elif key == "layer":
            values[key] = _integer(value, place, key, low=0)
        elif key == "scenes":
            names = ("all",) if value == "all" else _strings(value, place, key, allow_empty=True)
            try:
                lookup(names)
            except BlockvizError as error:
                raise place.error(key, f"names {error}") from None
            values[key] = names
        elif key == "qualities":
            values[key] = _choices(value, QUALITY_LETTERS, place, key)
        elif key == "formats":
            values[key] = _choices(value, SCENE_FORMATS, place, key)
        elif key == "resolution":
            values[key] = _resolution(value, place)
        elif key == "fps":
            from blockviz.render.plan import FPS_RANGE

            values[key] = _integer(value, place, key, *FPS_RANGE)
        elif key == "token":
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise place.error(key, f"{value!r} is not a word, word#k or a 0-based position")
            values[key] = value
        elif key == "head":
            values[key] = _integer(value, place, key, low=0)
        elif key == "theme":
            if value not in THEMES:
                raise place.error(key, f"{value!r} is not one of {', '.join(THEMES)}")
            values[key] = value
        elif key == "figures":
            values[key] = value if isinstance(value, bool) else _choices(value, FIGURE_NAMES, place, key)
        elif key == "figure_formats":
            values[key] = _choices(value, FIGURE_FORMATS, place, key)
        elif key == "voice":
            values[key] = str((place.folder / _string(value, place, key)).resolve())
        elif key in ("explorer", "slides", "narration"):
            if not isinstance(value, bool):
                raise place.error(key, f"{value!r} is not true or false")
            values[key] = value
    settings = LessonSettings(**{**base.__dict__, **values})
    if settings.layer is not None and settings.model in (SEEDED, "toy"):
        raise place.error("layer", f"goes with a trained model's layers, not model {settings.model!r}: drop it")
    if "narration" in values or "voice" in values or "formats" in values or "slides" in values:
        _check_narration(settings, place)
    return settings


def _check_narration(settings: LessonSettings, place: _Place) -> None:
    """A voice goes with narration, narration with an mp4 or the slides, and the voice must be
    there (the checks of ``blockviz render --narrate``; the voice is loaded only by the jobs)."""
    if settings.voice is not None and not settings.narration:
        raise place.error("voice", "goes with narration = true: add it, or drop the voice")
    if not settings.narration:
        return
    if "mp4" not in settings.formats and not settings.slides:
        raise place.error("narration", 'speaks in videos: add "mp4" to formats (or slides = true), or drop it')
    from blockviz.narration.voice import check_voice_file, packaged_voice

    try:
        check_voice_file(Path(settings.voice) if settings.voice is not None else packaged_voice())
    except BlockvizError as error:
        raise place.error("voice" if settings.voice is not None else "narration", str(error)) from None


def _model(value, place: _Place) -> str:
    from blockviz.models.resolve import resolve_model

    name = _string(value, place, "model")
    if name.strip().lower() == SEEDED:
        return SEEDED
    try:
        resolve_model(name)
    except BlockvizError as error:
        raise place.error("model", f"{name!r}: {error}") from None
    return name


def _resolution(value, place: _Place) -> tuple[int, int]:
    from blockviz.render.plan import check_resolution

    match = re.fullmatch(r"([0-9]+)x([0-9]+)", value.strip()) if isinstance(value, str) else None
    if not match:
        raise place.error("resolution", f'{value!r} is not "WIDTHxHEIGHT" in pixels, e.g. "320x180"')
    try:
        return check_resolution(int(match[1]), int(match[2]))
    except BlockvizError as error:
        raise place.error("resolution", str(error)) from None


def _string(value, place: _Place, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise place.error(key, f"{value!r} is not a non-empty string")
    return value


def _strings(value, place: _Place, key: str, allow_empty: bool = False) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise place.error(key, f'{value!r} is not a list of strings, e.g. ["the cat sat"]')
    if not value and not allow_empty:
        raise place.error(key, "is empty: give at least one")
    return tuple(value)


def _choices(value, allowed, place: _Place, key: str) -> tuple[str, ...]:
    chosen = _strings(value, place, key)
    for item in chosen:
        if item not in allowed:
            raise place.error(key, f"{item!r} is not one of {', '.join(allowed)}")
    return tuple(dict.fromkeys(chosen))


def _integer(value, place: _Place, key: str, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise place.error(key, f"{value!r} is not a whole number")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"from {low}" + (f" to {high}" if high is not None else "")
        raise place.error(key, f"{value} is out of range: give one {bounds}")
    return value
