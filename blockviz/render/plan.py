"""Planning a render: which files to write, and whether each is already up to date (no torch, no Manim).

Files are written straight into one folder: ``<folder>/<scene>.<format>``. The CLI's default
folder is ``renders/<sentence slug>/`` (:func:`default_folder`), so two sentences never share a
file. Each file has a key: a hash of everything it is rendered from — the record's inputs, the
scene, the options and the code (:func:`code_version`). A file whose stamp holds its key is not
rendered again.

A lecture (:func:`plan_lecture`) is the title card and every scene, in teaching order, rendered
(or reused) as mp4 and joined into ``<folder>/lecture.mp4`` with its chapters and captions
beside it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import sentence_slug
from blockviz.tensorfile import check_file, read_header

QUALITIES = {"l": "low_quality", "m": "medium_quality", "h": "high_quality", "k": "fourk_quality"}
"""``-q`` letters → Manim quality names (480p15, 720p30, 1080p60, 2160p60)."""
FORMATS = ("mp4", "gif", "png")
"""Output formats; ``png`` saves the scene's last frame."""
MIN_RESOLUTION = (160, 90)
"""Smallest ``(width, height)`` in pixels a render may have: below it the numbers are not legible."""
MAX_RESOLUTION = (7680, 4320)
"""Largest ``(width, height)`` in pixels (8K UHD)."""
FPS_RANGE = (1, 120)
HOLD_LAST_MOST = 60.0
"""The longest hold of a GIF's last picture, in seconds."""
"""Frames per second a render may have, both ends included."""
PACE_RANGE = (0.5, 3.0)
"""``--pace``: the factor on every run time and hold of a scene (2 = twice as slow), both ends included."""
DETAIL_RANGE = (1, 8)
"""``--detail``: how many query rows a scene works step by step (the focus row first), both ends included."""
RENDERS = Path("renders")
"""The default folder's parent: ``renders/<sentence slug>/``."""
CACHE_FOLDER = ".cache"
"""Inside each output folder: render stamps, temporary media, the record for parallel renders."""
FILE_INPUTS = ("params", "record_file")
"""The record inputs that name a file (``--params``, ``--record``): keyed by the file's content."""
LECTURE_NAME = "lecture"
"""The lecture's file stem: ``<folder>/lecture.mp4``, ``lecture.srt``, …"""


@dataclass(frozen=True)
class RenderOptions:
    """How to render: quality letter, file format, focus token, head, theme, size overrides, pacing.

    ``head`` is a number or ``"auto"`` (:func:`blockviz.head_choice.choose_head`, narrowed to the
    key ``to`` names).

    ``resolution`` ``(width, height)`` in pixels and ``fps`` replace the quality's own when given.
    ``pace`` scales every run time and hold (:data:`PACE_RANGE`); ``detail`` is how many query rows
    are worked step by step (:data:`DETAIL_RANGE`). Both reach the scene as keyword arguments
    (:meth:`scene_options`), as does ``burned_captions`` (``False``: the captions only in the
    lecture's ``.srt``). ``narrate``: each caption spoken by the offline voice (``voice``, a Piper
    ``.onnx`` file; ``None``: the packaged one), the audio in the mp4. A GIF is made from the
    scene's video (:mod:`blockviz.render.gif`): ``width`` pixels across (default the video's),
    ``fps`` frames per second (default :data:`~blockviz.render.gif.GIF_FPS`), from step
    ``from_step`` (1: the start), its last picture held ``hold_last`` more seconds.
    """

    quality: str = "l"
    format: str = "mp4"
    token: str | None = None
    head: int | str = 0
    to: str | None = None
    theme: str = "dark"
    resolution: tuple[int, int] | None = None
    fps: int | None = None
    pace: float = 1.0
    detail: int = 1
    burned_captions: bool = True
    narrate: bool = False
    voice: str | None = None
    width: int | None = None
    from_step: int = 1
    hold_last: float = 0.0

    def scene_options(self) -> dict:
        """The keyword arguments a scene is built with: ``token``, ``head``, ``to``, ``theme``, ``pace``, ``detail``, ``burned_captions``."""
        return {
            "token": self.token,
            "head": self.head,
            "to": self.to,
            "theme": self.theme,
            "pace": self.pace,
            "detail": self.detail,
            "burned_captions": self.burned_captions,
        }

    def check(self) -> RenderOptions:
        """Raise :class:`BlockvizError` for an unknown quality or format, a resolution refused by
        :func:`check_resolution`, frames per second outside :data:`FPS_RANGE`, a pace outside
        :data:`PACE_RANGE` or a detail outside :data:`DETAIL_RANGE`."""
        if self.quality not in QUALITIES:
            raise BlockvizError(f"unknown quality {self.quality!r}: choose one of {', '.join(QUALITIES)}")
        if self.format not in FORMATS:
            raise BlockvizError(f"unknown format {self.format!r}: choose one of {', '.join(FORMATS)}")
        if self.resolution is not None:
            check_resolution(*self.resolution)
        if self.fps is not None and not (_is_int(self.fps) and FPS_RANGE[0] <= self.fps <= FPS_RANGE[1]):
            raise BlockvizError(
                f"{self.fps!r} frames per second is outside {FPS_RANGE[0]} … {FPS_RANGE[1]}: choose e.g. 30"
            )
        if (
            isinstance(self.pace, bool)
            or not isinstance(self.pace, (int, float))
            or not PACE_RANGE[0] <= self.pace <= PACE_RANGE[1]
        ):
            raise BlockvizError(
                f"pace {self.pace!r} is outside {PACE_RANGE[0]} … {PACE_RANGE[1]}: choose e.g. 1.5 (slower) or 0.75 (faster)"
            )
        if (self.width is not None or self.from_step != 1 or self.hold_last) and self.format != "gif":
            raise BlockvizError(
                f"--width, --from-step and --hold-last shape a GIF: add --format gif (not {self.format})"
            )
        if not (_is_int(self.from_step) and self.from_step >= 1) or not 0 <= self.hold_last <= HOLD_LAST_MOST:
            raise BlockvizError(
                f"--from-step {self.from_step!r} or --hold-last {self.hold_last!r} is out of range: steps count from 1, holds last 0 … {HOLD_LAST_MOST} s"
            )
        if not (_is_int(self.detail) and DETAIL_RANGE[0] <= self.detail <= DETAIL_RANGE[1]):
            raise BlockvizError(
                f"detail {self.detail!r} is outside {DETAIL_RANGE[0]} … {DETAIL_RANGE[1]}: choose how many rows to work step by step, e.g. 3"
            )
        return self


