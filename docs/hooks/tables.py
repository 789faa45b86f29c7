"""MkDocs hook: the docs' reference tables, written from the code that defines them.

A page asks for a table with a line of its own, ``<!-- generated: NAME -->``; the hook replaces
that line with the table when the site is built, so the tables cannot drift from the code:

* ``scenes`` — the scene catalogue (:func:`blockviz.scenes.catalog.entries`), in teaching order;
* ``figures`` — the figure registry (:data:`blockviz.figures.registry.FIGURES`);
* ``fields`` — the record's fields for blockviz's own block (:func:`blockviz.record_fields.fields_for`);
* ``architecture-fields`` — what other architectures add to and drop from those fields;
* ``modules`` — the package's modules, each with the first paragraph of its docstring;
* ``cli`` — every command's ``--help``.

Everything read here is cheap to import (no torch, no Manim, no matplotlib). The hook also adds
the committed pictures (``renders/preview/*.png``, ``renders/*.png``) to the site, so that pages
show the README's pictures from where they are kept.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
ROLE = re.compile(r":[a-z]+:`~?(?P<target>[^`]+)`")
MARKER = re.compile(r"^<!-- generated: (?P<name>[a-z-]+) -->$", flags=re.MULTILINE)
PICTURES = ("renders/preview/*.png", "renders/*.png")
HELP_WIDTH = 100

ARCHITECTURES = {
    "post-norm (BERT)": {"norm_placement": "post"},
    "RMSNorm (Llama)": {"norm": "rmsnorm"},
    "rotary positions (Llama)": {"positional": "rotary"},
    "gated FFN (Llama)": {"ffn": "gated"},
    "an unembedding (the trained toy model, `--model toy`)": {"positional": "learned", "vocab_size": 70},
}
"""The architectures the ``architecture-fields`` table compares with blockviz's own block: each
is that block with one :class:`~blockviz.block_config.BlockConfig` choice changed (the trained toy
model's learned positions add no field; its vocabulary adds the prediction)."""


def cell(text: str) -> str:
    """``text`` made safe for one cell of a Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def shape_text(spec) -> str:
    """A field's shape in dimension words: ``(n_heads, n, n)``."""
    return "(" + ", ".join(spec.shape) + ("," if len(spec.shape) == 1 else "") + ")"


def scenes_table() -> str:
    from blockviz.scenes.catalog import entries

    lecture_only = " (in the lecture; not in `--scene all`)"
    rows = [
        (f"`{entry.name}`", entry.title, entry.description + (lecture_only if entry.lecture_only else ""))
        for entry in entries()
    ]
    return table(("scene", "chapter", "shows"), rows)


def figures_table() -> str:
    from blockviz.figures.registry import FIGURES

    return table(("figure", "what it shows"), [(f"`{spec.name}`", spec.description) for spec in FIGURES])


def toy_fields() -> tuple:
    """The fields of a record of blockviz's own block, in data-flow order."""
    from blockviz.block_config import BlockConfig
    from blockviz.record_fields import fields_for

    return fields_for(BlockConfig())


def fields_table() -> str:
    return table(("name", "shape", "what"), [(f"`{spec.name}`", shape_text(spec), spec.what) for spec in toy_fields()])


def architecture_fields_table() -> str:
    from blockviz.block_config import BlockConfig
    from blockviz.record_fields import fields_for

    toy = [spec.name for spec in toy_fields()]
    rows = []
    for label, choice in ARCHITECTURES.items():
        fields = fields_for(BlockConfig(d_model=8, **choice))
        added = "<br>".join(f"`{spec.name}` {shape_text(spec)}: {spec.what}" for spec in fields if spec.name not in toy)
        names = {spec.name for spec in fields}
        dropped = ", ".join(f"`{name}`" for name in toy if name not in names) or "—"
        rows.append((label, added, dropped))
    return table(("architecture", "fields added", "fields it does not have"), rows)


def module_summary(source: Path) -> str:
    """The first paragraph of a module's docstring, on one line, roles as plain code."""
    docstring = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
    first_paragraph = docstring.strip().split("\n\n")[0].replace("\n", " ")
    return ROLE.sub(lambda match: f"`{match['target']}`", first_paragraph)


def modules_table(package: Path = ROOT / "blockviz", level: int = 3) -> str:
    """A table of ``package``'s modules and subpackages, then one section per subpackage."""
    rows, sections = [], []
    for path in sorted(package.iterdir()):
        if path.name.startswith("_") or not (path.suffix == ".py" or (path / "__init__.py").is_file()):
            continue
        where = path.relative_to(ROOT).as_posix()
        if path.is_dir():
            rows.append((f"`{where}/`", module_summary(path / "__init__.py")))
            sections.append(f"{'#' * level} `{where}/`\n\n{modules_table(path, level + 1)}")
        else:
            rows.append((f"`{where}`", module_summary(path)))
    return "\n\n".join([table(("module", "what it holds"), rows), *sections])


COMMAND_PAGES = {
    "record": "[The record](record.md)",
    "figures": "[Figures](figures.md)",
    "render": "[Scenes and the lecture](scenes.md)",
    "explore": "[The explorer](explorer.md)",
    "heads": "[Real trained models](models.md#find-the-head)",
    "compare": "[Real trained models](models.md)",
    "slides": "[Slides](slides.md)",
    "train": "[The trained block](models.md)",
    "course": "[Courses](courses.md)",
}
"""The manual's page on each command (the commands table fails the build for a command without one)."""


def commands_table() -> str:
    """Every command of the click group, its first help line and its page."""
    from blockviz.cli import main

    missing = sorted(set(main.commands) - set(COMMAND_PAGES))
    if missing:
        raise PluginError(f"docs/hooks/tables.py: no page for the command {missing[0]!r} in COMMAND_PAGES")
    rows = [
        (f"`blockviz {name}`", command.get_short_help_str(limit=300), COMMAND_PAGES[name])
        for name, command in main.commands.items()
    ]
    return table(("command", "what it does", "page"), rows)


def cli_reference() -> str:
    from blockviz.cli import main

    width = {"terminal_width": HELP_WIDTH, "max_content_width": HELP_WIDTH}
    group = click.Context(main, info_name="blockviz", **width)
    sections = ["```text\n" + main.get_help(group) + "\n```"]
    for name, command in main.commands.items():
        context = click.Context(command, info_name=name, parent=group, **width)
        sections.append(f"## blockviz {name}\n\n```text\n{command.get_help(context)}\n```")
    return "\n\n".join(sections)


GENERATORS = {
    "scenes": scenes_table,
    "figures": figures_table,
    "fields": fields_table,
    "architecture-fields": architecture_fields_table,
    "modules": modules_table,
    "cli": cli_reference,
    "commands": commands_table,
}


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    def generated(match: re.Match) -> str:
        name = match["name"]
        if name not in GENERATORS:
            known = ", ".join(GENERATORS)
            raise PluginError(f"{page.file.src_uri}: no generated table {name!r}; the hook knows {known}")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)


def on_files(files, config, **kwargs):
    for pattern in PICTURES:
        for path in sorted(ROOT.glob(pattern)):
            uri = path.relative_to(ROOT).as_posix()
            if files.get_file_from_path(uri) is None:
                files.append(
                    File(
                        uri,
                        src_dir=str(ROOT),
                        dest_dir=config["site_dir"],
                        use_directory_urls=config["use_directory_urls"],
                    )
                )
    return files
