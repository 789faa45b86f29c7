"""Grids that build (issue 24): a grid arrives row after row, as 3Blue1Brown's ``LaggedStart``
cascades, never in one frame; W_Q, W_K and W_V stand as matrices in the q/k/v scene; a parameter's
numbers leave only after the caption that names them; a label in flight stays one word."""

from __future__ import annotations

import pytest
from manim import Rectangle, TransformFromCopy, VGroup
from manim.animation.animation import prepare_animation
from manim.utils.rate_functions import linear
from support import built, named_record
from support_motion import (
    TINY,
    built_in_motion,
    changed_share,
    drawn_opacity,
    frames_by_play,
    garbles,
    largest_changes,
)

from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.catalog import lookup
from blockviz.scenes.fades import Conceal, Reveal, cascade_windows, lagged_windows, within
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import look
from blockviz.scenes.text import shortened, text

MOST_CHANGED = 0.05
"""The largest share of a frame's pixels a grid's arrival may change between two frames (issue 24)."""


# -- the timing of a cascade ---------------------------------------------------------------------
def test_lagged_windows_time_parts_as_manims_lagged_start():
    # LaggedStart(a, b, c, lag_ratio=0.5) of 1 s each: b starts at 0.5 s, c at 1 s, all end at 2 s.
    assert lagged_windows(3, 0.5) == [(0.0, 0.5), (0.25, 0.75), (0.5, 1.0)]
    assert lagged_windows(1) == [(0.0, 1.0)]
    assert lagged_windows(0) == []


def test_a_rate_function_within_a_stretch_holds_before_and_after_it():
    stretched = within(linear, 0.25, 0.75)
    assert [stretched(t) for t in (0.0, 0.25, 0.5, 0.75, 1.0)] == [0.0, 0.0, 0.5, 1.0, 1.0]


def small_grid(rows: int = 3) -> NumberGrid:
    values = [[0.5 * (i - j) for j in range(2)] for i in range(rows)]
    return NumberGrid(
        values, [f"r{i}" for i in range(rows)], ["c0", "c1"], look("dark"), color_limit=2.0, source=("constant",)
    )


def test_a_grid_arrives_row_after_row_in_a_reveal():
    """Three rows with lag ratio 0.5 take 0–½, ¼–¾ and ½–1 of the fade; in each row the cells
    come in its first half, the numbers in its second."""
    grid = small_grid()
    reveal = Reveal(grid, rate_func=linear)
    reveal.begin()

    def shown(alpha):
        reveal.interpolate(alpha)
        return [
            (round(grid.cells[i, 0].get_fill_opacity(), 3), round(drawn_opacity(grid.labels[i, 0]), 3))
            for i in range(3)
        ]

    # at 0.125: row 0 a quarter through its stretch (its cells half in); at 0.375: row 0 three
    # quarters (its numbers half in), row 1 a quarter; at 0.875: row 2 three quarters
    assert shown(0.125) == [(0.5, 0.0), (0.0, 0.0), (0.0, 0.0)]
    assert shown(0.375) == [(1.0, 0.5), (0.5, 0.0), (0.0, 0.0)]
    assert shown(0.875) == [(1.0, 1.0), (1.0, 1.0), (1.0, 0.5)]


def test_a_grid_leaves_row_after_row_in_a_conceal_and_one_row_goes_cell_by_cell():
    grid = small_grid()
    conceal = Conceal(grid, rate_func=linear)
    conceal.begin()
    conceal.interpolate(0.375)  # row 0 three quarters through (numbers gone, cells half), row 1 a quarter
    assert [round(grid.cells[i, 1].get_fill_opacity(), 3) for i in range(3)] == [0.5, 1.0, 1.0]
    assert [round(drawn_opacity(grid.labels[i, 1]), 3) for i in range(3)] == [0.0, 0.5, 1.0]
    row = small_grid(rows=1)
    assert [len(part) for part in row.arrival_parts()] == [3, 3]  # each column: its cell, its number, its header
    windows = cascade_windows(row)
    assert windows[id(row.cells[0, 0])] == pytest.approx((0.0, 2 / 3))
    assert windows[id(row.cells[0, 1])] == pytest.approx((1 / 3, 1.0))


def test_two_grids_in_one_reveal_arrive_one_after_the_other():
    one, other = small_grid(2), small_grid(2)
    windows = cascade_windows(VGroup(one, other))
    assert [windows[id(grid.cells[i, 0])] for grid in (one, other) for i in range(2)] == [
        pytest.approx(window) for window in [(0.0, 0.4), (0.2, 0.6), (0.4, 0.8), (0.6, 1.0)]
    ]


# -- in the scenes ---------------------------------------------------------------------------------
ARRIVING = ("Reveal", "FadeIn")


