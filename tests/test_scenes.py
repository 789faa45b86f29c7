"""Every attention scene, built without writing video: the numbers it shows are the record's, the
sums it shows add up, and no label overlaps another or leaves the frame, after every play."""

import math

import numpy as np
import pytest
from manim import Text, config, tempconfig

from blockviz import BlockConfig, record
from blockviz.style import format_number
from blockviz.scenes.catalog import lookup
from blockviz.scenes.causal_vs_bidirectional import counterpart
from blockviz.scenes.helpers import NumberGrid, formula, text, visible_slots
from blockviz.scenes.look import look
from blockviz.scenes.worked_example import worked_example

ATTENTION_SCENES = ("tokens", "qkv", "dot-products", "mask", "softmax", "value-mixing", "worked-example", "causal-vs-bidirectional")
TWELVE_TOKENS = "The chicken didn't cross the road because it was tired."
SENTENCES = {"default": "the cat sat", "12 tokens": TWELVE_TOKENS}


@pytest.fixture(scope="module", params=list(SENTENCES), ids=list(SENTENCES))
def sentence_record(request):
    return record(SENTENCES[request.param])


def parse(shown: str) -> float:
    return float(shown.replace("\u2212", "-").replace("∞", "inf"))


def visible_texts(scene) -> list[Text]:
    texts = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            if isinstance(member, Text) and member.get_fill_opacity() > 0.01 and len(member.get_family()) > 1:
                texts.append(member)
    return texts


def boxes_of(texts: list[Text]) -> np.ndarray:
    """``(len(texts), 4)``: left, bottom, right, top of each text's drawn points."""
    boxes = np.zeros((len(texts), 4))
    for row, label in enumerate(texts):
        points = np.concatenate([member.points for member in label.get_family() if len(member.points)])
        boxes[row] = points[:, 0].min(), points[:, 1].min(), points[:, 0].max(), points[:, 1].max()
    return boxes


def overlapping_pairs(texts: list[Text], tolerance: float = 0.01) -> list[tuple[str, str]]:
    boxes = boxes_of(texts)
    x_overlap = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0])
    y_overlap = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1])
    clash = np.triu((x_overlap > tolerance) & (y_overlap > tolerance), k=1)
    return [(texts[i].shown, texts[j].shown) for i, j in zip(*np.nonzero(clash))]


def outside_frame(texts: list[Text]) -> list[str]:
    half_width, half_height = config.frame_width / 2, config.frame_height / 2
    boxes = boxes_of(texts)
    outside = (boxes[:, 0] < -half_width) | (boxes[:, 2] > half_width) | (boxes[:, 1] < -half_height) | (boxes[:, 3] > half_height)
    return [texts[i].shown for i in np.nonzero(outside)[0]]


def record_value(source: tuple, records: dict) -> float:
    name, *index = source
    rec = records["main"]
    if "." in name:
        variant, name = name.split(".")
        rec = records[variant]
    return getattr(rec, name)[tuple(index)].item()


class Inspector:
    """Called after every play: checks and remembers what the scene shows."""

    def __init__(self, records):
        self.records = records
        self.problems: list[str] = []
        self.sourced: dict[int, Text] = {}
        self.plays = 0

    def __call__(self, scene) -> None:
        self.plays += 1
        texts = visible_texts(scene)
        for pair in overlapping_pairs(texts):
            self.problems.append(f"play {self.plays}: labels overlap {pair}")
        for shown in outside_frame(texts):
            self.problems.append(f"play {self.plays}: label {shown!r} leaves the frame")
        for label in texts:
            if getattr(label, "source", None) is not None:
                self.sourced[id(label)] = label


def build(scene_class, rec, **options):
    """Run the scene's construct with animations skipped and no file written."""
    records = {"main": rec, "decoder": counterpart(rec, True), "encoder": counterpart(rec, False)}
    inspector = Inspector(records)
    with tempconfig({"dry_run": True, "verbosity": "WARNING", "progress_bar": "none"}):
        scene = scene_class(record=rec, skip_animations=True, **options)
        scene.play_listeners.append(inspector)
        scene.render()
    return scene, inspector


