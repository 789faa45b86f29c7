"""What the title card, the explorer, ``record`` and ``heads`` say about a trained toy record:
whose weights they are and what the model is, never "random" or a seed; the vocabulary's words
on the prediction's columns."""

import pytest

from blockviz.toy.recording import record_toy

SENTENCE = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def rec():
    return record_toy(SENTENCE)


def test_the_title_cards_weights_note_says_trained_and_what_the_model_is(rec):
    from blockviz.scenes.title_card import weights_sentence

    first, second = weights_sentence(rec.config.seed, rec.source)
    assert first == "trained weights: blockviz's toy model"
    assert second == rec.source.describe() and second.startswith("trained: one block, ") and "parameters, on " in second and ", loss " in second
    assert "random" not in first + second and "seed" not in first + second


def test_the_title_card_shows_the_note_inside_the_frame(rec):
    from manim import config

    from blockviz.scenes.look import look
    from blockviz.scenes.title_card import TitleCardLayout

    layout = TitleCardLayout(rec, look("dark"))
    assert layout.weights_note.shown == f"trained weights: blockviz's toy model {rec.source.describe()}"
    (left, bottom, _), (right, top, _) = layout.weights_note.get_corner([-1, -1, 0]), layout.weights_note.get_corner([1, 1, 0])
    assert -config.frame_width / 2 < left and right < config.frame_width / 2 and -config.frame_height / 2 < bottom
    assert layout.weights_note.height >= 0.3  # two lines, each readable at 480 p


def test_the_explorer_header_says_what_the_model_is_not_its_seed(rec):
    from blockviz.explorer.page import summary_line

    line = summary_line(rec)
    assert line.endswith(f" — {rec.source.describe()}") and not line.endswith(", seed 0") and ", seed " not in line
    assert "13 tokens, d_model 8, 2 heads, d_ff 16" in line
    assert rec.source.describe() in rec.explore(token="it").html()
