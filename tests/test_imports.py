"""The import graph of every module under ``blockviz/``: no circle, and imports flow one way
(CLI → scenes / figures / explorer → record → block / config; nothing imports the CLI; figures
never import Manim or the scenes; nothing imports pyplot).

The graph is read from the source with :mod:`ast`, not by importing: an ``import`` or ``from …
import`` anywhere in a module (at the top, in a function, under ``if TYPE_CHECKING``) is an
edge. ``from package import name`` is an edge to ``package.name`` when that is a module, else
to ``package``; importing ``a.b.c`` is an edge to ``a.b.c`` only (not to the packages ``a`` and
``a.b`` Python runs first: every module would otherwise lead back through ``blockviz/__init__``).
Imports by name at run time (:func:`importlib.import_module`) are not edges.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "blockviz"

ALLOWED_CYCLES: list[frozenset[str]] = []
"""Circles known and left for another change, each with the reason."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module under ``blockviz/`` by dotted name (a package by its ``__init__.py``)."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(path: Path, name: str) -> set[str]:
    """The dotted names ``path`` (module ``name``) imports, relative imports resolved;
    ``from a import b`` gives ``a.b``, a module or not (:func:`graph` keeps what exists)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                package = ".".join(base + ([node.module] if node.module else []))
            else:
                package = node.module
            found.update(package if alias.name == "*" else f"{package}.{alias.name}" for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    """Module → the modules under ``blockviz`` it imports (``from p import name``: ``p.name``
    if it is a module, else ``p``)."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for imported in imported_names(path, name):
            if imported.split(".")[0] != "blockviz":
                continue
            if imported in known:
                targets.add(imported)
            elif imported.rpartition(".")[0] in known:  # from package import a_function
                targets.add(imported.rpartition(".")[0])
        targets.discard(name)
        edges[name] = targets
    return edges


def all_imports() -> dict[str, set[str]]:
    """Module → every dotted name it imports, inside the package or not."""
    return {name: imported_names(path, name) for name, path in modules().items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each
    sorted: every import circle is inside one of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the number of modules (~200)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def a_circle(edges: dict[str, set[str]], members: list[str]) -> list[str]:
    """One circle through the first of ``members`` (a strongly connected component), for the message."""
    start, inside = members[0], set(members)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(edges[node] & inside):
            if target == start:
                return paths[node] + [start]
            if target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    return members


def imports_of(prefix: str, imports: dict[str, set[str]]) -> dict[str, set[str]]:
    """The modules named ``prefix`` or under it, with what they import."""
    return {name: names for name, names in imports.items() if name == prefix or name.startswith(prefix + ".")}


def starting_with(names: set[str], *prefixes: str) -> set[str]:
    return {name for name in names if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)}


# -- the reader itself --------------------------------------------------------------------


