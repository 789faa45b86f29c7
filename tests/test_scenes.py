"""Every catalogued scene, built without writing video: each number it shows is the record's value
at the label's source, each sum it shows adds up, no label overlaps another or leaves the frame
after any play — and the scene-specific steps (softmax, dot products, mixing, the mask, the
worked example) show what they say. Also the text and grid modules the scenes use (the catalogue:
test_scenes_catalog.py)."""

import dataclasses
import functools
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from manim import Rectangle, Text, tempconfig
from support import (
    FRAME_SHARE,
    FRAMED,
    MORE_RECORDS,
    RECORDS,
    THIRTEEN_TOKENS,
    build,
    built,
    captions_held_to_read,
    named_record,
    parse,
    play_by_play,
    record_value,
    shows,
    small_texts,
    sum_misses,
    visible_texts,
)

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.errors import BlockvizError
from blockviz.scenes.catalog import entries, lookup
from blockviz.scenes.colour_bar import grid_family
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import FONT, contrast, look
from blockviz.scenes.text import formula, formula_cache_path, number, text
from blockviz.scenes.token_axis import visible_slots
from blockviz.style import LIGHT, THEMES, format_number
from blockviz.worked_example import worked_example

ENTRIES = entries()
CASES = [(entry.name, name) for entry in ENTRIES for name in RECORDS if shows(entry, name)]
EVERY_CASE = CASES + [(entry.name, name) for entry in ENTRIES for name in MORE_RECORDS if shows(entry, name)]
FRAMED_CASES = [
    (entry.name, name) for entry in ENTRIES if not entry.lecture_only for name in FRAMED if shows(entry, name)
]


@pytest.mark.parametrize(("scene_name", "record_name"), EVERY_CASE, ids=[f"{s}/{r}" for s, r in EVERY_CASE])
def test_every_scene_shows_the_records_numbers_legibly(scene_name, record_name):
    """Every number is the record's, every shown sum adds up to its shown result within one unit
    of its last digit, no text overlaps or leaves the frame, none is under 11 px at 854 × 480."""
    scene, inspector = built(scene_name, record_name)
    rec = named_record(record_name)
    assert inspector.plays >= 3
    assert inspector.problems == []
    assert small_texts(inspector) is None, small_texts(inspector)
    for label in inspector.numbers.values():
        expected = format_number(record_value(rec, label.source), label.decimals)
        assert label.shown == expected, f"{label.source}: shows {label.shown}, the record has {expected}"
    for parts, total in scene.sums:
        assert sum_misses(parts, total) <= 1 + 1e-6, " + ".join(part.shown for part in parts) + f" = {total.shown}"


@pytest.mark.parametrize(("scene_name", "record_name"), FRAMED_CASES, ids=[f"{s}/{r}" for s, r in FRAMED_CASES])
def test_every_shot_fills_the_frame_between_title_and_caption(scene_name, record_name):
    """After every step, what is drawn (but the title and caption) spans at least 60 % of the band
    between the title and caption bands: the bounding-box measure of shared/measure/frame_share.py."""
    _, inspector = built(scene_name, record_name)
    assert min(inspector.shares) >= FRAME_SHARE, [round(share, 2) for share in inspector.shares]


def thirteen_tokens(scene_name: str) -> str:
    """The 13-token record the scene can show: the seeded block's, or the toy model's for a scene that
    needs it, or for a scene of a stack of blocks the copy model's 14 tokens."""
    (entry,) = lookup([scene_name])
    return next(name for name in ("13 tokens", "toy", "copy") if shows(entry, name))


LIGHT_RECORD = "toy"
"""The record every scene is built on in the light theme too (the CLI's default block: it shows every scene)."""


@pytest.mark.parametrize("scene_name", [entry.name for entry in ENTRIES if shows(entry, LIGHT_RECORD)])
def test_every_scene_is_legible_in_the_light_theme(scene_name):
    """On the white page (documents, projectors) the light theme's own role colours: every text
    at least 4.5:1 against what is behind it after every play, and the rest of the dark theme's
    rules (no overlap, nothing off the frame or under 11 px)."""
    scene, inspector = built(scene_name, LIGHT_RECORD, "light")
    assert str(scene.camera.background_color).lower() == LIGHT.background
    assert inspector.plays >= 3
    assert inspector.problems == []
    assert small_texts(inspector) is None, small_texts(inspector)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_scenes_draw_role_labels_in_their_themes_role_colours(theme):
    """The recap's row headers are the residual stream, the attention output and the FFN in the
    theme's role colours (the dark theme's pink on white was 2.41:1), and no scene module reads
    the dark theme's module-level colours."""
    import pathlib

    import blockviz.scenes

    scene, _ = built("recap", LIGHT_RECORD, theme)
    colours = {label.shown: label.get_fill_color().to_hex().lower() for label in visible_texts(scene)}
    roles = THEMES[theme].roles
    assert (colours["input x"], colours["attention"], colours["FFN"]) == (
        roles["residual"],
        roles["output"],
        roles["ffn"],
    )
    drawn_with = look(theme)
    assert [getattr(drawn_with, role) for role in roles] == list(roles.values())
    assert contrast(drawn_with.highlight, drawn_with.background) >= 4.5  # rotary writes its angle in it
    for module in pathlib.Path(blockviz.scenes.__file__).parent.glob("*.py"):
        assert not re.search(r"\b(QUERY|KEY|VALUE|OUTPUT|RESIDUAL|FFN)_COLOR\b", module.read_text()), module.name


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_recaps_preview_is_outlines_without_text(theme):
    """What is still to come is drawn as empty outlines in the page's grid colour, not as dim
    numbers (1.16:1 on either page): no ghost text has any ink, no ghost shape any fill."""
    from blockviz.scenes.recap import Recap

    def ghosts(scene):
        members = [m for m in scene.get_mobject_family_members() if getattr(m, "ghost", False) and len(m.points)]
        glyphs = [m for m in members if not m.get_stroke_width() or m.get_stroke_opacity() == 0]
        outlines = [m for m in members if m.get_stroke_width() and m.get_stroke_opacity() > 0]
        return members, glyphs, outlines

    _, seen = play_by_play(Recap, named_record(LIGHT_RECORD), ghosts, theme=theme)
    members, glyphs, outlines = seen[0]
    assert members and glyphs and outlines
    assert all(m.get_fill_opacity() == 0 for m in members)
    assert {m.get_stroke_color().to_hex().lower() for m in outlines} == {THEMES[theme].grid}


