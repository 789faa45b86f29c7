"""Every example a command's --help gives is a command line its options accept."""

from __future__ import annotations

import shlex

import click
import pytest
from click.testing import CliRunner

from blockviz.cli import main


def examples(name: str) -> list[list[str]]:
    """The `blockviz NAME …` lines under "Examples:" in ``blockviz NAME --help``, as arguments
    (a trailing "# …" remark dropped)."""
    shown = CliRunner().invoke(main, [name, "--help"], terminal_width=200).output
    lines = [line.strip() for line in shown.split("Examples:", 1)[1].splitlines()] if "Examples:" in shown else []
    return [shlex.split(line, comments=True)[2:] for line in lines if line.startswith(f"blockviz {name}")]


COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_example_in_a_commands_help_parses(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for saved in ("rec.safetensors", "cat.safetensors", "x.json"):  # files the examples read
        (tmp_path / saved).write_bytes(b"")
    command = main.commands[name]
    for arguments in examples(name):
        try:
            command.make_context(name, list(arguments))
        except click.UsageError as error:
            pytest.fail(f"blockviz {name} {shlex.join(arguments)}: {error.format_message()}")


def test_record_render_figures_and_explore_give_examples():
    for name in ("record", "render", "figures", "explore"):
        assert len(examples(name)) >= 3, name
