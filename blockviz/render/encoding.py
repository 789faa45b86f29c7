"""Manim's video writing, with holds that cost less: the same frames, encoded the same way.

Manim (0.22) encodes each play into its own segment on a worker thread. A hold — a frozen
frame repeated for its seconds — reaches the encoder as one picture and a repeat count, and
Manim converts that picture from RGBA to the video's pixel format once per repeated frame. Here
it is converted once (with the conversion the encoder itself would make: its size, pixel format
and threads) and the one converted frame is encoded at every timestamp. The encoder sees the
same pixels, so the video is the same.
"""

from __future__ import annotations

from fractions import Fraction

import av
from manim.renderer.cairo_renderer import CairoRenderer
from manim.scene.scene_file_writer import SceneFileWriter
from manim.scene.video_segment_encoder import VideoSegmentEncoder


class HoldEncoder(VideoSegmentEncoder):
    """A segment encoder that converts a repeated frame to the video's pixel format once."""

    def write_frame(self, pixels, *, repeat: int = 1) -> None:
        """Encode ``pixels`` (``(height, width, 4)`` RGBA ``uint8``) ``repeat`` times, at
        consecutive timestamps."""
        super().write_frame(pixels, repeat=1)  # opens the encoder on the first frame
        if repeat == 1:
            return
        context = self._stream.codec_context
        time_base = Fraction(self.spec.frame_rate.denominator, self.spec.frame_rate.numerator)
        try:
            frame = av.VideoFrame.from_ndarray(pixels, format="rgba").reformat(context.width, context.height, context.format, threads=context.thread_count)
            for _ in range(repeat - 1):
                frame.pts, frame.time_base = self._next_pts, time_base
                self._next_pts += 1
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
        except BaseException as error:
            raise self._operation_error("encode", error) from error


class HoldFileWriter(SceneFileWriter):
    """Manim's file writer, writing each segment with a :class:`HoldEncoder`."""

    def _create_segment_encoder(self, target) -> VideoSegmentEncoder:
        if self.video_encoder is None:
            raise RuntimeError("Video segment encoding requires resolved settings.")
        return HoldEncoder(target=target, spec=self.video_encoder)


def renderer() -> CairoRenderer:
    """A Cairo renderer that draws with :class:`~blockviz.scenes.path_cache.PathCachingCamera`
    and writes its video with :class:`HoldFileWriter`."""
    from blockviz.scenes.path_cache import PathCachingCamera

    return CairoRenderer(file_writer_class=HoldFileWriter, camera_class=PathCachingCamera)