@pytest.mark.parametrize("scene_name", [entry.name for entry in ENTRIES])
def test_each_caption_stays_while_its_step_holds(scene_name):
    """A caption appears with its step and stays at least as long as it takes to read (its words at
    four a second after 0.6 s; a hold of at least 1 s) before the next."""
    scene, _ = built(scene_name, thirteen_tokens(scene_name))
    assert captions_held_to_read(scene) == []


def test_pace_scales_every_run_time_and_hold(cat_record):
    from blockviz.scenes.mask import Mask

    normal, _ = build(Mask, cat_record)
    slow, _ = build(Mask, cat_record, pace=2.0)
    assert slow.renderer.time == pytest.approx(2 * normal.renderer.time)


def test_headers_of_one_axis_share_one_size_and_punctuation_is_a_quoted_chip():
    from blockviz.scenes.grids import is_quoted
    from blockviz.scenes.text import font_size_of

    scene, _ = built("softmax", "13 tokens")
    grid = next(m for m in scene.mobjects if isinstance(m, NumberGrid))
    for headers in (grid.row_headers, grid.column_headers):
        sizes = {
            round(font_size_of(header if isinstance(header, Text) else header[1]), 3) for header in headers.values()
        }
        assert len(sizes) == 1, sizes
    shown = {header.shown for header in grid.column_headers.values()}
    assert "“.”" in shown and "chic…" in shown  # "chicken" cut with …, not shrunk; "." in quotes
    assert is_quoted(grid.column_headers[12].shown) and len(grid.column_headers[12]) == 2  # a chip behind it


def hidden_under_cells(scene) -> list[str]:
    """Visible labels with an opaque cell drawn after them (on top) over their centre."""
    order = {id(member): k for k, member in enumerate(scene.get_mobject_family_members())}
    cells = [
        (order[id(m)], m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1])
        for m in scene.get_mobject_family_members()
        if isinstance(m, Rectangle) and m.get_fill_opacity() > 0.5
    ]
    hidden = []
    for label in visible_texts(scene):
        x, y, _ = label.get_center()
        if any(k > order[id(label)] and left < x < right and bottom < y < top for k, left, bottom, right, top in cells):
            hidden.append(label.shown)
    return hidden


@pytest.mark.parametrize(("scene_name", "record_name"), CASES, ids=[f"{s}/{r}" for s, r in CASES])
def test_no_label_ends_hidden_under_a_cell(scene_name, record_name):
    scene, _ = built(scene_name, record_name)
    assert hidden_under_cells(scene) == []


@pytest.mark.parametrize("scene_name", [entry.name for entry in ENTRIES if not entry.lecture_only])
def test_every_scene_shows_numbers_of_the_record(scene_name):
    _, inspector = built(scene_name, thirteen_tokens(scene_name))
    assert len(inspector.numbers) >= 6, "the scene shows hardly any numbers"


# -- what each step shows ----------------------------------------------------------------------------
def test_scenes_show_sums_where_they_add(cat_record):
    sums = {
        name: len(built(name, "default")[0].sums)
        for name in ("dot-products", "softmax", "value-mixing", "worked-example", "multi-head", "block-flow")
    }
    d_head, d_model, n = cat_record.config.d_head, cat_record.config.d_model, cat_record.n
    # dot products: the focus row's first two keys; softmax: the worked row's exps and weights, and
    # every converted row of the grid; mixing: each output entry of the worked row; the worked example:
    # the exps and the mixture; multi-head: each attn_out entry; block flow: each entry of both additions.
    assert sums == {
        "dot-products": 2,
        "softmax": 2 + n,
        "value-mixing": d_head,
        "worked-example": 3,
        "multi-head": d_model,
        "block-flow": 2 * d_model,
    }


def test_left_out_keys_and_rows_are_one_explicit_term_read_from_the_record(chicken_record):
    """With 13 tokens, 5 keys are left out: the softmax shows their exps and weights as one term
    each (the record's total less the shown terms), and the grid's rows too; mixing likewise."""
    scene, inspector = built("softmax", "13 tokens")
    remainders = [label for label in inspector.numbers.values() if label.source[0] == "remainder"]
    assert {label.source[1][0] for label in remainders} == {"exp_sums", "constant"}
    worked = [(parts, total) for parts, total in scene.sums if getattr(total, "source", ("",))[0] == "exp_sums"]
    assert len(worked) == 1 and worked[0][0][-1].source[0] == "remainder"
    parts, total = worked[0]
    grid = next(m for m in scene.mobjects if isinstance(m, NumberGrid))
    assert (
        len(parts) == len(grid.shown_columns()) + 1 and len(grid.shown_columns()) < chicken_record.n
    )  # each shown key, and the hidden ones
    mixing, mixing_inspector = built("value-mixing", "13 tokens")
    assert all(parts[-1].source[0] == "remainder" for parts, _ in mixing.sums)


def test_sum_decimals_add_a_decimal_only_where_rounding_breaks_a_sum():
    from blockviz.scenes.block_helpers import adds_up, remainder, sum_decimals

    assert sum_decimals([([0.004, 0.004, 0.004, 0.004], 0.016)]) == 3  # 0.00 × 4 ≠ 0.02; 0.004 × 4 = 0.016 ≈ 0.02
    assert sum_decimals([([0.25, 0.5], 0.75)]) == 2
    assert adds_up([0.004] * 4, 0.016, 3) and not adds_up([0.004] * 4, 0.016, 2)
    rest = remainder(1.0, ("constant", 1.0), [(0.25, ("weights", 0, 0, 0))], 20, "#ffffff")
    assert (rest.shown, rest.source) == ("0.75", ("remainder", ("constant", 1.0), ("weights", 0, 0, 0)))


def sourced(inspector, name: str) -> dict:
    return {label.source[1:]: label for label in inspector.numbers.values() if label.source[0] == name}


def test_softmax_shows_the_records_steps(cat_record):
    from blockviz.scenes.softmax import Softmax

    scene, inspector = build(Softmax, cat_record, detail=3)  # every row worked step by step
    n, h = cat_record.n, 0
    assert set(sourced(inspector, "row_max")) == {(h, i) for i in range(n)}
    assert set(sourced(inspector, "exp_sums")) == {(h, i) for i in range(n)}
    exps = sourced(inspector, "exp_scores")
    assert set(exps) == {(h, i, j) for i in range(n) for j in range(n)}
    for (_, i, j), label in exps.items():
        assert parse(label.shown) <= 1.0
        if cat_record.mask[i, j] == -math.inf:
            assert label.shown == "0"
    grid = next(m for m in scene.mobjects if isinstance(m, NumberGrid))
    for (i, j), label in grid.labels.items():  # the last frame: the weights replaced the scores
        assert label.source == ("weights", h, i, j)
        assert label.shown == (
            "0" if cat_record.mask[i, j] == -math.inf else format_number(cat_record.weights[h, i, j].item())
        )
    said = " | ".join(caption for caption in scene_captions("softmax", cat_record))
    assert "m, the row's largest score; exp(s − m): every exp is ≤ 1, and exp(−∞) = 0" in said  # one line
    assert "query “sat”: its scores against each key" in said  # the worked row names its query
    shown = {t.shown for t in visible_texts(built("softmax", "default")[0])}
    assert "query “sat”" in shown


