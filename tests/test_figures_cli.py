"""`blockviz figures`: files written and printed; bad arguments rejected in one line, nothing written."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from support_figures import BLOCK_FIGURES

from blockviz.cli import main
from blockviz.cli.figures_command import FORMATS, THEMES
from blockviz.figures import FIGURE_NAMES, FIGURES
from blockviz.figures.context import installed_fallbacks
from blockviz.files import sentence_slug
from blockviz.ownership import MANIFEST
from blockviz.style import DARK
from blockviz.style import THEMES as STYLE_THEMES

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
    result = run(
        "the cat sat", "--figure", "weights", "--figure", "worked-example", "--format", "png,svg", "--dpi", "30"
    )
    assert result.exit_code == 0, result.output
    folder = Path("renders") / sentence_slug("the cat sat") / "figures"
    expected = [str(folder / f"{name}.{fmt}") for name in ("weights", "worked-example") for fmt in ("png", "svg")]
    assert result.output.splitlines() == expected
    assert all(Path(path).is_file() for path in expected)


def test_token_head_theme_and_output_folder(tmp_path):
    result = run(
        "the cat sat",
        "-o",
        str(tmp_path),
        "--figure",
        "value-mixing",
        "--token",
        "cat",
        "--head",
        "1",
        "--theme",
        "dark",
        *FAST,
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [str(tmp_path / "value-mixing.svg")]
    svg = (tmp_path / "value-mixing.svg").read_text()
    assert DARK.background in svg  # the dark page


@pytest.mark.parametrize("token", ["the#2", "3"])
def test_token_takes_a_later_occurrence_or_a_position(tmp_path, token):
    result = run("the cat saw the dog", "-o", str(tmp_path), "--figure", "value-mixing", "--token", token, *FAST)
    assert result.exit_code == 0, result.output
    assert (
        ">Value mixing: query 'the' (position 3), head 0</text>" in (tmp_path / "value-mixing.svg").read_text()
    )  # text kept as text


@pytest.mark.parametrize(("width", "points"), [([], 468.0), (["--width", "3.3"], 237.6), (["--width", "12"], 864.0)])
def test_figures_are_as_wide_as_the_page(tmp_path, width, points):
    result = run("the cat sat", "-o", str(tmp_path), "--figure", "weights", "--format", "svg", *width)
    assert result.exit_code == 0, result.output
    root = ElementTree.parse(tmp_path / "weights.svg").getroot()
    assert float(root.get("width").removesuffix("pt")) == pytest.approx(points)


def test_width_auto_is_the_natural_size(tmp_path):
    result = run("the cat sat", "-o", str(tmp_path), "--figure", "ffn", "--format", "svg", "--width", "auto")
    assert result.exit_code == 0, result.output
    assert float(ElementTree.parse(tmp_path / "ffn.svg").getroot().get("width").removesuffix("pt")) > 468.0


def test_help_names_the_selector_and_the_output_folder():
    result = run("--help")
    assert "--token WORD|WORD#K|POSITION" in result.output
    assert "DIR/<figure>.<format>" in " ".join(result.output.split())
    assert "renders/<sentence-slug>/figures" in result.output
    assert f"Default: each of the {len(FIGURES)} that fits the record's kind of block" in " ".join(
        result.output.split()
    )


def test_the_commands_themes_and_formats_are_the_librarys():
    from blockviz.figures.saving import FORMATS as SAVED

    assert THEMES == tuple(STYLE_THEMES) and FORMATS == SAVED


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
        (["--figure", "heatmap"], 2, "unknown figure 'heatmap': choose from token-grid, layer-norm,"),
        (["--figure", "mask,weigths"], 2, "unknown figure 'weigths': did you mean 'weights'? choose from token-grid,"),
        (
            ["--token", "dog"],
            2,
            "token 'dog' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat', 2 'sat'",
        ),
        (["--token", "7"], 2, "token position 7 is outside the sentence of 3 tokens"),
        (["--token", "cat#0"], 2, "cat#0: occurrences count from 1"),
        (["--token", "cat#2"], 2, "'cat' occurs once, so cat#2 does not exist"),
        (["--head", "2"], 2, "head 2 does not exist: the block has 2 heads, choose heads 0 to 1"),
        (["--head", "-1"], 2, "head -1 does not exist: the block has 2 heads, choose heads 0 to 1"),
        (["--head", "one"], 2, "'one' is neither a head number (0, 1, …) nor auto"),
        (["--dpi", "5"], 2, "5 is not in the range 20<=x<=1200"),
        (["--theme", "blue"], 2, "'blue' is not one of 'light', 'dark'"),
        (["--width", "1.9"], 2, "1.9 inches is outside 2 to 40"),
        (["--width", "41"], 2, "41 inches is outside 2 to 40"),
        (["--width", "nan"], 2, "nan inches is outside 2 to 40"),
        (["--width", "wide"], 2, "'wide' is not a number of inches: give one from 2 to 40, or auto"),
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
    assert error_lines(result) == [
        f"Error: {str(blocker)!r} is a file, not a folder: choose another folder"
    ]  # blockviz.files.writable_folder's words


def test_a_folder_that_cannot_be_written_is_the_files_module_line(tmp_path, monkeypatch):
    import errno
    import os

    from blockviz import files

    def refuse(path):
        raise OSError(errno.EACCES, "denied")

    monkeypatch.setattr(files, "_new_file", refuse)  # the probe file (and every later file) cannot be made
    out = tmp_path / "out"
    result = run("the cat sat", "-o", str(out), *FAST)
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"Error: cannot write to folder {str(out)!r} ({os.strerror(errno.EACCES)}): choose a writable folder"
    ]
    assert not [path for path in out.rglob("*") if path.is_file()]


def test_no_sentence_and_both_sentence_and_record_are_usage_errors(tmp_path):
    assert run(*FAST).exit_code == 2
    saved = tmp_path / "r.safetensors"
    CliRunner().invoke(main, ["record", "hi there", "--save", str(saved)])
    result = run("the cat sat", "--record", str(saved), *FAST)
    assert result.exit_code == 2 and "not both" in error_lines(result)[0]


def test_missing_glyphs_warn_once_on_stderr(tmp_path):
    result = run(
        "猫 and 🐈 sat",
        "--model",
        "seeded",
        "-o",
        str(tmp_path),
        "--figure",
        "block-flow",
        "--figure",
        "worked-example",
        *FAST,
    )
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "'猫'" in warnings[0]
    assert ("🐈" in warnings[0]) == (installed_fallbacks() == ())  # the emoji is drawn by Symbola where it is installed
    assert result.stdout.splitlines() == [str(tmp_path / "block-flow.svg"), str(tmp_path / "worked-example.svg")]


@pytest.mark.parametrize("sentence", ["a\x01b", "a\x00b\x1b[31m", "caf\udce9 ok"])
def test_control_characters_and_lone_surrogates_give_well_formed_svg(tmp_path, sentence):
    result = run(sentence, "--model", "seeded", "-o", str(tmp_path), "--figure", "weights", "--format", "svg")
    assert result.exit_code == 0, result.output
    root = ElementTree.parse(tmp_path / "weights.svg").getroot()
    assert root.tag.endswith("svg")


def test_every_figure_of_a_control_character_sentence_is_well_formed_svg(tmp_path):
    result = run("a\x01b", "--model", "seeded", "-o", str(tmp_path), *FAST)
    assert result.exit_code == 0, result.output
    for name in BLOCK_FIGURES:  # the toy model's own figures are skipped
        ElementTree.parse(tmp_path / f"{name}.svg")
    assert "warning" not in result.stderr  # U+0001 is drawn as text the font has


# Bad record and parameter files: one line, exit 1 or 2, no traceback, nothing written.


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A good record saved as .safetensors and as .json, to break in different ways."""
    from blockviz.block_record import record

    folder = tmp_path_factory.mktemp("saved")
    rec = record("the cat sat")
    rec.save(folder / "cat.safetensors")
    rec.save(folder / "cat.json")
    return folder


