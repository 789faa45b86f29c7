"""Colour scales a class can read (issue 36): in every scene of the default lecture ("the cat
sat"), the chicken lecture (--token it) and MiniLM layer 3 (--head auto), after every play, each
signed grid's largest shown |value| reaches at least 60 % of its scale and at most 5 % of its
shown cells are clipped — read off the grids the scene draws (no render)."""

from __future__ import annotations

import math

import pytest
from support import play_by_play

from blockviz.recording import record
from blockviz.scale_limits import nice_limit, shown_limit
from blockviz.scenes.catalog import entries
from blockviz.scenes.colour_bar import grids_in
from blockviz.scenes.shown_scales import ScalePool

CHICKEN = "The chicken didn't cross the road because it was too tired."
LECTURES = {
    "the cat sat": (lambda: record("the cat sat"), {}),
    "chicken": (lambda: record(CHICKEN), {"token": "it"}),
    "minilm": (lambda: record(CHICKEN, "minilm", layer=3), {"head": "auto"}),
}


def unreadable_grids(scene) -> list[str]:
    """Each signed grid drawn now whose largest shown |value| (blocked cells left out) is under 60 %
    of its scale, or that clips more than 5 % of its shown cells."""
    found = []
    for grid in grids_in(scene.mobjects, scene.look.background):
        if grid.color_rule != "signed":
            continue
        shown = [
            abs(grid.values[i][j])
            for i, j in grid.cells
            if not grid.is_blocked(i, j) and math.isfinite(grid.values[i][j])
        ]
        if not shown or max(shown) == 0:  # zeros are white on any scale
            continue
        saturation = max(shown) / grid.color_limit
        clipped = sum(value > grid.color_limit for value in shown) / len(shown)
        if saturation < 0.6 or clipped > 0.05:
            source = grid.source(*next(iter(grid.cells))) if callable(grid.source) else grid.source
            found.append(f"{source[:2]}: largest {saturation:.0%} of its scale, {clipped:.0%} clipped")
    return found


@pytest.mark.parametrize("lecture", LECTURES)
def test_every_grid_of_the_lecture_fills_its_colour_scale(lecture):
    make, options = LECTURES[lecture]
    try:
        rec = make()
    except Exception as error:  # noqa: BLE001 - the packaged MiniLM is an optional extra
        pytest.skip(f"{lecture} cannot be recorded here ({error})")
    problems = []
    for entry in entries():
        if entry.needs is not None and entry.missing_for(rec) is not None:
            continue
        _, seen = play_by_play(entry.scene_class(), rec, unreadable_grids, **options)
        problems += [f"{entry.name} play {play}: {found}" for play, found in enumerate(seen, 1) if found]
    assert problems == []


def test_a_scale_is_chosen_from_what_is_shown_robust_to_one_outlier():
    # "the cat sat"'s old scores scale was ±21.18 for scaled scores reaching 13 % of it
    assert shown_limit([2.75, -1.3, float("-inf")]).limit == 3.0
    one_outlier = shown_limit([0.5] * 39 + [4.97])  # 4.97 is 9.9 × the rest: clipped, marked
    assert (one_outlier.limit, one_outlier.clipped) == (0.5, True)
    two_sizes = shown_limit([2.10] * 39 + [4.97])  # 2.4 ×: no outlier, 2.10 and 4.97 two colours
    assert (two_sizes.limit, two_sizes.clipped) == (5.0, False)
    assert [nice_limit(v) for v in (0.93, 1.01, 5.89, 21.18, 0.0031)] == [1.0, 1.25, 6.0, 25.0, 0.004]


def test_a_scene_shares_a_scale_only_with_a_grid_that_fills_it():
    pool = ScalePool()
    x = pool.limit_for("residual", shown_limit([1.9]), "resid_pre")
    like = pool.limit_for("residual", shown_limit([1.3]), "ln1_centred")  # 65 % of 2: shares x's
    small = pool.limit_for("residual", shown_limit([0.4]), "attn_out")  # 20 % of 2: its own
    assert (x, like, small) == (2.0, 2.0, 0.4)
