"""The lecture: scene videos joined into one, with chapters and captions that match it.

The parts are tiny clips made here with PyAV (160 × 90, 5 fps, one flat colour each), so every
frame can be traced back to the part it came from.
"""

import json
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import srt
from support_lecture import BLUE, GREEN, RED, YELLOW, make_clip

from blockviz.errors import BlockvizError
from blockviz.lecture.chapters import (
    Chapter,
    captions_srt,
    chapters_json,
    chapters_of,
    chapters_text,
    sidecar_paths,
    timestamp,
)
from blockviz.lecture.join import LecturePart, probe_video, write_lecture
from blockviz.scenes.wording import toy_wording


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    folder = tmp_path_factory.mktemp("clips")
    return {
        "a": make_clip(folder / "a.mp4", 7, RED),
        "b": make_clip(folder / "b.mp4", 12, GREEN),
        "c": make_clip(folder / "c.mp4", 5, BLUE),
        "wide": make_clip(folder / "wide.mp4", 6, YELLOW, size=(320, 240), fps=10, left_stripe=True),
    }


def parts_of(clips, names):
    return [LecturePart(name, f"Scene {name}", f"Scene {name} shows one colour.", clips[name]) for name in names]


def decoded_frames(path):
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def centre_colour(pixels):
    return pixels[pixels.shape[0] // 2, pixels.shape[1] // 2].astype(int)


def assert_colour(pixels, colour):
    assert np.abs(centre_colour(pixels) - np.array(colour)).max() < 25


def packet_payloads(path):
    with av.open(str(path)) as container:
        return [bytes(packet) for packet in container.demux(video=0) if packet.size]


def test_compatible_parts_are_copied_packet_for_packet(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4")
    expected = packet_payloads(clips["a"]) + packet_payloads(clips["b"]) + packet_payloads(clips["c"])
    assert packet_payloads(lecture.video) == expected


def test_lecture_lasts_the_sum_of_its_parts(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4")
    info = probe_video(lecture.video)
    assert (info.width, info.height, info.fps) == (160, 90, 5)
    assert info.frames == 7 + 12 + 5 == len(decoded_frames(lecture.video))
    parts_total = sum(probe_video(clips[name]).duration for name in "abc")
    assert parts_total == Fraction(24, 5)
    assert abs(info.duration - parts_total) <= Fraction(1, 5)
    assert lecture.duration == pytest.approx(4.8)


def test_chapters_start_at_the_cumulative_durations(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4", min_chapter_seconds=0)
    assert [(c.start, c.end) for c in lecture.chapters] == [(0.0, 1.4), (1.4, 3.8), (3.8, 4.8)]
    assert lecture.chapters_text.read_text(encoding="utf-8").splitlines() == [
        "00:00 Scene a",
        "00:01 Scene b",
        "00:03 Scene c",
    ]
    document = json.loads(lecture.chapters_json.read_text(encoding="utf-8"))
    assert document["video"] == "lecture.mp4" and document["duration"] == pytest.approx(4.8)
    assert [(c["name"], c["title"], c["start"], c["end"]) for c in document["chapters"]] == [
        ("a", "Scene a", 0.0, 1.4),
        ("b", "Scene b", 1.4, 3.8),
        ("c", "Scene c", 3.8, 4.8),
    ]
    with av.open(str(lecture.video)) as container:
        embedded = container.chapters()
    assert [(c["metadata"]["title"], c["start"] * c["time_base"], c["end"] * c["time_base"]) for c in embedded] == [
        ("Scene a", 0, Fraction(7, 5)),
        ("Scene b", Fraction(7, 5), Fraction(19, 5)),
        ("Scene c", Fraction(19, 5), Fraction(24, 5)),
    ]


def test_captions_span_each_chapter(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4")
    cues = list(srt.parse(lecture.captions.read_text(encoding="utf-8")))
    assert [cue.content for cue in cues] == [f"Scene {name} shows one colour." for name in "abc"]
    for cue, chapter in zip(cues, lecture.chapters, strict=True):
        assert cue.start.total_seconds() == pytest.approx(chapter.start, abs=1e-3)
        assert cue.end.total_seconds() == pytest.approx(chapter.end, abs=1e-3)
    assert lecture.captions == sidecar_paths(lecture.video)[2] == tmp_path / "lecture.srt"


def test_each_chapter_shows_its_own_part(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4")
    frames = decoded_frames(lecture.video)
    for chapter, colour in zip(lecture.chapters, (RED, GREEN, BLUE)):
        first, last = round(chapter.start * 5), round(chapter.end * 5) - 1
        assert_colour(frames[first], colour)
        assert_colour(frames[last], colour)


def test_parts_of_another_size_and_frame_rate_are_refused_not_encoded_again(clips, tmp_path):
    with pytest.raises(BlockvizError) as error:
        write_lecture(parts_of(clips, ["a", "wide", "c"]), tmp_path / "lecture.mp4")
    message = str(error.value)
    assert "lecture part 'wide'" in message and "differs from 'a' in its size 320x240, not 160x90" in message
    assert "render every part with the same options" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []


def test_progress_is_reported_after_each_part(clips, tmp_path):
    calls = []
    write_lecture(
        parts_of(clips, "ab"), tmp_path / "lecture.mp4", progress=lambda done, total: calls.append((done, total))
    )
    assert calls == [(1, 2), (2, 2)]


def test_the_same_parts_give_the_same_bytes(clips, tmp_path):
    first = write_lecture(parts_of(clips, "ab"), tmp_path / "one.mp4")
    second = write_lecture(parts_of(clips, "ab"), tmp_path / "two.mp4")
    assert first.video.read_bytes() == second.video.read_bytes()


@pytest.fixture
def not_videos(tmp_path):
    from PIL import Image

    folder = tmp_path / "not-videos"
    folder.mkdir()
    Image.new("RGB", (16, 9), RED).save(folder / "scene.png")
    Image.new("RGB", (16, 9), RED).save(folder / "scene.gif")
    (folder / "broken.mp4").write_bytes(b"not a video at all")
    return folder


@pytest.mark.parametrize(
    "bad, message",
    [
        ("missing", "does not exist"),
        ("scene.png", "is an image"),
        ("scene.gif", "is an image"),
        ("broken.mp4", "is not a readable video"),
    ],
)
def test_a_bad_part_is_a_one_line_error_and_writes_nothing(clips, not_videos, tmp_path, bad, message):
    output = tmp_path / "out" / "lecture.mp4"
    parts = parts_of(clips, "a") + [LecturePart("Bad", "Bad", "A bad part.", not_videos / bad)]
    with pytest.raises(BlockvizError, match=message) as error:
        write_lecture(parts, output)
    assert "\n" not in str(error.value) and "'Bad'" in str(error.value)
    assert not output.parent.exists() or list(output.parent.iterdir()) == []


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda parts, out: ([], out), "at least one scene video"),
        (lambda parts, out: (parts, out.with_suffix(".gif")), "must end in .mp4"),
        (lambda parts, out: (parts[:1] + [LecturePart("b", "B", "  ", parts[1].video)], out), "empty caption"),
        (lambda parts, out: (parts, parts[0].video), "is also a part"),
    ],
)
def test_a_bad_request_is_a_one_line_error(clips, tmp_path, change, message):
    parts, output = change(parts_of(clips, "ab"), tmp_path / "lecture.mp4")
    with pytest.raises(BlockvizError, match=message) as error:
        write_lecture(parts, output)
    assert "\n" not in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_lecture_leaves_the_previous_files_untouched(clips, tmp_path):
    output = tmp_path / "lecture.mp4"
    write_lecture(parts_of(clips, "ab"), output)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    def interrupt(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_lecture(parts_of(clips, "ca"), output, progress=interrupt)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_the_chapter_list_for_youtube_merges_chapters_under_10_seconds(clips, tmp_path):
    lecture = write_lecture(parts_of(clips, "abc"), tmp_path / "lecture.mp4")
    assert lecture.chapters_text.read_text(encoding="utf-8") == "00:00 Scene a / Scene b / Scene c\n"
    assert len(json.loads(lecture.chapters_json.read_text(encoding="utf-8"))["chapters"]) == 3


@pytest.mark.parametrize(
    "spans, lines",
    [
        # a 5 s title card joins the first scene; every line then lasts at least 10 s
        ([(0, 5), (5, 20), (20, 41.5), (41.5, 60)], ["00:00 T0 / T1", "00:20 T2", "00:41 T3"]),
        # a short last chapter joins the one before
        ([(0, 12), (12, 30), (30, 36)], ["00:00 T0", "00:12 T1 / T2"]),
        # lengths count between the rounded-down times YouTube sees: 10.4 → 19.9 is 10 → 19, too short
        ([(0, 10.4), (10.4, 19.9), (19.9, 31)], ["00:00 T0", "00:10 T1 / T2"]),
        ([(0, 10.2), (10.2, 20.1), (20.1, 30)], ["00:00 T0", "00:10 T1", "00:20 T2"]),
        ([(0, 4)], ["00:00 T0"]),
    ],
)
def test_chapter_lines_last_at_least_10_seconds(spans, lines):
    chapters = [Chapter(f"S{i}", f"T{i}", "A caption.", start, end) for i, (start, end) in enumerate(spans)]
    assert chapters_text(chapters).splitlines() == lines
    assert chapters_text(chapters, min_seconds=0).splitlines() == [
        f"{timestamp(start)} T{i}" for i, (start, _) in enumerate(spans)
    ]


@pytest.mark.parametrize(
    "seconds, shown",
    [(0, "00:00"), (1.4, "00:01"), (59.9999, "00:59"), (75.9, "01:15"), (600, "10:00"), (3725, "1:02:05")],
)
def test_timestamps_are_whole_seconds_rounded_down(seconds, shown):
    assert timestamp(seconds) == shown


def test_long_captions_wrap_at_42_characters():
    caption = "Each token's query is compared with every key it may use, and the products are summed."
    text = captions_srt([Chapter("DotProducts", "Dot products", caption, 0.0, 12.5)])
    cues = list(
        srt.parse(text)
    )  # 3 lines of 42: two cues of two even lines (no one-word cue), sharing the chapter's time by length
    assert [len(cue.content.splitlines()) for cue in cues] == [2, 2]
    assert [cue.content.splitlines() for cue in cues] == [
        ["Each token's query is", "compared with every key"],
        ["it may use, and the", "products are summed."],
    ]
    assert all(len(line) <= 42 for cue in cues for line in cue.content.splitlines())
    assert " ".join(" ".join(cue.content.splitlines()) for cue in cues) == caption
    assert cues[0].start.total_seconds() == 0 and cues[0].end == cues[1].start and cues[1].end.total_seconds() == 12.5


# -- chapters and captions as text: exact values, no video needed ------------------------------


def test_chapters_start_where_the_durations_before_them_end():
    chapters = chapters_of(
        ["title", "mask"], ["Intro", "The\n  mask"], ["One.", " Two   words. "], [Fraction(7, 5), Fraction(12, 5)]
    )
    assert chapters == (
        Chapter("title", "Intro", "One.", 0.0, 1.4),
        Chapter("mask", "The mask", "Two words.", 1.4, 3.8),
    )
    with pytest.raises(ValueError):
        chapters_of(["a", "b"], ["A", "B"], ["A.", "B."], [1.0])


def test_chapters_json_is_this_exact_document():
    chapters = (Chapter("a", "Scène a", "Shows a.", 0.0, 1.4), Chapter("b", "Scene b", "Shows b.", 1.4, 3.8000004))
    assert chapters_json(chapters, "lecture.mp4") == (
        "{\n"
        '  "video": "lecture.mp4",\n'
        '  "duration": 3.8,\n'
        '  "chapters": [\n'
        "    {\n"
        '      "name": "a",\n'
        '      "title": "Scène a",\n'
        '      "caption": "Shows a.",\n'
        '      "start": 0.0,\n'
        '      "end": 1.4\n'
        "    },\n"
        "    {\n"
        '      "name": "b",\n'
        '      "title": "Scene b",\n'
        '      "caption": "Shows b.",\n'
        '      "start": 1.4,\n'
        '      "end": 3.8\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )


def test_captions_srt_is_this_exact_text():
    caption = "Each token's query is compared with every key it may use, and the products are summed."
    chapters = (
        Chapter("title", "Intro", "One sentence.", 0.0, 4.2),
        Chapter("dot-products", "Dot products", caption, 4.2, 3725.5),
    )
    assert (
        captions_srt(chapters)
        == (
            "1\n00:00:00,000 --> 00:00:04,200\nOne sentence.\n\n"
            "2\n00:00:04,200 --> 00:32:54,300\n"  # 4.2 + 3721.3 s × 45 / 85 characters: three lines of 42 made four even ones, two a cue…
            "Each token's query is\ncompared with every key\n\n"
            "3\n00:32:54,300 --> 01:02:05,500\nit may use, and the\nproducts are summed.\n\n"  # …the other two in the next
        )
    )


def test_chapter_text_past_an_hour_and_the_sidecar_names():
    chapters = (Chapter("a", "A", "A.", 0.0, 3725.0), Chapter("b", "B", "B.", 3725.0, 3800.0))
    assert chapters_text(chapters) == "00:00 A\n1:02:05 B\n"
    assert chapters_text(()) == ""
    assert sidecar_paths("out/talk.mp4") == (
        Path("out/talk.chapters.txt"),
        Path("out/talk.chapters.json"),
        Path("out/talk.srt"),
    )


def test_on_screen_captions_are_one_cue_each_timed_with_them_at_most_two_lines_of_42():
    long = "M: 0 where a key may be used (itself and earlier), −∞ where it comes later, so later tokens never leak in"
    (title, mask) = chapters_of(
        ["title", "mask"],
        ["Intro", "The mask"],
        ["One.", "Two."],
        [Fraction(5), Fraction(25, 2)],
        [(), [(0.0, "the scaled scores and M"), (3.5, long), (9.0, "row by row"), (12.5, "past the end")]],
    )
    assert title.cues == () and [at for at, _ in mask.cues] == [0.0, 3.5, 9.0]  # a cue at the part's end is dropped
    cues = list(srt.parse(captions_srt((title, mask))))
    spans = [(cue.start.total_seconds(), cue.end.total_seconds()) for cue in cues]
    # The title card: one cue of its caption; the mask: one per caption, the long one as two in its own time.
    assert spans == [(0.0, 5.0), (5.0, 8.5), (8.5, pytest.approx(spans[2][1])), (spans[2][1], 14.0), (14.0, 17.5)]
    assert 8.5 < spans[2][1] < 14.0
    assert cues[0].content == "One."
    shown = [cue.content.removeprefix("{\\an8}") for cue in cues[1:]]
    assert all(cue.content.startswith("{\\an8}") for cue in cues[1:])  # at the top: off the burned-in caption
    assert all(
        len(lines) <= 2 and all(len(line) <= 42 for line in lines) for lines in (text.splitlines() for text in shown)
    )
    assert " ".join(" ".join(text.splitlines()) for text in shown[1:3]) == long
    assert [" ".join(text.splitlines()) for text in (shown[0], shown[3])] == ["the scaled scores and M", "row by row"]


@pytest.mark.render
def test_a_rendered_scenes_captions_become_its_cues_in_the_lecture(tmp_path, cat_record):
    """render_one logs each caption a scene shows with its time; join_lecture turns them into one
    cue each, starting when the caption appears in the joined video (the title card, which
    shows none, keeps its one cue)."""
    from blockviz.render.plan import LecturePlan, RenderOptions, plan
    from blockviz.render.run import join_lecture, render_one, shown_captions

    options = RenderOptions(resolution=(160, 90), fps=4)
    jobs = plan(["title", "mask"], {"sentence": "the cat sat"}, options, tmp_path)
    for job in jobs:
        render_one(cat_record, job, options)
    logged = json.loads(jobs[1].captions.read_text(encoding="utf-8"))
    assert shown_captions(jobs[0]) == () and len(shown_captions(jobs[1])) == len(logged["captions"]) == 5
    assert [at for at, _ in logged["captions"]] == sorted(at for at, _ in logged["captions"]) and logged["captions"][0][
        0
    ] == 0.0
    lecture = join_lecture(
        LecturePlan(jobs, tmp_path / "lecture.mp4", tmp_path / ".cache" / "lecture.key", "k"), toy_wording()
    )
    cues = list(srt.parse(lecture.captions.read_text(encoding="utf-8")))
    title, mask = lecture.chapters
    # The title card's one caption, longer than two lines of 42, is consecutive cues over the card.
    on_title = [cue for cue in cues if cue.start.total_seconds() < title.end - 1e-3]
    assert " ".join(" ".join(cue.content.splitlines()) for cue in on_title) == title.caption
    assert on_title[0].start.total_seconds() == 0 and on_title[-1].end.total_seconds() == pytest.approx(
        title.end, abs=1e-3
    )
    # The mask's captions all fit two lines of 42: one cue each, from when it appears.
    on_mask = cues[len(on_title) :]
    assert [" ".join(cue.content.removeprefix("{\\an8}").splitlines()) for cue in on_mask] == [
        said for _, said in logged["captions"]
    ]
    assert [cue.start.total_seconds() for cue in on_mask] == pytest.approx(
        [mask.start + at for at, _ in logged["captions"]], abs=2e-3
    )
    assert cues[-1].end.total_seconds() == pytest.approx(mask.end, abs=1e-3)