def check_resolution(width: int, height: int) -> tuple[int, int]:
    """``(width, height)`` if a render may have that size in pixels: at least
    :data:`MIN_RESOLUTION`, at most :data:`MAX_RESOLUTION`, both even (as H.264 video needs).

    Raises
    ------
    BlockvizError
        Naming the rule broken and a size that keeps it.
    """
    size = f"{width}x{height}"
    if not (_is_int(width) and _is_int(height)):
        raise BlockvizError(f"resolution {size} is not whole pixels: choose e.g. 320x180")
    if width < MIN_RESOLUTION[0] or height < MIN_RESOLUTION[1]:
        raise BlockvizError(
            f"resolution {size} is below the legible minimum of {MIN_RESOLUTION[0]}x{MIN_RESOLUTION[1]}: choose e.g. 320x180"
        )
    if width > MAX_RESOLUTION[0] or height > MAX_RESOLUTION[1]:
        raise BlockvizError(
            f"resolution {size} is above the maximum of {MAX_RESOLUTION[0]}x{MAX_RESOLUTION[1]}: choose e.g. 3840x2160"
        )
    if width % 2 or height % 2:
        raise BlockvizError(
            f"resolution {size} has an odd side, and video needs even sizes: choose e.g. {width // 2 * 2}x{height // 2 * 2}"
        )
    return width, height


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class RenderJob:
    """One scene to render: its catalogue name, where its file goes, and the key of its inputs."""

    scene: str
    output: Path
    stamp: Path
    key: str

    @property
    def captions(self) -> Path:
        """Beside the stamp: the captions the scene showed, ``{"duration", "captions": [[seconds, text], …]}``."""
        return self.stamp.with_name(self.stamp.name.removesuffix(".key") + ".captions.json")

    def is_fresh(self) -> bool:
        """True if the output exists and was rendered from the same inputs (nothing to do)."""
        try:
            return self.output.exists() and self.stamp.read_text() == self.key
        except OSError:
            return False


def default_folder(sentence: str, record_inputs: dict | None = None) -> Path:
    """Where a sentence's files go unless told otherwise: ``renders/<sentence slug>/`` for the
    default block (see :func:`blockviz.files.sentence_slug`), ``renders/<sentence slug>--<block>/``
    for another one (:func:`block_label`), so the toy model's and the seeded block's files of one
    sentence never replace each other.

    >>> default_folder("the cat sat").as_posix(), default_folder("the cat sat", {"model": None}).as_posix()
    ('renders/the-cat-sat', 'renders/the-cat-sat--seeded')
    """
    label = block_label(record_inputs or {})
    return RENDERS / (sentence_slug(sentence) + (f"--{label}" if label else ""))


def block_label(record_inputs: dict) -> str | None:
    """A short name of the block the record options choose, for folder names: ``None`` for the
    default toy model (or no options), ``seeded``, or a model's name and layer (``minilm-layer3``).
    A record read from a file keeps its sentence's folder (``None``)."""
    if not record_inputs or record_inputs.get("record_file") is not None:
        return None
    model = record_inputs.get("model", "toy")
    if model is None:
        return "seeded"
    if str(model).strip().lower() == "toy":
        return None
    layer = record_inputs.get("layer")
    name = sentence_slug(Path(str(model)).name)
    return name if layer is None else f"{name}-layer{layer}"