UNKNOWN_WORDS = "the student read the book because she was curious"
"""A toy record with words outside the toy vocabulary: "she" (the focus, its whole name "she (<unk>)"
1.74 units wide at 20 pt) beside "because" and "was"."""


def test_softmax_keeps_a_header_over_every_shown_column_of_a_word_read_as_unknown():
    """Every key column drawn has a header drawn over its own cells (none given way to a kept
    name): “she (<unk>)” made “because” and “was” vanish and sat across two columns; its column
    now reads "she", its row header the whole name."""
    from blockviz.scenes.softmax import Softmax
    from blockviz.toy.recording import record_toy

    with pytest.warns(UserWarning, match="not in the toy model's vocabulary"):
        rec = record_toy(UNKNOWN_WORDS)
    scene, inspector = build(Softmax, rec, token="she")
    assert inspector.problems == []
    grid = next(m for m in scene.mobjects if isinstance(m, NumberGrid))
    she = rec.tokens.index("she")
    assert grid.row_headers[she].shown == "she (<unk>)" and grid.column_headers[she].shown == "she"
    row = grid.shown_rows()[-1]
    for j in grid.shown_columns():
        header, cell = grid.column_headers[j], grid.cells[row, j]
        assert header.get_fill_opacity() > 0.5 and re.search(r"\w", header.shown), (j, header.shown)
        assert cell.get_left()[0] - 1e-6 <= header.get_left()[0], (j, header.shown)
        assert header.get_right()[0] <= cell.get_right()[0] + 1e-6, (j, header.shown)


def scene_captions(name: str, rec) -> list[str]:
    (entry,) = lookup([name])
    return play_by_play(entry.scene_class(), rec, lambda scene: scene.caption.shown if scene.caption else "")[1]


def test_dot_products_show_the_records_element_wise_products(cat_record):
    from blockviz.scenes.dot_products import WORKED_KEYS, DotProducts

    _, inspector = build(DotProducts, cat_record, detail=3)
    products = sourced(inspector, "qk_products")
    d_head = cat_record.config.d_head
    # every row, its first keys product by product (row 0 has one key; the others two)
    assert set(products) == {
        (0, i, j, c) for i in range(cat_record.n) for j in range(min(i + 1, WORKED_KEYS)) for c in range(d_head)
    }


def test_dot_products_score_rows_stand_level_with_their_query_rows(chicken_record):
    """Score row i is on the line of query row i, also when ⋮ rows follow the focus ("it", 8 of 13)."""
    from blockviz.scenes.dot_products import DotProducts

    scene, _ = build(DotProducts, chicken_record, token="it")
    grids = {
        grid.source[0]: grid
        for grid in scene.mobjects
        if isinstance(grid, NumberGrid) and isinstance(grid.source, tuple)
    }
    query, scores = grids["query"], grids["scaled_scores"]  # the scores grid, its numbers scaled by the end
    assert 8 in scores.shown_rows() and scores.shown_rows() == query.shown_rows()
    for i in query.shown_rows():
        for j in scores.shown_columns():
            assert scores.cells[i, j].get_y() == pytest.approx(query.cells[i, 0].get_y(), abs=1e-3), (i, j)


def test_dot_products_keep_the_query_grids_trailing_ellipsis_clear_of_the_scores():
    """A head 32 wide draws d_head as "0 ⋯ 17 ⋯": the trailing ⋯ right of the query's cells stands
    clear of the first score column (it reached 0.06 units onto it)."""
    from blockviz.scenes.dot_products import DotProducts

    scene, _ = build(DotProducts, record("the cat sat on the mat", BlockConfig(d_model=64, n_heads=2, d_ff=128)))
    query, _, scores = scene.grids
    assert query.column_slots[-1] is None  # the trailing ⋯ this checks
    trailing = max(mark.get_right()[0] for mark in query.ellipsis_group)
    assert trailing > query.cell_group.get_right()[0]
    assert scores.cell_group.get_left()[0] - trailing >= 0.1


def test_dot_products_say_approximately_where_rounded_factors_miss_a_product():
    """ "q0 × k0 + q1 × k1" over "= p0 + p1": "=" only when every written product is the product
    of its written factors (2.46 × 0.36 is 0.89, so a written 0.87 gets "≈")."""
    from blockviz.scenes.dot_products import DotProducts

    scene, _ = build(DotProducts, record(THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64)), token="it")
    signs = []
    for j in range(scene.focus + 1):
        lines, qs, ks, _ = scene.work_lines(scene.focus, j, note=False)
        products = [part for part in lines[1] if getattr(part, "source", ("",))[0] == "qk_products"]
        holds = all(
            abs(float(q.shown.replace("−", "-")) * float(k.shown.replace("−", "-")) - float(p.shown.replace("−", "-")))
            <= 0.5 * 10**-p.decimals + 1e-9
            for q, k, p in zip(qs, ks, products)
        )
        signs.append(lines[1][0].shown)
        assert lines[1][0].shown == ("=" if holds else "≈"), (
            j,
            [q.shown for q in qs],
            [k.shown for k in ks],
            [p.shown for p in products],
        )
    assert "≈" in signs


@pytest.mark.parametrize(
    "sentence, config",
    [("the cat sat", None), (THIRTEEN_TOKENS, None), (THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64))],
    ids=["3 tokens", "13 tokens", "wide"],
)
def test_value_mixing_says_approximately_where_a_shown_weight_times_value_misses(sentence, config):
    """weights × values = products: "≈" when a shown weight times a shown value, rounded, is not
    the shown product (0.12 × −0.36 = −0.04, shown −0.05 from the unrounded numbers), else "="."""
    from blockviz.scenes.value_mixing import ValueMixing

    rec = record(sentence, config)
    scene, _ = build(ValueMixing, rec)
    h, i = scene.h, scene.focus
    columns = [c for c in scene.column_slots() if c is not None]
    misses = [
        (j, c)
        for j in scene.rows_shown
        for c in columns
        if format_number(round(rec.weights[h, i, j].item(), 2) * round(rec.value[h, j, c].item(), 2), 2)
        != format_number(rec.weighted_values(h, i)[j, c].item(), 2)
    ]
    signs = [t.shown for t in visible_texts(scene) if t.shown in ("=", "≈")]
    assert signs == ["≈" if misses else "="], misses


