"""The learning scene on the shipped toy model: every number shown is the checkpoints' (read back
with ``learning_of``), each checkpoint's row adds up to 1 (or says "≈"), the steps are the
checkpoints', and the scene keeps every rule of docs/writing-a-scene.md; it is left out of, or
refused for, a record without training."""

from __future__ import annotations

import functools
import math

import pytest
import support
from support import build, check_scene, parse, visible_texts
from support_motion import assert_same_end, build_in_motion, end_state

from blockviz.errors import BlockvizError
from blockviz.scenes import catalog
from blockviz.scenes.learning import Learning
from blockviz.style import format_number
from blockviz.toy.learning import learning_of

SENTENCE = "The chicken didn't cross the road because it was too tired."


@functools.cache
def toy_record(sentence: str = SENTENCE):
    from blockviz.toy.recording import record_toy

    return record_toy(sentence)


@functools.cache
def learning():
    return learning_of(toy_record().source.path)


def checkpoint_value(source: tuple) -> float:
    """The value a ``("learning", field, *index)`` source names: ``learning_of(…).<field>[index]``."""
    _, field, *index = source
    value = getattr(learning(), field)
    for position in index:
        value = value[position]
    return float(value)


@pytest.fixture
def with_checkpoint_sources(monkeypatch):
    """``support.record_value`` reading the scene's checkpoint sources too (as ``check_scene`` uses it)."""
    record_value = support.record_value

    def value(rec, source):
        return checkpoint_value(source) if source[0] == "learning" else record_value(rec, source)

    monkeypatch.setattr(support, "record_value", value)


@functools.cache
def built_scene(sentence: str = SENTENCE):
    return build(Learning, toy_record(sentence))


def test_the_scene_keeps_every_rule_on_the_toy_record(with_checkpoint_sources):
    scene, inspector = built_scene()
    check_scene(scene, inspector, toy_record())


def test_every_checkpoint_row_shows_the_checkpoints_weights_with_two_decimals():
    scene, inspector = built_scene()
    rows = learning().rows
    shown = {
        label.source[2:]: label for label in inspector.numbers.values() if label.source[:2] == ("learning", "rows")
    }
    seen = learning().query + 1  # "it" and the keys before it; the ones after are masked
    assert set(shown) == {(k, j) for k in range(len(rows)) for j in range(seen)}
    for (k, j), label in shown.items():
        assert label.shown == format_number(rows[k][j], 2), (k, j)
        assert label.decimals == 2
    assert all(rows[k][j] == 0.0 for k in range(len(rows)) for j in range(seen, len(rows[k])))


def test_each_shown_row_adds_up_to_one_within_a_unit_and_says_approx_where_it_misses():
    scene, _ = built_scene()
    assert len(scene.sums) == len(learning().steps)
    texts = visible_texts(scene)
    for parts, total in scene.sums:
        assert total.shown == "1.00" and total.source == ("constant", 1.0)
        written = sum(parse(part.shown) for part in parts)
        assert abs(written - 1.0) <= 0.01 + 1e-9, [part.shown for part in parts]
        (mark,) = [
            label
            for label in texts
            if label.shown in ("=", "≈") and abs(label.get_y() - total.get_y()) < 0.05 and label.get_x() < total.get_x()
        ]
        assert mark.shown == ("=" if math.isclose(written, 1.0, abs_tol=1e-9) else "≈")
    assert any(mark == "≈" for mark in _marks(scene)) and any(mark == "=" for mark in _marks(scene))


def _marks(scene) -> list[str]:
    return [label.shown for label in visible_texts(scene) if label.shown in ("=", "≈")]


def test_the_steps_and_losses_shown_are_the_checkpoints():
    scene, inspector = built_scene()
    steps, losses = learning().steps, learning().losses
    assert [scene.grid.row_headers[k].shown for k in range(len(steps))] == [str(step) for step in steps]
    drawn = {label.shown for label in visible_texts(scene)}
    assert {str(step) for step in steps} <= drawn
    shown = {
        label.source[2]: label.shown
        for label in inspector.numbers.values()
        if label.source[:2] == ("learning", "losses")
    }
    assert shown == {k: format_number(loss) for k, loss in enumerate(losses) if loss is not None}
    assert steps == sorted(steps) and len(steps) >= 3


