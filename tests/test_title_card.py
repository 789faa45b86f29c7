"""The title card: its tokens and sizes read back from the record, nothing overlapping or off the
frame at any sentence length, and one real tiny render that joins into a lecture."""

import itertools

import av
import pytest
from manim import Text, config, tempconfig

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.lecture import LecturePart, probe_video, write_lecture
from blockviz.scenes.look import FONT, look
from blockviz.scenes.title_card import TOKEN_FONT_SIZE, TitleCard, TitleCardLayout
from blockviz.scenes.token_axis import token_face

SIXTY_FOUR_TOKENS = (
    " ".join(["the", "internationalisation", "of", "extraordinarily", "tired", "chickens"] * 9) + ' "so" <b> & 🐈 ok.'
)
SPECIAL = 'She said "hi" <b> & 🐈\u200d⬛ cafe\u0301 — naïve'

CASES = {
    "default": ("the cat sat", BlockConfig()),
    "long": ("The chicken didn't cross the road because it was too tired.", BlockConfig()),
    "64 tokens, wide": (
        SIXTY_FOUR_TOKENS,
        BlockConfig(d_model=16, n_heads=4, d_ff=64, causal=False, activation="relu"),
    ),
    "quotes, <, &, emoji, accents": (SPECIAL, BlockConfig()),
    "one token": ("cat", BlockConfig()),
}


@pytest.fixture(scope="module", params=list(CASES), ids=list(CASES))
def card(request):
    sentence, block_config = CASES[request.param]
    rec = record(sentence, block_config)
    return rec, TitleCardLayout(rec, look("dark"))


def box(mobject):
    (left, bottom, _), (right, top, _) = mobject.get_corner([-1, -1, 0]), mobject.get_corner([1, 1, 0])
    return left, bottom, right, top


