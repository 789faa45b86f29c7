"""Shared helpers of the lecture tests: tiny clips made with PyAV, one flat colour each, so every
frame of a lecture joined from them can be traced back to the part it came from."""

from pathlib import Path

import av
import numpy as np

RED, GREEN, BLUE, YELLOW = (220, 30, 30), (30, 200, 60), (40, 60, 220), (230, 210, 40)


def make_clip(path: Path, frames: int, color, size=(160, 90), fps=5, left_stripe=False) -> Path:
    """An H.264 clip of ``frames`` frames of ``color`` with a white bar growing along its top,
    and if asked a black stripe down its left fifth (below the top rows)."""
    width, height = size
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for index in range(frames):
            pixels = np.empty((height, width, 3), dtype=np.uint8)
            pixels[:] = color
            pixels[2:8, 10 : 12 + 4 * index] = 255
            if left_stripe:
                pixels[height // 6 :, : width // 5] = 0
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode(None))
    return path