def plan(scenes: list[str], record_inputs: dict, options: RenderOptions, folder: str | os.PathLike) -> list[RenderJob]:
    """The jobs of rendering ``scenes`` (catalogue names) into ``folder``: ``<folder>/<scene>.<format>``.

    ``record_inputs`` are whatever determines the record (sentence, config fields, a
    parameters or record file path); files among them are keyed by their content.

    Raises
    ------
    BlockvizError
        For a scene name not in the catalogue.
    """
    from blockviz.scenes.catalog import lookup

    folder = Path(folder)
    base = _digest({"record": _content_of(record_inputs), "options": asdict(options), "code": code_version()})
    return [
        RenderJob(
            scene=entry.name,
            output=folder / f"{entry.name}.{options.format}",
            stamp=folder / CACHE_FOLDER / f"{entry.name}.{options.format}.key",
            key=_digest({"base": base, "scene": entry.name, "class": f"{entry.module}.{entry.class_name}"}),
        )
        for entry in lookup(scenes)
    ]


def record_file_sentence(path: str | os.PathLike) -> str:
    """The sentence stored in a saved record, read from its header without torch.

    Raises
    ------
    BlockvizError
        If the file is missing, too large, unreadable, not a ``.safetensors``/``.json`` file
        (see :func:`blockviz.tensorfile.read_header`), or its header holds no sentence or tokens.
    """
    header = read_header(path)
    sentence, tokens = header.get("sentence"), header.get("tokens")
    if isinstance(sentence, str) and sentence.strip():
        return sentence
    if isinstance(tokens, list) and tokens and all(isinstance(token, str) for token in tokens):
        return " ".join(tokens)
    raise BlockvizError(
        f"{str(path)!r} is not a blockviz record (its header holds no sentence): write one with `blockviz record … --save`"
    )


@functools.cache
def code_version() -> str:
    """A hash of every file of the installed ``blockviz`` package (its scenes, ``blockviz/scenes/``,
    included) and of the Manim version: any change to the code re-renders.

    The files are found from the package itself, so a new module is covered without being
    listed. Computed once per process.
    """
    digest = hashlib.blake2b(digest_size=16)
    for name, path in _code_files():
        digest.update(name.encode())
        digest.update(hashlib.blake2b(path.read_bytes(), digest_size=16).digest())
    digest.update(metadata.version("manim").encode())
    return digest.hexdigest()


def _code_files() -> list[tuple[str, Path]]:
    """``(name, path)`` of every file of the ``blockviz`` package, subpackages included (no
    ``__pycache__``, no hidden files), sorted by name: ``blockviz/scenes/softmax.py`` is named the
    same in a wheel and in a checkout."""
    import blockviz

    root = Path(blockviz.__file__).resolve().parent
    named = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if (
            path.is_file()
            and "__pycache__" not in relative.parts
            and not any(part.startswith(".") for part in relative.parts)
        ):
            named.append((f"blockviz/{relative.as_posix()}", path))
    return sorted(named)


def _content_of(record_inputs: dict) -> dict:
    """The record inputs as key material: a file by the hash of its bytes (read in chunks,
    after :func:`blockviz.tensorfile.check_file`), anything else as itself or its text."""
    keyed = {}
    for name, value in record_inputs.items():
        if isinstance(value, (str, os.PathLike)) and name in FILE_INPUTS:
            check_file(value)
            keyed[name] = _file_digest(Path(value))
        else:
            keyed[name] = value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
    return keyed


def _file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    try:
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(2**20), b""):
                digest.update(chunk)
    except OSError as error:
        raise BlockvizError(
            f"cannot read {str(path)!r} ({error.strerror}): check the file and its permissions"
        ) from None
    return digest.hexdigest()


def _digest(data: dict) -> str:
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class LecturePlan:
    """One lecture: ``jobs`` renders the title card and every scene as mp4 in
    teaching order; ``output`` is the lecture video, ``stamp`` holds the ``key`` of everything
    it was joined from (the parts' keys and the PyAV version)."""

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


def plan_lecture(
    record_inputs: dict, options: RenderOptions, folder: str | os.PathLike, scenes: list[str] | None = None
) -> LecturePlan:
    """The lecture into ``folder``: its parts' render jobs (``<folder>/<scene>.mp4``, one per
    catalogued scene, or per name of ``scenes``: those that can show the record) and its files
    (``<folder>/lecture.mp4`` and its chapters and captions).

    The chapter titles and captions are code (each scene's module and the catalogue), so the
    parts' keys cover them.

    Raises
    ------
    BlockvizError
        If ``options.format`` is not ``mp4`` (a lecture joins videos).
    """
    from blockviz.scenes.catalog import entries

    if options.format != "mp4":
        raise BlockvizError(f"a lecture joins mp4 videos, not {options.format}: drop --format {options.format}")
    jobs = plan(scenes if scenes is not None else [entry.name for entry in entries()], record_inputs, options, folder)
    folder = Path(folder)
    key = _digest({"parts": [job.key for job in jobs], "av": metadata.version("av")})
    return LecturePlan(jobs, folder / f"{LECTURE_NAME}.mp4", folder / CACHE_FOLDER / f"{LECTURE_NAME}.mp4.key", key)
