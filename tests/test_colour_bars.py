"""Colour bars and colour scales in the scenes (issue 24): every scene that colours a grid shows a
bar for each scale on screen, numbered with the record's scale limits; inside one equation
(LayerNorm, the FFN) a larger |value| of one quantity family is never paler than a smaller one;
on the light page a 0.00 cell keeps a visible edge."""

from __future__ import annotations

import functools

import pytest
from manim import LEFT, UP, config
from matplotlib.colors import to_rgb
from support import STACK_RECORDS, build, drawn, named_record, play_by_play, record_value, shows

from blockviz import style
from blockviz.scale_limits import nice_limit
from blockviz.scenes.catalog import entries, lookup
from blockviz.scenes.colour_bar import (
    TITLE_GAP,
    ColourBar,
    ShownScale,
    band_rows,
    bar_row_height,
    bars_of,
    colour_bar,
    end_decimals,
    layout_top,
    natural_bottom,
    one_line_height,
    reserve_band,
    rows_of_bars,
)
from blockviz.scenes.look import FRAME_MARGIN, TITLE_SIZE, contrast, look
from blockviz.scenes.text import layout_key, text
from blockviz.style import format_number

RECORD = "default"
SCENES = [entry.name for entry in entries() if shows(entry, RECORD)]


def drawn_cells(scene) -> list:
    """``(grid, cell)`` for every grid cell drawn coloured now (filled in another colour than the
    page, not a ghost), read off the scene's mobjects: a cell is a ``Rectangle`` that knows its grid."""
    found = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            owner = getattr(member, "grid_of", None)
            if owner is None or getattr(member, "ghost", False) or member.get_fill_opacity() < 0.01:
                continue
            if member.get_fill_color().to_hex().lower() == scene.look.background.lower():
                continue  # an empty cell: its numbers and colour are still to come
            if owner() is not None:
                found.append((owner(), member))
    return found


def scales_on_screen(scene) -> set[tuple[str, float]]:
    """The (rule, limit) of every grid with a cell drawn coloured now."""
    scales = set()
    for grid, _ in drawn_cells(scene):
        if grid.color_rule == "signed":
            scales.add(("signed", round(grid.color_limit, 6)))
        elif grid.color_rule == "weights" or getattr(grid, "weights_shown", False):
            scales.add(("weights", 1.0))
    return scales


def bars_on_screen(scene) -> list[tuple[str, float, list[str]]]:
    return [
        (bar.scale_shown.rule, round(bar.scale_shown.limit, 6), [label.shown for label in bar.numbers])
        for bar in bars_of(scene)
        if bar.get_fill_opacity() > 0.01 or any(label.get_fill_opacity() > 0.01 for label in bar.numbers)
    ]


def title_corner(scene) -> tuple[float, float] | None:
    """The title's left edge and top, while it is on screen."""
    title = scene.title_mobject
    return None if title is None or title not in scene.mobjects else (title.get_left()[0], title.get_top()[1])


def signed_limits_and_largest(scene) -> list[tuple[float, float]]:
    """``(scale limit, largest shown |value|)`` of every signed grid with a cell drawn coloured now."""
    return [
        (grid.color_limit, max(abs(grid.values[i][j]) for i, j in grid.cells))
        for grid in {id(grid): grid for grid, _ in drawn_cells(scene)}.values()
        if grid.color_rule == "signed"
    ]


