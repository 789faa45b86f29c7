"""Colour scales a class can read (issue 36) and one scale per quantity in a frame: in every scene
of the default lecture ("the cat sat"), the chicken lecture (--token it) and MiniLM layer 3 (--head
auto), after every play, the signed grids of one colour-scale family are on one scale, no two bars
of one name have different ends, and each family's largest shown |value| reaches at least 60 % of
its scale with at most 5 % of its shown cells clipped — read off the grids the scene draws (no render)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from manim import tempconfig
from support import DRY, play_by_play

from blockviz.recording import record
from blockviz.scale_limits import nice_limit, shown_limit
from blockviz.scenes import colour_bar
from blockviz.scenes.catalog import entries, lookup
from blockviz.scenes.colour_bar import grid_family, grid_source, grids_in, scales_shown
from blockviz.scenes.shown_scales import ScalePool

CHICKEN = "The chicken didn't cross the road because it was too tired."
LECTURES = {
    "the cat sat": (lambda: record("the cat sat"), {}),
    "chicken": (lambda: record(CHICKEN), {"token": "it"}),
    "minilm": (lambda: record(CHICKEN, "minilm", layer=3), {"head": "auto"}),
}


def shown_values(grid) -> list[float]:
    """The |values| of ``grid``'s drawn cells, blocked cells and −∞ left out."""
    return [
        abs(grid.values[i][j]) for i, j in grid.cells if not grid.is_blocked(i, j) and math.isfinite(grid.values[i][j])
    ]


def frame_scales(scene) -> tuple[list[str], dict[tuple[str, float], float]]:
    """What breaks "one quantity, one scale" in the frame drawn now (a colour-scale family whose
    signed grids are on two scales; two bars of one name with different ends; a scale that clips
    more than 5 % of its family's shown cells), and each (family, scale) → the largest |value| its
    grids show in the frame."""
    found, largest = [], {}
    by_family: dict[str, list] = {}
    for grid in grids_in(scene.mobjects, scene.look.background):
        if grid.color_rule == "signed":
            by_family.setdefault(grid_family(grid), []).append(grid)
    for family, grids in by_family.items():
        limits = sorted({float(grid.color_limit) for grid in grids})
        if len(limits) > 1:
            found.append(f"{family} on {len(limits)} scales {limits}")
            continue
        shown = [value for grid in grids for value in shown_values(grid)]
        largest[family, limits[0]] = max(shown, default=0.0)
        clipped = sum(value > limits[0] for value in shown) / max(len(shown), 1)
        if clipped > 0.05:
            found.append(f"{family}: {clipped:.0%} clipped")
    bars: dict[str, set[float]] = {}
    for scale in scales_shown(scene):
        bars.setdefault(scale.words, set()).add(scale.limit)
    found += [f"two bars named {words!r}: {sorted(ends)}" for words, ends in bars.items() if len(ends) > 1]
    return found, largest


def unreadable_scales(seen) -> list[str]:
    """The problems of a scene's frames (:func:`frame_scales` after each play), and each scale
    whose family's largest shown |value| reaches under 60 % of it in every frame that shows it
    (zeros are white on any scale): a grid on screen with larger ones at some moment keeps their
    scale all its time on screen, so it is the scale's fullest frame that must fill it."""
    problems = [f"play {play}: {found}" for play, (found, _) in enumerate(seen, 1) if found]
    fullest: dict[tuple[str, float], float] = {}
    for _, largest in seen:
        for key, value in largest.items():
            fullest[key] = max(fullest.get(key, 0.0), value)
    problems += [
        f"{family} ±{limit}: at most {value / limit:.0%} of it shown"
        for (family, limit), value in fullest.items()
        if 0 < value < 0.6 * limit
    ]
    return problems


def linked_groups(pool: ScalePool) -> list[set[int]]:
    """The requests a plan colours on one scale, found another way than :meth:`ScalePool.plan`'s
    disjoint sets: each frame's (and each "same numbers") requests of one family are a link, and
    groups that meet a link are merged until no link joins two groups; in the order of their first request."""
    same: dict[tuple, set[int]] = {}
    for number, ask in enumerate(pool.requests):
        same.setdefault(ask.key, set()).add(number)
    links = []
    for numbers in [*pool.together, *same.values()]:
        by_family: dict[str, set[int]] = {}
        for number in numbers:
            if pool.requests[number].family is not None:
                by_family.setdefault(pool.requests[number].family, set()).add(number)
        links += by_family.values()
    groups = [{number} for number in range(len(pool.requests))]
    for link in links:
        met = [group for group in groups if group & link]
        groups = [group for group in groups if not group & link] + [set().union(*met)]
    return sorted(groups, key=min)


