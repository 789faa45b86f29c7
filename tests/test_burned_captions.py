"""``blockviz render --no-burned-captions``: the scenes draw no caption (the same steps, the same
times, the same layout) and the lecture's ``.srt`` cues, the only captions then, sit at the
bottom (untagged) instead of at the top (``{\\an8}``) off the drawn ones."""

import pytest
import srt
from click.testing import CliRunner
from support import build, built, named_record, visible_texts

from blockviz.cli import main
from blockviz.lecture.chapters import ON_TOP, captions_srt, chapters_of
from blockviz.render.plan import RenderOptions
from blockviz.scenes.catalog import lookup
from blockviz.scenes.wording import toy_wording


def test_a_scene_without_burned_captions_draws_none_but_logs_them_at_the_same_times():
    (entry,) = lookup(["mask"])
    with_captions, _ = built("mask", "default")
    without, inspector = build(entry.scene_class(), named_record("default"), burned_captions=False)
    assert inspector.problems == []
    assert without.caption is None and with_captions.caption is not None
    shown = {label.shown for label in visible_texts(without)}
    assert not any(said in shown for _, said in with_captions.captions)
    assert without.captions == with_captions.captions  # the same cues, at the same times
    assert without.renderer.time == with_captions.renderer.time
    assert len(without.captions) >= 4


def test_without_burned_captions_the_srt_cues_are_untagged():
    (title, mask) = chapters_of(
        ["title", "mask"],
        ["Intro", "The mask"],
        ["One.", "Two."],
        [5, 10],
        [(), [(0.0, "the scaled scores and M"), (4.0, "row by row")]],
    )
    burned = list(srt.parse(captions_srt((title, mask))))
    alone = list(srt.parse(captions_srt((title, mask), burned_captions=False)))
    assert [cue.content for cue in burned[1:]] == [ON_TOP + "the scaled scores and M", ON_TOP + "row by row"]
    assert [cue.content for cue in alone] == ["One.", "the scaled scores and M", "row by row"]
    assert [(cue.start, cue.end) for cue in alone] == [(cue.start, cue.end) for cue in burned]


def test_the_option_is_documented_and_reaches_the_scenes():
    result = CliRunner().invoke(main, ["render", "--help"])
    assert result.exit_code == 0 and "--no-burned-captions" in result.output
    assert RenderOptions().scene_options()["burned_captions"] is True
    assert RenderOptions(burned_captions=False).scene_options()["burned_captions"] is False


@pytest.mark.render
def test_a_lecture_without_burned_captions_has_untagged_cues_timed_with_the_scenes(tmp_path, cat_record):
    from blockviz.render.plan import LecturePlan, plan
    from blockviz.render.run import join_lecture, render_one

    options = RenderOptions(resolution=(160, 90), fps=4, burned_captions=False)
    jobs = plan(["title", "mask"], {"sentence": "the cat sat"}, options, tmp_path)
    for job in jobs:
        render_one(cat_record, job, options)
    lecture = join_lecture(
        LecturePlan(jobs, tmp_path / "lecture.mp4", tmp_path / ".cache" / "lecture.key", "k"),
        toy_wording(),
        burned_captions=False,
    )
    cues = list(srt.parse(lecture.captions.read_text(encoding="utf-8")))
    mask = lecture.chapters[1]
    on_mask = [cue for cue in cues if cue.start.total_seconds() >= mask.start - 1e-3]
    assert len(on_mask) >= 4 and not any(cue.content.startswith("{") for cue in cues)