def test_the_reader_sees_top_level_function_level_and_relative_imports(tmp_path, monkeypatch):
    package = tmp_path / "blockviz"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import blockviz.b\n")
    (package / "b.py").write_text("def later():\n    from blockviz.sub import c\n")
    (package / "sub" / "__init__.py").write_text("from . import c\n")
    (package / "sub" / "c.py").write_text("from ..a import something\nimport os\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    edges = graph()
    assert edges == {
        "blockviz": set(),
        "blockviz.a": {"blockviz.b"},
        "blockviz.b": {"blockviz.sub.c"},
        "blockviz.sub": {"blockviz.sub.c"},
        "blockviz.sub.c": {"blockviz.a"},
    }
    assert cycles(edges) == [["blockviz.a", "blockviz.b", "blockviz.sub.c"]]
    assert a_circle(edges, ["blockviz.a", "blockviz.b", "blockviz.sub.c"]) == [
        "blockviz.a",
        "blockviz.b",
        "blockviz.sub.c",
        "blockviz.a",
    ]
    assert "os" in all_imports()["blockviz.sub.c"]


def test_the_whole_package_is_read():
    found = modules()
    assert "blockviz.figures.registry" in found and "blockviz.cli" in found and len(found) > 50
    assert graph()["blockviz.cli.figures_command"] >= {"blockviz.figures.registry", "blockviz.figures.writing"}


# -- the package ----------------------------------------------------------------------------


def test_no_import_circle():
    edges = graph()
    found = [members for members in cycles(edges) if frozenset(members) not in ALLOWED_CYCLES]
    assert not found, "import circles: " + "; ".join(" → ".join(a_circle(edges, members)) for members in found)


def test_allowed_circles_still_exist():
    """An allowed circle that is gone is taken off the list, so it cannot come back unnoticed
    (one whose modules are not all in the package yet is waited for)."""
    edges = graph()
    present = {frozenset(members) for members in cycles(edges)}
    assert [sorted(cycle) for cycle in ALLOWED_CYCLES if cycle <= edges.keys() and cycle not in present] == []


def test_nothing_imports_the_cli():
    imports = all_imports()
    offenders = {
        name: starting_with(names, "blockviz.cli")
        for name, names in imports.items()
        if not (name == "blockviz.cli" or name.startswith("blockviz.cli.")) and starting_with(names, "blockviz.cli")
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "forbidden",
    ["manim", "blockviz.scenes", "blockviz.cli", "blockviz.render", "blockviz.lecture", "blockviz.explorer"],
)
def test_figures_import_neither_manim_nor_scenes_nor_the_cli(forbidden):
    offenders = {
        name: starting_with(names, forbidden)
        for name, names in imports_of("blockviz.figures", all_imports()).items()
        if starting_with(names, forbidden)
    }
    assert offenders == {}


@pytest.mark.parametrize("package", ["blockviz.models", "blockviz.toy"])
def test_the_lower_house_draws_nothing(package):
    """Models and the toy model make records and numbers (issue 33): they import no figure,
    scene, explorer, renderer, matplotlib nor manim; drawing is the figures' job."""
    drawing = ("matplotlib", "manim", "blockviz.figures", "blockviz.scenes", "blockviz.explorer", "blockviz.render")
    offenders = {
        name: starting_with(names, *drawing)
        for name, names in imports_of(package, all_imports()).items()
        if starting_with(names, *drawing)
    }
    assert offenders == {}


def test_nothing_imports_pyplot():
    """Figures use matplotlib's object interface (``Figure()``), scenes never matplotlib's state machine."""
    offenders = {name for name, names in all_imports().items() if starting_with(names, "matplotlib.pyplot", "pylab")}
    assert offenders == set()


# -- private names ----------------------------------------------------------------------------

ROOT = PACKAGE.parent
READ_FOR_PRIVATE_NAMES = ("blockviz", "tests")
"""The folders whose Python files may import no private name of blockviz."""


def private_imports(path: Path) -> list[str]:
    """``module.name`` for each private name (one underscore first, not a dunder) ``path``
    imports from a blockviz module with ``from … import``, relative imports included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = "." * node.level + (node.module or "")
        if not (node.level or module == "blockviz" or module.startswith("blockviz.")):
            continue
        found += [
            f"{module}.{alias.name}"
            for alias in node.names
            if alias.name.startswith("_") and not (alias.name.startswith("__") and alias.name.endswith("__"))
        ]
    return found


def test_the_private_name_reader_sees_from_imports_only(tmp_path):
    source = tmp_path / "a.py"
    source.write_text(
        "from blockviz.x import _hidden, shown, __version__\n"
        "from .y import _relative\n"
        "from other import _theirs\n"
        "import blockviz._module_alone\n"
        "def later():\n    from blockviz.z import _late\n"
    )
    assert private_imports(source) == ["blockviz.x._hidden", ".y._relative", "blockviz.z._late"]


def test_no_private_name_is_imported_across_modules():
    """A name with a leading underscore belongs to its module: another module or a test that
    needs it means it should be public (documented) or live elsewhere."""
    offenders = {
        str(path.relative_to(ROOT)): names
        for folder in READ_FOR_PRIVATE_NAMES
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (names := private_imports(path))
    }
    assert offenders == {}
