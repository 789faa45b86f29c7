"""A griffe extension (mkdocs.yml, mkdocstrings' ``extensions``): blockviz's docstrings read well
as Markdown once two things written for Sphinx and for runtime are rewritten.

* Sphinx roles — ``:class:`~blockviz.block.Block``` — become code that links to the object's
  entry in the Python API page where it has one (an optional cross-reference: no link, no
  warning, where it has none).
* Doctest examples (``>>>`` lines and their output, up to a blank line) become ``pycon`` code
  blocks, so that ``rec.weights[0][1:3]`` is code, not a Markdown link.
* ``{table}`` in :class:`~blockviz.block_record.BlockRecord`'s docstring, filled with the
  record's fields when the module is imported, is filled with the same table here, from
  :mod:`tables` (griffe reads the source, so it would otherwise show the placeholder).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import griffe

ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|obj|exc):`(?P<tilde>~?)(?P<target>[^`]+)`")


def _tables():
    """docs/hooks/tables.py, loaded by path (this file is loaded by path too, not as a package)."""
    spec = importlib.util.spec_from_file_location("blockviz_docs_tables", Path(__file__).with_name("tables.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _role(match: re.Match) -> str:
    target = match["target"]
    shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
    return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'


def _fence_doctests(text: str) -> str:
    lines, fenced, indent = [], False, ""
    for line in text.split("\n"):
        if not fenced and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f"{indent}```pycon")
            fenced = True
        elif fenced and not line.strip():
            lines.append(f"{indent}```")
            fenced = False
        lines.append(line)
    if fenced:
        lines.append(f"{indent}```")
    return "\n".join(lines)


class MarkdownDocstrings(griffe.Extension):
    """Rewrites every docstring once the object tree is built."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.path, obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        # The package itself is not among the objects on_object is called for.
        self.on_object(obj=pkg)


def markdown(path: str, docstring: str) -> str:
    """The docstring of the object at ``path``, rewritten (see the module docstring)."""
    text = _fence_doctests(ROLE.sub(_role, docstring))
    if path == "blockviz.block_record.BlockRecord" and "{table}" in text:
        text = text.replace("{table}", _tables().fields_table())
    return text
