"""docs/scene_template.py, the scene docs/writing-a-scene.md starts a new scene from: the catalogue
reads it as a scene that fits among the others, it keeps every rule the catalogued scenes are
tested for (at rest and in motion, on every record they are built on), its sum is the record's,
and ``manim`` runs it as it is."""

from __future__ import annotations

import functools
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import (
    FRAMED,
    MORE_RECORDS,
    RECORDS,
    build,
    captions_held_to_read,
    check_scene,
    named_record,
    record_value,
)
from support_motion import assert_same_end, build_in_motion, end_state

from blockviz.scenes.catalog import FOLDER, discover, entries, scene_entry

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "scene_template.py"


@functools.cache
def template_class():
    """The template's scene class, its module loaded from its file (as ``manim`` loads it)."""
    spec = importlib.util.spec_from_file_location("scene_template", TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, scene_entry(TEMPLATE).class_name)


@functools.cache
def built_template(record_name: str):
    return build(template_class(), named_record(record_name))


def test_the_catalogue_reads_the_template_as_a_scene_that_fits_among_the_others(tmp_path):
    """Copied beside the package's scene modules, it is catalogued in its ORDER's place."""
    template = scene_entry(TEMPLATE)
    assert template.class_name == template_class().__name__ == "WeightRows"
    for path in FOLDER.glob("*.py"):
        shutil.copy(path, tmp_path)
    shutil.copy(TEMPLATE, tmp_path / "weight_rows.py")
    names = [entry.name for entry in discover(tmp_path)]
    expected = [entry.name for entry in entries()]
    after = max(k for k, entry in enumerate(entries()) if entry.order < template.order)
    assert names == expected[: after + 1] + [template.name] + expected[after + 1 :]


CASES = [*RECORDS, *MORE_RECORDS]


@pytest.mark.parametrize("record_name", CASES)
def test_the_template_keeps_every_rule(record_name):
    """Every number the record's, its sum adding up, no text overlapping, leaving the frame, under
    11 px or under 4.5:1, every shot filling 60 % of the frame (on the framed records), and every
    caption held as long as it takes to read."""
    scene, inspector = built_template(record_name)
    check_scene(scene, inspector, named_record(record_name), framed=record_name in FRAMED)
    assert captions_held_to_read(scene) == []


@pytest.mark.parametrize("record_name", list(RECORDS))
def test_the_template_keeps_its_bars_in_motion_and_ends_as_manims_play_ends_it(record_name):
    settled, _ = built_template(record_name)
    played, inspector = build_in_motion(template_class(), named_record(record_name))
    assert inspector.problems == []
    assert_same_end(end_state(settled), end_state(played))


def test_the_templates_sum_is_the_focus_rows_weights_and_its_hidden_keys_share():
    """13 tokens, focus "tired" (11): 7 keys drawn, the other 6 one term, 1 less the shown weights."""
    scene, _ = built_template("13 tokens")
    rec = named_record("13 tokens")
    ((terms, total),) = scene.sums
    assert scene.focus == 11 and total.source == ("constant", 1.0) and total.shown == "1.00"
    shown = [term.source for term in terms[:-1]]
    assert [source[:3] for source in shown] == [("weights", 0, 11)] * 7
    hidden = terms[-1]
    assert hidden.source[0] == "remainder"
    assert record_value(rec, hidden.source) == pytest.approx(
        1.0 - sum(rec.weights[0, 11, j].item() for *_, j in shown), abs=1e-6
    )
    assert sum(rec.weights[0, 11, j].item() for *_, j in shown) + record_value(rec, hidden.source) == pytest.approx(
        rec.weights[0, 11].sum().item(), abs=1e-5
    )


@pytest.mark.render
def test_the_template_runs_under_the_plain_manim_command(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "manim",
            "render",
            "-ql",
            "-s",
            "-r",
            "256,144",
            "-v",
            "WARNING",
            "--media_dir",
            str(tmp_path),
            "docs/scene_template.py",
            "WeightRows",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    (still,) = tmp_path.glob("images/scene_template/WeightRows*.png")
    assert still.stat().st_size > 2000
