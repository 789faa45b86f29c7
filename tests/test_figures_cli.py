"""`blockviz figures`: files written and printed; bad arguments rejected in one line, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.figures import FIGURE_NAMES
from blockviz.files import sentence_slug
from blockviz.style import DARK

FAST = ["--dpi", "30", "--format", "svg"]


def run(*args):
    return CliRunner().invoke(main, ["figures", *args])


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("Error")]


def test_list_names_and_describes_every_figure():
    result = run("--list")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == list(FIGURE_NAMES)
    assert all(len(line.split(None, 1)) == 2 for line in lines)


def test_writes_to_the_default_folder_and_prints_each_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("the cat sat", "--figure", "weights", "--figure", "worked-example", "--format", "png,svg", "--dpi", "30")
    assert result.exit_code == 0, result.output
    folder = Path("renders") / sentence_slug("the cat sat") / "figures"
    expected = [str(folder / f"{name}.{fmt}") for name in ("weights", "worked-example") for fmt in ("png", "svg")]
    assert result.output.splitlines() == expected
    assert all(Path(path).is_file() for path in expected)


def test_token_head_theme_and_output_folder(tmp_path):
    result = run("the cat sat", "-o", str(tmp_path), "--figure", "value-mixing", "--token", "cat", "--head", "1", "--theme", "dark", *FAST)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(tmp_path / "value-mixing.svg")]
    svg = (tmp_path / "value-mixing.svg").read_text()
    assert DARK.background in svg  # the dark page


def test_reads_a_saved_record(tmp_path):
    saved = tmp_path / "cat.safetensors"
    assert CliRunner().invoke(main, ["record", "the cat sat", "--save", str(saved)]).exit_code == 0
    result = run("--record", str(saved), "-o", str(tmp_path / "out"), "--figure", "causal-vs-bidirectional", *FAST)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "causal-vs-bidirectional.svg").is_file()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--format", "png,jpg"], 2, "unknown format 'jpg': choose from png, svg, pdf"),
        (["--format", ","], 2, "give at least one format"),
        (["--figure", "heatmap"], 2, "'heatmap' is not one of"),
        (["--token", "dog"], 1, "token 'dog' is not in the sentence: choose one of 0 'the', 1 'cat', 2 'sat'"),
        (["--token", "7"], 1, "token index 7 is outside the sentence of 3 tokens"),
        (["--head", "2"], 1, "head 2 does not exist: this block has 2 heads, numbered 0 to 1"),
        (["--head", "-1"], 2, "-1 is not in the range x>=0"),
        (["--dpi", "5"], 2, "5 is not in the range 20<=x<=1200"),
        (["--theme", "blue"], 2, "'blue' is not one of 'light', 'dark'"),
    ],
)
def test_bad_arguments_give_one_line_errors_and_write_nothing(tmp_path, args, code, message):
    result = run("the cat sat", "-o", str(tmp_path / "out"), *args)
    assert result.exit_code == code
    lines = error_lines(result)
    assert len(lines) == 1 and message in lines[0], result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_unwritable_folder_is_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("the cat sat", "-o", str(blocker / "figures"), *FAST)
    assert result.exit_code == 1
    assert error_lines(result) == [f"Error: cannot create folder {str(blocker / 'figures')!r} (Not a directory): choose a writable folder with -o"]


def test_no_sentence_and_both_sentence_and_record_are_usage_errors(tmp_path):
    assert run(*FAST).exit_code == 2
    saved = tmp_path / "r.safetensors"
    CliRunner().invoke(main, ["record", "hi there", "--save", str(saved)])
    result = run("the cat sat", "--record", str(saved), *FAST)
    assert result.exit_code == 2 and "not both" in error_lines(result)[0]


def test_missing_glyphs_warn_once_on_stderr(tmp_path):
    result = run("猫 and 🐈 sat", "-o", str(tmp_path), "--figure", "block-flow", "--figure", "worked-example", *FAST)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "'猫', '🐈'" in warnings[0]
    assert result.stdout.splitlines() == [str(tmp_path / "block-flow.svg"), str(tmp_path / "worked-example.svg")]
