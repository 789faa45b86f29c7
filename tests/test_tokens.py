"""Splitting sentences into tokens, and positional encodings."""

import math

import pytest
import torch

from blockviz.tokens import sinusoidal_positions, tokenize


@pytest.mark.parametrize(
    "sentence, tokens",
    [
        ("it was too tired.", ["it", "was", "too", "tired", "."]),
        ("The chicken didn't cross", ["The", "chicken", "didn", "'t", "cross"]),
        ('say "hi" & <go>', ["say", '"', "hi", '"', "&", "<", "go", ">"]),
        ("café naïve", ["café", "naïve"]),
        ("cafe\u0301 ok", ["cafe\u0301", "ok"]),
        ("I ❤️ 猫 🙂!", ["I", "❤️", "猫", "🙂", "!"]),
        ("$5", ["$", "5"]),
    ],
)
def test_tokens_keep_their_text_exactly(sentence, tokens):
    assert tokenize(sentence) == tokens


def test_sinusoidal_positions_follow_vaswani_3_5():
    pe = sinusoidal_positions(3, 4, torch.float64)
    # PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)), d = 4.
    assert pe[2, 0].item() == pytest.approx(math.sin(2))
    assert pe[2, 1].item() == pytest.approx(math.cos(2))
    assert pe[2, 2].item() == pytest.approx(math.sin(2 / 100))
    assert pe[2, 3].item() == pytest.approx(math.cos(2 / 100))


def test_sinusoidal_positions_with_odd_width():
    assert sinusoidal_positions(2, 3).shape == (2, 3)
