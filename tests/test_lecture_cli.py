"""``blockviz render … --lecture``: the title card and every scene rendered once at a tiny size
(160 × 90, 5 fps) and joined into one video whose length, chapters, captions and frames match
the scene files; a second run reuses everything; bad combinations fail before rendering."""

import json
import math
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import srt
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.render.plan import LecturePlan, RenderJob, RenderOptions, plan_lecture
from blockviz.render.run import join_lecture
from blockviz.scenes.catalog import entries, for_record, lookup
from blockviz.scenes.wording import toy_wording
from blockviz.toy.recording import record_toy

SENTENCE = "the cat sat"
TINY = ["--resolution", "160x90", "--fps", "5"]
EVERY_SCENE = [entry.name for entry in entries()]
"""Every catalogued scene in the catalogue's order (each module's ORDER): a lecture's plan without names."""
LECTURE_ORDER = [entry.name for entry in for_record(entries(), record_toy(SENTENCE), ())]
"""The lecture's parts for SENTENCE (the toy model, one block): every scene that can show it, in that order."""
LECTURE_FILES = ["lecture.mp4", "lecture.chapters.txt", "lecture.chapters.json", "lecture.srt"]


def invoke(*args):
    return CliRunner().invoke(main, ["render", *args])


def stream_seconds(path: Path) -> Fraction:
    """From the first frame's timestamp to the end of the last frame, read from the packets."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        packets = [packet for packet in container.demux(stream) if packet.pts is not None]
        first = min(packet.pts for packet in packets)
        end = max(packet.pts + packet.duration for packet in packets)
        return (end - first) * Fraction(stream.time_base)


def frames_of(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """One tiny lecture of "the cat sat" written into a folder: (folder, CLI result, mtimes)."""
    folder = tmp_path_factory.mktemp("renders")
    result = invoke(SENTENCE, "--lecture", *TINY, "-o", str(folder))
    assert result.exit_code == 0, result.output
    mtimes = {path.name: path.stat().st_mtime_ns for path in folder.iterdir() if path.is_file()}
    return folder, result, mtimes


def test_lecture_order_is_the_title_card_then_every_scene_once_in_the_catalogues_order(tmp_path):
    assert LECTURE_ORDER[0] == "title" and len(set(LECTURE_ORDER)) == len(LECTURE_ORDER)
    # every scene but the title card that can show the record
    assert [entry.name for entry in for_record(lookup(["all"]), record_toy(SENTENCE))] == LECTURE_ORDER[1:]
    assert [entry.name for entry in lookup(["title"])] == ["title"]
    orders = [entry.order for entry in entries()]
    assert orders == sorted(orders)
    lecture = plan_lecture({"sentence": SENTENCE}, RenderOptions(), tmp_path)
    assert [job.scene for job in lecture.jobs] == EVERY_SCENE
    assert [job.output for job in lecture.jobs] == [tmp_path / f"{name}.mp4" for name in EVERY_SCENE]


def test_the_lecture_tells_its_story_in_order():
    """The story of issue "Lecture-grade scenes": the worked example first, LayerNorm before
    q/k/v, softmax before value mixing, the encoder contrast right after softmax (it compares two
    heads' weights, so softmax is taught first: issue 24), the recap, then the prediction and the
    learning (scenes that need a trained toy model)."""
    at = {name: position for position, name in enumerate(LECTURE_ORDER)}
    assert at["worked-example"] == 1
    assert (
        at["tokens"]
        < at["layer-norm"]
        < at["qkv"]
        < at["dot-products"]
        < at["mask"]
        < at["softmax"]
        < at["value-mixing"]
        < at["multi-head"]
    )
    assert at["causal-vs-bidirectional"] == at["softmax"] + 1
    assert at["block-flow"] < at["ffn"] < at["recap"]
    # then what a one-block model with an unembedding adds (the default toy model): its prediction, then how it learned
    assert at["recap"] + 1 == at["prediction"] and at["prediction"] + 1 == at["learning"] == len(LECTURE_ORDER) - 1
    # a record of several blocks adds the stack's scenes after those (the copy model)
    every = {name: position for position, name in enumerate(EVERY_SCENE)}
    assert every["learning"] < every["stack"] < every["previous-token"] < every["induction"] < every["logit-lens"]
    assert not {"stack", "previous-token", "induction", "logit-lens"} & set(LECTURE_ORDER)


@pytest.mark.render
def test_lecture_writes_every_scene_then_the_lecture_files(rendered):
    folder, result, _ = rendered
    printed = result.output.strip().splitlines()
    expected = [folder / f"{name}.mp4" for name in LECTURE_ORDER] + [folder / name for name in LECTURE_FILES]
    assert printed == [str(path) for path in expected]
    assert all(path.is_file() and path.stat().st_size > 0 for path in expected)
    assert not [path for path in folder.iterdir() if path.name.endswith(".part")]


@pytest.mark.render
def test_lecture_lasts_the_sum_of_its_scenes(rendered):
    folder, _, _ = rendered
    scene_seconds = [stream_seconds(folder / f"{name}.mp4") for name in LECTURE_ORDER]
    assert stream_seconds(folder / "lecture.mp4") == sum(scene_seconds)
    with av.open(str(folder / "lecture.mp4")) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (160, 90)
        assert stream.codec_context.framerate == stream.guessed_rate == 5  # declared; a held frame lowers the average


@pytest.mark.render
def test_chapters_start_where_the_scenes_before_them_end(rendered):
    folder, _, _ = rendered
    scene_seconds = [float(stream_seconds(folder / f"{name}.mp4")) for name in LECTURE_ORDER]
    starts = np.concatenate([[0.0], np.cumsum(scene_seconds)])
    document = json.loads((folder / "lecture.chapters.json").read_text(encoding="utf-8"))
    chapters = document["chapters"]
    assert [chapter["name"] for chapter in chapters] == LECTURE_ORDER
    assert [chapter["start"] for chapter in chapters] == pytest.approx(starts[:-1].tolist(), abs=1e-6)
    assert [chapter["end"] for chapter in chapters] == pytest.approx(starts[1:].tolist(), abs=1e-6)
    assert document["duration"] == pytest.approx(starts[-1], abs=1e-6)
    by_name = {entry.name: entry for entry in entries()}
    from blockviz.scenes.wording import Wording
    from blockviz.toy.recording import record_toy

    wording = Wording.of(record_toy(SENTENCE))  # the toy block's: learned positions
    titles = [by_name[name].title_for(wording) for name in LECTURE_ORDER]
    assert [chapter["title"] for chapter in chapters] == titles
    captions = [by_name[name].caption_for(wording) for name in LECTURE_ORDER]
    assert [chapter["caption"] for chapter in chapters] == captions
    assert "{" not in "".join(captions)  # every {phrase} filled in


@pytest.mark.render
def test_chapter_lines_are_whole_seconds_of_chapter_starts(rendered):
    folder, _, _ = rendered
    chapters = json.loads((folder / "lecture.chapters.json").read_text(encoding="utf-8"))["chapters"]
    lines = (folder / "lecture.chapters.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("00:00 Introduction")  # the title card is under 10 s: it shares a line
    starts = {math.floor(chapter["start"]) for chapter in chapters}
    for line in lines:
        minutes, seconds = line.split()[0].split(":")
        assert int(minutes) * 60 + int(seconds) in starts
    shown = " / ".join(line.split(" ", 1)[1] for line in lines)
    assert shown == " / ".join(chapter["title"] for chapter in chapters)


@pytest.mark.render
def test_captions_follow_the_on_screen_captions_within_their_chapters(rendered):
    folder, _, _ = rendered
    chapters = json.loads((folder / "lecture.chapters.json").read_text(encoding="utf-8"))["chapters"]
    cues = list(srt.parse((folder / "lecture.srt").read_text(encoding="utf-8")))
    assert len(cues) > len(chapters)  # one cue per on-screen caption, several per scene
    assert all(a.end <= b.start for a, b in zip(cues, cues[1:]))  # in order, never two at once
    for chapter in chapters:
        inside = [cue for cue in cues if chapter["start"] - 1e-3 <= cue.start.total_seconds() < chapter["end"] - 1e-3]
        assert inside, chapter["name"]
        assert all(cue.end.total_seconds() <= chapter["end"] + 1e-3 for cue in inside)
    for cue in cues:
        lines = cue.content.removeprefix("{\\an8}").splitlines()
        assert 1 <= len(lines) <= 2 and all(len(line) <= 42 for line in lines), cue.content


@pytest.mark.render
def test_each_chapter_opens_on_its_scenes_first_frame(rendered):
    folder, _, _ = rendered
    lecture = frames_of(folder / "lecture.mp4")
    first = 0
    for name in LECTURE_ORDER:
        scene = frames_of(folder / f"{name}.mp4")
        assert np.array_equal(lecture[first], scene[0]), name
        assert np.array_equal(lecture[first + len(scene) - 1], scene[-1]), name
        first += len(scene)
    assert first == len(lecture)


@pytest.mark.render
def test_a_second_lecture_run_renders_and_joins_nothing(rendered):
    folder, _, mtimes = rendered
    again = invoke(SENTENCE, "--scene", "all", "--lecture", *TINY, "-o", str(folder))
    assert again.exit_code == 0, again.output
    printed = again.output.strip().splitlines()
    assert len(printed) == len(LECTURE_ORDER) + len(LECTURE_FILES)
    assert all(line.endswith("(unchanged)") for line in printed)
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir() if path.is_file()} == mtimes


@pytest.mark.render
def test_a_missing_lecture_file_is_joined_again_without_rendering_scenes(rendered, tmp_path):
    rendered_folder, _, _ = rendered
    folder = tmp_path / "out"
    shutil.copytree(rendered_folder, folder)
    scene_mtimes = {name: (folder / f"{name}.mp4").stat().st_mtime_ns for name in LECTURE_ORDER}
    (folder / "lecture.srt").unlink()
    result = invoke(SENTENCE, "--lecture", *TINY, "-o", str(folder))
    assert result.exit_code == 0, result.output
    printed = result.output.strip().splitlines()
    assert all(line.endswith("(unchanged)") for line in printed[: len(LECTURE_ORDER)])
    assert printed[len(LECTURE_ORDER) :] == [str(folder / name) for name in LECTURE_FILES]
    assert (folder / "lecture.srt").read_text(encoding="utf-8") == (rendered_folder / "lecture.srt").read_text(
        encoding="utf-8"
    )
    assert {name: (folder / f"{name}.mp4").stat().st_mtime_ns for name in LECTURE_ORDER} == scene_mtimes


@pytest.mark.render
def test_an_encoders_lecture_captions_its_mask_scene_as_no_mask(rendered, tmp_path):
    folder, _, _ = rendered
    jobs = [RenderJob(name, folder / f"{name}.mp4", tmp_path / f"{name}.key", "unused") for name in LECTURE_ORDER]
    plan = LecturePlan(jobs, tmp_path / "lecture.mp4", tmp_path / "lecture.key", "key")
    written = join_lecture(plan, toy_wording(causal=False))
    captions = {chapter.name: chapter.caption for chapter in written.chapters}
    titles = {chapter.name: chapter.title for chapter in written.chapters}
    (mask,) = lookup(["mask"])
    assert captions["mask"] == mask.encoder_caption != mask.caption
    assert titles["mask"] == "No mask: every key allowed" != mask.title
    assert captions["softmax"] == lookup(["softmax"])[0].encoder_caption
    assert "blocked" not in captions["softmax"] and "The causal mask" not in written.chapters_text.read_text(
        encoding="utf-8"
    )
    assert (tmp_path / "lecture.key").read_text() == "key"


@pytest.mark.parametrize(
    "args, message, exit_code",
    [
        (["--lecture", "--format", "gif"], "--lecture joins mp4 videos: drop --format gif", 2),
        (["--lecture", "--format", "png"], "--lecture joins mp4 videos: drop --format png", 2),
        (["--lecture", "--scene", "softmax,mask"], "--lecture always joins every scene: drop --scene softmax,mask", 2),
        (["--scene", "softmax,"], "'softmax,' holds an empty scene name", 2),
        (["--scene", "softmax,attention"], "unknown scene 'attention'", 2),
    ],
)
def test_bad_lecture_requests_are_one_line_errors_before_rendering(tmp_path, args, message, exit_code):
    result = invoke(SENTENCE, *args, *TINY, "-o", str(tmp_path))
    assert result.exit_code == exit_code
    assert message in result.output
    assert "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    assert not list(tmp_path.rglob("*"))


@pytest.mark.render
def test_scene_names_can_be_given_as_a_comma_list(tmp_path):
    result = invoke(
        SENTENCE, "--scene", "worked-example, mask", "--scene", "mask", "--format", "png", *TINY, "-o", str(tmp_path)
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines() == [
        str(tmp_path / "worked-example.png"),
        str(tmp_path / "mask.png"),
    ]  # lecture order
    assert sorted(path.name for path in tmp_path.glob("*.png")) == ["mask.png", "worked-example.png"]


def manim_like_clip(path: Path, frames: int, late_shift: int = 0) -> Path:
    """An H.264 clip at 15 fps in Manim's time bases (the encoder's one frame, the file's
    1/15360 s); with ``late_shift`` its last three frames come that many ticks early, as in Manim
    files whose last frame is cut short."""
    tick = Fraction(1, 15360)

    def in_ticks(packet):
        late = late_shift if packet.pts >= frames - 3 else 0
        packet.pts, packet.dts, packet.time_base = packet.pts * 1024 - late, packet.dts * 1024, tick
        return packet

    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=15)
        stream.width, stream.height, stream.pix_fmt = 160, 90, "yuv420p"
        for index in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((90, 160, 3), 20 * index, np.uint8), format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, 15)
            container.mux([in_ticks(packet) for packet in stream.encode(frame)])
        container.mux([in_ticks(packet) for packet in stream.encode(None)])
    return path


def test_a_scene_whose_last_frame_is_cut_short_is_still_joined(tmp_path):
    from blockviz.lecture.join import LecturePart, probe_video, write_lecture

    clips = [
        manim_like_clip(tmp_path / "a.mp4", 12),
        manim_like_clip(tmp_path / "b.mp4", 12, late_shift=5),
        manim_like_clip(tmp_path / "c.mp4", 9),
    ]
    short = probe_video(clips[1])
    assert short.fps == 15 and short.duration == Fraction(12 * 1024 - 5, 15360)
    parts = [LecturePart(path.stem, path.stem, f"Part {path.stem}.", path) for path in clips]
    written = write_lecture(parts, tmp_path / "lecture.mp4")
    assert stream_seconds(written.video) == sum(stream_seconds(path) for path in clips)
