"""No two labels stacked one above the other closer than 4 px at 854 × 480 (issue 36: value
mixing's "“it”" stood 2.6 px above "+ 7 more", softmax's "+ 7" 3.6 px above "hidden"), after every
play of every scene of the three lectures: "the cat sat" and the chicken sentence (``--token
it --head auto``) on the toy model, and MiniLM layer 3 (``--token it --head auto``; slow, skipped
when the model is not installed). Measured on the texts' drawn glyphs (:func:`support.boxes_of`);
texts side by side on one line (a sum's terms, a tuple's commas) are spacing, not labels."""

from __future__ import annotations

import functools

import pytest
from manim import DOWN, LEFT
from models_support import packaged_model_installed
from support import THIRTEEN_TOKENS, close_stacked_pairs, play_by_play, visible_texts
from support_minilm import OPTIONS, lecture_plays, minilm_layer_3

from blockviz.recording import record
from blockviz.scenes.catalog import entries, for_record, lookup
from blockviz.scenes.look import MIN_LABEL_GAP_PIXELS

LECTURES = {
    "the cat sat": ("the cat sat", None, {}),
    "chicken": (THIRTEEN_TOKENS, None, {"token": "it", "head": "auto"}),
    "minilm layer 3": (THIRTEEN_TOKENS, "minilm", OPTIONS),
}
"""Lecture → (sentence, model, the scene options its command chooses)."""


@functools.cache
def lecture_record(lecture: str):
    sentence, model, _ = LECTURES[lecture]
    return minilm_layer_3() if model else record(sentence)


def test_the_check_finds_two_labels_3_px_apart_and_passes_5_px():
    from blockviz.scenes.look import look
    from blockviz.scenes.text import text

    upper = text("“it”", 24, look("dark").query)
    lower = text("+ 7 more", 24, look("dark").muted).next_to(upper, DOWN, buff=3 / 60, aligned_edge=LEFT)
    beside = text("Σ", 24, look("dark").text).next_to(upper, LEFT, buff=1 / 60)  # a line's next word, not a label
    for label, shown in ((upper, "“it”"), (lower, "+ 7 more"), (beside, "Σ")):
        label.shown = shown
    ((gap, one, other),) = close_stacked_pairs([upper, lower, beside])
    assert gap == pytest.approx(3.0, abs=0.05) and {one, other} == {"“it”", "+ 7 more"}
    lower.shift(DOWN * 2 / 60)
    assert close_stacked_pairs([upper, lower, beside]) == []


def cases(lecture: str) -> list[tuple[str, str]]:
    """``(lecture, scene)`` for each scene the lecture ``lecture`` shows, as ``for_record`` keeps them."""
    return [(lecture, entry.name) for entry in for_record(entries(), lecture_record(lecture))]


TOY_NOT_YET: dict[tuple[str, str], str] = {}
"""Scenes of the toy lectures whose labels still crowd, and where (strict: each fails until fixed)."""


@pytest.mark.parametrize(
    ("lecture", "scene_name"),
    [
        pytest.param(*case, marks=pytest.mark.xfail(reason=TOY_NOT_YET[case], strict=True))
        if case in TOY_NOT_YET
        else case
        for case in cases("the cat sat") + cases("chicken")
    ],
)
def test_no_two_labels_of_a_toy_lecture_are_closer_than_4_px(lecture, scene_name):
    assert_labels_clear(lecture, scene_name)


NOT_YET: dict[str, str] = {}
"""MiniLM's scenes whose labels still crowd, and where (strict: each fails until fixed)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "scene_name",
    [
        pytest.param(entry.name, marks=pytest.mark.xfail(reason=NOT_YET[entry.name], strict=True))
        if entry.name in NOT_YET
        else entry.name
        for entry in entries()
    ],
)
def test_no_two_labels_of_minilms_lecture_are_closer_than_4_px(scene_name):
    """Every catalogued scene; those MiniLM's record cannot show (it predicts no word) are skipped."""
    if not packaged_model_installed("minilm"):
        pytest.skip("the packaged MiniLM is not installed (make setup installs it)")
    if scene_name not in [entry.name for entry in for_record(entries(), lecture_record("minilm layer 3"))]:
        pytest.skip(f"MiniLM's lecture has no {scene_name} scene")
    _, inspector, seen = lecture_plays(scene_name)  # the build test_head_auto.py reads too
    assert inspector.problems == []
    assert_none_close([play["close pairs"] for play in seen])


def assert_labels_clear(lecture: str, scene_name: str) -> None:
    (entry,) = lookup([scene_name])
    _, seen = play_by_play(
        entry.scene_class(),
        lecture_record(lecture),
        lambda scene: close_stacked_pairs(visible_texts(scene)),
        **LECTURES[lecture][2],
    )
    assert_none_close(seen)


def assert_none_close(seen: list) -> None:
    """``seen``: :func:`support.close_stacked_pairs` after each play."""
    close = sorted({pair for play in seen for pair in play})
    assert close == [], f"labels closer than {MIN_LABEL_GAP_PIXELS} px: {close}"
