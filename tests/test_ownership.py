"""blockviz never replaces or removes a file it did not write (:mod:`blockviz.ownership`): the
manifest's rules, then one test per command that writes into a folder, each with a foreign file
in the way — refused in one line naming it, exit 1, the file kept byte for byte."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import textwrap

import pytest
from click.testing import CliRunner

from blockviz import ownership
from blockviz.cli import main
from blockviz.errors import BlockvizError

MINE = b"the user's own work\n"
TINY_SCENE = ["--scene", "mask", "--format", "png", "--resolution", "160x90", "--model", "seeded"]


def refused(args, foreign):
    """Run blockviz with ``args``: exit 1, one line naming ``foreign``, which keeps its bytes."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert repr(str(foreign)) in errors[0] and "not written by blockviz" in errors[0], errors[0]
    assert foreign.read_bytes() == MINE
    return result


def foreign_file(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(MINE)
    return path


# The manifest's rules


def test_a_file_is_own_while_listed_with_the_hash_it_has(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("made by blockviz")
    assert not ownership.is_own(path)
    ownership.remember([path])
    assert ownership.is_own(path)
    listed = json.loads((tmp_path / ownership.MANIFEST).read_text())["files"]
    assert listed == {"a.txt": hashlib.sha256(b"made by blockviz").hexdigest()}
    path.write_text("changed by the user")
    assert not ownership.is_own(path)
    assert ownership.first_foreign(tmp_path) == path


def test_a_folder_is_own_only_when_every_file_under_it_is(tmp_path):
    deck = tmp_path / "deck"
    (deck / "clips").mkdir(parents=True)
    (deck / "clips" / "one.mp4").write_bytes(b"1")
    (deck / "slides.html").write_bytes(b"2")
    ownership.remember([deck])
    assert ownership.first_foreign(deck) is None
    note = foreign_file(deck / "clips" / "notes.txt")
    assert ownership.first_foreign(deck) == note
    with pytest.raises(BlockvizError, match="notes.txt"):
        ownership.remove_own(deck)
    assert note.read_bytes() == MINE and (deck / "slides.html").exists()


def test_links_damaged_manifests_and_missing_paths(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("x")
    ownership.remember([target])
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert ownership.first_foreign(link) == link  # blockviz never writes a link
    assert ownership.first_foreign(tmp_path / "missing.png") is None
    (tmp_path / ownership.MANIFEST).write_text("[" * 100_000)  # damaged: nothing counts as own
    assert not ownership.is_own(target)


def _remember_many(folder, start):
    for number in range(start, start + 40):
        path = folder / f"{number}.txt"
        path.write_text(str(number))
        ownership.remember([path])


def test_writers_at_once_lose_no_entry(tmp_path):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_remember_many, args=(tmp_path, start)) for start in (0, 40, 80)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    listed = json.loads((tmp_path / ownership.MANIFEST).read_text())["files"]
    assert sorted(listed, key=lambda name: int(name.split(".")[0])) == [f"{n}.txt" for n in range(120)]


def test_output_file_refuses_a_foreign_file_and_lists_what_it_wrote(tmp_path):
    mine = foreign_file(tmp_path / "figure.png")
    with pytest.raises(BlockvizError, match="not written by blockviz"):
        with ownership.output_file(mine) as partial:
            partial.write_bytes(b"never")
    assert mine.read_bytes() == MINE and sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]
    ours = tmp_path / "other.png"
    for content in (b"first", b"second"):  # blockviz's own file is replaced
        with ownership.output_file(ours) as partial:
            partial.write_bytes(content)
    assert ours.read_bytes() == b"second" and ownership.is_own(ours)


# Every command that writes into a folder


def test_train_refuses_a_folder_with_a_card_and_the_users_files(tmp_path):
    folder = tmp_path / "p"
    foreign_file(folder / "thesis.tex")
    (folder / "card.json").write_text("{}")  # a card alone does not make a model folder
    result = CliRunner().invoke(main, ["train", "--steps", "3", "-o", str(folder)])
    assert result.exit_code == 1 and "not written by blockviz" in result.output, result.output
    assert (folder / "thesis.tex").read_bytes() == MINE and (folder / "card.json").read_text() == "{}"


def test_train_replaces_its_own_model_folder_but_not_beside_the_users_notes(tmp_path):
    folder = tmp_path / "model"
    small = ["train", "--d-model", "4", "--heads", "2", "--d-ff", "8", "--steps", "3", "-o", str(folder)]
    assert CliRunner().invoke(main, small).exit_code == 0
    assert ownership.first_foreign(folder) is None
    weights = (folder / "model.safetensors").read_bytes()
    assert CliRunner().invoke(main, small).exit_code == 0  # its own folder: replaced
    assert (folder / "model.safetensors").read_bytes() == weights
    notes = foreign_file(folder / "my-notes.txt")
    refused(small, notes)
    assert (folder / "model.safetensors").read_bytes() == weights


def test_render_refuses_a_foreign_file_where_a_scene_goes(tmp_path):
    mine = foreign_file(tmp_path / "mask.png")
    refused(["render", "the cat sat", *TINY_SCENE, "-o", tmp_path, "--force"], mine)
    assert not (tmp_path / ".cache").exists()


@pytest.mark.render
def test_render_replaces_its_own_scene(tmp_path):
    args = ["render", "the cat sat", *TINY_SCENE, "-o", str(tmp_path)]
    for _ in range(2):
        result = CliRunner().invoke(main, [*args, "--force"])
        assert result.exit_code == 0, result.output
    assert ownership.is_own(tmp_path / "mask.png")


def test_figures_refuse_a_foreign_file_before_drawing(tmp_path):
    mine = foreign_file(tmp_path / "mask.svg")
    refused(["figures", "the cat sat", "--figure", "weights,mask", "--format", "svg", "-o", tmp_path], mine)
    assert not (tmp_path / "weights.svg").exists()  # refused before any figure was drawn


def test_figures_replace_their_own_files(tmp_path):
    args = ["figures", "the cat sat", "--figure", "mask", "--format", "svg", "-o", str(tmp_path)]
    for _ in range(2):
        assert CliRunner().invoke(main, args).exit_code == 0
    assert ownership.is_own(tmp_path / "mask.svg")


def test_explore_refuses_a_foreign_page(tmp_path):
    mine = foreign_file(tmp_path / "explorer.html")
    refused(["explore", "the cat sat", "-o", tmp_path], mine)
    other = tmp_path / "mine.html"
    assert CliRunner().invoke(main, ["explore", "the cat sat", "-o", str(other)]).exit_code == 0
    assert CliRunner().invoke(main, ["explore", "the cat sat", "-o", str(other)]).exit_code == 0


def test_slides_refuse_a_foreign_deck_file_before_rendering(tmp_path):
    mine = foreign_file(tmp_path / "slides" / "files" / "notes.txt")
    refused(["slides", "the cat sat", "--scene", "mask", "-q", "l", "-o", tmp_path], mine)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slides"]


def test_record_save_refuses_a_foreign_file(tmp_path):
    mine = foreign_file(tmp_path / "cat.json")
    refused(["record", "the cat sat", "--save", mine], mine)
    ours = tmp_path / "ours.json"
    for _ in range(2):
        assert CliRunner().invoke(main, ["record", "the cat sat", "--save", str(ours)]).exit_code == 0
    assert ownership.is_own(ours)


COURSE = """
title = "mine"
output = "{output}"
[defaults]
resolution = "160x90"
formats = ["png"]
figures = false
explorer = true
scenes = []
[[lesson]]
name = "one"
sentences = ["the cat sat"]
"""


def test_course_refuses_the_users_index_page_before_any_job(tmp_path):
    course = tmp_path / "course.toml"
    course.write_text(textwrap.dedent(COURSE.format(output=".")), encoding="utf-8")
    mine = foreign_file(tmp_path / "index.html")
    refused(["course", course], mine)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["course.toml", "index.html"]


def test_course_refuses_a_foreign_file_where_a_job_writes(tmp_path):
    course = tmp_path / "course.toml"
    course.write_text(textwrap.dedent(COURSE.format(output="out")), encoding="utf-8")
    assert CliRunner().invoke(main, ["course", str(course)]).exit_code == 0
    pages = sorted((tmp_path / "out").rglob("explorer.html"))
    assert pages and all(ownership.is_own(page) for page in pages)
    os.replace(pages[0], pages[0].with_suffix(".bak"))
    mine = foreign_file(pages[0])
    refused(["course", course], mine)