def test_value_mixing_shows_the_records_weighted_values(cat_record):
    _, inspector = built("value-mixing", "default")
    weighted = sourced(inspector, "weighted_values")
    f = cat_record.n - 1
    assert {(h, i, j) for h, i, j, _ in weighted} == {(0, f, j) for j in range(cat_record.n)}


def test_the_focus_token_and_head_choose_the_worked_row(chicken_record):
    from blockviz.scenes.dot_products import WORKED_KEYS, DotProducts

    scene, inspector = build(DotProducts, chicken_record, token="it", head=1)
    it = chicken_record.tokens.index("it")
    worked = {total.source for _, total in scene.sums}
    # "it" may use itself and the 7 tokens before it: the first drawn of them are worked product by product
    assert {source[2] for source in worked} == {it} and {source[1] for source in worked} == {1}
    drawn = [j for j in scene.token_slots(7) if j is not None and j <= it]
    assert {source[3] for source in worked} == set(drawn[:WORKED_KEYS])
    assert {label.source[1] for label in inspector.numbers.values() if label.source[0] != "remainder"} == {1}


def test_the_default_focus_is_the_last_word_and_elision_keeps_its_top_keys(chicken_record):
    from blockviz.scenes.softmax import Softmax

    scene = Softmax(record=chicken_record)
    assert chicken_record.tokens[scene.focus] == "tired"  # not the final "."
    assert Softmax(record=record(". , !")).focus == 2  # no word: the last token
    flagged = dataclasses.replace(
        chicken_record, special=(False,) * 11 + (True, False)
    )  # as if "tired" were a special token
    assert flagged.tokens[Softmax(record=flagged).focus] == "too"
    for record_name in ("13 tokens", "45 tokens", "64 tokens, d_model 16, d_ff 64, relu"):
        shown, _ = built("softmax", record_name)
        grid = next(m for m in shown.mobjects if isinstance(m, NumberGrid))
        top = shown.top_keys_of(shown.focus)[
            :2
        ]  # the two keys it attends to most always fit; a third when there is room
        assert top and set(top) | {0, shown.focus} <= set(grid.shown_columns()) and shown.focus in grid.shown_rows()


def test_the_focus_is_chosen_by_the_one_selector():
    from blockviz.scenes.softmax import Softmax

    rec = record("the cat saw the dog")
    assert Softmax(record=rec, token="the#2").focus == 3
    assert Softmax(record=rec, token="1").focus == 1
    assert Softmax(record=rec).focus == rec.n - 1
    with pytest.raises(BlockvizError, match="the#3"):
        Softmax(record=rec, token="the#3").focus
    with pytest.raises(BlockvizError, match="head 2 does not exist"):
        Softmax(record=rec, head=2).h


def test_worked_example_reads_the_worked_example(cat_record):
    from blockviz.scenes.worked_example import CAPTIONS, EXACT

    example = worked_example()
    scene, inspector = built("worked-example", "default")
    fields = {label.source[1] for label in inspector.numbers.values()}
    assert fields == {"scores", "row_max", "exp_scores", "exp_sum", "weights", "values", "weighted_values", "mixture"}
    assert sorted(total.shown for _, total in scene.sums) == ["0.50", "1.33", "3.00"]
    shown = {t.shown for t in visible_texts(scene)}
    assert {"0.33", "1.00", "1.33", "0.25", "0.75", "0.50", "3.00"} <= shown
    # The exact values written beside the rounded ones are the example's.
    fraction = lambda value: Fraction(value).limit_denominator(100)  # noqa: E731
    assert example.row_max.item() == pytest.approx(math.log(3)) and EXACT["row_max"] == "ln 3"
    assert [fraction(v) for v in example.exp_scores.tolist()] == [Fraction(1, 3), 1] and EXACT["exp_scores"] == "(⅓, 1)"
    assert fraction(example.exp_sum.item()) == Fraction(4, 3) and EXACT["exp_sum"] == "4/3"
    assert [fraction(v) for v in example.weights.tolist()] == [Fraction(1, 4), Fraction(3, 4)] and EXACT[
        "weights"
    ] == "(¼, ¾)"
    assert all(f"= {exact}" in shown for exact in EXACT.values() if exact != "ln 3")
    said = [caption for caption in dict.fromkeys(scene_captions("worked-example", cat_record)) if caption]
    assert said[1:] == list(CAPTIONS)


@pytest.mark.parametrize(
    ("token", "row", "said"),
    [
        (
            None,
            0,
            "“sat” is the last token and sees every token either way, so row “the”: with the mask it uses only itself; without it also the 2 later ones",
        ),
        ("cat", 1, "“cat”: with the mask it uses itself and 1 earlier token; without it also the one after it"),
    ],
)
def test_causal_vs_bidirectional_works_a_row_where_the_two_differ(cat_record, token, row, said):
    from blockviz.scenes.causal_vs_bidirectional import CausalVsBidirectional

    scene, captions = play_by_play(CausalVsBidirectional, cat_record, lambda scene: scene.caption.shown, token=token)
    assert scene.compared_row() == row and said in captions
    encoder = cat_record.counterpart(causal=False)
    assert not torch.equal(cat_record.weights[0, row], encoder.weights[0, row])


def test_causal_vs_bidirectional_shows_both_masks_weights(cat_record):
    _, inspector = built("causal-vs-bidirectional", "default")
    n = cat_record.n
    for variant, mask in (("decoder", cat_record.mask), ("encoder", cat_record.counterpart(causal=False).mask)):
        weights = {
            label.source[3:]: label for label in inspector.numbers.values() if label.source[:2] == (variant, "weights")
        }
        assert set(weights) == {(i, j) for i in range(n) for j in range(n)}
        assert all((label.shown == "0") == (mask[i, j] == -math.inf) for (i, j), label in weights.items())


@pytest.mark.parametrize(
    "sentence", ["cat", 'she said "hi" <b> & 🐈 ok', "cafe\u0301 🐈\u200d⬛ naïve", "bell\x07 and \udcff"]
)
def test_odd_sentences_build(sentence):
    from blockviz.scenes.mask import Mask
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    rec = record(sentence, BlockConfig(d_model=8, n_heads=2))
    for scene_class in (TokensToGrid, Mask):
        _, inspector = build(scene_class, rec)
        assert inspector.problems == []


