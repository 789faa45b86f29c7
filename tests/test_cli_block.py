"""``--block K``: the block of a record of several blocks that record, render, figures and explore show."""

import base64
import json
import re
import zlib

import numpy as np
import pytest
from click.testing import CliRunner
from support_stack import toy_stack

from blockviz.cli import main


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
    shown = _values(_data_block(page.read_text(encoding="utf-8"))["tensors"]["resid_post"])
    assert np.array_equal(np.array(shown, dtype=np.float32), stack.block(0).resid_post.numpy().reshape(-1))
    assert not np.array_equal(np.array(shown, dtype=np.float32), stack.block(1).resid_post.numpy().reshape(-1))


def _values(entry: dict) -> list:
    """A tensor of the page's data: its numbers as written, or unpacked (explorer.packing's byte
    planes, raw deflate, base64)."""
    if "data" in entry:
        return entry["data"]
    planes = zlib.decompress(base64.b64decode(entry["z"]), -15)
    size = entry["size"]
    raw = np.frombuffer(planes, np.uint8).reshape(size, -1).T.tobytes()
    return np.frombuffer(raw, "<f4" if size == 4 else "<f8").tolist()


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
