"""Role-coloured text stays readable after H.264 (issue 36: on a 480p dark render the query's text
measured 4.00:1 and the FFN's 3.95:1, under WCAG's 4.5:1, though their colours are 4.77 and 4.76
on paper: x264's 4:2:0 chroma and quantiser wash thin coloured strokes towards the background).

A swatch scene writes a word in every role colour at the smallest size a placed text may have
(:data:`~blockviz.scenes.look.MIN_FONT_SIZE`), renders it as blockviz renders (its video writer,
854 × 480, 15 fps), and the mp4 is decoded with PyAV. A word's colour as decoded is the median, in
a frame of the play, of the pixels the frame handed to the encoder drew fully in the role colour
(its strokes' cores); the background's, the median of the pixels drawn in the background colour
around it. Contrast is WCAG 2's, as ``test_style.contrast``."""

from __future__ import annotations

import av
import numpy as np
import pytest
from manim import DOWN, RIGHT, UP, Dot, VGroup, config
from support import writing_frames
from test_style import contrast

from blockviz.render.encoding import renderer
from blockviz.scenes.engine import EngineScene
from blockviz.scenes.look import MIN_FONT_SIZE, look
from blockviz.scenes.text import text
from blockviz.style import ROLES

WIDTH, HEIGHT = 854, 480
DARK = look("dark")


class Swatch(EngineScene):
    """A word in each role colour at the smallest text size, on the dark page, while a dot moves
    (frames of a play, encoded at the video's quality, not a hold's)."""

    def construct(self) -> None:
        self.camera.background_color = DARK.background
        self.words = VGroup(*[text("query FFN", MIN_FONT_SIZE, getattr(DARK, role)) for role in ROLES])
        self.add(self.words.arrange(DOWN, buff=0.4).shift(UP * 0.2))
        self.play(Dot(color=DARK.text).to_corner(DOWN + RIGHT).animate.shift(UP * 2), run_time=1)


def pixel_box(mobject) -> tuple[slice, slice]:
    """The rows and columns of the frame ``mobject`` covers, one pixel more on each side."""
    left, right = (np.array([mobject.get_left()[0], mobject.get_right()[0]]) / config.frame_width + 0.5) * WIDTH
    top, bottom = (0.5 - np.array([mobject.get_top()[1], mobject.get_bottom()[1]]) / config.frame_height) * HEIGHT
    return slice(int(top) - 1, int(np.ceil(bottom)) + 1), slice(int(left) - 1, int(np.ceil(right)) + 1)


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)])


def hex_of(pixel) -> str:
    return "#" + "".join(f"{int(round(channel)):02x}" for channel in pixel)


def decoded_contrasts() -> dict[str, tuple[float, int]]:
    """Role → (contrast of its word against the page as decoded, the core pixels measured)."""
    drawn = []
    with writing_frames(lambda pixels, repeat: drawn.append(pixels[:, :, :3].copy()), WIDTH, HEIGHT, 15):
        scene = Swatch(renderer=renderer())
        scene.render()
        with av.open(str(scene.renderer.file_writer.movie_file_path)) as video:
            decoded = [frame.to_ndarray(format="rgb24") for frame in video.decode(video=0)]
    assert len(decoded) == len(drawn) >= 10
    frame = len(decoded) // 2
    found = {}
    for role, word in zip(ROLES, scene.words):
        rows, columns = pixel_box(word)
        sent, seen = drawn[frame][rows, columns].astype(int), decoded[frame][rows, columns]
        core = np.all(np.abs(sent - rgb(getattr(DARK, role))) <= 3, axis=-1)
        page = np.all(sent == rgb(DARK.background), axis=-1)
        word_colour, page_colour = np.median(seen[core], axis=0), np.median(seen[page], axis=0)
        found[role] = (contrast(hex_of(word_colour), hex_of(page_colour)), int(core.sum()))
    return found


@pytest.mark.render
def test_role_coloured_text_keeps_4_5_to_1_after_h264_on_the_dark_page():
    found = decoded_contrasts()
    assert all(pixels >= 15 for _, pixels in found.values()), found  # each word's strokes measured
    assert contrast(DARK.query, DARK.background) > found["query"][0]  # the encoding does wash it out
    assert {role: round(ratio, 2) for role, (ratio, _) in found.items() if ratio < 4.5} == {}