def test_tokens_are_drawn_as_their_code_points_when_no_font_holds_them():
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    rec = record("bell\x07 and \udcff", BlockConfig(d_model=8, n_heads=2))
    scene, _ = build(TokensToGrid, rec)
    shown = {t.shown for t in visible_texts(scene)}
    assert "U+DCFF" in shown and not any("\udcff" in s or "\x07" in s for s in shown)


def test_mask_renames_the_grid_masked_scores_when_m_is_added(cat_record):
    from blockviz.scenes.mask import MASKED_LABEL, SCALED_LABEL, Mask

    def labels(scene):
        texts = visible_texts(scene)
        shown = [t.shown for t in texts]
        blocked = any(t.shown == "−∞" and (getattr(t, "source", None) or ("",))[0] == "masked_scores" for t in texts)
        return blocked, SCALED_LABEL in shown, all(line in shown for line in MASKED_LABEL)

    _, seen = play_by_play(Mask, cat_record, labels)
    first_masked = next(play for play, (blocked, _, _) in enumerate(seen) if blocked)
    assert first_masked > 0
    assert all(scaled and not masked for _, scaled, masked in seen[:first_masked])
    assert all(masked and not scaled for _, scaled, masked in seen[first_masked:])
    assert MASKED_LABEL == ("masked scores", "= scaled scores + M")


def test_multi_head_leaves_no_times_before_the_products_of_w_o(cat_record):
    """Once W_O's entries are the products concat × W_O, no "×" stands between them and the column."""
    from blockviz.scenes.multi_head import MultiHead

    _, seen = play_by_play(MultiHead, cat_record, lambda scene: "×" in [t.shown for t in visible_texts(scene)])
    assert any(seen) and not seen[-1]


@functools.cache
def wide_multi_head():
    """``(record, scene, [the weights grids' shown columns after each play])``: multi-head on the
    13 tokens through a block of d_model 16 and 4 heads, focus "it", built once for the two tests that read it."""
    from blockviz.scenes.multi_head import MultiHead

    rec = record(THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64))

    def patterns(scene):
        return [
            grid.shown_columns()
            for grid in scene.get_mobject_family_members()
            if isinstance(grid, NumberGrid) and grid.color_rule == "weights"
        ]

    return (rec, *play_by_play(MultiHead, rec, patterns, token="it"))


def test_multi_head_shows_the_key_each_head_attends_to_most():
    """Elided to 8 token slots, the heads' shared columns keep each head's strongest key for the
    focus ("it" attends 0.77 to "'t" in head 2 of the wide block), not only the shown head's."""
    rec, scene, seen = wide_multi_head()
    columns = next(shown for shown in seen if len(shown) == 4)
    for h in range(4):
        strongest = int(rec.weights[h, scene.focus].argmax())
        assert all(strongest in shown for shown in columns), (h, strongest)


def test_causal_vs_bidirectional_shows_the_keys_the_encoder_row_uses_most():
    """The compared row's strongest keys without the mask (later tokens: "too" and "." for "it"
    in the wide block) are drawn, not hidden."""
    from blockviz.scenes.causal_vs_bidirectional import CausalVsBidirectional

    rec = record(THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64))
    scene, _ = build(CausalVsBidirectional, rec, token="it")
    weights = rec.counterpart(causal=False).weights[0, scene.focus]
    shown = [slot for slot in scene.token_slots() if slot is not None]
    assert set(weights.topk(2).indices.tolist()) <= set(shown), (weights.topk(2), shown)


def test_multi_head_products_stand_column_over_column_with_b_o():
    """With d_model 16 (W_O's columns elided, a ⋯ column at the end), each product of concat ×
    W_O stands over its column of b_O (and of attn_out, aligned with it), not shifted by the ⋯ column."""
    _, scene, _ = wide_multi_head()
    grids = {}
    for grid in (m for m in scene.get_mobject_family_members() if isinstance(m, NumberGrid) and callable(m.source)):
        grids[grid.source(0, 0)[0]] = grid
    terms, bias = grids["projection_products"], grids["params"]
    assert None in terms.column_slots
    for j in bias.shown_columns():
        assert terms.cells[terms.shown_rows()[0], j].get_x() == pytest.approx(bias.cells[0, j].get_x(), abs=1e-3), j


def test_mask_leaves_no_plus_before_m_once_it_is_added(cat_record):
    """The masked scores do not read as "masked scores + M" (M added twice) at the end."""
    from blockviz.scenes.mask import Mask

    _, seen = play_by_play(Mask, cat_record, lambda scene: "+" in [t.shown for t in visible_texts(scene)])
    assert seen[0] and not seen[-1]


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "bidirectional"])
def test_mask_captions_match_the_records_mask(causal):
    from blockviz.scenes.mask import MASKED_LABEL, Mask

    rec = record("the cat sat", BlockConfig(causal=causal))
    scene, captions = play_by_play(Mask, rec, lambda scene: scene.caption.shown)
    allowed = [int((rec.mask[i] == 0).sum()) for i in range(rec.n)]
    assert allowed == ([1, 2, 3] if causal else [3, 3, 3])
    said = " | ".join(captions)
    assert "“sat” may use 3 of 3 positions" in said
    if causal:
        assert "−∞ comes in from M" in said and "the allowed keys grow by one" in said
    else:
        assert "−∞" not in said and "grow" not in said and "blocked" not in said.replace("no key is blocked", "")
        assert "every row may use all 3 keys" in said
        assert set(MASKED_LABEL) <= {t.shown for t in visible_texts(scene)}


def test_a_written_sum_that_misses_by_rounding_says_so_with_approx(cat_record):
    from blockviz.scenes.block_helpers import exact

    for name in ("dot-products", "softmax", "block-flow", "value-mixing"):
        scene, _ = built(name, "13 tokens")
        shown = {t.shown for t in visible_texts(scene)}
        if any(
            not exact(parts, total)
            for parts, total in scene.sums
            if all(hasattr(p, "decimals") for p in parts) and hasattr(total, "decimals")
        ):
            assert any("≈" in line for line in shown), name


def test_a_negative_product_after_the_first_is_written_with_a_minus_not_plus_minus(cat_record):
    from blockviz.scenes.block_helpers import later_term
    from blockviz.scenes.dot_products import DotProducts

    source = ("qk_products", 0, 0, 0, 0)
    term = later_term(-0.0312, "#ffffff", source)
    assert (term.shown, term.value, term.source) == ("−0.03", -0.0312, source)
    assert term.width > text("−0.03", 20).width  # "− 0.03": the sign stands apart, like an operator
    assert later_term(0.0312, "#ffffff", source).shown == "0.03"

    def pluses_before_negative_terms(scene):
        texts = visible_texts(scene)
        pluses = [t for t in texts if t.shown == "+"]
        clashes = 0
        for parts, _ in scene.sums:
            for part in parts[1:]:
                if any(part is t for t in texts) and part.shown.startswith("−"):
                    clashes += sum(
                        0 < part.get_left()[0] - plus.get_right()[0] < 0.4 and abs(part.get_y() - plus.get_y()) < 0.1
                        for plus in pluses
                    )
        return clashes

    scene, seen = play_by_play(DotProducts, cat_record, pluses_before_negative_terms)
    assert any(part.shown.startswith("−") for parts, _ in scene.sums for part in parts[1:]), (
        "no negative later term to check"
    )
    assert sum(seen) == 0


