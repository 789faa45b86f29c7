"""blockviz.render.encoding: a held picture is one encoded frame lasting the hold, at the quality
x264 gave it repeated, and segments joined by their timestamps show every picture at its time
(full decoding, seeking, and FFmpeg's fps filter as a player resamples). Tiny synthetic slides
(160 × 96, 15 fps), no Manim render."""

import math
from fractions import Fraction

import av
import numpy as np
import pytest
from manim._config.video_encoder import VideoEncoderSpec

from blockviz.lecture.join import join_videos
from blockviz.render.encoding import HoldEncoder, hold_crf, segment_spec

FPS = 15
SPEC = segment_spec(
    VideoEncoderSpec("mp4", "libx264", "yuv420p", 160, 96, Fraction(FPS), (("crf", "23"),))
)  # Manim's x264 settings


def slide(seed: int) -> np.ndarray:
    """A dark slide with glyph-like strokes and a few boxes: ``(96, 160, 4)`` RGBA ``uint8``."""
    rng = np.random.default_rng(seed)
    pixels = np.zeros((96, 160, 4), np.uint8)
    pixels[..., :3], pixels[..., 3] = (28, 30, 36), 255
    for _ in range(40):
        y, x = rng.integers(4, 88), rng.integers(4, 148)
        pixels[y : y + rng.integers(1, 6), x : x + rng.integers(1, 9), :3] = rng.integers(120, 255, 3)
    for _ in range(6):
        y, x = rng.integers(0, 76), rng.integers(0, 130)
        pixels[y : y + 18, x : x + 28, :3] = rng.integers(40, 200, 3)
    return pixels


def psnr(shown: np.ndarray, drawn: np.ndarray) -> float:
    return 10 * math.log10(255**2 / np.mean((shown.astype(float) - drawn[..., :3].astype(float)) ** 2))


def segment(path, frames: list[tuple[np.ndarray, int]]):
    """One segment written by HoldEncoder: each ``(pixels, repeat)`` as Manim hands it over."""
    encoder = HoldEncoder(target=path, spec=SPEC)
    for pixels, repeat in frames:
        encoder.write_frame(pixels, repeat=repeat)
    encoder.finish()
    return path


def timeline(path) -> list[tuple[Fraction, np.ndarray]]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return [
            (frame.pts * Fraction(stream.time_base), frame.to_ndarray(format="rgb24"))
            for frame in container.decode(stream)
        ]


def shown_at(frames, t: Fraction) -> np.ndarray:
    return [pixels for start, pixels in frames if start <= t][-1]


@pytest.fixture(scope="module")
def joined(tmp_path_factory):
    """A play of 5 frames, a hold of 2 (shorter than the B-frames' delay), a play of 4, a hold
    of 30, as Manim's segments, joined: (video, the picture drawn for each frame time)."""
    folder = tmp_path_factory.mktemp("segments")
    plays = [[(slide(10 * part + index), 1) for index in range(count)] for part, count in ((1, 5), (2, 4))]
    parts = [plays[0], [(slide(99), 2)], plays[1], [(slide(98), 30)]]
    paths = [segment(folder / f"{number}.mp4", frames) for number, frames in enumerate(parts)]
    video = folder / "scene.mp4"
    with av.open(str(video), mode="w") as output:
        assert join_videos(paths, output) == Fraction(41, FPS)
    drawn = [pixels for frames in parts for pixels, repeat in frames for _ in range(repeat)]
    return video, drawn


def test_a_hold_is_one_frame_lasting_the_hold(joined):
    video, drawn = joined
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        packets = [packet for packet in container.demux(stream) if packet.pts is not None]
        assert stream.codec_context.framerate == FPS
    assert len(packets) == 5 + 1 + 4 + 1 and len(drawn) == 41
    ticks = round(1 / (FPS * packets[0].time_base))
    assert max(p.pts + p.duration for p in packets) - min(p.pts for p in packets) == 41 * ticks
    starts = sorted(packet.pts // ticks for packet in packets)
    assert starts == [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11]  # the hold of 2 from 5, of 30 from 11


def test_decoding_times_increase_and_never_pass_the_presentation(joined):
    video, _ = joined
    with av.open(str(video)) as container:
        packets = [packet for packet in container.demux(video=0) if packet.pts is not None]
    assert all(a.dts < b.dts for a, b in zip(packets, packets[1:]))
    assert all(packet.dts <= packet.pts for packet in packets)


def test_every_frame_time_shows_the_picture_drawn_for_it(joined):
    video, drawn = joined
    frames = timeline(video)
    for index, picture in enumerate(drawn):
        shown = shown_at(frames, Fraction(2 * index + 1, 2 * FPS))
        others = [psnr(shown, other) for other in drawn if not np.array_equal(other, picture)]
        assert psnr(shown, picture) > 25 and psnr(shown, picture) > max(others) + 10, (
            index
        )  # every slide differs wholly: x264 at its worst


def test_seeking_shows_what_decoding_from_the_start_shows(joined):
    video, drawn = joined
    frames = timeline(video)
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        tick = Fraction(stream.time_base)
        for t in [Fraction(k, 4 * FPS) for k in range(0, 4 * len(drawn))]:
            container.seek(int(t / tick), stream=stream, backward=True)
            seen = None
            for frame in container.decode(stream):
                if frame.pts * tick > t:
                    break
                seen = frame.to_ndarray(format="rgb24")
            assert seen is not None and np.array_equal(seen, shown_at(frames, t)), t


def test_resampled_at_the_frame_rate_it_gives_every_frame_back(joined):
    """FFmpeg's fps filter (``ffmpeg -r``, a player at a constant rate): one picture per frame time."""
    video, drawn = joined
    frames = timeline(video)
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        graph = av.filter.Graph()
        source, resample, sink = (
            graph.add_buffer(template=stream),
            graph.add("fps", f"fps={FPS}"),
            graph.add("buffersink"),
        )
        source.link_to(resample)
        resample.link_to(sink)
        graph.configure()
        for frame in container.decode(stream):
            graph.push(frame)
        graph.push(None)
        resampled = []
        while True:
            try:
                resampled.append(graph.pull().to_ndarray(format="rgb24"))
            except (av.error.BlockingIOError, av.error.EOFError):
                break
    assert len(resampled) == len(drawn)
    assert all(
        np.array_equal(picture, shown_at(frames, Fraction(index, FPS))) for index, picture in enumerate(resampled)
    )


def repeated_psnr(tmp_path, pixels, frames: int, crf: float) -> float:
    """Mean PSNR of ``pixels`` encoded ``frames`` times by plain x264 at ``crf``."""
    path = tmp_path / f"repeated-{frames}-{crf}.mp4"
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"crf": str(crf)})
        stream.width, stream.height, stream.pix_fmt = 160, 96, "yuv420p"
        for index in range(frames):
            frame = av.VideoFrame.from_ndarray(pixels, format="rgba")
            frame.pts, frame.time_base = index, Fraction(1, FPS)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return float(np.mean([psnr(shown, pixels) for _, shown in timeline(path)]))