def overlap(a, b) -> bool:
    """Whether two boxes ``(left, bottom, right, top)`` overlap."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_the_longest_case_has_max_tokens():
    sentence, block_config = CASES["64 tokens, wide"]
    assert record(sentence, block_config).n == block_config.max_tokens == 64


def test_tokens_are_the_records_tokens_in_reading_order(card):
    rec, layout = card
    assert [label.shown for label in layout.tokens.labels] == [
        token_face(token) for token in rec.tokens
    ]  # punctuation quoted: “.”
    for before, after in itertools.pairwise(layout.tokens.boxes):
        same_row = abs(before.get_y() - after.get_y()) < 1e-6
        assert (same_row and after.get_x() > before.get_x()) or (not same_row and after.get_y() < before.get_y())


def test_token_labels_draw_exactly_their_tokens(card):
    rec, layout = card
    plain = [Text(token_face(token), font=FONT, font_size=TOKEN_FONT_SIZE) for token in rec.tokens]
    assert [len(label.submobjects) for label in layout.tokens.labels] == [len(text.submobjects) for text in plain]
    scales = [label.width / text.width for label, text in zip(layout.tokens.labels, plain)]
    assert max(scales) == pytest.approx(min(scales), rel=0.02)


def test_sizes_are_the_records_config(card):
    rec, layout = card
    shown = {name: label.shown for name, label in layout.sizes.items()}
    cfg = rec.config
    assert shown == {
        "d_model": str(cfg.d_model),
        "n_heads": str(cfg.n_heads),
        "d_head": str(cfg.d_model // cfg.n_heads),
        "d_ff": str(cfg.d_ff),
        "activation": cfg.activation_name,
        "attention": "causal" if cfg.causal else "bidirectional",
    }
    assert [label.shown for label in layout.size_names.values()] == [
        "width",
        "heads",
        "head width",
        "FFN width",
        "activation",
        "attention",
    ]
    assert f"{rec.n} × {cfg.d_model} numbers" in layout.grid_note.shown
    assert "d_model" not in layout.grid_note.shown


def test_nothing_overlaps_or_leaves_the_frame(card):
    _, layout = card
    half_width, half_height = config.frame_width / 2, config.frame_height / 2
    for label in layout.labels() + layout.tokens.boxes:
        left, bottom, right, top = box(label)
        assert -half_width < left and right < half_width and -half_height < bottom and top < half_height
    bands = [
        layout.title,
        *layout.sentence,
        layout.tokens,
        layout.grid_note,
        *layout.sizes.values(),
        *layout.size_names.values(),
        layout.mask_note,
        layout.weights_note,
    ]
    for first, second in itertools.combinations([box(band) for band in bands], 2):
        assert not overlap(first, second)
    for first, second in itertools.combinations([box(chip) for chip in layout.tokens.boxes], 2):
        assert not overlap(first, second)


def test_the_card_says_the_weights_are_seeded_random_not_trained(card):
    rec, layout = card
    shown = layout.weights_note.shown
    assert (
        f"random (seed {rec.config.seed})" in shown and "not trained" in shown and "--params" not in shown
    )  # no command line in a lecture
    assert all(line in layout.labels() for line in layout.weights_note)
    assert layout.weights_note.height >= 0.3  # two lines at least 9 px each at -ql (480 p)


def test_the_weights_note_reads_the_records_seed():
    layout = TitleCardLayout(record("the cat sat", BlockConfig(seed=7)), look("dark"))
    assert "seed 7" in layout.weights_note.shown and "seed 0" not in layout.weights_note.shown


def test_no_text_on_the_card_is_under_11_px(card):
    from support import MIN_PIXELS, text_pixels

    _, layout = card
    smallest = min(layout.labels(), key=text_pixels)
    assert text_pixels(smallest) >= MIN_PIXELS - 0.05, (smallest.shown, text_pixels(smallest))


def test_tokens_stay_legible(card):
    _, layout = card
    # 0.35 frame units is 21 pixels at -ql (480 p): the tokens' text is at least 17 px tall
    assert min(chip.height for chip in layout.tokens.boxes) >= 0.35
    for label, chip in zip(layout.tokens.labels, layout.tokens.boxes):
        (label_left, label_bottom, label_right, label_top), (left, bottom, right, top) = box(label), box(chip)
        assert left < label_left and label_right < right and bottom < label_bottom and label_top < top


def test_the_tokens_fill_at_least_60_percent_of_their_band(card):
    """Issue 36: "the cat sat"'s three chips were 1.9 % of the frame, far under their band (the
    card's text width × the tokens' band height); now they fill 60 % of its width or height."""
    from blockviz.scenes.layout import fit_width, frame_text_width
    from blockviz.scenes.text import text
    from blockviz.scenes.title_card import LONG_TOKEN_BAND, TITLE, TITLE_FONT_SIZE, TOKEN_BAND

    _, layout = card
    as_built = fit_width(text(TITLE, TITLE_FONT_SIZE, bold=True), frame_text_width())
    shrink = layout.title.height / as_built.height  # the card shrinks as a whole when it is too tall
    band_height = TOKEN_BAND if len(layout.sentence) else LONG_TOKEN_BAND
    width_share = layout.tokens.width / (frame_text_width() * shrink)
    height_share = layout.tokens.height / (band_height * shrink)
    assert max(width_share, height_share) >= 0.6, (round(width_share, 2), round(height_share, 2))


@pytest.mark.render
def test_a_small_render_first_does_not_shrink_the_card_built_after_it(tmp_path):
    """Texts are laid out for the frame's pixel width (a long note wraps on a 160-pixel canvas,
    and the wrapped card is scaled down to fit): a tiny render earlier in the same process must
    not change a card built afterwards at -ql."""
    from blockviz.scenes import text as scene_text

    sentence, block_config = CASES["64 tokens, wide"]
    rec = record(sentence, block_config)
    tiny = {
        "pixel_width": 160,
        "pixel_height": 90,
        "frame_rate": 5,
        "media_dir": str(tmp_path / "tiny"),
        "disable_caching": True,
        "verbosity": "ERROR",
        "progress_bar": "none",
        "output_file": "TitleCard",
    }
    with tempconfig(tiny):
        TitleCard(record=rec).render()
    at_480p = {"pixel_width": 854, "pixel_height": 480}
    with tempconfig({**at_480p, "media_dir": str(tmp_path / "tiny")}):  # the same media folder, too
        after = TitleCardLayout(rec, look("dark"))
    scene_text._text_prototype.cache_clear()
    scene_text._digit_glyphs.cache_clear()
    with tempconfig({**at_480p, "media_dir": str(tmp_path / "fresh")}):
        fresh = TitleCardLayout(rec, look("dark"))
    heights = [min(chip.height for chip in layout.tokens.boxes) for layout in (after, fresh)]
    assert heights[0] == pytest.approx(heights[1], rel=1e-6) and heights[0] >= 0.35
    assert after.grid_note.height == pytest.approx(fresh.grid_note.height, rel=1e-6)


def test_punctuation_is_quoted_and_sits_on_the_baseline():
    layout = TitleCardLayout(record("it was tired."), look("dark"))
    word, period = layout.tokens.labels[2], layout.tokens.labels[3]
    assert period.shown == "“.”"  # a lone "." would be a dot in a box
    assert period.get_bottom()[1] == pytest.approx(word.get_bottom()[1], abs=0.02)
    assert period.get_top()[1] > layout.tokens.boxes[3].get_y()  # the quotes reach up: the chip reads as a token


def test_the_record_comes_from_the_argument_the_class_or_the_default(cat_record, chicken_record):
    faces = [token_face(token) for token in chicken_record.tokens]
    assert [label.shown for label in TitleCard(record=chicken_record).layout().tokens.labels] == faces

    class ChickenCard(TitleCard):
        record = chicken_record

    assert [label.shown for label in ChickenCard().layout().tokens.labels] == faces
    assert [label.shown for label in ChickenCard(record=cat_record).layout().tokens.labels] == ["the", "cat", "sat"]
    assert TitleCard.record is None
    assert [label.shown for label in TitleCard().layout().tokens.labels] == ["the", "cat", "sat"]
    assert TitleCard.record is None


@pytest.mark.render
def test_a_tiny_render_is_a_video_that_joins_into_a_lecture(tmp_path, chicken_record):
    settings = {
        "pixel_width": 160,
        "pixel_height": 90,
        "frame_rate": 5,
        "media_dir": str(tmp_path / "media"),
        "disable_caching": True,
        "verbosity": "ERROR",
        "progress_bar": "none",
        "output_file": "TitleCard",
    }
    plays = []
    with tempconfig(settings):
        # built as `blockviz render` builds every scene
        scene = TitleCard(record=chicken_record, token=None, head=0, theme="light")
        scene.play_listeners.append(plays.append)
        scene.render()
        video = scene.renderer.file_writer.movie_file_path
    assert len(plays) == 3  # title, tokens, sizes (a hold changes nothing on screen)
    run_time = TitleCard.intro_time + TitleCard.tokens_time + TitleCard.sizes_time + TitleCard.hold_time
    assert 4 <= run_time <= 6
    info = probe_video(video)
    assert (info.width, info.height, info.fps, info.frames) == (160, 90, 5, round(run_time * 5))
    with av.open(str(video)) as container:
        last = list(container.decode(video=0))[-1].to_ndarray(format="rgb24")
    assert (last.max(axis=2) < 100).sum() > 50  # dark text drawn on the light page
    assert last[0, 0].min() > 245  # the light theme's white background

    part = LecturePart("TitleCard", "Title", "What this lecture is about.", video)
    lecture = write_lecture([part, part], tmp_path / "lecture.mp4")
    assert probe_video(lecture.video).duration == 2 * info.duration
    assert [chapter.start for chapter in lecture.chapters] == [0.0, float(info.duration)]


def test_the_weights_note_says_where_given_weights_came_from(tmp_path):
    from blockviz.block_record import record
    from blockviz.scenes.title_card import weights_sentence

    seeded = record("the cat sat")
    seeded.save(tmp_path / "mine.safetensors")
    from_file = record("the cat sat", params=tmp_path / "mine.safetensors")
    given = record("the cat sat", params=seeded.params)
    assert weights_sentence(0, from_file.source)[0] == "the weights are from mine.safetensors:"
    assert weights_sentence(0, given.source)[0] == "the weights are given, not seeded:"
    assert not any(
        "random" in line for line in weights_sentence(0, from_file.source) + weights_sentence(0, given.source)
    )
