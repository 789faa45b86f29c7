"""What a scene shows (:mod:`blockviz.scenes.shown`) is plain data: it imports no Manim, and its
answers — focus, head, token names, the slots of an elided axis, the rows worked in detail —
are worked by hand here on a four-token record of hand-chosen weights."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HAND_RECORD = """
from types import SimpleNamespace

import numpy as np

from blockviz.scenes.shown import Shown
from blockviz.scenes.token_axis import KeptName

weights = np.zeros((2, 4, 4))
weights[0, 2] = [0.5, 0.1, 0.4, 0.0]  # "sat" in head 0: "the" most, then itself, then "cat"
weights[1, 2] = [0.0, 0.0, 1.0, 0.0]  # "sat" in head 1: only itself
config = SimpleNamespace(n_heads=2, causal=True)
source = SimpleNamespace(vocabulary=None)  # the seeded block's: no vocabulary, no unknown token
rec = SimpleNamespace(
    tokens=["the", "cat", "sat", "."], special=[False] * 4, weights=weights, n=4, config=config, source=source
)
"""


def run_without_manim(body: str) -> subprocess.CompletedProcess:
    """``body`` after :data:`HAND_RECORD` in a fresh interpreter where ``import manim`` fails."""
    code = "import sys\nsys.modules['manim'] = None\n" + HAND_RECORD + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={"PYTHONPATH": str(ROOT)}, capture_output=True, text=True
    )


def test_what_a_scene_shows_is_worked_out_without_manim():
    result = run_without_manim(
        """
        shown = Shown(rec)
        assert shown.focus == 2, shown.focus  # the last word token, not "."
        assert shown.h == 0
        assert shown.top_keys_of(2) == [0, 2, 1]  # 0.5, 0.4, 0.1
        assert shown.top_keys_of(2, head=1) == [2]  # weights of 0 are never top keys
        assert shown.kept_keys() == [0, 2, 1]
        assert shown.token_names == ["the", "cat", "sat", "\\u201c.\\u201d"]
        assert [isinstance(name, KeptName) for name in shown.token_names] == [True, True, True, False]
        assert shown.token_name(3) == "."
        assert shown.token_slots() == [0, 1, 2, 3]
        assert shown.detailed_rows() == [2]
        assert Shown(rec, token="cat", detail=3).detailed_rows() == [0, 1, 2]  # nearest "cat", ties first
        assert Shown(rec, token="the", head=1).h == 1
        assert Shown(rec, head=0).head_sentence() is None  # a head given, not chosen: nothing to say
        assert "manim" not in {name.split(".")[0] for name, module in sys.modules.items() if module is not None}
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_focus_and_the_key_followed_keep_their_slots_on_a_long_axis(chicken_record):
    from blockviz.scenes.shown import Shown

    shown = Shown(chicken_record, token="it", to="chicken")
    it, chicken = chicken_record.tokens.index("it"), chicken_record.tokens.index("chicken")
    slots = shown.token_slots(limit=6)
    assert len(slots) <= 6
    assert {0, it, chicken} <= set(slots)
    assert shown.kept_keys()[0] == chicken  # the key followed first, then the focus's top keys
