"""GIFs made from the scene's video: the video's speed, a width and frame rate of their own, a
first step and a held last picture; the options refused for other formats."""

from __future__ import annotations

import json

import av
import pytest
from click.testing import CliRunner

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.render.plan import RenderOptions, plan
from blockviz.render.run import render_one

SENTENCE = "the cat sat"


def frames_of(path) -> list:
    with av.open(str(path)) as container:
        return [frame for frame in container.decode(video=0)]


@pytest.fixture(scope="module")
def gifs(tmp_path_factory):
    """The mask scene of "the cat sat" (seeded block) as a whole GIF, and from its 2nd step with 1 s held."""
    folder = tmp_path_factory.mktemp("gifs")
    rec = record(SENTENCE)
    made = {}
    for name, options in {
        "whole": RenderOptions(format="gif", resolution=(320, 180), fps=4),
        "cut": RenderOptions(format="gif", resolution=(320, 180), fps=4, width=160, from_step=2, hold_last=1.0),
    }.items():
        job = plan(["mask"], {"sentence": SENTENCE}, options, folder / name)[0]
        render_one(rec, job, options)
        made[name] = (job.output, json.loads(job.captions.read_text()))
    return made


def test_a_gif_plays_at_the_videos_speed_at_its_size(gifs):
    path, logged = gifs["whole"]
    frames = frames_of(path)
    assert (frames[0].width, frames[0].height) == (320, 180)  # the video's width by default
    assert len(frames) == pytest.approx(logged["duration"] * 4, abs=1)  # 4 frames a second, for as long as the scene


def test_a_gif_starts_at_its_step_and_holds_its_last_picture(gifs):
    path, logged = gifs["cut"]
    frames = frames_of(path)
    second_step = logged["captions"][1][0]
    assert (frames[0].width, frames[0].height) == (160, 90)  # --width, the height in proportion
    assert len(frames) == pytest.approx((logged["duration"] - second_step + 1.0) * 4, abs=1)
    last = frames[-1].to_ndarray(format="rgb24")
    assert all((frame.to_ndarray(format="rgb24") == last).all() for frame in frames[-4:])  # the held second


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--width", "200"], "shape a GIF: add --format gif"),
        (["--format", "gif", "--from-step", "99", "--resolution", "160x90", "--fps", "2"], "the scene has"),
    ],
)
def test_gif_options_are_refused_in_one_line_where_they_do_not_apply(arguments, message, tmp_path):
    result = CliRunner().invoke(
        main, ["render", SENTENCE, "--model", "seeded", "--scene", "mask", "-o", str(tmp_path), *arguments]
    )
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.output
    assert not list(tmp_path.glob("*.gif")) and not list(tmp_path.glob("*.mp4"))