@pytest.mark.parametrize("entry", lookup(ATTENTION_SCENES), ids=list(ATTENTION_SCENES))
def test_scene_shows_the_records_numbers_legibly(entry, sentence_record):
    scene, inspector = build(entry.scene_class(), sentence_record)
    assert inspector.plays >= 4
    assert inspector.problems == []
    if entry.name != "worked-example":
        assert len(inspector.sourced) >= 6, "the scene shows hardly any of the record's numbers"
    for label in inspector.sourced.values():
        expected = format_number(record_value(label.source, inspector.records), label.decimals)
        assert label.shown == expected, f"{label.source}: shows {label.shown}, record has {expected}"
    for parts, total in scene.sums:
        shown_sum = sum(parse(part.shown) for part in parts)
        assert shown_sum == pytest.approx(parse(total.shown), abs=0.005 * (len(parts) + 1)), [p.shown for p in parts] + [total.shown]


def test_scenes_show_sums_where_they_add(cat_record):
    sums = {entry.name: len(build(entry.scene_class(), cat_record)[0].sums) for entry in lookup(["dot-products", "softmax", "value-mixing"])}
    d_head, n = cat_record.config.d_head, cat_record.n
    # dot products: one per allowed (query, key) pair; softmax: exp sums and weight rows;
    # mixing: one per output entry of each worked row.
    assert sums["dot-products"] == n * (n + 1) // 2
    assert sums["softmax"] == 2 * n
    assert sums["value-mixing"] == n * d_head


def test_final_frames_show_the_last_step(cat_record):
    from blockviz.scenes.softmax import Softmax

    scene, _ = build(Softmax, cat_record)
    grid = next(m for m in scene.mobjects if isinstance(m, NumberGrid))
    weights = cat_record.weights[0]
    for (i, j), label in grid.labels.items():
        assert label in scene.mobjects or any(label in m.get_family() for m in scene.mobjects)
        if cat_record.mask[i, j] == -math.inf:
            assert weights[i, j].item() == 0.0 and label.shown == "0"
        else:
            assert label.shown == format_number(weights[i, j].item())


def test_focus_token_and_head_choose_the_worked_row(chicken_record):
    from blockviz.scenes.dot_products import DotProducts

    scene, inspector = build(DotProducts, chicken_record, token="it", head=1)
    it = chicken_record.tokens.index("it")
    worked = {total.source for _, total in scene.sums}
    # "it" may use itself and the 7 tokens before it; with elision 6 of them are drawn.
    assert {source[2] for source in worked} == {it} and {source[1] for source in worked} == {1}
    assert {source[3] for source in worked} == {j for j in visible_slots(chicken_record.n, it) if j is not None and j <= it}
    assert {label.source[1] for label in inspector.sourced.values()} == {1}


def test_worked_example_numbers_come_from_softmax_and_mix():
    from blockviz.scenes.worked_example import WorkedExample

    scores, values, weights, mixture = worked_example()
    assert weights.tolist() == pytest.approx([0.25, 0.75]) and mixture.tolist() == pytest.approx([0.5, 3.0])
    scene, _ = build(WorkedExample, record("the cat sat"))
    shown = [t.shown for t in visible_texts(scene)]
    for expected in ("1.10", "1.00", "3.00", "4.00", "0.25", "0.75", "0.50", "= (1/4, 3/4)"):
        assert expected in shown
    assert sorted(total.shown for _, total in scene.sums) == ["0.50", "3.00", "4.00"]


def test_causal_vs_bidirectional_records_differ_only_in_the_mask(cat_record):
    encoder = counterpart(cat_record, False)
    assert not encoder.config.causal and encoder.tokens == cat_record.tokens
    assert bool((encoder.mask == 0).all()) and bool(encoder.weights[:, 0, 1:].gt(0).all())
    assert bool((encoder.scores == cat_record.scores).all())


