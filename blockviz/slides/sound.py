"""A narrated scene's sound, cut with its steps: decoded once (PyAV), each step's stretch encoded
again as AAC beside the step's copied picture."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from blockviz.files import atomic_path

AUDIO_CODEC = "aac"
FRAME_SAMPLES = 1024
"""Samples per AAC frame."""


def audio_of(video: str | Path) -> tuple[np.ndarray, int] | None:
    """The first audio stream of ``video`` decoded as mono float32 samples (−1 … 1) and its rate,
    or ``None`` if it has none. The last AAC frame's padding is left out."""
    with av.open(str(video)) as container:
        if not container.streams.audio:
            return None
        stream = container.streams.audio[0]
        pieces = [frame.to_ndarray().reshape(-1, frame.samples).mean(axis=0) for frame in container.decode(stream)]
        samples = np.concatenate(pieces).astype(np.float32) if pieces else np.zeros(0, np.float32)
        if pieces and np.issubdtype(pieces[0].dtype, np.integer):
            samples /= 32768.0
        if stream.duration:
            samples = samples[: round(stream.duration * stream.time_base * stream.rate)]
        return samples, stream.rate


def with_audio(video: str | Path, samples: np.ndarray, rate: int, output: str | Path) -> None:
    """Write ``output``: ``video``'s picture, its packets copied, and ``samples`` (mono, −1 … 1,
    at ``rate``) encoded as AAC. Written atomically."""
    with atomic_path(output) as partial, av.open(str(video)) as source:
        with av.open(str(partial), mode="w", format="mp4", options={"movflags": "+faststart"}) as container:
            picture = container.add_stream_from_template(source.streams.video[0])
            sound = container.add_stream(AUDIO_CODEC, rate=rate, layout="mono")
            for packet in source.demux(source.streams.video[0]):
                if packet.dts is None:
                    continue
                packet.stream = picture
                container.mux(packet)
            samples = np.asarray(samples, np.float32)
            for start in range(0, len(samples), FRAME_SAMPLES):
                frame = av.AudioFrame.from_ndarray(
                    samples[None, start : start + FRAME_SAMPLES].copy(), format="fltp", layout="mono"
                )
                frame.sample_rate, frame.pts = rate, start
                container.mux(sound.encode(frame))
            container.mux(sound.encode(None))
