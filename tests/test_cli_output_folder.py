"""``-o`` naming a file is one line of blockviz's own, exit 2, naming the option and a folder to
give instead, for every command with ``-o``; the file is left as it was."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz.cli import main

COURSE = Path(__file__).resolve().parents[1] / "examples" / "course.toml"

FOLDER_COMMANDS = {
    "figures": ["figures", "the cat sat"],
    "render": ["render", "the cat sat"],
    "slides": ["slides", "the cat sat"],
    "train": ["train"],
    "course": ["course", str(COURSE)],
}
"""Commands whose ``-o`` is a folder only."""

PAGE_OR_FIGURE_COMMANDS = {
    "explore": (["explore", "the cat sat"], "is neither a page nor a folder: write"),
    "heads": (["heads", "the cat sat", "--from", "cat"], "names no figure format: end it in .png"),
    "compare": (["compare", "the cat sat", "the dog sat", "--from", "sat"], "names no figure format: end it in .png"),
}
"""Commands whose ``-o`` may also name their one file: a file of another ending is refused."""


def _one_line_usage_error(args):
    result = CliRunner().invoke(main, args, prog_name="blockviz")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize("args", FOLDER_COMMANDS.values(), ids=FOLDER_COMMANDS.keys())
def test_a_folder_option_naming_a_file_is_one_line_naming_a_folder_to_give(args, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    line = _one_line_usage_error([*args, "-o", str(notes)])
    assert line == (
        f"Error: Invalid value for '-o' / '--output': {str(notes)!r} is a file, not a folder: "
        f"give a folder, new or existing, e.g. {tmp_path / 'notes'} (see blockviz {args[0]} --help)"
    )
    assert notes.read_text() == "mine" and sorted(tmp_path.iterdir()) == [notes]


def test_no_folder_is_suggested_where_a_file_stands(tmp_path):
    for name in ("notes.txt", "notes"):
        (tmp_path / name).write_text("mine")
    line = _one_line_usage_error(["figures", "the cat sat", "-o", str(tmp_path / "notes.txt")])
    assert "is a file, not a folder: give a folder, new or existing (see blockviz figures --help)" in line


@pytest.mark.parametrize("args, says", PAGE_OR_FIGURE_COMMANDS.values(), ids=PAGE_OR_FIGURE_COMMANDS.keys())
def test_a_page_or_figure_option_naming_a_file_of_another_kind_is_one_line(args, says, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    line = _one_line_usage_error([*args, "-o", str(notes)])
    assert "-o" in line and repr(str(notes)) in line and says in line
    assert notes.read_text() == "mine" and sorted(tmp_path.iterdir()) == [notes]
