"""Whether a head formed, said from the checkpoints by one rule (``Learning.formed``: the last
weight on "chicken" at least ``LEARNED_MARGIN`` above the first and the last row's largest) in the
learning scene and the training figure: a model trained 20 steps (seed 7, the weight falls) is
not told "head … formed"; the shipped model is."""

from __future__ import annotations

import functools

import pytest
from click.testing import CliRunner
from support import build

from blockviz.cli import main
from blockviz.figures import FigureRequest, draw_figure
from blockviz.models.evidence_types import LEARNED_MARGIN
from blockviz.scenes.learning import Learning
from blockviz.style import format_number
from blockviz.toy import PACKAGED
from blockviz.toy.learning import learning_of
from blockviz.toy.recording import record_toy

CHICKEN = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="module")
def untrained(tmp_path_factory):
    """A toy model trained 20 steps: its head's weight on "chicken" falls, 0.10 → 0.09."""
    folder = tmp_path_factory.mktemp("models") / "twenty-steps"
    result = CliRunner().invoke(main, ["train", "--steps", "20", "--seed", "7", "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@functools.cache
def shipped_record():
    return record_toy(CHICKEN)


def test_the_rule_reads_the_checkpoints(untrained):
    weak, strong = learning_of(untrained), learning_of(PACKAGED)
    assert weak.weights[-1] < weak.weights[0] and not weak.formed
    assert strong.weights[-1] - strong.weights[0] >= LEARNED_MARGIN
    assert max(strong.rows[-1]) == strong.rows[-1][strong.key] and strong.formed


def test_the_scene_says_a_head_that_did_not_form_did_not(untrained):
    learning = learning_of(untrained)
    scene, _ = build(Learning, record_toy(CHICKEN, untrained))
    last = scene.captions[-1][1]
    first, final = (format_number(learning.weights[k], scene.decimals) for k in (0, -1))
    assert last == (
        f"head {learning.head} did not form: its weight on “chicken” went from {first} to {final} "
        f"by step {learning.steps[-1]}"
    )
    assert not any("formed" in caption or "forming" in caption for _, caption in scene.captions)


def test_the_figure_says_whether_the_head_formed(untrained):
    weak, strong = learning_of(untrained), learning_of(PACKAGED)
    heading = _heading(draw_figure("training", FigureRequest(record_toy(CHICKEN, untrained))))
    assert heading.startswith(f"Training: head {weak.head} did not form: its weight 'it'")
    assert f"went from {format_number(weak.weights[0])} at step 0 to {format_number(weak.weights[-1])}" in heading
    heading = _heading(draw_figure("training", FigureRequest(shipped_record())))
    assert f"head {strong.head} formed: its weight 'it'" in heading


def _heading(figure) -> str:
    (text,) = [text.get_text() for text in figure.texts if text.get_label() == "heading"]
    return " ".join(text.split())  # wrapped to the page