def test_the_result_line_and_captions_read_the_first_and_last_checkpoint():
    scene, inspector = built_scene()
    weights, head = learning().weights, learning().head
    ends = {
        label.source[2]: label.shown
        for label in inspector.numbers.values()
        if label.source[:2] == ("learning", "weights")
    }
    assert ends == {0: format_number(weights[0]), len(weights) - 1: format_number(weights[-1])}
    assert weights[-1] > 0.5 > weights[0]  # the shipped model's head formed: the captions say so only then
    captions = [shown for _, shown in scene.captions]
    assert (
        captions[-1]
        == f"head {head} formed: its weight on “chicken” rose to most of the row by step {learning().steps[-1]}"
    )
    assert captions[0].startswith("step 0, before training: “it” shares its weight almost evenly over the 9 words")
    assert [caption.split(":")[0].split(",")[0] for caption in captions[:-1]] == [
        f"step {step}" for step in learning().steps
    ]
    explained = [k for k, caption in enumerate(captions) if "how wrong its next-word guesses are" in caption]
    assert explained == [1]  # the loss column is said what it is once, at its first number (step 0 has none)


def test_another_sentence_says_the_numbers_are_the_lesson_sentences():
    scene, inspector = built_scene("the cat sat on the mat .")
    shown = {label.shown: label for label in visible_texts(scene)}
    assert "not this record's sentence: during training, on the lesson sentence" in shown
    assert f"“{learning().sentence}”" in [getattr(label, "full", None) for label in shown.values()]
    assert inspector.problems == [] and min(inspector.shares) >= support.FRAME_SHARE
    same, _ = built_scene()
    assert not any("not this record's sentence" in label.shown for label in visible_texts(same))


def test_in_motion_no_text_loses_contrast_or_is_cut_and_it_ends_as_the_still():
    played, inspector = build_in_motion(Learning, toy_record())
    assert inspector.plays >= 3 and inspector.problems == []
    settled, _ = built_scene()
    assert settled.renderer.time == pytest.approx(played.renderer.time)
    assert_same_end(end_state(settled), end_state(played))


def test_a_record_without_training_leaves_the_scene_out_or_is_refused_by_name():
    from blockviz.block_record import record

    seeded = record("the cat sat")
    (entry,) = catalog.lookup(["learning"])
    one_block = [e.order for e in catalog.entries() if e.name != "learning" and e.missing_for(toy_record()) is None]
    assert entry.needs == "training" and entry.order > max(one_block)  # the last of a one-block record's
    assert "learning" not in [e.name for e in catalog.for_record(catalog.lookup(["all"]), seeded)]
    assert "learning" in [e.name for e in catalog.for_record(catalog.lookup(["all"]), toy_record())]
    with pytest.raises(BlockvizError, match=r"^scene 'learning' cannot be drawn: .*try --model toy$"):
        catalog.for_record([entry], seeded, asked=["learning"])
    with pytest.raises(BlockvizError, match=r"^the learning scene cannot be drawn: .*try --model toy$"):
        build(Learning, seeded)  # built by hand all the same: one line, no traceback from deep inside


def test_the_loss_curve_has_an_axis_from_its_smallest_to_its_largest_loss():
    scene, _ = built_scene()
    recorded = [(loss, k) for k, loss in enumerate(learning().losses) if loss is not None]
    (low, lowest), (high, highest) = min(recorded), max(recorded)
    arrow, first, last, _ = scene.loss_axis
    assert (first.shown, last.shown) == (format_number(low), format_number(high))
    assert first.source == ("learning", "losses", lowest) and last.source == ("learning", "losses", highest)
    start, end = arrow.get_start()[0], arrow.get_end()[0]
    assert first.get_x() == pytest.approx(start) and last.get_x() == pytest.approx(end)  # under its ends
    assert start < end  # the smaller loss left, the arrow towards the larger
    assert scene.curve_pieces[lowest][1].get_x() == pytest.approx(start, abs=1e-6)  # its dot at the axis's ends
    assert scene.curve_pieces[highest][1].get_x() == pytest.approx(end, abs=1e-6)
    assert "step \u2193" in {label.shown for label in visible_texts(scene)}


def test_the_loss_axis_end_numbers_stand_apart_as_two_ends():
    """ "0.52" and "0.94" under the axis's ends stood 6 px apart at 480p, read as one run of text:
    the curve is widened so that they stand at least 12 px (a number's height) apart."""
    scene, _ = built_scene()
    _, first, last, _ = scene.loss_axis
    gap_px = (last.get_left()[0] - first.get_right()[0]) * 480 / 8
    assert gap_px >= 12, gap_px