def _truncated(folder, source):
    data = (source / "cat.safetensors").read_bytes()
    (folder / "cut.safetensors").write_bytes(data[: len(data) // 2])
    return folder / "cut.safetensors"


def _header_cut(folder, source):
    data = (source / "cat.safetensors").read_bytes()
    (folder / "head.safetensors").write_bytes(data[:20])
    return folder / "head.safetensors"


def _rewritten(change):
    """The good record written again with its tensors changed (past the checks of BlockRecord.save)."""

    def make(folder, source):
        from blockviz import BlockRecord
        from blockviz.record_format import write_record

        rec = BlockRecord.load(source / "cat.safetensors")
        tensors = {name: tensor.clone() for name, tensor in {**rec.activations(), **rec.params}.items()}
        change(tensors)
        write_record(folder / "rewritten.safetensors", rec.sentence, rec.tokens, rec.config, tensors)
        return folder / "rewritten.safetensors"

    return make


def _text(name, text):
    def make(folder, source):
        (folder / name).write_text(text)
        return folder / name

    return make


def _edited(change):
    def make(folder, source):
        data = json.loads((source / "cat.json").read_text())
        change(data)
        (folder / "edited.json").write_text(json.dumps(data))
        return folder / "edited.json"

    return make


BAD_FILES = {
    "missing": lambda folder, source: folder / "nowhere.safetensors",
    "truncated safetensors": _truncated,
    "truncated safetensors header": _header_cut,
    "invalid JSON": _text("bad.json", '{"format": "blockviz-record/2", "tokens": ['),
    "nested JSON": _text("deep.json", "[" * 100_000 + "]" * 100_000),
    "not a record": _text("other.json", '{"hello": "world"}'),
    "a field missing": _edited(lambda data: data["tensors"].pop("weights")),
    "an extra field": _edited(lambda data: data["tensors"].__setitem__("surprise", [[1.0]])),
    "a list for the config": _edited(lambda data: data.__setitem__("config", [])),
    "ints for the tokens": _edited(lambda data: data.__setitem__("tokens", [1, 2, 3])),
    "tokens that do not match the tensors": _edited(lambda data: data.__setitem__("tokens", ["the", "cat"])),
    "a string where a number belongs": _edited(lambda data: data["tensors"]["resid_pre"][0].__setitem__(0, "NaN")),
    "a NaN where values must be finite": _rewritten(
        lambda tensors: tensors["resid_pre"][0].__setitem__(0, float("nan"))
    ),
    "a float8 tensor": _rewritten(
        lambda tensors: tensors.__setitem__("weights", tensors["weights"].to(torch.float8_e4m3fn))
    ),
    "an int tensor": _rewritten(lambda tensors: tensors.__setitem__("embed", tensors["embed"].to(torch.int32))),
    "a future format": _edited(lambda data: data.__setitem__("format", "blockviz-record/9")),
    "an older format": _edited(lambda data: data.__setitem__("format", "blockviz-record/1")),
}
"""How each bad file is made from the good ones."""

EXPECTED = {
    "a future format": "written by a newer blockviz",
    "an older format": "written by an older blockviz",
    "a field missing": "weights",
    "tokens that do not match the tensors": "token",
    "a list for the config": "config",
    "a NaN where values must be finite": "resid_pre",
    "a float8 tensor": "weights",
    "an int tensor": "embed",
}
"""Words the one-line message must hold, where the problem has a name."""


def assert_refused(result, out: Path, words: str | None = None):
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(error_lines(result)) == 1 and len(lines) <= 3, result.output  # usage errors add a usage line and a hint
    if words:
        assert words in error_lines(result)[0], result.output
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_record_file_is_one_line_and_writes_nothing(tmp_path, saved, case):
    bad = BAD_FILES[case](tmp_path, saved)
    out = tmp_path / "out"
    assert_refused(run("--record", str(bad), "-o", str(out), *FAST), out, EXPECTED.get(case))


@pytest.mark.parametrize(
    "case",
    ["missing", "truncated safetensors", "truncated safetensors header", "invalid JSON", "nested JSON", "not a record"],
)
def test_a_bad_params_file_is_one_line_and_writes_nothing(tmp_path, saved, case):
    bad = BAD_FILES[case](tmp_path, saved)
    out = tmp_path / "out"
    assert_refused(run("the cat sat", "--params", str(bad), "-o", str(out), *FAST), out)


def test_the_good_files_draw(tmp_path, saved):
    for name in ("cat.safetensors", "cat.json"):
        result = run("--record", str(saved / name), "-o", str(tmp_path / name), "--figure", "weights", *FAST)
        assert result.exit_code == 0, result.output
    result = run(
        "the cat sat", "--params", str(saved / "cat.json"), "-o", str(tmp_path / "params"), "--figure", "weights", *FAST
    )
    assert result.exit_code == 0, result.output


def test_figure_names_take_commas_as_render_scene_names_do(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "figures",
            "the cat sat",
            "--figure",
            "weights,mask",
            "--figure",
            "scores",
            "--format",
            "svg",
            "-o",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == [MANIFEST, "mask.svg", "scores.svg", "weights.svg"]
