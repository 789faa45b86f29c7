"""``--block K``: the block of a record of several blocks that record, render, figures and explore show."""

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from support_stack import toy_stack

from blockviz.cli import main
from blockviz.explorer.packing import unpacked


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def stack_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("stack") / "stack.safetensors"
    toy_stack(n_blocks=2).save(path)
    return path


def test_record_shows_the_chosen_block_and_saves_every_block(tmp_path):
    saved = tmp_path / "r.json"
    result = run("record", "the cat sat", "--block", "0", "--save", str(saved), "--decimals", "4")
    assert result.exit_code == 0, result.output
    assert saved.exists() and "block 0 of" not in result.output  # one block: no stack line


@pytest.mark.parametrize("command", ["record", "figures", "explore", "render"])
def test_a_block_past_the_last_is_one_line_and_writes_nothing(tmp_path, command):
    out = tmp_path / "out"
    extra = {
        "record": ["--save", str(out / "r.json")],
        "figures": ["-o", str(out)],
        "explore": ["-o", str(out / "page.html")],
        "render": ["-o", str(out), "--scene", "mask", "--format", "png"],
    }[command]
    out.mkdir()
    result = run(command, "the cat sat", "--block", "1", *extra)
    assert result.exit_code == 2
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(
        "Error: Invalid value for --block: block 1 is out of range: the record has one block, block 0"
    )
    assert list(out.iterdir()) == []


def test_a_block_of_a_saved_stack_is_its_view(stack_file):
    stack = toy_stack(n_blocks=2)
    result = run("explore", "--record", str(stack_file), "--block", "3", "-o", str(stack_file.parent / "x.html"))
    assert result.exit_code == 2 and "block 3 is out of range: the record has 2 blocks, 0–1" in result.output
    assert not (stack_file.parent / "x.html").exists()
    page = stack_file.parent / "zero.html"
    result = run("explore", "--record", str(stack_file), "--block", "0", "-o", str(page))
    assert result.exit_code == 0, result.output
    # a stack of toy blocks is a workbench of every block (tests/test_explorer_stack.py: its numbers
    # equal the record's), opening on block 0: it carries each block's parameters, not its tensors
    data = _data_block(page.read_text(encoding="utf-8"))
    assert (data["workbench"]["n_blocks"], data["workbench"]["block"], data["tensors"]) == (2, 0, {})
    for index in (0, 1):
        carried = _values(data["params"][f"blocks.{index}.attn.W_Q"])
        assert np.array_equal(
            np.array(carried, dtype=np.float32), stack.block(index).params["attn.W_Q"].numpy().reshape(-1)
        )


def _values(entry: dict) -> list:
    """A tensor of the page's data: its numbers as written, or unpacked (explorer.packing)."""
    if "data" in entry:
        return entry["data"]
    size = entry["size"]
    return np.frombuffer(unpacked(entry["z"], size), "<f4" if size == 4 else "<f8").tolist()


def _data_block(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="record-data">(.*?)</script>', page, re.DOTALL)
    return json.loads(match.group(1))


def test_only_a_block_that_reads_the_embeddings_runs_in_the_page():
    """The workbench computes embeddings → one block → prediction: block 0 of the copy model
    (its prediction there is the logit lens, which the page computes the same way), never block 1."""
    from blockviz.explorer.payload import is_workbench
    from blockviz.recording import record

    stack = record("the cat sat on the mat the cat", model="copy")
    assert len(stack.blocks) == 2
    assert is_workbench(stack.block(0)) and not is_workbench(stack.block(1))


COPY_LESSON = "cat road because lamp cake river tall dog sat mat wide lamp cake river"
"""The copy model's lesson: "lamp cake river" repeated; block 1 holds the induction heads."""


@pytest.fixture(scope="module")
def copy_lesson():
    from blockviz.toy.recording import record_toy

    return record_toy(COPY_LESSON, "copy")


def test_head_auto_chooses_the_block_of_the_head_it_finds(copy_lesson):
    """Without --block: the last block, unless --head auto finds its head in another. From the
    second "lamp" (11) the furthest above its baseline is block 0's head 1 on "lamp" itself
    (0.99, baseline 0.01); from the second "cake" (12), block 1's head 1 on "river" (5), the
    word after the first "cake" — each checked against the weights of every block."""
    from blockviz.cli.options import focused
    from blockviz.head_choice import choose_block

    assert focused(copy_lesson, None, "auto", "lamp#2") is copy_lesson.block(0)
    assert focused(copy_lesson, None, "auto", "cake#2") is copy_lesson  # the last block: the record itself
    assert choose_block(copy_lesson, None, "auto", 12, "river") == 1
    assert focused(copy_lesson, None, None, "lamp#2") is copy_lesson
    assert focused(copy_lesson, None, 1, "lamp#2") is copy_lesson
    assert focused(copy_lesson, 0, "auto", "cake#2") is copy_lesson.block(0)  # --block wins
    block0 = copy_lesson.block(0).weights
    assert float(block0[1, 11, 11]) > 0.95 and float(copy_lesson.weights[1, 12, 5]) > 0.95


def test_figures_with_head_auto_draw_the_block_it_found(tmp_path):
    """The weights figure of block 0 is written when --head auto finds block 0's head: the one
    --block 0 --head 1 draws, byte for byte, not the last block's."""
    auto, chosen = tmp_path / "auto", tmp_path / "chosen"
    common = ["figures", COPY_LESSON, "--model", "copy", "--token", "lamp#2", "--figure", "weights", "--format", "svg"]
    assert run(*common, "--head", "auto", "-o", str(auto)).exit_code == 0
    assert run(*common, "--head", "1", "--block", "0", "-o", str(chosen)).exit_code == 0
    last = tmp_path / "last"
    assert run(*common, "--head", "1", "-o", str(last)).exit_code == 0
    assert (auto / "weights.svg").read_bytes() == (chosen / "weights.svg").read_bytes()
    assert (auto / "weights.svg").read_bytes() != (last / "weights.svg").read_bytes()


def test_heads_on_the_copy_model_rank_the_induction_head_first(tmp_path):
    """heads ranks every block of the copy model: from the second "cake" to "river", the card's
    induction head (block 1) comes first, and block 0's heads, which do not look there, last."""
    from blockviz.toy import PACKAGED_COPY

    card = json.loads((PACKAGED_COPY / "card.json").read_text())
    induction = card["copy"]["induction"]
    result = run(
        "heads", COPY_LESSON, "--model", "copy", "--from", "cake#2", "--to", "river", "-o", str(tmp_path / "h.png")
    )
    assert result.exit_code == 0, result.output
    assert "2 layers × 2 heads" in result.output
    ranks = [line.split() for line in result.output.splitlines() if re.match(r"\s+\d+\s+\d+\s+\d+\s+0\.\d{4}", line)]
    assert [(int(rank[1]), int(rank[2])) for rank in ranks][:1] == [(induction["block"], induction["head"])]
    assert {int(rank[1]) for rank in ranks[2:]} == {0}
