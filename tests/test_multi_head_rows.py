"""How many rows of W_O the multi-head scene draws (blockviz.scenes.multi_head): the dry build
searches, its choice travels in the kept plan (blockviz.scenes.kept_plans), and a real build that
takes it draws what a real build that searches again draws, also with the plan read from disk."""

from __future__ import annotations

import math

import numpy as np
import pytest
from manim import VGroup
from support import THIRTEEN_TOKENS, build

from blockviz.recording import record
from blockviz.scenes import kept_plans
from blockviz.scenes.kept_plans import choice_key
from blockviz.scenes.look import MIN_FONT_SIZE
from blockviz.scenes.multi_head import ROOM_CHOICE, ROWS_CHOICE, MultiHead


class Searching(MultiHead):
    """The scene as it was before its plan kept a choice: every build searches from the most rows."""

    def planned_choice(self, name):
        return None


@pytest.fixture
def layouts_built(monkeypatch, tmp_path):
    """An empty plan cache; the list of ``(real build?, rows)`` of each projection built, in order."""
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "cache"))
    kept_plans.forget_plans()
    built = []
    build_projection = MultiHead.build_projection

    def noted(scene, title, row_limit):
        built.append((scene.plans_scales, row_limit))
        return build_projection(scene, title, row_limit)

    monkeypatch.setattr(MultiHead, "build_projection", noted)
    yield built
    kept_plans.forget_plans()


def picture(scene) -> list[tuple]:
    """Every drawn part of what ``scene`` shows at its end: its kind, its points' bytes and its colours."""
    return [
        (type(part).__name__, part.points.tobytes(), part.get_fill_color().to_hex(), part.get_stroke_color().to_hex())
        for part in scene.get_mobject_family_members()
        if len(part.points)
    ]


def test_the_real_build_draws_the_rows_its_dry_build_chose_as_a_search_would(layouts_built):
    rec = record(THIRTEEN_TOKENS)
    planned, _ = build(MultiHead, rec, token="it")
    assert layouts_built == [(False, 8), (False, 7), (False, 6), (False, 5), (True, 5)]  # the real build: one layout
    assert planned.scale_pool.planned[choice_key(ROWS_CHOICE)] == 5.0

    kept_plans.forget_plans()  # a new process: the plan, and its choice, read from its file
    from_disk, _ = build(MultiHead, rec, token="it")
    assert layouts_built[5:] == [(True, 5)]
    assert from_disk.scale_pool.planned is not planned.scale_pool.planned

    searched, _ = build(Searching, rec, token="it")
    assert layouts_built[6:] == [
        (False, 8),
        (False, 7),
        (False, 6),
        (False, 5),
        (True, 8),
        (True, 7),
        (True, 6),
        (True, 5),
    ]
    drawn = picture(searched)
    assert len(drawn) > 100
    assert picture(planned) == drawn
    assert picture(from_disk) == drawn


def test_a_real_build_with_more_room_than_its_dry_build_allowed_for_searches_again(layouts_built, monkeypatch):
    planned_choice = MultiHead.planned_choice

    def less_room(scene, name):  # a plan whose layouts of more rows were legible in any room wider than 0.1
        return 0.1 if name == ROOM_CHOICE else planned_choice(scene, name)

    monkeypatch.setattr(MultiHead, "planned_choice", less_room)
    build(MultiHead, record("the cat sat"))
    assert layouts_built == [(False, 8), (False, 7), (False, 6), (False, 5), (True, 8), (True, 7), (True, 6), (True, 5)]


def test_the_room_for_more_rows_is_where_their_smallest_text_is_the_least_legible_size(layouts_built):
    scene, _ = build(MultiHead, record("the cat sat"))
    (room,) = [limit for (family, _), limit in scene.scale_pool.planned.items() if family == choice_key(ROOM_CHOICE)[0]]
    assert 0 < room < math.inf
    tried = []
    for rows in (8, 7, 6):  # the layouts the search threw away, each scaled as the room found lets it be
        projection = scene.build_projection(scene.title_mobject, rows)
        smallest = scene.smallest_projection_text(projection)
        assert smallest < MIN_FONT_SIZE
        at_room = scene.room_for_more_rows((projection, smallest))
        tried.append(at_room)
        natural_height = projection.natural_size[1]
        VGroup(projection, projection.parts["terms"]).scale(
            at_room / natural_height / (projection.height / natural_height)
        )
        assert scene.smallest_projection_text(projection) == pytest.approx(MIN_FONT_SIZE, rel=1e-9)
    assert room == pytest.approx(min(tried), rel=1e-9)  # the same layouts, placed under another band: rounding
    assert np.isfinite(tried).all()
