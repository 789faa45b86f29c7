"""Colour-scale plans kept (blockviz.scenes.kept_plans) and the record digest that finds them: a
scene built again with the same record and options builds dry no more, and what it gets is the
plan a dry build makes, bit for bit; anything else that could change the plan is another plan."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from support import build, with_outlier

from blockviz import record_cache
from blockviz.cli import main
from blockviz.record_arrays import read_kept
from blockviz.record_digest import record_digest
from blockviz.recording import record
from blockviz.scenes import kept_plans
from blockviz.scenes.base import RecordScene
from blockviz.scenes.catalog import lookup


@pytest.fixture
def dry_builds(monkeypatch, tmp_path):
    """An empty plan cache (in this process and on disk, under ``tmp_path``); the list of the
    plans each dry build made, in order."""
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "cache"))
    kept_plans.forget_plans()
    made = []
    dry_plan = RecordScene._dry_plan

    def counted(scene):
        made.append(dry_plan(scene))
        return made[-1]

    monkeypatch.setattr(RecordScene, "_dry_plan", counted)
    yield made
    kept_plans.forget_plans()


@pytest.fixture(scope="module")
def cat():
    return record("the cat sat")


def softmax_class():
    return lookup(["softmax"])[0].scene_class()


def exact(plan: dict) -> dict:
    """``plan`` with every float as its hexadecimal form: equal only if equal bit for bit."""
    return {
        (family, tuple(float(value).hex() for value in values)): float(limit).hex()
        for (family, values), limit in plan.items()
    }


def test_the_digest_of_a_record_is_its_content_whether_torch_or_numpy_holds_it(tmp_path, cat):
    cat.save(tmp_path / "cat.safetensors")
    assert record_digest(read_kept(tmp_path / "cat.safetensors")) == record_digest(cat)
    assert record_digest(record("the cat sat")) == record_digest(cat)  # another object, the same numbers
    assert record_digest(with_outlier(cat, 3.0)) != record_digest(cat)
    assert record_digest(record("the dog sat")) != record_digest(cat)


def test_a_plan_written_and_read_back_is_the_same_bits():
    plan = {
        ("attention", (0.1, -0.0, 5e-324, 1 / 3, -2.5e300)): 0.30000000000000004,
        (None, ()): 1.0,
        ("residual", (math.inf,)): 7.0,
    }
    back = kept_plans.plan_from_json(json.loads(json.dumps(kept_plans.plan_to_json(plan))))
    assert exact(back) == exact(plan)
    assert list(back) == list(plan)


def test_a_scene_built_twice_builds_dry_once_and_gets_the_plan_it_made(dry_builds, cat):
    scene_class = softmax_class()
    first, _ = build(scene_class, cat)
    again, _ = build(scene_class, cat)
    assert len(dry_builds) == 1
    assert again.scale_pool.planned is first.scale_pool.planned
    assert exact(first.scale_pool.planned) == exact(dry_builds[0])
    assert len(dry_builds[0]) >= 2  # a plan of several grids' requests

    kept_plans.forget_plans()  # a new process: the plan is read from its file
    (kept_file,) = kept_plans.plans_folder().glob("*.json")
    from_disk, _ = build(scene_class, cat)
    assert len(dry_builds) == 1
    assert exact(from_disk.scale_pool.planned) == exact(dry_builds[0])
    assert from_disk.scale_pool.planned is not dry_builds[0]
    assert kept_file.is_file()


def test_another_option_record_or_code_is_another_plan(dry_builds, cat, monkeypatch):
    scene_class = softmax_class()
    build(scene_class, cat)
    build(scene_class, cat, token="cat")
    build(scene_class, with_outlier(cat, 3.0))
    build(scene_class, cat, theme="light")
    assert len(dry_builds) == 4
    assert exact(dry_builds[1]) != exact(dry_builds[0])  # the cat's row, another grid's values
    assert len(list(kept_plans.plans_folder().glob("*.json"))) == 4

    stamp = record_cache.code_stamp()
    monkeypatch.setattr(record_cache, "code_stamp", lambda: {**stamp, "files": "edited"})
    kept_plans.forget_plans()
    build(scene_class, cat)
    assert len(dry_builds) == 5
    assert exact(dry_builds[4]) == exact(dry_builds[0])
    assert len(list(kept_plans.plans_folder().glob("*.json"))) == 5


@pytest.mark.parametrize("damage", ["", "{not json", '{"format": 1, "plan": [["residual", ["zz"], "0x1p0"]]}', "[]"])
def test_a_damaged_plan_file_is_planned_again_and_replaced(dry_builds, cat, damage):
    scene_class = softmax_class()
    build(scene_class, cat)
    (kept_file,) = kept_plans.plans_folder().glob("*.json")
    kept_file.write_text(damage, encoding="utf-8")
    kept_plans.forget_plans()
    scene, _ = build(scene_class, cat)
    assert len(dry_builds) == 2
    assert exact(scene.scale_pool.planned) == exact(dry_builds[0])
    assert exact(kept_plans._read(kept_file)) == exact(dry_builds[0])


def test_a_still_is_the_same_bytes_with_a_kept_plan(dry_builds, tmp_path):
    def still(folder: str) -> bytes:
        result = CliRunner().invoke(
            main,
            ["render", "the cat sat", "--scene", "softmax", "--format", "png", "--resolution", "160x90"]
            + ["-o", str(tmp_path / folder)],
        )
        assert result.exit_code == 0, result.output
        return (tmp_path / folder / "softmax.png").read_bytes()

    planned = still("planned")
    kept_plans.forget_plans()
    from_disk = still("from-disk")
    in_memory = still("in-memory")
    assert len(dry_builds) == 1
    assert from_disk == planned
    assert in_memory == planned