def paleness(colour: str) -> float:
    """CIE L* of a fill (0 black – 100 white): the diverging map's two arms darken alike with |value|."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 116 * luminance ** (1 / 3) - 16 if luminance > 0.008856 else 903.3 * luminance


def pale_inversions(scene) -> list[str]:
    """Pairs of drawn cells of one family (parameters, or activations) on one scale where the
    larger |value| is the paler one, by more than 5 L* (the two arms of the map differ by up to 4
    at one |value|)."""
    cells: dict = {}
    for grid, cell in drawn_cells(scene):
        if grid.color_rule != "signed":
            continue
        fill = cell.get_fill_color().to_hex()
        key = {id(c): k for k, c in grid.cells.items()}.get(id(cell))
        if key is None:
            continue
        source = grid.source(*key) if callable(grid.source) else grid.source + key
        family = ("parameters" if source[0] == "params" else "activations", grid.color_limit)
        value = grid.values[key[0]][key[1]]
        cells.setdefault(family, []).append((abs(value), paleness(fill), f"{source[0]} {value:.2f}"))
    found = []
    for family, members in cells.items():
        for size, pale, name in members:
            for other_size, other_pale, other in members:
                if size > other_size + 0.02 and pale > other_pale + 5:
                    found.append(f"{family}: {name} paler than {other}")
    return found


LABEL_GAP_PX = 4
"""The least room between two labels (issue 36: "'it'" stood 2 px above "+ 10 more")."""


def box_gap_px(one, other) -> float:
    """Pixels at 854 × 480 between the bounding boxes of ``one`` and ``other`` (0 when they touch or overlap)."""
    dx = max(other.get_left()[0] - one.get_right()[0], one.get_left()[0] - other.get_right()[0], 0.0)
    dy = max(other.get_bottom()[1] - one.get_top()[1], one.get_bottom()[1] - other.get_top()[1], 0.0)
    return max(dx, dy) * 480 / 8


def title_size_and_least_gap(scene) -> tuple[float, float]:
    """The title's width over its natural width, and the fewest pixels between two of title and bars."""
    title, bars = scene.title_mobject, bars_of(scene)
    boxes = [title, *bars] if title in scene.mobjects else bars
    gaps = [box_gap_px(a, b) for k, a in enumerate(boxes) for b in boxes[k + 1 :]]
    return (title.width / title.natural_width if hasattr(title, "natural_width") else 1.0), min(gaps, default=99)


def picture_top(scene) -> float:
    """The highest point drawn but the title, the caption and the colour bars."""
    furniture = {
        id(member)
        for mobject in (scene.title_mobject, scene.caption, scene.colour_bars.group)
        if mobject is not None
        for member in mobject.get_family()
    }
    tops = [
        member.get_top()[1]
        for mobject in scene.mobjects
        for member in mobject.get_family()
        if id(member) not in furniture and drawn(member) and not getattr(member, "ghost", False)
    ]
    return max(tops, default=-config.frame_height / 2)


def gap_under_bars(scene) -> float | None:
    """Pixels at 854 × 480 from the lowest bar standing under the title down to the picture, if one does."""
    title = scene.title_mobject
    under = [bar for bar in bars_of(scene) if bar.get_top()[1] < natural_bottom(title)]
    if not under:
        return None
    return (min(bar.get_bottom()[1] for bar in under) - picture_top(scene)) * 480 / config.frame_height


WATCHES = {
    RECORD: {
        "scales": scales_on_screen,
        "bars": bars_on_screen,
        "title corner": title_corner,
        "signed limits": signed_limits_and_largest,
        "pale": pale_inversions,
    },
    "toy": {
        "pale": pale_inversions,
        "title size, least gap": title_size_and_least_gap,
        "gap under bars": gap_under_bars,
    },
}
"""Record → what the tests watch after every play of a scene built on it: name → ``watch(scene)``."""


@functools.cache
def watched(scene_name: str, record_name: str) -> tuple:
    """``(scene, [{watch name: what it saw}, … one a play])``: the scene built on the record once
    a module with every watch of :data:`WATCHES`, for all the tests that read its plays."""
    (entry,) = lookup([scene_name])
    watches = WATCHES[record_name]
    return play_by_play(
        entry.scene_class(),
        named_record(record_name),
        lambda scene: {name: see(scene) for name, see in watches.items()},
    )


def seen(scene_name: str, record_name: str, watch: str) -> list:
    """What the watch ``watch`` of :data:`WATCHES` saw after each play of the scene on the record."""
    return [play[watch] for play in watched(scene_name, record_name)[1]]


@pytest.mark.parametrize("scene_name", SCENES)
def test_every_scene_that_colours_a_grid_has_a_bar_numbered_with_its_scale(scene_name):
    for play, (scales, bars) in enumerate(
        zip(seen(scene_name, RECORD, "scales"), seen(scene_name, RECORD, "bars")), start=1
    ):
        assert {(rule, limit) for rule, limit, _ in bars} == scales, f"play {play}"
        for rule, limit, numbers in bars:
            places = end_decimals(limit)
            expected = (
                ["0", "1"] if rule == "weights" else [format_number(-limit, places), format_number(limit, places)]
            )
            assert numbers == expected, f"play {play}: {numbers}"
            if rule == "signed":  # a scale a viewer reads at a glance: 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 × 10^k
                assert nice_limit(limit) == pytest.approx(limit, rel=1e-9)


