"""The manual builds, its generated tables list exactly what the code defines, and every command
line it shows is one blockviz accepts."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import click
import pytest

from blockviz.block_config import BlockConfig
from blockviz.cli import main
from blockviz.figures.registry import FIGURES
from blockviz.record_fields import fields_for
from blockviz.scenes.catalog import entries

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


class FirstColumns(HTMLParser):
    """The text of the first cell of every body row, one list per table of an HTML page."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[str]] = []
        self.cell: list[str] | None = None
        self.column = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.column = 0
        elif tag == "td":
            self.column += 1
            self.cell = [] if self.column == 1 else None

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.tables[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def first_columns(page: Path) -> list[list[str]]:
    parser = FirstColumns()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.tables


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed: pip install -e '.[docs]'")
    folder = tmp_path_factory.mktemp("docs") / "site"
    build = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "--quiet",
        "-f",
        str(ROOT / "mkdocs.yml"),
        "-d",
        str(folder),
    ]
    built = subprocess.run(build, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return folder


def test_the_scene_table_lists_every_catalogued_scene_in_teaching_order(site):
    assert [entry.name for entry in entries()] in first_columns(site / "scenes" / "index.html")


def test_the_figure_table_lists_every_registered_figure_in_order(site):
    assert [spec.name for spec in FIGURES] in first_columns(site / "figures" / "index.html")


def test_the_field_table_lists_every_field_of_the_toy_block_in_data_flow_order(site):
    assert [spec.name for spec in fields_for(BlockConfig())] in first_columns(site / "record" / "index.html")


def test_the_commands_page_lists_every_command(site):
    assert [f"blockviz {name}" for name in main.commands] in first_columns(site / "commands" / "index.html")


def test_the_command_reference_has_every_commands_help(site):
    reference = (site / "cli-reference" / "index.html").read_text(encoding="utf-8")
    for name, command in main.commands.items():
        assert f"Usage: blockviz {name} [OPTIONS]" in reference, name
        for option in command.params:
            assert option.opts[0] in reference, f"{name} {option.opts[0]}"


ENGINE_HOOKS = ("setup", "tear_down")
"""RecordScene's methods Manim calls, not a scene: left out of the API page."""


def test_the_api_page_documents_every_method_a_scene_calls_on_record_scene(site):
    """Each public method :class:`~blockviz.scenes.base.RecordScene` defines (``band`` was missing)."""
    import ast

    tree = ast.parse((ROOT / "blockviz" / "scenes" / "base.py").read_text(encoding="utf-8"))
    (scene,) = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "RecordScene"]
    methods = [
        node.name
        for node in scene.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.name not in ENGINE_HOOKS
    ]
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "band" in methods
    assert [name for name in methods if f'id="blockviz.scenes.base.RecordScene.{name}"' not in page] == []


def test_the_site_loads_nothing_from_the_network(site):
    loaded = re.compile(r"<(?:script|img|link)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.IGNORECASE)
    pages = site.rglob("*.html")
    offenders = [page.relative_to(site) for page in pages if loaded.search(page.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_readme_is_a_front_door_whose_links_and_pictures_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    targets = re.findall(r"\]\((?!https?:)([^)#\s]+)", readme)
    assert len([target for target in targets if target.endswith(".png")]) >= 5
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert missing == []


def command_lines(page: Path) -> list[str]:
    """The ``blockviz …`` lines inside the page's fenced code blocks."""
    lines, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced and line.strip().startswith("blockviz "):
            lines.append(line.strip())
    return lines


def test_the_pages_show_command_lines(tmp_path):
    assert len(command_lines(ROOT / "README.md")) >= 5
    assert sum(len(command_lines(page)) for page in PAGES) >= 30


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_command_line_a_page_shows_is_accepted(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for saved in ("cat.safetensors", "rec.safetensors"):  # files the examples read
        (tmp_path / saved).write_bytes(b"")
    for line in command_lines(page):
        name, *arguments = shlex.split(line, comments=True)[1:]
        assert name in main.commands, line
        try:
            main.commands[name].make_context(name, arguments)
        except click.UsageError as error:
            pytest.fail(f"{page.name}: {line}: {error.format_message()}")
        except click.exceptions.Exit as done:  # an eager option such as --list did its work
            assert done.exit_code == 0, line


def test_the_toy_vocabulary_is_counted_as_the_model_holds_it():
    from blockviz.toy import toy_folder
    from blockviz.toy.folder import load_toy

    entries = len(load_toy(toy_folder("toy")).vocabulary.words)  # its words and its unknown token, <unk>
    model_help = next(param.help for param in main.commands["record"].params if param.name == "model")
    pages = {name: (ROOT / name).read_text() for name in ("README.md", "docs/index.md", "docs/models.md")}
    for name, text in {**pages, "--model's help": model_help}.items():
        counted = re.findall(r"(\d+) words and `?<unk>", text)
        assert counted and {int(n) for n in counted} == {entries - 1}, (name, counted)
        assert not re.search(rf"\b{entries}[- ]words?\b", text), name  # <unk> counted as a word


def _anchors(page: Path) -> set[str]:
    """The anchors MkDocs gives the page's headings (Python-Markdown's ``toc.slugify``)."""
    slugify = pytest.importorskip("markdown.extensions.toc").slugify
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {slugify(heading, "-") for heading in headings}


@pytest.mark.parametrize("feature", ["`--model copy`", "logit lens"])
def test_the_readme_names_the_copy_model_and_the_logit_lens_linking_their_sections(feature):
    lines = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if feature in line]
    links = re.findall(r"\]\((docs/[^)#]+)#([^)]+)\)", " ".join(lines))
    assert links, feature
    assert all(anchor in _anchors(ROOT / page) for page, anchor in links), links
