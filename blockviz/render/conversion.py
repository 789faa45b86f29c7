"""A segment's RGBA frames in x264's YUV 4:2:0, converting again only the rows that changed.

Manim hands the encoder RGBA frames, and the encoder converts each one whole (swscale, about
8 ms at 1080p: as much as drawing it). Consecutive frames of a play differ in a few bands of rows
(a caption arriving, a row of cells filling: a quarter of the picture on average). Here a
segment's first frame is converted whole; each later one is compared with the frame before, row
by row, and only the runs of rows that changed are converted again — with :data:`MARGIN` rows
around each, since 4:2:0 chroma is filtered across neighbouring rows — and written into the
picture kept from the frame before. Every byte is the one converting the whole frame gives
(``tests/test_encoding.py`` compares them).
"""

from __future__ import annotations

import av
import numpy as np
from av.video.reformatter import VideoReformatter

MARGIN = 4
"""Rows converted beyond each changed run, an even number: swscale's vertical chroma filter
reads the neighbouring pair of rows (2 suffice, measured at 1080p)."""
REACH = 2
"""Rows beyond a changed run whose picture changes too, an even number: a chroma row is filtered
from the luma rows around its own pair, so the chroma of the pairs next to a run changes with it."""
WHOLE_SHARE = 0.5
"""Above this share of changed rows the frame is converted whole: cheaper than its bands."""


class ChangedRows:
    """Converts a segment's frames in order (one instance per segment, used by one thread).

    The frame :meth:`convert` returns is the same :class:`av.VideoFrame` each time, changed in
    place: encode it before converting the next frame (x264 copies what it is given)."""

    def __init__(self) -> None:
        self._pixels: np.ndarray | None = None
        self._frame: av.VideoFrame | None = None
        self._whole = VideoReformatter()  # swscale's set-up kept from frame to frame
        self._bands = VideoReformatter()

    def convert(self, pixels: np.ndarray) -> av.VideoFrame:
        """``pixels`` (``(height, width, 4)`` RGBA ``uint8``, C-contiguous, not changed afterwards:
        it is compared with the next frame) as a yuv420p frame."""
        previous, self._pixels = self._pixels, pixels
        height = pixels.shape[0]
        if previous is None or previous.shape != pixels.shape or height % 2:
            return self._converted(pixels)
        runs = changed_runs(previous, pixels)
        if sum(stop - start for start, stop in runs) > WHOLE_SHARE * height:
            return self._converted(pixels)
        for start, stop in runs:
            self._convert_rows(pixels, start, stop)
        return self._frame

    def _converted(self, pixels: np.ndarray) -> av.VideoFrame:
        self._frame = yuv_frame(pixels, self._whole)
        return self._frame

    def _convert_rows(self, pixels: np.ndarray, start: int, stop: int) -> None:
        """Convert rows ``start`` … ``stop`` (even) again, from :data:`MARGIN` rows around them."""
        low, high = max(0, start - MARGIN), min(pixels.shape[0], stop + MARGIN)
        band = yuv_frame(pixels[low:high], self._bands)
        for index, shift in enumerate((0, 1, 1)):  # Y full height, U and V half
            first, last, offset = start >> shift, stop >> shift, (start - low) >> shift
            plane_view(self._frame, index)[first:last] = plane_view(band, index)[offset : offset + last - first]


def changed_runs(previous: np.ndarray, pixels: np.ndarray) -> list[tuple[int, int]]:
    """The runs ``(start, stop)`` of rows in which ``pixels`` differs from ``previous`` (both
    ``(height, width, 4)``), widened to even bounds; runs closer than two margins are joined."""
    height = pixels.shape[0]
    before, after = previous.reshape(height, -1), pixels.reshape(height, -1)
    if before.shape[1] % 8 == 0:  # compared eight bytes at a time
        before, after = before.view(np.uint64), after.view(np.uint64)
    rows = np.flatnonzero((before != after).any(axis=1))
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) > 2 * MARGIN)
    starts, stops = rows[np.r_[0, breaks + 1]], rows[np.r_[breaks, len(rows) - 1]] + 1
    return [
        (max(0, (int(start) & ~1) - REACH), min(height, ((int(stop) + 1) & ~1) + REACH))
        for start, stop in zip(starts, stops)
    ]


def yuv_frame(pixels: np.ndarray, reformatter: VideoReformatter | None = None) -> av.VideoFrame:
    """``pixels`` converted to yuv420p as the encoder converts a frame (swscale, bilinear), by
    ``reformatter`` (a new one by default) on this thread: swscale's own threads give the same
    bytes for the same work, and starting them costs more than a band's conversion."""
    frame = av.VideoFrame.from_numpy_buffer(pixels, format="rgba")
    return (reformatter or VideoReformatter()).reformat(frame, format="yuv420p", threads=1)


def plane_view(frame: av.VideoFrame, index: int) -> np.ndarray:
    """Plane ``index`` of ``frame`` as a writable ``(rows, width)`` view, its padding left out."""
    plane = frame.planes[index]
    return np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]


__all__ = ["ChangedRows", "changed_runs", "MARGIN", "plane_view", "yuv_frame"]
