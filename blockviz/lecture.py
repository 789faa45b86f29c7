"""One lecture video from scene videos already rendered, with chapters and captions beside it.

The scenes are rendered once, one file each; the lecture reuses those files. When every part's
video stream has the same codec, size, pixel format, frame rate, time base and codec set-up
(``extradata``) — as scenes rendered by one Manim run at one quality do — the encoded packets are
copied unchanged and only their timestamps are shifted (a remux: fast, no quality loss). Otherwise
every frame is decoded and encoded again (H.264) at the first part's size and frame rate.

Beside ``lecture.mp4`` it writes:

* ``lecture.chapters.txt`` — ``MM:SS Title`` lines, as YouTube reads chapters from a description
  (a scene under 10 s shares a line with its neighbour, as YouTube requires);
* ``lecture.chapters.json`` — ``{"video", "duration", "chapters": [{name, title, caption, start,
  end}]}``, times in seconds;
* ``lecture.srt`` — SubRip captions, one cue per scene spanning the scene: its one-sentence caption.

The chapters are also written into the MP4 itself, so players that show chapters (VLC, mpv) list
them. All times come from the videos' own timestamps (PyAV), never from planned run times.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import textwrap
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterator, Sequence

import av
import numpy as np
import srt

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path

IMAGE_SUFFIXES = (".gif", ".png", ".apng", ".jpg", ".jpeg", ".webp")
IMAGE_FORMATS = ("gif", "png_pipe", "apng", "image2", "jpeg_pipe", "webp_pipe")
IMAGE_CODECS = ("gif", "png", "apng", "mjpeg", "webp")
COPYABLE_CODECS = ("h264", "hevc", "av1", "vp9")
"""Codecs whose packets an MP4 can hold as they are; parts in other codecs are encoded again."""
REENCODE_CODEC = "libx264"
REENCODE_OPTIONS = {"crf": "23"}  # as Manim encodes its scenes
YOUTUBE_MIN_CHAPTER = 10.0
"""YouTube ignores a chapter list in which any chapter is shorter than this (seconds)."""
CAPTION_LINE_LENGTH = 42
"""Longest caption line in characters (the usual subtitle guideline); longer captions wrap."""


@dataclass(frozen=True)
class LecturePart:
    """One rendered scene in the lecture, in teaching order.

    ``name`` is the scene's name (``"DotProducts"``), ``title`` its chapter title (``"Dot
    products"``), ``caption`` one sentence saying what the scene shows, ``video`` its rendered
    MP4 (or MOV/WebM) file.
    """

    name: str
    title: str
    caption: str
    video: Path


@dataclass(frozen=True)
class VideoInfo:
    """What the lecture needs to know about one video file's (first) video stream.

    Times are in seconds: ``start`` is the first frame's presentation time, ``duration`` runs from
    it to the end of the last frame (its timestamp plus its duration), ``first_dts`` and
    ``last_dts`` are the first and last decoding times. ``fps`` is in frames per second;
    ``frames`` counts the frames (one packet each).
    """

    path: Path
    codec: str
    width: int
    height: int
    pixel_format: str
    fps: Fraction
    time_base: Fraction
    extradata: bytes
    frames: int
    start: Fraction
    duration: Fraction
    first_dts: Fraction
    last_dts: Fraction

    def can_be_joined_to(self, other: VideoInfo) -> bool:
        """Whether this stream's packets can follow ``other``'s in one stream without re-encoding."""
        return (self.codec, self.width, self.height, self.pixel_format, self.fps, self.time_base, self.extradata) == (
            other.codec, other.width, other.height, other.pixel_format, other.fps, other.time_base, other.extradata
        )


@dataclass(frozen=True)
class Chapter:
    """One scene's span in the lecture video: ``start`` and ``end`` in seconds from its beginning."""

    name: str
    title: str
    caption: str
    start: float
    end: float


