"""`blockviz record` and the group, through click's CliRunner."""

import json
import os

import pytest
from click.testing import CliRunner

from blockviz import __version__
from blockviz.cli import main


def row(output: str, section: str, token: str) -> list[str]:
    """The first table row labelled ``token`` after the heading ``section``."""
    lines = output.split(section, 1)[1].splitlines()
    return next(line.split() for line in lines if line.startswith(f"  {token} "))


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_record_prints_every_tensor_with_shape_and_token_labels(cat_record):
    result = run("record", "the cat sat", "--model", "seeded")
    assert result.exit_code == 0, result.output
    assert "weights  (2, 3, 3)" in result.output
    assert "resid_post  (3, 4)" in result.output
    assert "ffn_pre  (3, 8)" in result.output
    assert row(result.output, "weights  (2, 3, 3)", "the") == ["the", "1.00", "0.00", "0.00"]
    assert "-inf" in result.output.split("mask  (3, 3)")[1]
    value = f"{cat_record.resid_post[2, 3].item():.2f}"
    assert row(result.output, "resid_post  (3, 4)", "sat")[-1] == value


def test_record_decimals_and_options():
    result = run("record", "a b", "--decimals", "4", "--d-model", "6", "--heads", "3", "--bidirectional")
    assert result.exit_code == 0, result.output
    assert "query  (3, 2, 2)" in result.output and "-inf" not in result.output
    assert any(len(word.split(".")[-1]) == 4 for word in result.output.split() if "." in word)


def test_record_save_writes_json(tmp_path):
    path = tmp_path / "r.json"
    result = run("record", "the cat sat", "--save", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(path.read_text())["tokens"] == ["the", "cat", "sat"]


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["record", ""], 2, "the sentence is empty"),
        (["record", "  "], 2, "the sentence is empty"),
        (["record", " ".join(["w"] * 65), "--model", "seeded"], 2, "more than max_tokens 64"),
        (["record", " ".join(["the"] * 26)], 2, "or record it with --model seeded"),
        (["record", "-the cat"], 2, "put -- before it"),
        (["record", "a", "--d-model", "5"], 2, "not divisible by n_heads"),
        (["record", "a", "--activation", "tanh"], 2, "'tanh' is not one of"),
        (["record", "a", "--weights", "nope.json"], 1, "no file at"),
        (["record", "a", "--save", "out.txt"], 1, "neither .safetensors nor .json"),
    ],
)
def test_bad_input_is_one_line_error(args, code, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1


def test_sentence_starting_with_dash_works_after_double_dash():
    result = run("record", "--", "-the cat")
    assert result.exit_code == 0 and "  -  " in result.output


def test_unwritable_save_folder_writes_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("record", "a", "--save", str(blocker / "r.json"))
    assert result.exit_code == 1 and "is a file, not a folder" in result.output
    assert blocker.read_text() == "x"


def test_unwritable_save_folder_is_refused_before_anything_is_printed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("record", "the cat sat", "--save", str(blocker / "sub" / "r.safetensors"))
    assert result.exit_code == 1
    assert result.output.strip().startswith("Error:") and "is a file, not a folder" in result.output
    assert "resid_post" not in result.output


def test_saved_safetensors_get_the_usual_permissions(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        result = run("record", "a", "--model", "seeded", "--save", str(tmp_path / "r.safetensors"))
    finally:
        os.umask(mask)
    assert result.exit_code == 0
    assert stat.S_IMODE((tmp_path / "r.safetensors").stat().st_mode) == 0o644


def test_record_head_prints_only_that_head_of_every_per_head_tensor(cat_record):
    result = run("record", "the cat sat", "--model", "seeded", "--head", "1")
    assert result.exit_code == 0, result.output
    for section in ("row_max  (2, 3)", "exp_sums  (2, 3)"):
        table = result.output.split(section, 1)[1].split("\n\n", 1)[0]
        assert table.split("\n")[1].split() == ["h1"]
    assert row(result.output, "row_max  (2, 3)", "sat") == ["sat", f"{cat_record.row_max[1, 2].item():.2f}"]
    assert row(result.output, "exp_sums  (2, 3)", "cat") == ["cat", f"{cat_record.exp_sums[1, 1].item():.2f}"]
    assert "head 0" not in result.output and "  head 1" in result.output.split("weights  (2, 3, 3)", 1)[1]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("target", ["/proc/blockviz.json", "/proc/blockviz/deeper/r.json"])
def test_saving_into_proc_says_not_writable(target):
    """/proc exists but takes no new names; the system's reason would be "No such file or directory"."""
    result = run("record", "the cat sat", "--save", target)
    assert result.exit_code == 1 and "not writable" in result.output and "No such file" not in result.output
    assert "'/proc' is not writable" in result.output or "folder '/proc': it is not writable" in result.output
    assert not os.path.exists(target)


def test_record_saves_before_printing_so_a_reader_leaving_the_pipe_early_still_gets_the_file(tmp_path):
    import subprocess
    import sys

    from blockviz.block_record import BlockRecord

    saved = tmp_path / "cat.safetensors"
    command = [sys.executable, "-m", "blockviz.cli.program", "record", "the cat sat", "--model", "seeded"]
    reader = subprocess.Popen([*command, "--save", str(saved)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    reader.stdout.readline()
    reader.stdout.close()  # as `| head -1` does
    reader.wait(timeout=120)
    assert list(BlockRecord.load(saved).tokens) == ["the", "cat", "sat"]