def test_a_negative_hidden_share_is_written_minus_not_plus_minus():
    """The hidden keys' share beside a row of weights (softmax, causal vs bidirectional) is
    1 less the shown weights: when they round up it is negative, written "− 0.02"."""
    from blockviz.scenes.block_helpers import plus_before

    negative = number(-0.0213, 20, "#ffffff", source=("constant", -0.0213))
    right = negative.get_right()[0]
    sign, term = plus_before(negative, look("dark"))
    assert (sign.shown, term.shown, term.source, len(term.submobjects)) == ("−", "−0.02", ("constant", -0.0213), 4)
    assert term.get_right()[0] == pytest.approx(right) and sign.get_right()[0] < term.get_left()[0]
    sign, term = plus_before(number(0.0213, 20, "#ffffff", source=("constant", 0.0213)), look("dark"))
    assert (sign.shown, term.shown, len(term.submobjects)) == ("+", "0.02", 4)


def test_the_rest_of_a_written_sum_takes_its_sign_before_its_note():
    """ "− (the rest) 2.71", never "(the rest) −2.71" nor "+ (the rest) −2.71"."""
    from blockviz.scenes.block_helpers import joined, later_term, rest_term

    def written(value):
        rest = number(value, 22, "#ffffff", source=("constant", value))
        return rest_term(rest, text("(the rest)"), text("+"), "#ffffff")

    sign, note, rest = written(-2.7149)
    assert (sign.shown, note.shown, rest.shown, rest.value, rest.source) == (
        "−",
        "(the rest)",
        "−2.71",
        -2.7149,
        ("constant", -2.7149),
    )
    assert len(rest.submobjects) == 4  # drawn "2.71": the sign is the operator
    assert [part.shown for part in written(2.7149)] == ["+", "(the rest)", "2.71"]
    plus = text("+")
    assert [p.shown for p in joined([], later_term(-0.86, "#ffffff", ("constant", -0.86)), plus)] == ["−0.86"]
    assert joined([], later_term(0.86, "#ffffff", ("constant", 0.86)), plus)[0] is plus


def test_a_sum_of_one_beside_weights_that_make_0_99_says_approximately():
    from blockviz.scenes.block_helpers import adds_to

    def weights(*values):
        return [number(v, 20, "#ffffff", source=("constant", v)) for v in values]

    assert adds_to(weights(0.48, 0.1, 0.42), 1.0)
    assert not adds_to(weights(0.484, 0.104, 0.434), 1.0)  # 0.48 + 0.10 + 0.43 = 1.01
    assert not adds_to(weights(0.333, 0.333, 0.334), 1.0)  # 0.33 + 0.33 + 0.33 = 0.99
    scene, _ = built("softmax", "13 tokens")
    rows = [(parts, total) for parts, total in scene.sums if total.shown == "1"]
    assert {adds_to(parts, 1.0) for parts, _ in rows} == {True, False}  # both kinds of row on this record
    marks = [t for t in visible_texts(scene) if t.shown == "≈"]
    for parts, one in rows:
        beside = any(
            abs(mark.get_y() - one.get_y()) < 0.05 and 0 < one.get_left()[0] - mark.get_right()[0] < 0.3
            for mark in marks
        )
        assert beside == (not adds_to(parts, 1.0)), [part.shown for part in parts]


def test_a_grid_is_coloured_on_a_scale_chosen_from_what_it_shows():
    dot_products, _ = built("dot-products", "default")
    grids = [m for m in dot_products.mobjects if isinstance(m, NumberGrid) and m.color_rule == "signed"]
    assert grids
    by_family = {}
    for grid in grids:
        by_family.setdefault(grid_family(grid), []).append(grid)
    for family, same in by_family.items():  # one scale a family's largest shown |value| fills to 60 %, none beyond
        (limit,) = {grid.color_limit for grid in same}
        shown = [abs(grid.values[i][j]) for grid in same for i, j in grid.cells if not grid.is_blocked(i, j)]
        assert 0.6 * limit <= max(shown) <= limit, family
    lone = NumberGrid(np.array([[0.2, -2.4], [1.0, 0.0]]), None, None, look("dark"), source=("scores", 0))
    assert lone.color_limit == 2.5  # outside a scene: its own scale, 2.4 rounded up


