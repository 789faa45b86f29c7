"""``blockviz render --no-burned-captions``: the scenes draw no caption (the same steps, the same
times, the same layout) and the lecture's ``.srt`` cues, the only captions then, sit at the
bottom (untagged) instead of at the top (``{\\an8}``) off the drawn ones."""

import srt
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.lecture.chapters import ON_TOP, captions_srt, chapters_of
from blockviz.render.plan import RenderOptions
from blockviz.scenes.catalog import lookup
from support import build, built, named_record, visible_texts


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
    (title, mask) = chapters_of(["title", "mask"], ["Intro", "The mask"], ["One.", "Two."], [5, 10],
                                [(), [(0.0, "the scaled scores and M"), (4.0, "row by row")]])
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
