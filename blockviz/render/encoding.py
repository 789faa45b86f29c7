"""Manim's video writing, with holds that cost one frame: a held picture is encoded once and lasts.

Manim (0.22) encodes each play into its own segment on a worker thread; a hold (a ``wait`` on a
frozen frame) is a segment of its own that reaches the encoder as one picture and a repeat count
``n``, which Manim encodes ``n`` times, at consecutive timestamps. Here a hold is **one** frame
whose duration is ``n`` frames: the next frame's timestamp jumps by ``n`` (a variable frame rate,
which MP4 holds as it is). Every timestamp shows the same picture as before, and the video lasts
as long; only x264's work (one frame, not ``n``) and the file's size change.

Quality: repeated at a constant rate, x264's macroblock tree gave the held picture a lower
quantiser, because the ``n − 1`` frames after it reuse it (:func:`hold_crf`). Encoded once, it is
given that quality directly, with a lower ``crf`` for the hold's segment. Every segment is
encoded ``stitchable`` so that their headers (SPS/PPS) stay equal whatever their ``crf``: the
scene's video, and then the lecture, copy every segment's packets behind the first's headers.
Every segment is encoded ``cpu-independent``, so that the same frames give the same bytes on every
run (:data:`X264_PARAMS`).

Joining: the segments become the scene's video by their timestamps, decoding times kept
(:meth:`HoldFileWriter.combine_files`), so that a player seeking to any time shows that time's
picture.

A narrated scene's sound is encoded at its own rate and channels (:func:`add_sound`).

A GIF keeps one frame per timestamp (Manim renumbers the frames it converts to GIF), but its
held picture is converted to the video's pixel format once, not once per frame.
"""

from __future__ import annotations

import dataclasses
import math
import os
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from manim._config.video_encoder import VideoEncoderSpec
from manim.renderer.cairo_renderer import CairoRenderer
from manim.scene.scene_file_writer import SceneFileWriter
from manim.scene.video_segment_encoder import VideoSegmentEncoder

if TYPE_CHECKING:
    import av  # imported where a video is written: a still needs no PyAV (blockviz.render.manim_import)

X264_PARAMS = {"x264-params": "stitchable=1:cpu-independent=1"}
"""x264's options for every segment. ``stitchable``: headers that do not depend on the segment's
rate control (its ``crf``), for segments joined by copying packets; it changes no picture.
``cpu-independent``: x264's canonical code for its macroblock tree and intra search rather than
the CPU's fastest. With AVX-512, x264's own code reads memory it never wrote, so the same frames
were encoded to other bytes from run to run (the 160 × 90 ``tokens`` scene's frames: four heap
contents, four bitstreams; with this option, or x264 held to AVX2, or without its macroblock
tree, one). Its bytes are those of x264's plain C code, on every x86 CPU."""
MBTREE_STRENGTH = 2.0
"""x264's macroblock-tree strength, ``5 · (1 − qcomp)`` with its default ``qcomp`` 0.6
(``encoder/slicetype.c``, ``macroblock_tree_finish``): a block's quantiser is lowered by
``strength · log2(1 + propagated / intra cost)``."""
MAX_HOLD_CRF_DROP = 10.0
"""The most x264 lowers a held picture's quantiser: its lookahead (40 frames in the default
``medium`` preset) bounds the frames that count. Measured on blockviz's frames at 160 × 90 and
854 × 480: 9.7 to 10.7 for holds of 40 to 160 frames."""


def segment_spec(spec: VideoEncoderSpec) -> VideoEncoderSpec:
    """Manim's segment settings ``spec``, with x264's :data:`X264_PARAMS`."""
    if spec.codec != "libx264":
        return spec
    return dataclasses.replace(spec, options=tuple({**dict(spec.options), **X264_PARAMS}.items()))


def hold_crf(crf: float, frames: int) -> float:
    """The ``crf`` that encodes a picture held ``frames`` frames, as one frame, at the quality
    x264 gives it when it is repeated ``frames`` times at ``crf``.

    Each frame after the first reuses the whole picture (it costs x264 nothing to predict), so
    the macroblock tree propagates about one intra cost per frame to it: the quantiser drops by
    ``MBTREE_STRENGTH · log2(frames)``, at most :data:`MAX_HOLD_CRF_DROP`. Fitted against x264
    itself (the mean PSNR of the repeated frames against the one frame's, over 5 pictures each,
    854 × 480 and 160 × 90): measured drops 2.0–2.2, 4.6–4.7, 7.0, 8.8–8.9 for 2, 5, 10, 20
    frames against 2.0, 4.6, 6.6, 8.6 here.
    """
    return crf - min(MBTREE_STRENGTH * math.log2(frames), MAX_HOLD_CRF_DROP)