def brings_a_grid(animations) -> bool:
    """Whether a play brings grid cells in: a cascade, a recolouring, or a fade-in of a grid."""
    for animation in animations:
        if getattr(animation, "cascade", False):
            return True
        for leaf in leaves(animation):
            mobject = getattr(leaf, "mobject", None)
            if type(leaf).__name__ in ARRIVING and mobject is not None:
                family = mobject.get_family()
                if any(hasattr(member, "arrival_parts") or getattr(member, "recolouring", False) for member in family):
                    return True
    return False


GRID_SCENES = (
    "tokens",
    "layer-norm",
    "qkv",
    "dot-products",
    "mask",
    "softmax",
    "causal-vs-bidirectional",
    "value-mixing",
    "prediction",
    "recap",
    "learning",
    "ffn",
    "multi-head",
)
"""The scenes whose grids arrive (cells coloured and numbered) checked frame by frame."""


@pytest.mark.render
@pytest.mark.parametrize("scene_name", GRID_SCENES)
def test_a_grids_arrival_never_changes_more_than_5_percent_of_the_frame(scene_name):
    """Frames drawn at 160 × 90 and 15 fps (-ql's rate: the fewest frames, the largest steps):
    between two frames of a play that brings grid cells in, at most 5 % of the pixels change
    (were 6–15 %: every row's colour but the worked one arrived in one frame)."""
    (entry,) = lookup([scene_name])
    arrivals, plays = set(), [0]

    class Watched(entry.scene_class()):
        def play(self, *animations, **kwargs):
            plays[0] += 1  # counted as frames_by_play counts them
            if brings_a_grid([prepare_animation(animation) for animation in animations]):
                arrivals.add(plays[0])
            super().play(*animations, **kwargs)

    frames = frames_by_play(Watched, named_record("toy"), token="it")
    assert arrivals, "no play brings a grid in"
    changes = largest_changes(frames)
    assert {play: round(share, 3) for play, share in changes.items() if play in arrivals and share > MOST_CHANGED} == {}


def test_changed_share_counts_pixels_that_step_past_the_level():
    import numpy as np

    one = np.zeros((TINY["pixel_height"], TINY["pixel_width"], 4), dtype=np.uint8)
    other = one.copy()
    other[:9, :, 0] = 200  # a tenth of the rows: a tenth of the pixels
    other[9:18, :, 1] = 10  # under the level: not a change
    assert changed_share(one, other) == pytest.approx(0.1)


def test_the_qkv_scene_shows_w_q_w_k_and_w_v_with_the_records_numbers():
    scene, inspector = built("qkv", "64 tokens, d_model 16, d_ff 64, relu")
    rec = scene.record
    shown = {
        label.source
        for label in inspector.numbers.values()
        if isinstance(label.source, tuple) and label.source[:2] == ("params", "attn.W_K")
    }
    assert shown  # a matrix of W_K, elided: d_model = 16 rows, d_head = 4 columns
    kv = rec.config.kv_head_of(scene.h)
    assert all(source[2] == kv for source in shown)
    assert len({source[3] for source in shown}) < rec.config.d_model


@pytest.mark.parametrize("scene_name", ["qkv", "multi-head"])
def test_parameter_numbers_leave_only_after_the_caption_that_names_them(scene_name):
    """W_O's numbers left while the caption still spoke of them ("…each entry times its row of W_O")."""
    _, inspector = built_in_motion(scene_name, "toy")
    assert [problem for problem in inspector.problems if "caption names" in problem] == []


def test_a_transform_between_two_strings_garbles_and_a_flight_does_not():
    """The token label flew as a transform into a shortened header ("grandmother" → "grandm…")."""
    whole, cut = text("grandmother", 30), shortened("grandmother", 1.0, 24)
    assert cut.shown.endswith("…")
    assert garbles([TransformFromCopy(whole, cut)]) == [f"{cut.shown} → grandmother"]
    assert garbles([whole.copy().animate.move_to([1, 0, 0]).build()]) == []
    assert garbles([TransformFromCopy(Rectangle(), Rectangle().shift([1, 0, 0]))]) == []


def test_a_flying_token_label_lands_glyph_on_glyph():
    from blockviz.scenes.base import RecordScene
    from blockviz.scenes.choreography import fly

    scene = RecordScene(record=named_record("default"))
    source, target = text("grandmother", 30).move_to([-3, 2, 0]), shortened("grandmother", 1.0, 24).move_to([2, 0, 0])
    flight = fly(scene, source, target)
    assert garbles([flight]) == []
    move = leaves(flight)[0]
    move.begin()
    move.interpolate(1.0)
    landed = move.mobject
    assert landed[0].get_center() == pytest.approx(target[0].get_center())
    assert landed.height / source.height == pytest.approx(24 / 30, rel=0.02)