def test_the_bars_numbers_are_the_scales_of_the_grids_on_screen():
    """LayerNorm on the seeded block: γ = 1 and β = 0 are drawn on a scale ending at 1; each bar's
    end is the largest shown |value| of its grids rounded up (each reaches 60 % of it at least)."""
    scene, _ = watched("layer-norm", RECORD)
    bars = {bar.scale_shown.words: bar for bar in bars_of(scene)}
    assert "\u03b3, \u03b2" in bars
    assert [label.value for label in bars["\u03b3, \u03b2"].numbers] == [-1.0, 1.0]
    limits = seen("layer-norm", RECORD, "signed limits")
    for limit, largest in (pair for play in limits for pair in play if pair[1] > 0):  # zeros: white on any scale
        assert 0.6 * limit <= largest <= limit  # its own scale (75 %) or one shared with a like grid (60 %)


@pytest.mark.parametrize("scene_name", ["layer-norm", "softmax"])
def test_every_bar_number_is_the_record_value_its_source_names(scene_name):
    rec = named_record(RECORD)
    _, inspector = build(lookup([scene_name])[0].scene_class(), rec, theme="light")
    assert inspector.problems == []
    assert len(inspector.bar_numbers) >= 4
    for label in inspector.bar_numbers.values():
        assert label.shown == format_number(record_value(rec, label.source), label.decimals), label.source
    assert all(label.source[0] != "scale_limit" for label in inspector.numbers.values())


@pytest.mark.parametrize("scene_name", ["layer-norm", "ffn"])
@pytest.mark.parametrize("record_name", ["default", "toy"])
def test_on_one_scale_a_larger_value_is_never_paler(scene_name, record_name):
    """LayerNorm's and the FFN's rows each on a scale chosen from what they show (issue 36: x and
    attn(x) are not pale on one wide scale): after every play, no drawn cell is paler than one on
    the same scale with a smaller |value|."""
    assert [found for found in seen(scene_name, record_name, "pale") if found] == []


def test_a_quantity_drawn_twice_has_one_scale_and_one_bar():
    """The multi-head scene of a d_model wider than its slots draws the focus row's concatenation
    twice (a row, and a column beside W_O's rows, each showing some of its entries): one
    quantity, one scale, one bar (they were 2.5 and 4.0, two bars both named "concat")."""
    from blockviz.scenes.colour_bar import grid_source
    from blockviz.scenes.shown_scales import source_quantity

    (entry,) = lookup(["multi-head"])

    def watch(scene):
        limits = {}
        for grid, _ in drawn_cells(scene):
            if grid.color_rule == "signed":
                limits.setdefault(source_quantity(grid_source(grid)), set()).add(grid.color_limit)
        return limits, [bar.scale_shown.words for bar in bars_of(scene)]

    _, seen = play_by_play(entry.scene_class(), named_record("64 tokens, d_model 16, d_ff 64, relu"), watch)
    assert any("concat" in limits for limits, _ in seen)
    for play, (limits, names) in enumerate(seen, start=1):
        assert all(len(shown) == 1 for shown in limits.values()), f"play {play}: {limits}"
        assert len(names) == len(set(names)), f"play {play}: {names}"


def test_a_zero_cell_keeps_a_visible_edge_on_the_light_page():
    light = look("light")
    assert contrast(light.cell_edge, light.background) >= 3.0  # WCAG 2.1's 3:1 for graphics
    assert contrast(style.hex_color(style.signed_color(0.0, 1.0)), light.background) < 1.1  # the cell itself vanishes


def test_a_bar_samples_the_matplotlib_map_from_its_low_to_its_high_end():
    scene, _ = watched("ffn", RECORD)
    bar = bars_of(scene)[0]
    assert isinstance(bar, ColourBar)
    fills = [cell.get_fill_color().to_hex().lower() for cell in bar.strip]
    limit = bar.scale_shown.limit
    assert fills[0] == style.hex_color(style.signed_color(-limit * (1 - 1 / len(fills)), limit))
    assert fills[-1] == style.hex_color(style.signed_color(limit * (1 - 1 / len(fills)), limit))


