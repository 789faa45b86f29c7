"""GIFs for slides and pages, made from the scene's video: a frame rate and width of their own
(small files), starting at a step, and the last picture held.

Manim's GIF keeps every frame of the render at its size: 19–41 MB for one 480p scene. Here the
scene is rendered as an mp4 (its holds cost one frame each, :mod:`blockviz.render.encoding`)
and converted by FFmpeg's filters through PyAV: ``fps`` (each output frame shows the video's
picture at its time, so the GIF plays at the video's speed), ``scale`` (Lanczos, height kept in
proportion), and a palette made for the whole clip (``palettegen``, ``paletteuse``). FFmpeg's GIF
encoder stores only what changes between frames, so a held picture costs almost nothing.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av

from blockviz.errors import BlockvizError

GIF_FPS = 10
"""Frames per second of a GIF unless ``--fps`` says otherwise."""
GIF_WIDTH = 480
"""Pixels across of a GIF unless ``--width`` says otherwise (the height keeps the proportion)."""
WIDTH_RANGE = (64, 3840)
"""The widths a GIF may have."""


def video_to_gif(
    video: str | Path, output: str | Path, fps: int, width: int, start: float = 0.0, hold: float = 0.0
) -> int:
    """Write the mp4 ``video`` from ``start`` seconds on as the GIF ``output``, ``fps`` frames
    per second, ``width`` pixels wide, its last picture held ``hold`` more seconds; return the
    number of frames written. ``output`` is written in one go (the caller makes it atomic).

    Raises
    ------
    BlockvizError
        If the video has no frame at or after ``start``.
    """
    with av.open(str(video)) as source:
        stream = source.streams.video[0]
        graph, sink_frames = _graph(stream, fps, width)
        for frame in source.decode(stream):
            if frame.time is not None and frame.time < start - 1e-6:
                continue
            graph.push(frame)
        graph.push(None)
        frames = sink_frames(graph)
    if not frames:
        raise BlockvizError(f"{video} has no picture after {start:.2f} s: choose an earlier --from-step")
    frames += [frames[-1]] * round(hold * fps)
    with av.open(str(output), mode="w", format="gif") as container:
        out = container.add_stream("gif", rate=fps)
        out.width, out.height, out.pix_fmt = frames[0].width, frames[0].height, "pal8"
        for index, frame in enumerate(frames):
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(out.encode(frame))
        container.mux(out.encode(None))
    return len(frames)


def _graph(stream, fps: int, width: int):
    graph = av.filter.Graph()
    source = graph.add_buffer(template=stream)
    rate = graph.add("fps", f"fps={fps}")
    scale = graph.add("scale", f"{width}:-2:flags=lanczos")
    split = graph.add("split")
    palette = graph.add("palettegen", "stats_mode=diff")
    use = graph.add("paletteuse", "dither=bayer:bayer_scale=5:diff_mode=rectangle")
    sink = graph.add("buffersink")
    source.link_to(rate)
    rate.link_to(scale)
    scale.link_to(split)
    split.link_to(palette, 0, 0)
    split.link_to(use, 1, 0)
    palette.link_to(use, 0, 1)
    use.link_to(sink)
    graph.configure()

    def pulled(graph) -> list:
        frames = []
        while True:
            try:
                frames.append(graph.pull())
            except (av.error.EOFError, av.error.BlockingIOError):
                return frames

    return graph, pulled