# -- text, grids, formulas ------------------------------------------------------------------------------
def test_visible_slots_keep_the_focus_its_top_keys_and_the_first_position():
    assert visible_slots(3, 2) == [0, 1, 2]
    assert visible_slots(13, 6) == [0, None, 4, 5, 6, 7, 8, None]
    assert visible_slots(13, 12) == [0, None, 7, 8, 9, 10, 11, 12]
    assert visible_slots(13, 0) == [0, 1, 2, 3, 4, 5, 6, None]
    assert visible_slots(13, 7, keep=[1, 5]) == [0, 1, None, 5, 6, 7, 8, None]
    for n in range(1, 65):
        for focus in (0, n // 2, n - 1):
            for keep in ((), (n // 3, min(1, n - 1)), (n - 1, n // 4)):  # two kept positions always fit in 8 slots
                slots = visible_slots(n, focus, keep=keep)
                assert len(slots) <= 8 and focus in slots and 0 in slots and set(keep) <= set(slots)
                assert all(a is not None or b is not None for a, b in zip(slots, slots[1:]))  # never two ⋯ side by side


def test_text_is_shown_as_typed_and_grids_elide():
    for typed in ('a "quote" <b> & 🐈', "cafe\u0301", "🐈\u200d⬛"):
        assert text(typed).shown == typed
    values = np.arange(12 * 12, dtype=float).reshape(12, 12)
    grid = NumberGrid(
        values,
        [f"<{i}&>" for i in range(12)],
        None,
        look("dark"),
        color_limit=143.0,
        source=("scores", 0),
        row_focus=11,
        column_focus=11,
    )
    assert grid.shown_rows() == [0, 6, 7, 8, 9, 10, 11]
    assert grid.row_headers[11].shown == "<11&>"
    assert (grid.labels[11, 11].shown, grid.labels[11, 11].source) == (format_number(143.0), ("scores", 0, 11, 11))


def test_a_number_needs_its_source():
    with pytest.raises(ValueError, match="source"):
        number(1.0, source=())
    label = number(-1.5, source=("scores", 0, 1, 2))
    assert (label.shown, label.value, label.decimals, label.source) == ("−1.50", -1.5, 2, ("scores", 0, 1, 2))


LONG_LINE = "the internationalisation of extraordinarily tired chickens, twice over"


def fresh_size(shown: str, font_size: float, folder) -> tuple[float, float]:
    """The width and height of a ``Text`` built by Manim itself in an empty media folder."""
    with tempconfig({"media_dir": str(folder)}):
        fresh = Text(shown, font=FONT, font_size=font_size)
        return fresh.width, fresh.height


def test_text_built_on_a_small_canvas_does_not_change_text_built_later(tmp_path):
    """Pango lays a line out in a canvas as wide as the frame's pixels, so a long line wraps at
    160 × 90: the cached texts (and Manim's text files) are kept apart per canvas."""
    media = tmp_path / "shared-media"
    with tempconfig({"pixel_width": 160, "pixel_height": 90, "media_dir": str(media)}):
        small = text(LONG_LINE, 24)
        small_width = small.width
        small_number = number(12.34, source=("scores", 0, 0, 0)).width
    with tempconfig({"pixel_width": 854, "pixel_height": 480, "media_dir": str(media)}):
        large = text(LONG_LINE, 24)
        large_number = number(12.34, source=("scores", 0, 0, 0)).width
        expected = fresh_size(LONG_LINE, 24, tmp_path / "fresh")
    assert small_width < expected[0] * 0.95  # the small canvas did wrap the line
    assert (large.width, large.height) == pytest.approx(expected, rel=1e-6)
    assert large_number == pytest.approx(small_number, rel=1e-6)  # short texts do not wrap


def test_formulas_are_mathtext_svg_not_latex():
    equation = formula(r"$\frac{q \cdot k}{\sqrt{d_k}}$", "#ffffff", 24)
    assert len(equation.family_members_with_points()) >= 5
    assert 0.2 < equation.height < 1.5


def test_a_formula_built_again_is_a_fresh_parse_of_its_svg_and_its_own_object():
    """Its SVG is parsed once (blockviz.scenes.text._parsed_formula) and copied: the same points
    and colours as a parse of the file, and a change to one formula leaves the next as it was."""
    from manim import SVGMobject

    from blockviz.scenes.text import MATHTEXT_POINTS, slim

    mathtext, size = r"$\frac{q \cdot k}{\sqrt{d_k}}$", 17.5
    first = formula(mathtext, "#abcdef", size)
    first.shift(np.array([1.0, 2.0, 0.0])).set_fill("#000000")
    again = formula(mathtext, "#abcdef", size)
    parsed = SVGMobject(str(formula_cache_path(mathtext, "#abcdef")), height=None, stroke_width=0)
    parsed.scale(size / MATHTEXT_POINTS * 0.0145).set_fill("#abcdef", opacity=1)
    pairs = list(zip(again.get_family(), slim(parsed).get_family(), strict=True))
    assert len(pairs) >= 6
    for copied, fresh in pairs:
        assert np.array_equal(copied.points, fresh.points)
        assert np.array_equal(copied.fill_rgbas, fresh.fill_rgbas)
    assert [glyph.glyph_scale for glyph in again.submobjects] == [glyph.glyph_scale for glyph in first.submobjects]


def test_a_formula_is_parsed_from_a_private_copy_not_in_the_shared_cache_folder(monkeypatch):
    """Manim's SVGMobject writes ``<name>_.svg`` beside the file it parses and removes it: in the
    cache folder every process shares, two renders parsing one formula at once removed each other's."""
    from manim import SVGMobject

    import blockviz.scenes.text as scene_text

    parsed_in = []
    generate = SVGMobject.generate_mobject

    def noting(self):
        parsed_in.append(Path(self.get_file_path()).parent)
        return generate(self)

    monkeypatch.setattr(SVGMobject, "generate_mobject", noting)
    scene_text._parsed_formula.cache_clear()
    mathtext = r"$\sqrt{d_k} + 7$"
    formula(mathtext, "#123456", 20)
    shared = formula_cache_path(mathtext, "#123456").parent
    assert parsed_in and shared not in parsed_in
    assert not list(shared.glob("*_.svg"))


def test_the_formula_cache_is_named_by_everything_that_changes_the_svg(monkeypatch):
    import matplotlib

    import blockviz.scenes.text as scene_text

    first = formula_cache_path("$x$", "#ffffff")
    assert formula_cache_path("$x$", "#ffffff") == first
    assert len({first, formula_cache_path("$y$", "#ffffff"), formula_cache_path("$x$", "#000000")}) == 3
    monkeypatch.setattr(matplotlib, "__version__", "0.0-other")
    assert formula_cache_path("$x$", "#ffffff") != first
    monkeypatch.undo()
    monkeypatch.setattr(scene_text, "MATHTEXT_SETTINGS", {**scene_text.MATHTEXT_SETTINGS, "mathtext.fontset": "stix"})
    assert formula_cache_path("$x$", "#ffffff") != first
    monkeypatch.setattr(scene_text, "MATHTEXT_RECIPE", scene_text.MATHTEXT_RECIPE + 1)
    assert formula_cache_path("$x$", "#ffffff") != first


@pytest.mark.parametrize("n_words", [13, 45])
def test_causal_vs_bidirectional_rows_with_hidden_keys_add_up_to_one(n_words):
    """Where keys are left out, each shown weights row has its hidden keys' share beside it (the
    record's 1 less the shown weights), and the shown numbers add up to 1 within one unit of the
    last digit; every number is the record's."""
    from blockviz.scenes.causal_vs_bidirectional import CausalVsBidirectional

    sentence = THIRTEEN_TOKENS if n_words == 13 else " ".join(f"w{k}" for k in range(n_words))
    rec = record(sentence)
    scene, _ = build(CausalVsBidirectional, rec)
    shown = [slot for slot in scene.slots if slot is not None]
    assert len(scene.rows_of_one) == 2 * len(shown)  # every shown row, in both grids
    for row in scene.rows_of_one:
        assert len(row) == len(shown) + 1 and row[-1].source[0] == "remainder"
        unit = 10 ** -max(label.decimals for label in row)
        assert abs(sum(parse(label.shown) for label in row) - 1.0) <= unit + 1e-9, [label.shown for label in row]
        for label in row:
            assert label.shown == format_number(record_value(rec, label.source), label.decimals)
    assert [header.shown for header in scene.hidden_columns] == [f"{rec.n - len(shown)} more"] * 2


def test_causal_vs_bidirectional_has_no_hidden_column_when_every_key_is_shown(cat_record):
    from blockviz.scenes.causal_vs_bidirectional import CausalVsBidirectional

    scene, _ = build(CausalVsBidirectional, cat_record)
    assert scene.hidden_columns == [] and scene.rows_of_one == []


@pytest.mark.parametrize("wide", [False, True], ids=["d_model 4", "d_model 16"])
def test_qkv_works_one_query_entry_from_the_row_w_q_and_b_q(wide):
    """One entry of the focus's query is worked by hand: the input row's entries times column c
    of W_Q (the record's products), the hidden ones as one term where d_model is elided, plus
    b_Q, add up to the query's entry (c the largest drawn)."""
    from blockviz.scenes.query_key_value import QueryKeyValue

    rec = record(THIRTEEN_TOKENS, BlockConfig(d_model=16, n_heads=4, d_ff=64) if wide else None)
    scene, _ = build(QueryKeyValue, rec, token="it")
    ((terms, total),) = [(parts, total) for parts, total in scene.sums if total.source[0] == "query"]
    _, h, f, c = total.source
    assert (h, f) == (0, 8) and parse(total.shown) == pytest.approx(rec.query[0, 8, c].item(), abs=0.005)
    kinds = [term.source[0] for term in terms]
    assert kinds[-1] == "params" and terms[-1].source[1] == "attn.b_Q"
    if wide:  # the input's drawn columns written, the other 13–14 as one term
        drawn = len([term for term in terms if term.source[0] == "input_products"])
        assert 2 <= drawn <= 4 and kinds == ["input_products"] * drawn + ["remainder", "params"]
    else:
        assert kinds == ["input_products"] * 4 + ["params"]
    for term in terms:
        assert term.shown == format_number(record_value(rec, term.source), term.decimals)
    assert sum_misses(terms, total) <= 1 + 1e-6


def test_captions_name_a_repeated_word_as_its_header_shows_it():
    """A token the sentence has more than once is named in captions as its header shows it
    (“the”, not the#3 as --token takes it): the caption names what is on screen."""
    from blockviz.scenes.softmax import Softmax

    scene = Softmax(record=record("the cat saw The dog and the bird ."), token="the#3")
    assert [scene.token_name(i) for i in range(9)] == ["the", "cat", "saw", "The", "dog", "and", "the", "bird", "."]
    assert [scene.token_name(i) for i in range(8)] == scene.token_names[:8]  # words: headers unquoted
    assert scene.focus == 6
    assert Softmax(record=record("The cat saw the dog"), token="the#2").token_name(3) == "the"


@pytest.mark.parametrize(
    "sentence, options",
    [(THIRTEEN_TOKENS, None), ("the cat sat", None), (THIRTEEN_TOKENS, dict(d_model=16, n_heads=4, d_ff=64))],
    ids=["13 tokens", "3 tokens", "d_model 16"],
)
def test_qkv_captions_stay_under_the_work_lines_rule(sentence, options):
    """The rule under qkv's work lines is never crossed by a caption (a two-line caption in a
    one-line band would run into it)."""
    from blockviz.scenes.query_key_value import QueryKeyValue

    def gap(scene):
        return (
            None
            if scene.caption is None or scene.work_rule not in scene.mobjects
            else scene.work_rule.get_y() - scene.caption.get_top()[1]
        )

    _, gaps = play_by_play(
        QueryKeyValue,
        record(sentence, BlockConfig(**options) if options else None),
        gap,
        token="it" if "it" in sentence else None,
    )
    assert min(g for g in gaps if g is not None) > 0.02, gaps


@pytest.mark.parametrize("sentence", ["the cat sat", THIRTEEN_TOKENS])
def test_tokens_joins_the_grids_with_approx_where_a_shown_sum_is_a_unit_off(sentence):
    """embedding + position "=" input x only where every drawn entry of x is, as shown, the sum
    of the drawn entries; else "≈" and the rounding note."""
    from blockviz.scenes.block_helpers import ROUNDING_NOTE
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    rec = record(sentence)
    scene, _ = build(TokensToGrid, rec)
    grids = [m for m in scene.get_mobject_family_members() if isinstance(m, NumberGrid)]
    embed, pos, x = (
        next(grid for grid in grids if grid.source[0] == field) for field in ("embed", "pos_embed", "resid_pre")
    )
    as_shown = all(
        parse(embed.labels[key].shown) + parse(pos.labels[key].shown)
        == pytest.approx(parse(x.labels[key].shown), abs=1e-6)
        for key in x.labels
    )
    texts = {member.shown for member in visible_texts(scene)}
    assert ("≈" in texts) == (not as_shown) and ("=" in texts) == as_shown
    assert (ROUNDING_NOTE in texts) == (not as_shown)


@pytest.mark.parametrize("sentence", ["the cat sat", THIRTEEN_TOKENS])
def test_layer_norm_says_numbers_are_rounded_where_x_minus_mu_is_a_unit_off(sentence):
    """The x − μ row is the record's, each entry rounded on its own: where one is not the shown x
    less the shown μ, a note says so (and only then)."""
    from blockviz.scenes.layer_norm import ROUNDED_NOTE, LayerNormRow

    rec = record(sentence)
    scene, _ = build(LayerNormRow, rec, token="it" if "it" in sentence.split() else None)
    f = scene.focus
    labels = {
        m.source: m for m in scene.get_mobject_family_members() if hasattr(m, "source") and isinstance(m.source, tuple)
    }
    mean = parse(labels[("ln1_mean", f)].shown)
    off = [
        j
        for j in range(rec.config.d_model)
        if parse(labels[("resid_pre", f, j)].shown) - mean
        != pytest.approx(parse(labels[("ln1_centred", f, j)].shown), abs=1e-6)
    ]
    texts = {member.shown for member in visible_texts(scene)}
    assert (ROUNDED_NOTE in texts) == bool(off), off


def test_a_new_caption_is_in_by_half_its_step_and_never_shares_the_frame_with_the_old():
    from blockviz.scenes.light_timing import CAPTION_IN, CAPTION_OUT, caption_in, caption_out

    assert caption_in(CAPTION_IN) == 1.0 and caption_in(1.0) == 1.0 and CAPTION_IN <= 0.5
    assert caption_out(CAPTION_OUT) == 1.0 and caption_in(0.0) == 0.0 and caption_out(0.0) == 0.0
    for k in range(1001):
        t = k / 1000
        assert caption_out(t) == 1.0 or caption_in(t) == 0.0, t  # the new one starts once the old one is gone
