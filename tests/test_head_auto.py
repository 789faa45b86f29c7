"""``--head auto`` (issue 24): on MiniLM layer 3 and the chicken sentence the head that stands
furthest above its baseline from "it" is head 1, on "chicken" (0.72; baseline 0.11); a trained
model and ``--token WORD`` choose it by default and say so; every scene keeps "chicken" labelled,
its header whole; headers give way to kept names, never the other way round."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from models_support import packaged_model_installed
from support import build, check_scene, visible_texts, watching

from blockviz import BlockConfig, BlockvizError
from blockviz.block_record import record
from blockviz.cli import main
from blockviz.head_choice import choose_head
from blockviz.scenes.catalog import entries
from blockviz.scenes.grids import NumberGrid, header_widths, kept_pitch
from blockviz.scenes.look import look
from blockviz.scenes.token_axis import KeptName
from blockviz.selection import AUTO, default_head

CHICKEN = "The chicken didn't cross the road because it was too tired."
ONE_HEAD = [entry.name for entry in entries() if entry.shows_one_head]
"""The scenes that show one head (``SHOWS_ONE_HEAD`` in their modules): their first caption says why it was chosen."""


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("transformers")
    if not packaged_model_installed("minilm"):
        pytest.fail("the packaged model minilm is not installed: make setup installs it")
    from blockviz.models import record_layer

    return record_layer(CHICKEN, model="minilm", layer=3)


def by_hand_baseline(rec, head: int, query: int, key: int) -> float:
    """The mean weight head ``head`` gives ``key`` from every other query (an encoder: all see it)."""
    others = [q for q in range(rec.n) if q != query]
    return sum(float(rec.weights[head, q, key]) for q in others) / len(others)


def test_auto_to_chicken_picks_head_1_with_the_records_numbers(minilm):
    it, chicken = minilm.tokens.index("it"), minilm.tokens.index("chicken")
    choice = choose_head(minilm, AUTO, it, "chicken")
    assert (choice.head, choice.key, choice.auto) == (1, chicken, True)
    assert choice.weight == pytest.approx(float(minilm.weights[1, it, chicken]), abs=1e-6)
    assert choice.baseline == pytest.approx(by_hand_baseline(minilm, 1, it, chicken), abs=1e-6)
    assert (round(choice.weight, 2), round(choice.baseline, 2)) == (0.72, 0.11)
    margins = [float(minilm.weights[h, it, chicken]) - by_hand_baseline(minilm, h, it, chicken) for h in range(12)]
    assert max(range(12), key=margins.__getitem__) == 1  # an independent argmax over the heads
    assert choose_head(minilm, AUTO, it).head == 1  # without --to: the same head, on "chicken" too
    assert choose_head(minilm, 3, it, "chicken") == choose_head(minilm, 3, it, str(chicken))  # --head N wins
    assert choose_head(minilm, 3, it, "chicken").head == 3 and not choose_head(minilm, 3, it).auto


def test_the_default_head_is_auto_for_a_trained_model_and_a_word():
    assert default_head("minilm", "it") == AUTO
    assert default_head("minilm", None) == 0  # no word named
    assert default_head("minilm", "10") == 0  # a position
    assert default_head("toy", "it") == default_head(None, "it") == default_head("seeded", "it") == 0


def test_render_with_a_model_and_a_word_asks_for_auto(minilm, monkeypatch, tmp_path):
    """The CLI's default, without rendering: what it hands the renderer."""
    import blockviz.cli.render_command as command
    import blockviz.render.rendering as rendering

    asked = {}
    monkeypatch.setattr(command, "command_record", lambda inputs, **_: minilm)
    monkeypatch.setattr(rendering, "render_jobs", lambda rec, jobs, options, **_: asked.update(options=options))
    arguments = ["render", CHICKEN, "--model", "minilm", "--layer", "3", "--scene", "softmax", "-o", str(tmp_path)]
    result = CliRunner().invoke(main, [*arguments, "--token", "it"])
    assert result.exit_code == 0, result.output
    assert (asked["options"].head, asked["options"].to) == (AUTO, None)
    result = CliRunner().invoke(main, [*arguments, "--token", "it", "--head", "4", "--to", "chicken"])
    assert result.exit_code == 0, result.output
    assert (asked["options"].head, asked["options"].to) == (4, "chicken")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--head", "two"], "'two' is neither a head number (0, 1, …) nor auto"),
        (["--head", "auto", "--to", "dog"], "token 'dog' is not in the sentence"),
        (["--head", "5"], "head 5 does not exist"),
    ],
)
def test_a_bad_head_or_key_is_refused_in_one_line(tmp_path, extra, words):
    result = CliRunner().invoke(
        main, ["render", "the cat sat", "--model", "seeded", "--scene", "softmax", "-o", str(tmp_path), *extra]
    )
    assert result.exit_code == 2 and words in result.output, result.output
    assert "Traceback" not in result.output and not list(tmp_path.glob("*.mp4"))