def video_frame(pixels) -> av.VideoFrame:
    """An RGBA frame on ``pixels`` (``(height, width, 4)`` ``uint8``, rows contiguous), not a copy:
    Manim's file writer owns every array it is handed, and the encoder converts it to its pixel
    format before the array could change. ``VideoFrame.from_ndarray`` copies it twice, holding
    the interpreter's lock, while the next frame is drawn."""
    import av

    return av.VideoFrame.from_numpy_buffer(pixels, format="rgba")


class HoldEncoder(VideoSegmentEncoder):
    """A segment encoder that encodes a held picture once, as one frame lasting the hold.

    Frames go in with timestamps in frames (the time base is one frame); each packet leaves
    with its frame's duration, so the segment's length counts every held frame. A yuv420p
    segment's frames are converted here, each only where it differs from the one before
    (:class:`~blockviz.render.conversion.ChangedRows`).
    """

    def __init__(self, *, target, spec) -> None:
        from blockviz.render.conversion import ChangedRows

        super().__init__(target=target, spec=spec)
        self._durations: dict[int, int] = {}  # pts → frames, of frames not yet out of the encoder
        self._rows = ChangedRows() if spec.pixel_format == "yuv420p" else None

    def write_frame(self, pixels, *, repeat: int = 1) -> None:
        """Encode ``pixels`` (``(height, width, 4)`` RGBA ``uint8``) as one frame shown for
        ``repeat`` frames."""
        self._validate_frame(pixels, repeat)
        if self._next_pts == 0 and repeat > 1:  # a hold's segment: its quality, before the encoder opens
            self._lower_crf(repeat)
        try:
            frame = video_frame(pixels) if self._rows is None else self._rows.convert(pixels)
            frame.pts, frame.time_base, frame.duration = self._next_pts, self._frame_time, repeat
            self._durations[self._next_pts] = repeat
            self._next_pts += repeat
            self._mux(self._stream.encode(frame))
        except BaseException as error:
            raise self._operation_error("encode", error) from error

    def finish(self) -> None:
        """Flush the encoder (each packet with its duration) and close the segment."""
        if self._closed:
            return
        self._closed = True
        first_error: Exception | None = None
        try:
            self._mux(self._stream.encode())
        except Exception as error:
            first_error = error
        try:
            self._container.close()
        except Exception as error:
            first_error = first_error or error
        if first_error is not None:
            raise self._operation_error("finish", first_error) from first_error

    @property
    def _frame_time(self) -> Fraction:
        return Fraction(self.spec.frame_rate.denominator, self.spec.frame_rate.numerator)

    def _lower_crf(self, frames: int) -> None:
        options = self._stream.codec_context.options
        if "crf" in options:
            options["crf"] = f"{hold_crf(float(options['crf']), frames):.2f}"
            self._stream.codec_context.options = options

    def _mux(self, packets) -> None:
        for packet in packets:
            packet.duration = self._durations.pop(packet.pts)
            self._container.mux(packet)


class RepeatingHoldEncoder(VideoSegmentEncoder):
    """A segment encoder for GIF output: a held picture at every timestamp, converted to the
    video's pixel format once."""

    def write_frame(self, pixels, *, repeat: int = 1) -> None:
        """Encode ``pixels`` (``(height, width, 4)`` RGBA ``uint8``) ``repeat`` times, at
        consecutive timestamps."""
        super().write_frame(pixels, repeat=1)  # opens the encoder on the first frame
        if repeat == 1:
            return
        context = self._stream.codec_context
        time_base = Fraction(self.spec.frame_rate.denominator, self.spec.frame_rate.numerator)
        try:
            frame = video_frame(pixels).reformat(
                context.width, context.height, context.format, threads=context.thread_count
            )
            for _ in range(repeat - 1):
                frame.pts, frame.time_base = self._next_pts, time_base
                self._next_pts += 1
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
        except BaseException as error:
            raise self._operation_error("encode", error) from error