@dataclass(frozen=True)
class Lecture:
    """The files :func:`write_lecture` wrote and the chapters in them.

    ``duration`` is in seconds; ``reencoded`` says whether frames had to be decoded and encoded
    again (``False``: the parts' packets were copied unchanged).
    """

    video: Path
    chapters_text: Path
    chapters_json: Path
    captions: Path
    chapters: tuple[Chapter, ...]
    duration: float
    reencoded: bool


def sidecar_paths(video: str | Path) -> tuple[Path, Path, Path]:
    """``(chapters .txt, chapters .json, captions .srt)`` beside ``video``:
    ``lecture.mp4`` → ``lecture.chapters.txt``, ``lecture.chapters.json``, ``lecture.srt``."""
    video = Path(video)
    return (
        video.with_name(f"{video.stem}.chapters.txt"),
        video.with_name(f"{video.stem}.chapters.json"),
        video.with_name(f"{video.stem}.srt"),
    )


def write_lecture(
    parts: Sequence[LecturePart],
    output: str | Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    min_chapter_seconds: float = YOUTUBE_MIN_CHAPTER,
) -> Lecture:
    """Join the rendered scene videos ``parts`` (in teaching order) into one lecture video.

    Writes ``output`` (an ``.mp4``) and beside it the chapter list (``.chapters.txt``,
    ``.chapters.json``) and the captions (``.srt``): see :func:`sidecar_paths`. Only the parts'
    video streams are kept (the scenes are silent). Each file is written under a temporary name
    and renamed when complete, so an error or interruption leaves no half-written file.

    Parameters
    ----------
    parts
        The scenes' videos in the order they are shown. Every chapter starts where the previous
        one ends and lasts as long as its video (to within half a frame when re-encoded).
    output
        Path of the lecture video; its folder is created if missing.
    progress
        Called as ``progress(parts_done, parts_total)`` after each part is written.
    min_chapter_seconds
        In ``.chapters.txt`` only, shorter chapters are merged with a neighbour (YouTube's
        rule, see :func:`chapters_text`); the JSON, the captions and the MP4 keep every scene.

    Returns
    -------
    Lecture
        The paths written, the chapters (seconds) and whether frames were re-encoded.

    Raises
    ------
    BlockvizError
        If there are no parts, a part's title or caption is empty, a video is missing, unreadable,
        empty, or a GIF/PNG image rather than a video, ``output`` is not an ``.mp4`` or is one of
        the parts, or the folder cannot be written. Nothing is written then.
    """
    output = Path(output)
    _check_request(parts, output)
    infos = [probe_video(part.video, part.name) for part in parts]
    remux = _joinable(infos)
    starts = _cumulative_starts(infos) if remux else _frame_grid_starts(infos)
    chapters = tuple(
        Chapter(part.name, _one_line(part.title), _one_line(part.caption), float(start), float(end))
        for part, start, end in zip(parts, starts, starts[1:])
    )
    report = _report(progress, len(parts))
    text_path, json_path, srt_path = sidecar_paths(output)
    with contextlib.ExitStack() as files:
        video_file = files.enter_context(atomic_path(output))
        try:
            with _open_output(video_file, chapters) as container:
                if remux:
                    _remux(infos, starts, container, report)
                else:
                    _reencode(infos, starts, container, report)
        except av.error.FFmpegError as error:
            raise BlockvizError(f"cannot write the lecture {str(output)!r} ({_reason(error)}): re-render the scenes and try again") from None
        files.enter_context(_written(text_path, chapters_text(chapters, min_chapter_seconds)))
        files.enter_context(_written(json_path, chapters_json(chapters, output.name)))
        files.enter_context(_written(srt_path, captions_srt(chapters)))
    return Lecture(output, text_path, json_path, srt_path, chapters, float(starts[-1]), not remux)