def test_auto_on_a_causal_block_never_picks_a_later_key():
    rec = record("the cat sat on the mat", BlockConfig(n_heads=4, d_model=8))
    choice = choose_head(rec, AUTO, 2)
    assert choice.key <= 2
    with pytest.raises(BlockvizError, match="comes after"):
        choose_head(rec, AUTO, 2, "mat")


def seen_on_screen(scene_class, rec, **options):
    """Every text shown after any play of the scene: (its text, the whole name a header stands for)."""
    seen = []

    class Watched(watching(scene_class)):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.play_listeners.append(
                lambda scene: seen.extend((t.shown, getattr(t, "full", t.shown)) for t in visible_texts(scene))
            )

    scene, inspector = build(Watched, rec, **options)
    return scene, inspector, seen


@pytest.mark.parametrize("entry", [e for e in entries() if not e.needs], ids=lambda e: e.name)
def test_chicken_is_a_whole_header_in_every_scene_with_the_tokens(minilm, entry):
    scene, inspector, seen = seen_on_screen(entry.scene_class(), minilm, token="it", head=AUTO, to="chicken")
    assert scene.h == 1
    cut = {shown for shown, full in seen if full in ("chicken", "it") and shown != full}
    assert not cut, f"{entry.name}: {cut}"
    if entry.token_axis:  # the scenes that draw the sentence's tokens (TOKEN_AXIS in their modules)
        assert "chicken" in {shown for shown, _ in seen}, entry.name
    if entry.shows_one_head:
        said = scene.captions[0][1]
        assert said == (
            "head 1 of layer 3: the head that puts most weight above its baseline from “it” on “chicken” (0.72; baseline 0.11)"
        )
    if entry.shows_one_head or scene.quoted:  # and multi-head and the title card, which name the chosen cell
        check_scene(scene, inspector, minilm, framed=entry.name != "title")  # the quoted 0.72 and 0.11 too


def test_the_title_card_and_multi_head_name_the_chosen_cell(minilm):
    from blockviz.scenes.multi_head import MultiHead
    from blockviz.scenes.title_card import TitleCard

    card, _, seen = seen_on_screen(TitleCard, minilm, token="it", head=AUTO)
    assert card.quoted == [("0.72", ("weights", 1, 10, 2)), ("0.11", ("baseline", 1, 10, 2))]
    assert any(shown.startswith("head 1 of layer 3: the head that puts most weight") for shown, _ in seen)
    scene, _, seen = seen_on_screen(MultiHead, minilm, token="it", head=AUTO)
    shown = {text for text, _ in seen}
    assert "0.72" in shown and {"chicken", "[CLS]", "The", "it"} <= shown  # the named cell's number, the key labels
    assert any("0.72 on “chicken”" in said and "0.11" in said for _, said in scene.captions)
    assert MultiHead(record=minilm, token="it", head=7).heads_shown() == [0, 1, 2, 7]


def test_headers_give_way_to_kept_names():
    # hand-worked: centres 1 apart, room 0.9; a kept 1.4-wide name in the middle reaches 0.7 from
    # its centre, so each neighbour keeps 2 × (1 − 0.7 − 0.08 gap) = 0.44 of its 0.9.
    assert [round(w, 2) for w in header_widths([0, 1, 2], [0.5, 1.4, 2.0], [False, True, False], 0.9)] == [
        0.44,
        1.4,
        0.44,
    ]
    assert header_widths([0, 1], [3.0, 0.2], [True, False], 0.9) == [3.0, 0.0]  # nothing left: it gives way
    assert kept_pitch([1.0, 1.2, 0.3], [True, True, False]) == pytest.approx(1.18)
    assert kept_pitch([1.0, 1.2], [True, False]) == 0.0
    names = ["because", KeptName("chicken"), "because", "road", KeptName("because")]
    grid = NumberGrid([[0.5] * 5], None, names, look("dark"), colors="weights", cell_width=0.6, show_numbers=False)
    shown = [grid.column_headers[j].shown for j in range(5)]
    assert shown[1] == "chicken" and shown[4] == "because"  # kept: whole, though wider than a cell
    assert shown[0].endswith("…") and shown[2].endswith("…")  # the others are cut instead
    boxes = sorted((h.get_left()[0], h.get_right()[0]) for h in grid.column_headers.values() if h.get_fill_opacity())
    assert all(right <= left_next + 1e-6 for (_, right), (left_next, _) in zip(boxes, boxes[1:]))  # none overlap
    side_by_side = NumberGrid(
        [[0.5] * 2],
        None,
        [KeptName("chicken"), KeptName("because")],
        look("dark"),
        colors="weights",
        cell_width=0.6,
        show_numbers=False,
    )
    assert [side_by_side.column_headers[j].shown for j in range(2)] == ["chicken", "because"]
    assert side_by_side.cell_width > 0.6  # the cells widened: two kept names side by side both fit


