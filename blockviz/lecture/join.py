"""Joining rendered scene videos into one lecture video, with its chapters and captions beside it.

Scenes rendered by one ``blockviz render`` run share their video set-up (codec, size, pixel
format, frame rate, time base, ``extradata``), so their encoded packets are copied unchanged and
only their timestamps are shifted (a remux: fast, no quality loss). Parts that differ are
refused with a message naming the difference; nothing is encoded again. The videos may have a
variable frame rate (a held picture is one frame lasting the hold, see
:mod:`blockviz.render.encoding`): times come from timestamps, never from counting frames.
:func:`join_videos` is the same copy for any videos, e.g. the segments of one scene.

All times come from the videos' own timestamps (PyAV), never from planned run times. Every
file is written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from blockviz.errors import BlockvizError
from blockviz.files import output_error
from blockviz.lecture.chapters import (
    YOUTUBE_MIN_CHAPTER,
    Chapter,
    captions_srt,
    chapters_json,
    chapters_of,
    chapters_text,
    one_line,
    sidecar_paths,
)
from blockviz.ownership import output_file

IMAGE_SUFFIXES = (".gif", ".png", ".apng", ".jpg", ".jpeg", ".webp")
IMAGE_FORMATS = ("gif", "png_pipe", "apng", "image2", "jpeg_pipe", "webp_pipe")
IMAGE_CODECS = ("gif", "png", "apng", "mjpeg", "webp")
COPYABLE_CODECS = ("h264", "hevc", "av1", "vp9")
"""Codecs whose packets an MP4 can hold as they are."""
OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENAMETOOLONG)
"""Errors of PyAV's that are the output's fault (a full disk, a read-only folder): said as for any file."""
SAME_OPTIONS = "render every part with the same options (one `blockviz render --lecture` run)"


@dataclass(frozen=True)
class LecturePart:
    """One rendered scene in the lecture, in teaching order.

    ``name`` is the scene's name (``"dot-products"``), ``title`` its chapter title (``"Dot
    products"``), ``caption`` one sentence saying what the scene shows, ``video`` its rendered
    MP4 (or MOV/WebM) file, ``cues`` the captions it shows on screen.
    """

    name: str
    title: str
    caption: str
    video: Path
    cues: tuple[tuple[float, str], ...] = ()
    """The captions the scene shows on screen, ``(seconds from the scene's start, text)`` (the
    lecture's ``.srt`` gets one cue each); empty: one cue of ``caption``."""
    numbers: str = ""
    """The record's numbers a presenter reads out beside the captions (the slides' notes), or ""."""


@dataclass(frozen=True)
class VideoInfo:
    """What the lecture needs to know about one video file's (first) video stream.

    Times are in seconds: ``start`` is the first frame's presentation time, ``duration`` runs from
    it to the end of the last frame (its timestamp plus its duration), ``first_dts`` and
    ``last_dts`` are the first and last decoding times. ``fps`` is the declared frame rate in
    frames per second (the codec's, e.g. H.264's timing information); ``frames`` counts the
    encoded frames (one packet each), fewer than ``duration × fps`` when a frame is held.
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

    def mismatch(self, other: VideoInfo) -> str | None:
        """What keeps this stream's packets from following ``other``'s in one stream, e.g.
        ``"size 320x240, not 160x90"``; ``None`` if nothing does."""
        for what, mine, theirs in (
            ("codec", self.codec, other.codec),
            ("size", f"{self.width}x{self.height}", f"{other.width}x{other.height}"),
            ("pixel format", self.pixel_format, other.pixel_format),
            ("frame rate", f"{self.fps} fps", f"{other.fps} fps"),
            ("time base", f"{self.time_base} s", f"{other.time_base} s"),
        ):
            if mine != theirs:
                return f"{what} {mine}, not {theirs}"
        return None if self.extradata == other.extradata else "codec set-up (extradata)"


@dataclass(frozen=True)
class Lecture:
    """The files :func:`write_lecture` wrote and the chapters in them; ``duration`` in seconds."""

    video: Path
    chapters_text: Path
    chapters_json: Path
    captions: Path
    chapters: tuple[Chapter, ...]
    duration: float


def write_lecture(
    parts: Sequence[LecturePart],
    output: str | Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    min_chapter_seconds: float = YOUTUBE_MIN_CHAPTER,
    burned_captions: bool = True,
) -> Lecture:
    """Join the rendered scene videos ``parts`` (in teaching order) into one lecture video.

    Writes ``output`` (an ``.mp4``, chapters embedded) and beside it the chapter list
    (``.chapters.txt``, ``.chapters.json``) and the captions (``.srt``): see
    :func:`~blockviz.lecture.chapters.sidecar_paths`. The parts' video packets are copied; the
    sound of narrated parts is laid at each part's start into one AAC track (:func:`_join_sound`). Each file is written under a temporary name and renamed when
    complete, so an error or interruption leaves no half-written file.

    Parameters
    ----------
    parts
        The scenes' videos in the order they are shown. Every chapter starts where the previous
        one ends and lasts exactly as long as its video.
    output
        Path of the lecture video; its folder is created if missing.
    progress
        Called as ``progress(parts_done, parts_total)`` after each part is written.
    min_chapter_seconds
        In ``.chapters.txt`` only, shorter chapters are merged with a neighbour (YouTube's
        rule, see :func:`~blockviz.lecture.chapters.chapters_text`); the JSON, the captions and
        the MP4 keep every scene.
    burned_captions
        Whether the parts draw their captions (the ``.srt`` cues then sit at the top, see
        :func:`~blockviz.lecture.chapters.captions_srt`).

    Returns
    -------
    Lecture
        The paths written and the chapters (seconds).

    Raises
    ------
    BlockvizError
        If there are no parts, a part's title or caption is empty, a video is missing, unreadable,
        empty, or a GIF/PNG image rather than a video, the parts' video set-ups differ (so their
        packets cannot be copied into one stream), ``output`` is not an ``.mp4`` or is one of the
        parts, or the folder cannot be written. Nothing is written then.
    """
    output = Path(output)
    _check_request(parts, output)
    infos = [probe_video(part.video, part.name) for part in parts]
    starts = _check_joinable([part.name for part in parts], infos)
    chapters = chapters_of(
        [p.name for p in parts],
        [p.title for p in parts],
        [p.caption for p in parts],
        [info.duration for info in infos],
        [p.cues for p in parts],
    )
    report = (lambda done: progress(done, len(parts))) if progress else (lambda done: None)
    text_path, json_path, srt_path = sidecar_paths(output)
    with contextlib.ExitStack() as files:
        video_file = files.enter_context(output_file(output))
        try:
            with _open_output(video_file, chapters) as container:
                _remux(infos, starts, container, report, _sound_track(infos, starts))
        except av.error.FFmpegError as error:
            if isinstance(error, OSError) and error.errno in OUTPUT_ERRNOS:
                raise output_error(output, error) from None
            raise BlockvizError(
                f"cannot write the lecture {str(output)!r} ({_reason(error)}): re-render the scenes and try again"
            ) from None
        files.enter_context(_written(text_path, chapters_text(chapters, min_chapter_seconds)))
        files.enter_context(_written(json_path, chapters_json(chapters, output.name)))
        files.enter_context(_written(srt_path, captions_srt(chapters, burned_captions)))
    return Lecture(output, text_path, json_path, srt_path, chapters, float(starts[-1]))


def join_videos(videos: Sequence[str | Path], output) -> Fraction:
    """Copy the videos' packets one after another into ``output`` (an open PyAV output
    container, no stream added yet), each starting where the one before it ends; return the
    total duration in seconds.

    The videos must share their set-up (as :func:`write_lecture`'s parts); their timestamps are
    shifted, never encoded again.

    Raises
    ------
    BlockvizError
        If there is no video, a video is missing, unreadable or empty, or the videos' set-ups
        differ.
    """
    if not videos:
        raise BlockvizError("there is no video to join: render something first")
    infos = [probe_video(video) for video in videos]
    starts = _check_joinable([None] * len(infos), infos)
    _remux(infos, starts, output, lambda done: None)
    return starts[-1]


def probe_video(path: str | Path, name: str | None = None) -> VideoInfo:
    """Read a video file's first video stream's set-up and timing, without decoding frames.

    ``name`` (the scene's name) is used in error messages.

    Raises
    ------
    BlockvizError
        If the file is missing, not a readable video, an image (GIF/PNG…), or holds no frame.
    """
    path = Path(path)
    what = _part(name, path)
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
            fps = _declared_rate(stream)
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


# -- checking the request ----------------------------------------------------------------------


def _check_request(parts: Sequence[LecturePart], output: Path) -> None:
    if not parts:
        raise BlockvizError("a lecture needs at least one scene video: render the scenes first")
    if output.suffix.lower() != ".mp4":
        raise BlockvizError(f"the lecture file {str(output)!r} must end in .mp4: choose e.g. lecture.mp4")
    for part in parts:
        for field in ("name", "title", "caption"):
            if not one_line(str(getattr(part, field))):
                raise BlockvizError(f"lecture part {part.name!r} has an empty {field}: give every scene a {field}")
        if Path(part.video).resolve() == output.resolve():
            raise BlockvizError(f"the lecture file {str(output)!r} is also a part: choose another name for the lecture")


def _check_joinable(names: Sequence[str | None], infos: list[VideoInfo]) -> list[Fraction]:
    """Each part's start (seconds), where the previous one ends, then the total; once it is
    known that the parts' packets can be copied into one stream: the same stream set-up, and
    shifted timestamps that land on the time base. (A decoding time that would not follow the
    one before it is moved up when copying: :func:`_remux`.)

    Raises :class:`BlockvizError` naming the first part that cannot follow the one before it.
    """
    first = infos[0]
    if first.codec not in COPYABLE_CODECS:
        raise BlockvizError(
            f"{_part(names[0], first.path)} is {first.codec}, which an MP4 cannot hold as it is: render the scenes as mp4"
        )
    starts = [Fraction(0)]
    for name, info in zip(names, infos):
        mismatch = info.mismatch(first)
        if mismatch is not None:
            raise BlockvizError(
                f"{_part(name, info.path)} differs from {names[0] or str(first.path)!r} in its {mismatch}: {SAME_OPTIONS}"
            )
        start = starts[-1]
        if ((start - info.start) / info.time_base).denominator != 1:
            raise BlockvizError(
                f"{_part(name, info.path)} cannot follow the part before it without encoding again (its timestamps do not fit): {SAME_OPTIONS}"
            )
        starts.append(start + info.duration)
    return starts


def _part(name: str | None, path: Path) -> str:
    return f"lecture part {name!r} ({str(path)!r})" if name else repr(str(path))


def _declared_rate(stream) -> Fraction | None:
    """The frame rate the video declares: its codec's (H.264's timing information), else the
    one FFmpeg guesses from the first timestamps. Not the average: a held frame (a variable
    frame rate) or a last frame cut short lowers it."""
    rate = stream.codec_context.framerate or stream.guessed_rate or stream.average_rate
    return Fraction(rate) if rate else None


def _reason(error: Exception) -> str:
    return one_line(getattr(error, "strerror", None) or str(error)) or type(error).__name__


# -- reading a video's timestamps ----------------------------------------------------------------


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
    rate = _declared_rate(stream)
    return max(1, round(1 / (rate * Fraction(stream.time_base)))) if rate else 1


# -- writing -------------------------------------------------------------------------------------


def _open_output(path: Path, chapters: Sequence[Chapter]):
    container = av.open(str(path), mode="w", format="mp4", options={"movflags": "+faststart"})
    container.set_chapters(_chapter_entries(chapters))
    return container


def _remux(
    infos: list[VideoInfo],
    starts: list[Fraction],
    output,
    report: Callable[[int], None],
    sound: np.ndarray | None = None,
) -> None:
    """Copy every part's packets into ``output``, shifting their timestamps so each part starts
    at its start time (seconds); then encode ``sound`` (mono samples and their rate, from
    :func:`_sound_track`) as its AAC track, if given.

    A part's first decoding times come before its first frame's presentation (by the B-frames'
    delay); after a part that ends on a frame held for less than that delay they would not
    follow the last decoding time before them, so each is moved up to one tick after the one
    before it (never past its presentation time: no frame is shown at another time).
    """
    with av.open(str(infos[0].path)) as template:
        stream = output.add_stream_from_template(template.streams.video[0])
    sound_stream = None
    if sound is not None:  # every stream is added before the first packet is written
        sound, rate = sound
        sound_stream = output.add_stream("aac", rate=rate, layout="mono")
        sound_stream.time_base = Fraction(1, rate)
    last_dts = None
    for done, (info, start) in enumerate(zip(infos, starts), start=1):
        shift = int((start - info.start) / info.time_base)
        with av.open(str(info.path)) as source:
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is None:  # the empty packet that ends demuxing
                    continue
                packet.pts += shift
                packet.dts = packet.dts + shift if last_dts is None else max(packet.dts + shift, last_dts + 1)
                if packet.dts > packet.pts:
                    raise BlockvizError(
                        f"{_part(None, info.path)} cannot follow the part before it without encoding again (its timestamps do not fit): {SAME_OPTIONS}"
                    )
                last_dts = packet.dts
                packet.stream = stream
                output.mux(packet)
        report(done)
    if sound_stream is not None:
        _encode_sound(sound, sound_stream, output)


def _chapter_entries(chapters: Sequence[Chapter]) -> list[dict]:
    """The chapters as PyAV's ``set_chapters`` takes them (milliseconds)."""
    millisecond = Fraction(1, 1000)
    return [
        {
            "id": number,
            "start": round(c.start * 1000),
            "end": round(c.end * 1000),
            "time_base": millisecond,
            "metadata": {"title": c.title},
        }
        for number, c in enumerate(chapters, start=1)
    ]


@contextlib.contextmanager
def _written(path: Path, text: str) -> Iterator[Path]:
    with output_file(path) as partial:
        partial.write_text(text, encoding="utf-8")
        yield partial


def _sound_track(infos: list[VideoInfo], starts: list[Fraction]) -> tuple[np.ndarray, int] | None:
    """The lecture's sound and its rate (:func:`sound_rate`): each part's sound (:func:`_sound_of`)
    laid at the part's start, silence where a part has none; ``None`` when no part has sound
    (silent scenes)."""
    rate = sound_rate([info.path for info in infos])
    if rate is None:
        return None
    total = int(round(float(starts[-1]) * rate))
    track = np.zeros(total, dtype=np.float32)
    for info, start in zip(infos, starts[:-1]):
        samples = _sound_of(info.path, rate)
        if samples is None:
            continue
        offset = int(round(float(start) * rate))
        samples = samples[: max(0, total - offset)]
        track[offset : offset + len(samples)] += samples
    return track, rate


def sound_rate(videos: Sequence[Path]) -> int | None:
    """The rate of the lecture's sound: the highest of the ``videos``' sound tracks (narrated
    scenes share their voice's: 22,050 Hz for the packaged one, which is encoded so, not
    resampled to twice as many samples); ``None`` if none has sound."""
    rates = []
    for path in videos:
        with av.open(str(path)) as source:
            rates += [stream.rate for stream in source.streams.audio[:1]]
    return max(rates) if rates else None


def _encode_sound(track: np.ndarray, stream, output) -> None:
    """Encode the mono samples ``track`` into ``stream`` of ``output`` (at its rate), frame by frame."""
    size, rate = stream.codec_context.frame_size or 1024, stream.codec_context.sample_rate
    for first in range(0, len(track), size):
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(track[None, first : first + size]), format="fltp", layout="mono"
        )
        frame.rate, frame.pts, frame.time_base = rate, first, Fraction(1, rate)
        for packet in stream.encode(frame):
            output.mux(packet)
    for packet in stream.encode(None):
        output.mux(packet)


def _sound_of(path: Path, rate: int) -> np.ndarray | None:
    """The sound of the video at ``path`` as mono float samples at ``rate``, or ``None``."""
    with av.open(str(path)) as source:
        if not source.streams.audio:
            return None
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        pieces = []
        for frame in source.decode(audio=0):
            pieces += [out.to_ndarray().reshape(-1) for out in resampler.resample(frame)]
        pieces += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