def test_visible_slots_elide_around_the_focus():
    assert visible_slots(3, 2) == [0, 1, 2]
    assert visible_slots(13, 6) == [0, None, 5, 6, 7, 8, None, 12]
    assert visible_slots(13, 12) == [0, None, 7, 8, 9, 10, 11, 12]
    assert visible_slots(13, 0) == [0, 1, 2, 3, 4, 5, None, 12]
    for n in range(1, 65):
        for focus in (0, n // 2, n - 1):
            slots = visible_slots(n, focus)
            assert len(slots) <= 8 and focus in slots and 0 in slots and n - 1 in slots


def test_text_is_shown_as_typed_and_grids_elide():
    for typed in ('a "quote" <b> & 🐈', "cafe\u0301", "🐈\u200d⬛"):
        assert text(typed).shown == typed
    values = np.arange(12 * 12, dtype=float).reshape(12, 12)
    grid = NumberGrid(values, [f"<{i}&>" for i in range(12)], None, look("dark"), row_focus=11, column_focus=11)
    assert grid.shown_rows() == [0, 6, 7, 8, 9, 10, 11]
    assert grid.row_headers[11].shown == "<11&>"
    assert grid.labels[11, 11].shown == format_number(143.0)


def test_formulas_are_mathtext_svg_not_latex():
    equation = formula(r"$\frac{q \cdot k}{\sqrt{d_k}}$", "#ffffff", 24)
    assert len(equation.family_members_with_points()) >= 5
    assert 0.2 < equation.height < 1.5


@pytest.mark.parametrize("sentence", ["cat", 'she said "hi" <b> & 🐈 ok', "cafe\u0301 🐈\u200d⬛ naïve"])
def test_odd_sentences_build(sentence):
    from blockviz.scenes.mask import Mask
    from blockviz.scenes.tokens_to_grid import TokensToGrid

    rec = record(sentence, BlockConfig(d_model=8, n_heads=2))
    for scene_class in (TokensToGrid, Mask):
        _, inspector = build(scene_class, rec)
        assert inspector.problems == []


def play_by_play(scene_class, rec, watch):
    """Build the scene (see :func:`build`); ``watch(scene)`` after every play; returns its results."""
    seen = []

    class Watched(scene_class):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.play_listeners.append(lambda scene: seen.append(watch(scene)))

    scene, inspector = build(Watched, rec)
    assert inspector.problems == []
    return scene, seen


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
        assert "blocked cells become −∞" in said and "the allowed keys grow by one" in said
    else:
        assert "−∞" not in said and "grow" not in said and "blocked" not in said.replace("no key is blocked", "")
        assert "every row may use all 3 keys" in said
        assert set(MASKED_LABEL) <= {t.shown for t in visible_texts(scene)}


def shown_units(label) -> int:
    return round(parse(label.shown) * 10 ** label.decimals)


def test_dot_products_note_rounding_exactly_when_the_shown_terms_miss_the_shown_sum(cat_record):
    from blockviz.scenes.block_helpers import ROUNDING_NOTE
    from blockviz.scenes.dot_products import DotProducts

    def line_and_note(scene):
        texts = visible_texts(scene)
        totals = {id(total) for _, total in scene.sums}
        shown_totals = [t.source for t in texts if id(t) in totals]
        return shown_totals, any(t.shown == ROUNDING_NOTE for t in texts)

    scene, seen = play_by_play(DotProducts, cat_record, line_and_note)
    noted = {totals[0] for totals, note in seen if note}
    assert all(len(totals) == 1 for totals, note in seen if note)
    # From the record: only "sat" · "cat" of head 0 rounds apart: 0.21 + 0.92 = 1.13, shown sum 1.14.
    off = set()
    for h, i, j in [(0, i, j) for i in range(cat_record.n) for j in range(i + 1)]:
        q, k = cat_record.query[h, i].tolist(), cat_record.key[h, j].tolist()
        terms = sum(round(float(format_number(a * b).replace("\u2212", "-")) * 100) for a, b in zip(q, k))
        if terms != round(float(format_number(cat_record.scores[h, i, j].item()).replace("\u2212", "-")) * 100):
            off.add(("scores", h, i, j))
    assert off == {("scores", 0, 2, 1)}
    assert noted == off
    for parts, total in scene.sums:
        assert (sum(shown_units(part) for part in parts) != shown_units(total)) == (total.source in off)


def test_a_negative_product_after_the_first_is_written_with_a_minus_not_plus_minus(cat_record):
    from blockviz.scenes.dot_products import DotProducts, later_term

    term = later_term(-0.0312, "#ffffff")
    assert (term.shown, term.value) == ("−0.03", -0.0312)
    assert term.width > text("−0.03", 20).width  # "− 0.03": the sign stands apart, like an operator
    assert later_term(0.0312, "#ffffff").shown == "0.03"

    def pluses_before_negative_terms(scene):
        texts = visible_texts(scene)
        pluses = [t for t in texts if t.shown == "+"]
        clashes = 0
        for parts, _ in scene.sums:
            for part in parts[1:]:
                if any(part is t for t in texts) and part.shown.startswith("−"):
                    clashes += sum(0 < part.get_left()[0] - plus.get_right()[0] < 0.4 and abs(part.get_y() - plus.get_y()) < 0.1 for plus in pluses)
        return clashes

    scene, seen = play_by_play(DotProducts, cat_record, pluses_before_negative_terms)
    assert any(part.shown.startswith("−") for parts, _ in scene.sums for part in parts[1:]), "no negative later term to check"
    assert sum(seen) == 0
