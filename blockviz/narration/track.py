"""The narration as an audio track: the speeches placed at their times, encoded as AAC beside a
video whose packets are copied (PyAV; the picture is not encoded again)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import av
import numpy as np

from blockviz.files import atomic_path
from blockviz.narration.voice import Speech

AUDIO_CODEC = "aac"
FRAME_SAMPLES = 1024
"""Samples per AAC frame."""


def mix(spoken: Sequence[tuple[float, Speech]], seconds: float, rate: int) -> np.ndarray:
    """One mono track ``seconds`` long at ``rate``: each speech starting at its time (seconds),
    cut at the end; silence elsewhere. Speeches must share ``rate``."""
    track = np.zeros(max(1, round(seconds * rate)), np.float32)
    for at, speech in spoken:
        if speech.rate != rate:
            raise ValueError(f"a speech at {speech.rate} Hz in a {rate} Hz track")
        start = round(at * rate)
        piece = speech.samples[: max(0, len(track) - start)]
        track[start : start + len(piece)] += piece
    return np.clip(track, -1.0, 1.0)


def with_audio(video: str | Path, track: np.ndarray, rate: int, output: str | Path) -> None:
    """Write ``output``: ``video``'s video packets, copied, and ``track`` (mono samples at
    ``rate``) encoded as AAC. Written atomically."""
    with atomic_path(output) as partial, av.open(str(video)) as source:
        with av.open(str(partial), mode="w", format="mp4", options={"movflags": "+faststart"}) as container:
            container.set_chapters(source.chapters())  # the lecture's
            picture = container.add_stream_from_template(source.streams.video[0])
            sound = container.add_stream(AUDIO_CODEC, rate=rate, layout="mono")
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is None:
                    continue
                packet.stream = picture
                container.mux(packet)
            for start in range(0, len(track), FRAME_SAMPLES):
                frame = av.AudioFrame.from_ndarray(
                    track[None, start : start + FRAME_SAMPLES].copy(), format="fltp", layout="mono"
                )
                frame.sample_rate, frame.pts = rate, start
                container.mux(sound.encode(frame))
            container.mux(sound.encode(None))


def audio_of(video: str | Path) -> tuple[np.ndarray, int] | None:
    """The first audio stream of ``video`` decoded as mono float32 samples and its rate, or
    ``None`` if it has none."""
    with av.open(str(video)) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        pieces = [frame.to_ndarray().reshape(-1, frame.samples).mean(axis=0) for frame in container.decode(stream)]
        samples = np.concatenate(pieces).astype(np.float32) if pieces else np.zeros(0, np.float32)
        if stream.duration:  # the last frame's padding is not part of the track
            samples = samples[: round(stream.duration * stream.time_base * stream.rate)]
        return samples, stream.rate


def narrate_video(video: str | Path, spoken: Sequence[tuple[float, Speech]], rate: int, output: str | Path) -> None:
    """Write ``output``: ``video`` with the speeches (``(seconds from its start, Speech)``, at
    ``rate`` samples per second: the voice's) as its sound track, as long as the video. Without
    speeches (the title card), a silent track."""
    from blockviz.lecture.join import probe_video

    seconds = float(probe_video(video).duration)
    with_audio(video, mix(spoken, seconds, rate), rate, output)


def narrate_lecture(lecture: str | Path, parts: Sequence[tuple[float, str | Path]]) -> bool:
    """Give ``lecture`` (joined from silent copies of the parts' pictures) the parts' sound: each
    part's track (``(start in the lecture, seconds; part video)``) placed at its start, re-encoded
    as one AAC track; the lecture's chapters kept. Returns whether any part had sound (else the
    lecture is left as it was). Rewrites ``lecture`` atomically.

    Raises ``ValueError`` if the parts' tracks differ in sample rate (one voice narrates them all).
    """
    from blockviz.lecture.join import probe_video

    tracks = [(at, audio_of(video)) for at, video in parts]
    heard = [(at, Speech(*track)) for at, track in tracks if track is not None]
    if not heard:
        return False
    rate = heard[0][1].rate
    seconds = float(probe_video(lecture).duration)
    lecture = Path(lecture)
    silent = lecture.with_name(f".{lecture.stem}.silent{lecture.suffix}")
    os.replace(lecture, silent)
    try:
        with_audio(silent, mix(heard, seconds, rate), rate, lecture)
    finally:
        silent.unlink(missing_ok=True)
    return True