def reference_plan(pool: ScalePool) -> dict[tuple, float]:
    """The plan of ``pool``'s requests from :func:`linked_groups`: each group's scale chosen from
    all its values, groups sharing scales as single grids do (:meth:`ScalePool.limit_for`)."""
    shared, plan = ScalePool(), {}
    for group in linked_groups(pool):
        asks = [pool.requests[number] for number in sorted(group)]
        values = [value for ask in asks for value in ask.values]
        limit = shared.limit_for(asks[0].family, shown_limit(values, asks[0].family_scale))
        plan.update(dict.fromkeys([ask.key for ask in asks], limit))
    return plan


def lecture_record(lecture: str):
    """The record of ``lecture`` (:data:`LECTURES`) and its scenes' options; the test is skipped
    where it cannot be recorded (the packaged MiniLM is an optional extra)."""
    make, options = LECTURES[lecture]
    try:
        return make(), options
    except Exception as error:  # noqa: BLE001 - the packaged MiniLM is an optional extra
        pytest.skip(f"{lecture} cannot be recorded here ({error})")


@pytest.mark.parametrize("lecture", LECTURES)
def test_every_frame_of_the_lecture_colours_each_quantity_on_one_scale_it_fills(lecture):
    rec, options = lecture_record(lecture)
    problems = []
    for entry in entries():
        if entry.needs is not None and entry.missing_for(rec) is not None:
            continue
        scene, seen = play_by_play(entry.scene_class(), rec, frame_scales, **options)
        problems += [f"{entry.name} {found}" for found in unreadable_scales(seen)]
        if scene.scale_pool.plan() != reference_plan(scene.scale_pool):  # the scene's grids, planned
            problems.append(f"{entry.name}: its plan groups its grids otherwise than linked_groups")
    assert problems == []


def full_dry_plan(scene_class, rec, options: dict, monkeypatch) -> dict[tuple, float]:
    """The plan of a dry build as the scenes made it before the dry build was made cheap: the
    colour bars brought in step with every play and each band of bars reserved by building them
    (:func:`~blockviz.scenes.colour_bar.rows_of_bars` not kept)."""
    with monkeypatch.context() as patched:
        patched.setattr(colour_bar, "rows_of_bars", colour_bar.rows_of_bars.__wrapped__)
        with tempconfig(DRY):
            planner = scene_class(record=rec, skip_animations=True, **options)
            planner.plans_scales = False
            planner.render()
    return planner.made_plan()  # its layout choices too (the multi-head scene's rows of W_O)


def hex_plan(plan: dict[tuple, float]) -> list:
    """``plan``'s requests in order, every float as its hexadecimal form: equal only if equal bit for bit."""
    return [(family, [value.hex() for value in values], limit.hex()) for (family, values), limit in plan.items()]


@pytest.mark.parametrize("lecture", LECTURES)
def test_the_cheap_dry_build_plans_every_scene_as_the_full_one_did(lecture, monkeypatch):
    # the dry build draws no colour bars and keeps the bands it reserved: the plan is the same bits
    rec, options = lecture_record(lecture)
    differ, planned = [], []
    for entry in entries():
        if entry.needs is not None and entry.missing_for(rec) is not None:
            continue
        scene_class = entry.scene_class()
        with tempconfig(DRY):
            cheap = scene_class(record=rec, skip_animations=True, **options)._dry_plan()
        if hex_plan(cheap) != hex_plan(full_dry_plan(scene_class, rec, options, monkeypatch)):
            differ.append(entry.name)
        planned += [entry.name] if cheap else []
    assert differ == []
    assert {"multi-head", "softmax", "dot-products", "value-mixing", "ffn"} <= set(planned)


def test_the_sweep_finds_two_scales_of_one_quantity_in_a_frame():
    # the recap as built before scenes planned their scales: x, attn(x) and FFN(h) on ±3, ±1.5, ±6
    unplanned = type("Unplanned", (lookup(["recap"])[0].scene_class(),), {"plans_scales": False})
    _, seen = play_by_play(unplanned, record("the cat sat"), frame_scales)
    assert "play 3: ['residual on 3 scales [1.5, 3.0, 6.0]']" in unreadable_scales(seen)


