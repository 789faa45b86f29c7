"""A usage mistake (a missing or unknown option, a bad choice, no sentence) is one line, exit 2."""

import pytest
from click.testing import CliRunner

from blockviz.cli import main

MISTAKES = {
    "missing option": (["heads", "the cat sat"], "Missing option '--from'", "blockviz heads --help"),
    "bad choice": (["figures", "the cat sat", "--figure", "nope"], "'nope' is not one of", "blockviz figures --help"),
    "unknown option": (["figures", "the cat sat", "--bogus"], "no such option '--bogus'", "blockviz figures --help"),
    "no sentence": (["render"], "give a sentence", "blockviz render --help"),
    "a model without its layer": (["record", "the cat sat", "--model", "minilm"], "needs --layer", "blockviz record --help"),
    "unknown command": (["bogus"], "No such command 'bogus'", "blockviz --help"),
}


@pytest.mark.parametrize("args, says, points_to", MISTAKES.values(), ids=MISTAKES.keys())
def test_a_usage_mistake_is_one_line_naming_the_help(args, says, points_to, tmp_path):
    result = CliRunner().invoke(main, [*args, "-o", str(tmp_path)] if args[0] == "figures" else args, prog_name="blockviz")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert says in lines[0] and lines[0].endswith(f"(see {points_to})")
    assert not list(tmp_path.iterdir())
