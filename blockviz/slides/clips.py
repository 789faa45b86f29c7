"""Cutting a rendered scene's video into one clip per step, by copying its packets (no encoding).

A scene's video is made of segments, one per play, each encoded on its own and so starting on a
key frame (:mod:`blockviz.render.encoding`); a step begins with a play, so every step's start is
a key frame's time and its packets can be copied as they are, their timestamps shifted to start
at 0 (as :mod:`blockviz.lecture.join` joins whole scenes). A cut asked between key frames is
made at the nearest key frame. Each clip also gets a poster: a PNG of its last frame (the
step's result), for PowerPoint's video frame, decoded from the packets already read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path
from blockviz.lecture.join import probe_video
from blockviz.slides.sound import audio_of, with_audio
from blockviz.slides.steps import Step


@dataclass(frozen=True)
class Clip:
    """One step's video ``video`` (MP4, ``seconds`` long, with the scene's sound if it has any:
    ``sound``) and ``poster`` (its last frame, PNG)."""

    step: Step
    video: Path
    poster: Path
    seconds: float
    sound: bool = False


def cut_clips(video: str | Path, steps: Sequence[Step], folder: str | Path) -> list[Clip]:
    """Cut ``video`` (a scene's MP4) into one clip per step of ``steps`` (that scene's, in order),
    written into ``folder`` as ``<step name>.mp4`` and ``<step name>.png``.

    Each clip runs from its step's start (moved to the nearest key frame) to the next step's
    start, the last to the video's end; its packets are copied, never encoded again. A narrated
    scene's sound is cut at the same times and encoded again (AAC) for each clip.

    Raises
    ------
    BlockvizError
        If the video is missing, unreadable or an image (:func:`blockviz.lecture.probe_video`),
        or two steps would start on the same key frame (the video is not the one whose captions
        gave the steps: render it again).
    """
    if not steps:
        return []
    info = probe_video(video, steps[0].scene)
    folder = Path(folder)
    clips = []
    sound = audio_of(video)
    with av.open(str(video)) as source:
        stream = source.streams.video[0]
        tick = Fraction(stream.time_base)
        packets = [packet for packet in source.demux(stream) if packet.pts is not None]
        keys = sorted({packet.pts for packet in packets if packet.is_keyframe})
        end = max(packet.pts + (packet.duration or 0) for packet in packets)
        cuts = [_nearest(keys, round((Fraction(step.start) + info.start) / tick)) for step in steps]
        if len(set(cuts)) != len(cuts):
            raise BlockvizError(
                f"the steps of {steps[0].scene!r} do not match its video {str(video)!r}: render it again (--force)"
            )
        for step, start, stop in zip(steps, cuts, [*cuts[1:], end]):
            path = folder / f"{step.name}.mp4"
            shown = [packet for packet in packets if start <= packet.pts < stop]
            poster = folder / f"{step.name}.png"
            _write_poster(stream, shown, poster)  # before the clip takes the packets (it shifts their times)
            _write_clip(path, stream, shown, start, stop)
            if sound is not None:
                samples, rate = sound
                first, last = (round((at * tick - info.start) * rate) for at in (start, stop))
                silent = path.with_name(f".{path.stem}.silent.mp4")
                os.replace(path, silent)
                try:
                    with_audio(silent, samples[first:last], rate, path)
                finally:
                    silent.unlink(missing_ok=True)
            clips.append(Clip(step, path, poster, float((stop - start) * tick), sound is not None))
    return clips


def _nearest(keys: list[int], wanted: int) -> int:
    return min(keys, key=lambda key: (abs(key - wanted), key))


def _write_clip(path: Path, template, packets: list, start: int, stop: int) -> None:
    """Write ``packets`` (those shown from ``start`` until ``stop``, in ticks) as a clip starting
    at 0; its last frame lasts until ``stop``, as the scene's video holds it until the next step."""
    last = max(packets, key=lambda packet: packet.pts)
    last.duration = stop - last.pts
    with atomic_path(path) as partial:
        with av.open(str(partial), mode="w", format="mp4", options={"movflags": "+faststart"}) as output:
            stream = output.add_stream_from_template(template)
            for packet in packets:
                packet.pts -= start
                packet.dts = (packet.pts if packet.dts is None else packet.dts) - start
                packet.stream = stream
                output.mux(packet)


def _write_poster(stream, packets: list, poster: Path) -> None:
    """Save the last frame ``packets`` (a clip's, of ``stream``) show as a PNG, decoding only from
    their last key frame on (a held picture is a key frame of its own: usually one packet)."""
    decoder = av.CodecContext.create(stream.codec_context.name, "r")
    decoder.extradata = stream.codec_context.extradata
    decoder.thread_type = "NONE"  # one frame or a few: threads cost more than they save
    keys = [index for index, packet in enumerate(packets) if packet.is_keyframe]
    frames = []
    for packet in packets[keys[-1] if keys else 0 :]:
        frames.extend(decoder.decode(packet))
    frames.extend(decoder.decode(None))
    if not frames:
        raise BlockvizError(f"the clip {poster.stem!r} holds no frame: render the scene again (--force)")
    with atomic_path(poster) as partial:
        partial.write_bytes(_png(max(frames, key=lambda frame: frame.pts)))


def _png(frame: av.VideoFrame) -> bytes:
    """``frame`` as a PNG file's bytes, its pixels as ``frame.to_image()`` has them: FFmpeg's PNG
    encoder, each row predicted from the row above and deflated fast (a third of Pillow's time,
    whose adaptive filter tries five predictions a row, for 2 % more bytes)."""
    encoder = av.CodecContext.create("png", "w")
    encoder.width, encoder.height, encoder.pix_fmt = frame.width, frame.height, "rgb24"
    encoder.options = {"pred": "up", "compression_level": "1"}
    packets = [*encoder.encode(frame.reformat(format="rgb24")), *encoder.encode(None)]
    return b"".join(bytes(packet) for packet in packets)