def probe_video(path: str | Path, name: str | None = None) -> VideoInfo:
    """Read a video file's first video stream's set-up and timing, without decoding frames.

    ``name`` (the scene's name) is used in error messages.

    Raises
    ------
    BlockvizError
        If the file is missing, not a readable video, an image (GIF/PNG…), or holds no frame.
    """
    path = Path(path)
    what = f"lecture part {name!r} ({str(path)!r})" if name else repr(str(path))
    fix = "render the scene as mp4 first"
    if not path.is_file():
        raise BlockvizError(f"{what} does not exist: {fix}")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        raise BlockvizError(f"{what} is an image ({path.suffix}), not a video: {fix} (--format mp4)")
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise BlockvizError(f"{what} has no video stream: {fix}")
            stream = container.streams.video[0]
            context = stream.codec_context
            if container.format.name in IMAGE_FORMATS or context.name in IMAGE_CODECS:
                raise BlockvizError(f"{what} is an image ({context.name}), not a video: {fix} (--format mp4)")
            span = _packet_span(container, stream)
            fps = stream.guessed_rate or stream.average_rate  # the declared rate: a last frame cut short skews the average
            tick = Fraction(stream.time_base)
            info = VideoInfo(
                path=path,
                codec=context.name,
                width=context.width,
                height=context.height,
                pixel_format=context.pix_fmt or "",
                fps=Fraction(fps) if fps else Fraction(0),
                time_base=tick,
                extradata=bytes(context.extradata or b""),
                frames=span.frames,
                start=span.first_pts * tick,
                duration=(span.end - span.first_pts) * tick,
                first_dts=span.first_dts * tick,
                last_dts=span.last_dts * tick,
            )
    except av.error.FFmpegError as error:
        raise BlockvizError(f"{what} is not a readable video ({_reason(error)}): {fix}") from None
    if info.frames == 0 or info.duration <= 0 or info.fps <= 0:
        raise BlockvizError(f"{what} holds no frames: {fix}")
    return info


def chapters_text(chapters: Sequence[Chapter], min_seconds: float = YOUTUBE_MIN_CHAPTER) -> str:
    """One ``MM:SS Title`` line per chapter (``H:MM:SS`` past an hour), as YouTube reads them.

    Start times are rounded down to the second, so no chapter's link skips its first frames.
    YouTube shows chapters only if the first starts at 00:00, there are at least three, and
    each lasts at least 10 s; so a chapter shorter than ``min_seconds`` (between the rounded
    times) is merged into the next one (the last into the one before), their titles joined by
    " / ". ``min_seconds=0`` keeps every chapter.
    """
    lines: list[tuple[int, list[str]]] = []  # (start in whole seconds, titles)
    end = math.floor(chapters[-1].end + 1e-9) if chapters else 0
    for chapter in chapters:
        start = math.floor(chapter.start + 1e-9)
        if lines and start - lines[-1][0] < min_seconds:
            lines[-1][1].append(chapter.title)
        else:
            lines.append((start, [chapter.title]))
    if len(lines) > 1 and end - lines[-1][0] < min_seconds:
        lines[-2][1].extend(lines.pop()[1])
    return "".join(f"{timestamp(start)} {' / '.join(titles)}\n" for start, titles in lines)