@pytest.mark.parametrize("frames", [3, 37])
def test_a_held_picture_keeps_the_quality_x264_gave_it_repeated(tmp_path, frames):
    for seed in range(3):
        pixels = slide(seed)
        held = psnr(timeline(segment(tmp_path / f"held-{seed}.mp4", [(pixels, frames)]))[0][1], pixels)
        repeated, once_at_23 = repeated_psnr(tmp_path, pixels, frames, 23), repeated_psnr(tmp_path, pixels, 1, 23)
        assert abs(held - repeated) < 0.6, (seed, held, repeated)
        assert repeated - once_at_23 > 0.75  # without the lower crf the hold would look worse


def test_the_crf_of_a_hold_drops_as_x264s_macroblock_tree_and_stops_at_its_lookahead():
    assert hold_crf(23, 1) == 23
    assert hold_crf(23, 2) == pytest.approx(21) and hold_crf(23, 8) == pytest.approx(17)
    assert hold_crf(23, 32) == hold_crf(23, 1000) == 13


def test_every_segment_has_the_same_headers_whatever_its_crf(tmp_path):
    play = segment(tmp_path / "play.mp4", [(slide(1), 1), (slide(2), 1)])
    hold = segment(tmp_path / "hold.mp4", [(slide(3), 40)])
    headers = []
    for path in (play, hold):
        with av.open(str(path)) as container:
            headers.append(bytes(container.streams.video[0].codec_context.extradata))
    assert headers[0] == headers[1] and len(headers[0]) > 20


ENCODE_IN_A_FRESH_PROCESS = """
import hashlib, sys
from fractions import Fraction
import numpy as np
from manim._config.video_encoder import VideoEncoderSpec
from blockviz.render.encoding import HoldEncoder, segment_spec
saved = np.load(sys.argv[1])
spec = segment_spec(VideoEncoderSpec("mp4", "libx264", "yuv420p", 160, 96, Fraction(15), (("crf", "23"),)))
encoder = HoldEncoder(target=__import__("pathlib").Path(sys.argv[2]), spec=spec)
for pixels, repeat in zip(saved["frames"], saved["repeats"]):
    encoder.write_frame(np.ascontiguousarray(pixels), repeat=int(repeat))
encoder.finish()
print(hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest())
"""


def test_a_segment_is_the_same_bytes_whatever_memory_the_encoder_is_given(tmp_path):
    """x264 with AVX-512 read memory it never wrote: the same frames gave other bytes when the
    heap held other leftovers. glibc's ``MALLOC_PERTURB_`` fills every block it hands out with
    a byte of our choosing, so two fresh processes give x264 different leftovers."""
    import os
    import subprocess
    import sys

    frames, repeats = [], []
    for index, seed in enumerate([1, 1, 2, 2, 3, 1, 4, 4]):
        pixels = slide(seed)
        if index % 2:
            pixels[10 + index : 20 + index, 20:60, :3] = 200  # a box moving down a row a frame
        frames.append(pixels)
        repeats.append(1 + index % 3)
    np.savez(tmp_path / "frames.npz", frames=np.stack(frames), repeats=np.array(repeats))
    encoded = set()
    for perturb in ("1", "170"):
        completed = subprocess.run(
            [
                sys.executable,
                "-c",
                ENCODE_IN_A_FRESH_PROCESS,
                str(tmp_path / "frames.npz"),
                str(tmp_path / f"{perturb}.mp4"),
            ],
            env={**os.environ, "MALLOC_PERTURB_": perturb},
            capture_output=True,
            text=True,
            check=True,
        )
        encoded.add(completed.stdout.strip())
    assert len(encoded) == 1