def test_explore_opens_on_the_head_auto_chose(tmp_path):
    import json
    import re

    sentence = "the cat sat on the mat"
    rec = record(sentence, BlockConfig(n_heads=4, d_model=8))
    mat, cat = rec.tokens.index("mat"), rec.tokens.index("cat")
    seeing = [q for q in range(rec.n) if q != mat and q >= cat]  # causal: the other queries that see "cat"
    margins = [
        float(rec.weights[h, mat, cat]) - sum(float(rec.weights[h, q, cat]) for q in seeing) / len(seeing)
        for h in range(4)
    ]
    expected = max(range(4), key=margins.__getitem__)
    assert expected != 0  # so the default head would fail this test
    out = tmp_path / "page.html"
    arguments = ["explore", sentence, "--heads", "4", "--d-model", "8", "--token", "mat", "-o", str(out)]
    result = CliRunner().invoke(main, [*arguments, "--head", "auto", "--to", "cat"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="record-data">(.*?)</script>', page, re.S)[1])
    assert data["initial"]["head"] == expected


def test_the_named_cell_comes_and_goes_legibly_in_motion(minilm):
    """The chip over head 1's cell, sampled part-way through every play: the ⋯ under it leave
    first, its number arrives after it, nothing under 4.5:1, no highlight edge through a text."""
    from support_motion import build_in_motion

    from blockviz.scenes.multi_head import MultiHead

    _, inspector = build_in_motion(MultiHead, minilm, token="it", head=AUTO)
    assert inspector.plays >= 3 and inspector.problems == []


def test_the_concatenation_shows_the_chosen_heads_columns(minilm):
    """Head 1's output row rides into concat's columns 32 onwards (d_head = 32): those columns are
    drawn, beside column 0; W_O's rows are those that add most to attention's output."""
    from blockviz.scenes.multi_head import MultiHead

    scene, inspector = build(MultiHead, minilm, token="it", head=AUTO)
    it = minilm.tokens.index("it")
    concat_columns = {label.source[2] for label in inspector.numbers.values() if label.source[:2] == ("concat", it)}
    assert {0, 32, 33, 34} <= concat_columns
    assert not {1, 31} & concat_columns  # head 1's first columns, not head 0's, fill the middle
    w_o_rows = {label.source[2] for label in inspector.numbers.values() if label.source[:2] == ("params", "attn.W_O")}
    assert not w_o_rows <= set(range(len(w_o_rows)))  # chosen by what they add, not the first in index order


def caption_crossings(scene) -> list[str]:
    """What the caption's box overlaps now: texts and grid cells of the scene (none may)."""
    caption = getattr(scene, "caption", None)
    if caption is None or caption not in scene.mobjects:
        return []
    inside = {id(member) for member in caption.get_family()}
    texts = {id(label) for label in visible_texts(scene)}
    left, bottom = caption.get_corner([-1, -1, 0])[:2]
    right, top = caption.get_corner([1, 1, 0])[:2]
    crossed = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            is_cell = getattr(member, "grid_of", None) is not None and not getattr(member, "ghost", False)
            if id(member) in inside or not (is_cell or id(member) in texts):
                continue
            if is_cell and member.get_fill_opacity() < 0.01 and member.get_stroke_opacity() < 0.01:
                continue
            (m_left, m_bottom), (m_right, m_top) = member.get_corner([-1, -1, 0])[:2], member.get_corner([1, 1, 0])[:2]
            if m_left < right - 0.01 and m_right > left + 0.01 and m_bottom < top - 0.01 and m_top > bottom + 0.01:
                crossed.append(getattr(member, "shown", type(member).__name__))
    return crossed


@pytest.mark.parametrize("scene_name", ONE_HEAD)
def test_the_caption_that_says_why_the_head_was_chosen_covers_nothing(minilm, scene_name):
    """Two lines long, it has room kept for it under the layout (it covered softmax's "÷ sum" row)."""
    from support import play_by_play

    from blockviz.scenes.catalog import lookup

    (entry,) = lookup([scene_name])
    scene, seen = play_by_play(entry.scene_class(), minilm, caption_crossings, token="it", head=AUTO)
    assert scene.captions[0][1].startswith("head 1 of layer 3: the head that puts most weight")
    assert [(play, crossed) for play, crossed in enumerate(seen, start=1) if crossed] == []