@pytest.mark.parametrize("scene_name", SCENES)
def test_the_title_stays_at_the_top_left_as_bars_come_and_go(scene_name):
    """The title starts at the top left, clear of the bars' corner: no bar ever makes it jump
    (it may shrink, its left edge and top staying put)."""
    corners = [corner for corner in seen(scene_name, RECORD, "title corner") if corner is not None]
    left, top = -config.frame_width / 2 + FRAME_MARGIN, config.frame_height / 2 - FRAME_MARGIN
    assert all(corner == pytest.approx((left, top), abs=1e-3) for corner in corners), corners


@pytest.mark.parametrize("scene_name", SCENES)
def test_bars_that_stay_on_screen_keep_their_places(scene_name):
    shown = [[(rule, limit) for rule, limit, _ in bars] for bars in seen(scene_name, RECORD, "bars")]
    for play, (before, after) in enumerate(zip(shown, shown[1:]), start=2):
        staying = [bar for bar in before if bar in after]
        assert [bar for bar in after if bar in staying] == staying, f"play {play}: {before} → {after}"


def test_a_scenes_bar_and_a_figures_bar_name_a_family_from_the_one_table():
    """Both colour bars read :data:`blockviz.record_fields.SCALE_FAMILIES` (issue 33): the video's
    short name in a scene's corner, the longer one under a figure, for the same family."""
    from blockviz.figures.heatmap import record_scale, weights_scale
    from blockviz.record_fields import SCALE_FAMILIES
    from blockviz.scenes.colour_bar import ShownScale

    rec = named_record(RECORD)
    assert ShownScale("signed", 1.0, ("qkv",)).words == SCALE_FAMILIES["qkv"].bar == "q, k, v"
    assert record_scale(rec, "query").label == SCALE_FAMILIES["qkv"].label == "query, key, value"
    assert ShownScale("signed", 1.0, ("ffn_hidden",)).words == "FFN hidden"
    assert record_scale(rec, "ffn_pre").label.removesuffix(" (clipped)") == "FFN hidden layer"
    assert ShownScale("weights", 1.0).words == "weights (\u221a scale)"
    assert weights_scale().label == "weight (\u221a scale)"


@pytest.mark.parametrize("scene_name", ["multi-head", "block-flow", "ffn", "dot-products"])
def test_bars_keep_the_title_at_its_size_and_4_px_from_it_and_each_other(scene_name):
    """After every play the title is its own size (bars that do not fit beside it stand in a row
    under it) and every two of title and bars are at least 4 px apart, measured on their boxes."""
    sizes_and_gaps = seen(scene_name, "toy", "title size, least gap")
    assert all(size == pytest.approx(1.0) for size, _ in sizes_and_gaps), [size for size, _ in sizes_and_gaps]
    assert min(gap for _, gap in sizes_and_gaps) >= LABEL_GAP_PX, sizes_and_gaps


@pytest.mark.parametrize("scene_name", ["multi-head", "ffn", "learning"])  # value-mixing's bars fit beside its title
def test_the_picture_stays_4_px_under_the_bars_standing_under_the_title(scene_name):
    """Bars standing in rows under the title end at least 4 px above the picture under them, a
    name that reaches a bracket's depth ("attn(x)", "(√ scale)") included: the room kept for
    them is as tall as the bars drawn in it."""
    gaps = [gap for gap in seen(scene_name, "toy", "gap under bars") if gap is not None]
    assert gaps, "no bar stands under the title"
    assert min(gaps) >= LABEL_GAP_PX, [round(gap, 1) for gap in gaps]