class HoldFileWriter(SceneFileWriter):
    """Manim's file writer, writing each segment with a :class:`HoldEncoder` (a
    :class:`RepeatingHoldEncoder` for GIF), x264 segments with :data:`X264_PARAMS`, and joining the
    segments of a silent video by their timestamps."""

    def _create_segment_encoder(self, target) -> VideoSegmentEncoder:
        if self.video_encoder is None:
            raise RuntimeError("Video segment encoding requires resolved settings.")
        encoder = RepeatingHoldEncoder if self.output_spec.is_gif else HoldEncoder
        return encoder(target=target, spec=segment_spec(self.video_encoder))

    def combine_to_movie(self) -> None:
        """Manim's, a narrated scene's sound added by :func:`add_sound`."""
        if not self.includes_sound or self.output_spec.is_gif or self.audio_segment.sample_width != 2:
            super().combine_to_movie()
            return
        self.includes_sound = False  # Manim joins the silent video
        try:
            super().combine_to_movie()
        finally:
            self.includes_sound = True
        from pydub import AudioSegment

        self.add_audio_segment(AudioSegment.silent(0))  # as Manim: the sound lasts until its end
        if Path(self.movie_file_path).is_file():
            add_sound(Path(self.movie_file_path), self.audio_segment)

    def combine_files(self, input_files, output_file, create_gif=False, includes_sound=False) -> None:
        """Join the segments into the scene's video: each segment's packets shifted to start
        where the one before it ends, decoding times kept (:func:`blockviz.lecture.join.join_videos`).

        Manim's own join drops the decoding times for the muxer to guess, which after a held
        frame guesses times a whole hold before the frames they decode: a player that seeks
        by them lands after the time asked for (and its concatenation shortens held frames). A GIF
        is joined by Manim. A narrated scene's sound is not in the segments: Manim adds it to the
        joined video afterwards (``combine_to_movie``).
        """
        if create_gif:
            return super().combine_files(input_files, output_file, create_gif, includes_sound)
        import av
        from manim import __version__

        from blockviz.lecture.join import join_videos

        output_file.parent.mkdir(parents=True, exist_ok=True)
        with av.open(str(output_file), mode="w") as output:
            output.metadata["comment"] = f"Rendered with Manim Community v{__version__}"
            join_videos(input_files, output)


def add_sound(movie: Path, sound) -> None:
    """Mux ``sound`` (a pydub ``AudioSegment``: 16-bit samples) into the silent video ``movie``,
    encoded as AAC at its own rate and channels, straight from its samples, as Manim muxes a
    scene's sound: its video packets copied.

    Manim writes the sound to a WAV file, reads it back frame by frame and encodes it at PyAV's
    defaults, 48 kHz stereo: for the voice's 22,050 Hz mono, four times the samples to encode
    (and the sound resampled) for the same speech.
    """
    import av
    from manim import __version__

    layout = "mono" if sound.channels == 1 else "stereo"
    samples = np.frombuffer(sound.raw_data, dtype=np.int16).reshape(1, -1)  # channels interleaved
    partial = movie.with_name(f"{movie.stem}_temp{movie.suffix}")
    with av.open(str(movie)) as source, av.open(str(partial), mode="w") as output:
        output.metadata["comment"] = f"Rendered with Manim Community v{__version__}"
        video = output.add_stream_from_template(source.streams.video[0])
        audio = output.add_stream("aac", rate=sound.frame_rate, layout=layout)
        for packet in source.demux(source.streams.video[0]):
            if packet.dts is not None:  # not the empty packet that ends demuxing
                packet.stream = video
                output.mux(packet)
        frame = av.AudioFrame.from_ndarray(samples, format="s16", layout=layout)
        frame.rate, frame.pts, frame.time_base = sound.frame_rate, 0, Fraction(1, sound.frame_rate)
        output.mux(audio.encode(frame))
        output.mux(audio.encode(None))
    os.replace(partial, movie)


def renderer() -> CairoRenderer:
    """A Cairo renderer that draws with :class:`~blockviz.scenes.path_cache.PathCachingCamera`
    and writes its video with :class:`HoldFileWriter`."""
    from blockviz.scenes.path_cache import PathCachingCamera

    return CairoRenderer(file_writer_class=HoldFileWriter, camera_class=PathCachingCamera)