def chapters_json(chapters: Sequence[Chapter], video_name: str) -> str:
    """The chapters as JSON: ``{"video", "duration", "chapters": [{"name", "title", "caption",
    "start", "end"}]}`` with times in seconds (rounded to the microsecond)."""
    document = {
        "video": video_name,
        "duration": round(chapters[-1].end, 6) if chapters else 0.0,
        "chapters": [
            {"name": c.name, "title": c.title, "caption": c.caption, "start": round(c.start, 6), "end": round(c.end, 6)}
            for c in chapters
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def captions_srt(chapters: Sequence[Chapter]) -> str:
    """SubRip captions: one cue per chapter from its start to its end, its caption wrapped to
    lines of at most :data:`CAPTION_LINE_LENGTH` characters. Times are in milliseconds."""
    cues = [
        srt.Subtitle(
            index=number,
            start=datetime.timedelta(seconds=chapter.start),
            end=datetime.timedelta(seconds=chapter.end),
            content="\n".join(textwrap.wrap(chapter.caption, CAPTION_LINE_LENGTH, break_on_hyphens=False)),
        )
        for number, chapter in enumerate(chapters, start=1)
    ]
    return srt.compose(cues, reindex=False)


def timestamp(seconds: float) -> str:
    """``seconds`` rounded down as ``MM:SS``, or ``H:MM:SS`` from one hour: 75.9 → ``"01:15"``."""
    whole = math.floor(seconds + 1e-9)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


# -- checking the request ----------------------------------------------------------------------


def _check_request(parts: Sequence[LecturePart], output: Path) -> None:
    if not parts:
        raise BlockvizError("a lecture needs at least one scene video: render the scenes first")
    if output.suffix.lower() != ".mp4":
        raise BlockvizError(f"the lecture file {str(output)!r} must end in .mp4: choose e.g. lecture.mp4")
    for part in parts:
        for field in ("name", "title", "caption"):
            if not _one_line(str(getattr(part, field))):
                raise BlockvizError(f"lecture part {part.name!r} has an empty {field}: give every scene a {field}")
        if Path(part.video).resolve() == output.resolve():
            raise BlockvizError(f"the lecture file {str(output)!r} is also a part: choose another name for the lecture")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _reason(error: Exception) -> str:
    return _one_line(getattr(error, "strerror", None) or str(error)) or type(error).__name__


@dataclass
class _PacketSpan:
    """Timestamps of a stream's packets in its time base's ticks."""

    frames: int = 0
    first_pts: int = 0
    end: int = 0  # the last frame's pts plus its duration
    first_dts: int = 0
    last_dts: int = 0


def _packet_span(container, stream) -> _PacketSpan:
    span = _PacketSpan()
    frame_ticks = _ticks_per_frame(stream)
    for packet in container.demux(stream):
        if packet.pts is None:  # the empty packet that ends demuxing
            continue
        dts = packet.pts if packet.dts is None else packet.dts
        end = packet.pts + (packet.duration or frame_ticks)
        if span.frames == 0:
            span.first_pts, span.end, span.first_dts = packet.pts, end, dts
        span.frames += 1
        span.first_pts, span.end, span.last_dts = min(span.first_pts, packet.pts), max(span.end, end), dts
    return span


def _ticks_per_frame(stream) -> int:
    rate = stream.guessed_rate or stream.average_rate
    return max(1, round(1 / (Fraction(rate) * Fraction(stream.time_base)))) if rate else 1


def _report(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    return (lambda done: progress(done, total)) if progress else (lambda done: None)


# -- joining by copying packets ------------------------------------------------------------------


def _cumulative_starts(infos: list[VideoInfo]) -> list[Fraction]:
    """Each part's start (seconds) when it starts where the previous one ends, then the total."""
    starts = [Fraction(0)]
    for info in infos:
        starts.append(starts[-1] + info.duration)
    return starts


def _joinable(infos: list[VideoInfo]) -> bool:
    """Whether the parts' packets can be copied into one stream: the same stream set-up, and
    shifted timestamps that land on the time base and keep decoding order increasing."""
    if infos[0].codec not in COPYABLE_CODECS or not all(info.can_be_joined_to(infos[0]) for info in infos):
        return False
    starts = _cumulative_starts(infos)
    previous_last = None
    for info, start in zip(infos, starts):
        if ((start - info.start) / info.time_base).denominator != 1:
            return False
        first, last = start + info.first_dts - info.start, start + info.last_dts - info.start
        if previous_last is not None and first <= previous_last:
            return False
        previous_last = last
    return True


def _open_output(path: Path, chapters: Sequence[Chapter]):
    container = av.open(str(path), mode="w", format="mp4", options={"movflags": "+faststart"})
    container.set_chapters(_chapter_entries(chapters))
    return container


def _remux(infos: list[VideoInfo], starts: list[Fraction], output, report: Callable[[int], None]) -> None:
    """Copy every part's packets into ``output``, shifting their timestamps so each part starts
    at its start time (seconds)."""
    with av.open(str(infos[0].path)) as template:
        stream = output.add_stream_from_template(template.streams.video[0])
    for done, (info, start) in enumerate(zip(infos, starts), start=1):
        shift = int((start - info.start) / info.time_base)
        with av.open(str(info.path)) as source:
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is None:  # the empty packet that ends demuxing
                    continue
                packet.pts += shift
                packet.dts += shift
                packet.stream = stream
                output.mux(packet)
        report(done)


# -- joining by decoding and encoding again -------------------------------------------------------


def _frame_grid_starts(infos: list[VideoInfo]) -> list[Fraction]:
    """Each part's start (seconds) on the first part's frame grid, then the total.

    Part ``i`` fills output frames ``round(s_i × fps)`` up to ``round(s_(i+1) × fps)``, where
    ``s_i`` are the parts' summed durations, so the total stays within half a frame of the sum.
    """
    fps = infos[0].fps
    frames = [0]
    for start in _cumulative_starts(infos)[1:]:
        frames.append(max(frames[-1] + 1, round(start * fps)))
    return [Fraction(frame) / fps for frame in frames]


def _reencode(infos: list[VideoInfo], starts: list[Fraction], output, report: Callable[[int], None]) -> None:
    """Decode every part and encode its frames again at the first part's size and frame rate,
    each output frame showing the part's frame on screen at that moment."""
    fps = infos[0].fps
    width, height = infos[0].width // 2 * 2, infos[0].height // 2 * 2  # yuv420p needs even sizes
    stream = output.add_stream(REENCODE_CODEC, rate=fps, options=dict(REENCODE_OPTIONS))
    stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
    for done, (info, start, end) in enumerate(zip(infos, starts, starts[1:]), start=1):
        first, stop = int(start * fps), int(end * fps)
        times = [Fraction(k - first) / fps for k in range(first, stop)]
        for index, frame in enumerate(_frames_at(info, times)):
            picture = _fit(frame, width, height)
            picture.pts = first + index
            picture.time_base = 1 / fps
            output.mux(stream.encode(picture))
        report(done)
    output.mux(stream.encode(None))


def _frames_at(info: VideoInfo, times: list[Fraction]) -> Iterator[av.VideoFrame]:
    """For each time (seconds from the part's start), the frame on screen then."""
    try:
        with av.open(str(info.path)) as source:
            stream = source.streams.video[0]
            decoded = source.decode(stream)
            shown = next(decoded)
            upcoming = next(decoded, None)
            for time in times:
                while upcoming is not None and _seconds(upcoming, stream) - info.start <= time:
                    shown, upcoming = upcoming, next(decoded, None)
                yield shown
    except av.error.FFmpegError as error:
        raise BlockvizError(f"cannot decode {str(info.path)!r} ({_reason(error)}): render the scene again") from None


def _seconds(frame: av.VideoFrame, stream) -> Fraction:
    return Fraction(frame.pts) * Fraction(stream.time_base)


def _fit(frame: av.VideoFrame, width: int, height: int) -> av.VideoFrame:
    """``frame`` scaled to fit ``width × height``, keeping its shape; the rest is filled with the
    colour of its top-left pixel (a scene's background)."""
    if (frame.width, frame.height) == (width, height):
        return frame.reformat(format="yuv420p")
    scale = min(width / frame.width, height / frame.height)
    inner_width = max(2, round(frame.width * scale / 2) * 2)
    inner_height = max(2, round(frame.height * scale / 2) * 2)
    pixels = frame.reformat(width=inner_width, height=inner_height, format="rgb24").to_ndarray()
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[:] = pixels[0, 0]
    top, left = (height - inner_height) // 2, (width - inner_width) // 2
    canvas[top : top + inner_height, left : left + inner_width] = pixels
    return av.VideoFrame.from_ndarray(canvas, format="rgb24").reformat(format="yuv420p")


# -- writing the chapters --------------------------------------------------------------------------


def _chapter_entries(chapters: Sequence[Chapter]) -> list[dict]:
    millisecond = Fraction(1, 1000)
    return [
        {"id": number, "start": round(c.start * 1000), "end": round(c.end * 1000), "time_base": millisecond, "metadata": {"title": c.title}}
        for number, c in enumerate(chapters, start=1)
    ]


@contextlib.contextmanager
def _written(path: Path, text: str) -> Iterator[Path]:
    with atomic_path(path) as partial:
        partial.write_text(text, encoding="utf-8")
        yield partial