def test_a_later_pictures_bars_grow_the_band_under_the_title_and_it_never_shrinks():
    """One bar fits beside a long title (no band); three take one row under it; six, 3–4.3
    units wide each, two rows (13.7 units between the margins hold no four of them); three again
    keep the two rows (a refit keeps its room), and the picture's top drops with each row."""
    title = (
        text("Multi-head attention: 2 heads side by side", TITLE_SIZE, "#ffffff", bold=True)
        .to_edge(UP, buff=FRAME_MARGIN)
        .to_edge(LEFT, buff=FRAME_MARGIN)
    )
    dark = look("dark")
    families = ["residual", "qkv", "scores", "ffn_hidden", "parameters", "norm_parameters"]
    scales = [ShownScale("signed", float(k + 1), (family,)) for k, family in enumerate(families)]
    tops = []
    for shown, rows in ((1, 0), (3, 1), (6, 2), (3, 2)):
        reserve_band(title, scales[:shown], dark)
        assert band_rows(title) == rows
        tops.append(layout_top(title))
    assert tops[0] > tops[1] > tops[2] == tops[3]
    assert tops[1] - tops[2] >= bar_row_height()  # a row's room, at least one bar's height


def test_the_rows_a_band_takes_are_kept_per_title_room_and_are_those_of_bars_built_anew():
    # reserve_band works the rows out once per process (the dry build and each layout a scene tries reserve the same band)
    dark = look("dark")
    scales = (ShownScale("signed", 1.0, ("residual",)), ShownScale("signed", 8.0, ("scores",)))
    rows = []
    for words in ("Softmax", "Multi-head attention: 2 heads side by side, each with its own weights"):
        title = text(words, TITLE_SIZE, "#ffffff", bold=True)
        title.to_edge(UP, buff=FRAME_MARGIN).to_edge(LEFT, buff=FRAME_MARGIN)
        reserve_band(title, list(scales), dark)
        room = config.frame_width / 2 - FRAME_MARGIN - (title.get_left()[0] + title.width + TITLE_GAP)
        anew = rows_of_bars.__wrapped__(scales, dark, room, natural_bottom(title), layout_key())
        rows.append((band_rows(title), anew))
    assert rows == [(0, 0), (1, 1)]  # beside a short title; a row under a long one, kept or built anew


def drawn_parts(bar) -> list[tuple]:
    """Each drawn member of ``bar``: its kind, its text, its points and its fill and stroke colours."""
    return [
        (
            type(member).__name__,
            getattr(member, "shown", ""),
            member.points.tolist(),
            member.get_fill_rgbas().tolist(),
            member.get_stroke_rgbas().tolist(),
        )
        for member in bar.get_family()
        if member.has_points()
    ]


def test_a_bar_copied_from_the_first_one_built_is_drawn_as_a_new_one_and_is_its_own():
    scale, dark = ShownScale("signed", 2.5, ("residual",)), look("dark")
    new = ColourBar(scale, dark, True, 1.2)
    first, second = colour_bar(scale, dark, True, 1.2), colour_bar(scale, dark, True, 1.2)
    assert drawn_parts(first) == drawn_parts(new) and len(drawn_parts(new)) > 30  # 32 strip cells, its edge, texts
    assert [label.shown for label in first.numbers] == ["−2.50", "2.50"] and first.numbers[0] in first.get_family()
    first.shift([1, 0, 0])  # a copy moved leaves the next one where it was built
    assert drawn_parts(second) == drawn_parts(new) == drawn_parts(colour_bar(scale, dark, True, 1.2))
    assert drawn_parts(colour_bar(scale, look("light"), True, 1.2)) != drawn_parts(new)  # another page: its own bar


@pytest.mark.parametrize(
    "scale",
    [
        ShownScale("signed", 1.0, ("residual",)),
        ShownScale("weights", 1.0, ("weights",)),
        ShownScale("signed", 0.25, ("qkv", "scores")),
    ],
)
def test_a_bars_one_line_height_is_that_of_its_bar_at_the_usual_width(scale):
    # measured on the narrow bar (built anyway to reserve the band): the strip's width moves nothing up or down
    assert one_line_height(scale) == ColourBar(scale, look("dark"), one_line=True).height


def test_a_block_views_grids_are_named_by_their_quantity_not_activations():
    """The stack scene draws block 0's and block 1's views of the residual stream (sources
    ``("block", k, "resid_pre", …)``): its bar names that family, "residual stream", as a grid of
    the record's own would be named — not "activations", the name of a scale shared by several."""
    (entry,) = lookup(["stack"])
    _, seen = play_by_play(
        entry.scene_class(),
        named_record(next(iter(STACK_RECORDS))),
        lambda s: [b.scale_shown.words for b in bars_of(s)],
    )
    assert {name for names in seen for name in names} == {"residual stream"}