def test_the_recap_adds_its_rows_on_one_scale():
    # x + attn(x) + FFN(h) = y for "sat": −2.94 (x, d3) is darker than −1.05 (attn(x), d0)
    scene, _ = play_by_play(lookup(["recap"])[0].scene_class(), record("the cat sat"), lambda scene: None)
    grids = [grid for grid in grids_in(scene.mobjects) if grid_family(grid) == "residual"]
    assert len(grids) >= 4 and {grid.color_limit for grid in grids} == {6.0}


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


def test_a_plan_gives_grids_shown_together_the_scale_of_all_their_cells():
    pool = ScalePool()
    x = pool.request("residual", [1.9, -0.3], None)
    attn = pool.request("residual", [0.4], None)
    ffn = pool.request("residual", [5.9], None)  # on screen with attn(x) only: linked to x through it
    alone = pool.request("residual", [0.7], None)  # never on screen with another residual grid
    scores = pool.request("scores", [6.47], None)  # another family shares nothing
    again = pool.request("scores", [1.71], None)
    twice = pool.request("scores", [1.71], None)  # the same numbers again: the same colours
    pool.observe([SimpleNamespace(scale_request=n) for n in (x, attn, scores, again)])
    pool.observe([SimpleNamespace(scale_request=n) for n in (attn, ffn)])
    plan = pool.plan()
    assert plan[pool.requests[x].key] == plan[pool.requests[ffn].key] == 6.0  # 5.9 rounded up
    assert plan[pool.requests[alone].key] == 0.8 and plan[pool.requests[scores].key] == 8.0
    assert pool.requests[again].key == pool.requests[twice].key and plan[pool.requests[twice].key] == 8.0


def multi_head_frames(scene) -> tuple[dict[str, set[float]], set[tuple[str, float]]]:
    """The scales multi-head's grids of the heads' outputs, concat, its products with W_O and
    attn_out are on in the frame drawn now, by their source, and the bars on screen (name, end)."""
    limits: dict[str, set[float]] = {
        name: set() for name in ("head_outputs", "concat", "projection_products", "attn_out")
    }
    for grid in grids_in(scene.mobjects, scene.look.background):
        name = (grid_source(grid) or ("",))[0]
        if name in limits and grid.color_rule == "signed":
            limits[name].add(float(grid.color_limit))
    return limits, {(scale.words, scale.limit) for scale in scales_shown(scene)}


@pytest.mark.parametrize("lecture", ["the cat sat", "minilm"])
def test_multi_heads_products_share_their_sums_scale_and_bar(lecture):
    # attn_out = Σ_i concat_i · W_O[i] + b_O: the terms and the row they add up to on one scale, one bar
    rec, options = lecture_record(lecture)
    scene, seen = play_by_play(lookup(["multi-head"])[0].scene_class(), rec, multi_head_frames, **options)
    summed = [(limits, bars) for limits, bars in seen if limits["projection_products"] and limits["attn_out"]]
    concatenated = [(limits, bars) for limits, bars in seen if limits["concat"]]
    assert summed and concatenated
    for limits, bars in summed:
        assert len(limits["projection_products"] | limits["attn_out"]) == 1
        assert ("residual stream", limits["attn_out"].pop()) in bars
    for limits, bars in concatenated:  # the heads' outputs side by side: their family, not the residual stream's
        assert len(limits["concat"] | limits["head_outputs"]) == 1
        assert ("heads' outputs", limits["concat"].pop()) in bars
    sums = [(parts, total) for parts, total in scene.sums if total.source[0] == "attn_out"]
    assert sums and all(
        sum(part.value for part in parts) == pytest.approx(total.value, abs=1e-5) for parts, total in sums
    )


def test_disjoint_set_is_scipy_s_published_one_read_without_scipy_spatial():
    import subprocess
    import sys

    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from blockviz.scenes.shown_scales import disjoint_set; groups = disjoint_set(range(4));"
            "groups.merge(0, 2); groups.merge(3, 2); spatial = 'scipy.spatial' in sys.modules;"
            "from scipy.cluster.hierarchy import DisjointSet;"
            "print(spatial, type(groups) is DisjointSet, sorted(map(sorted, groups.subsets())))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["False", "True", "[[0,", "2,", "3],", "[1]]"]
