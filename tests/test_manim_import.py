"""Manim imported by blockviz.render.manim_import leaves networkx and IPython unimported (a later
import gets the real modules), and a Graph (and a Code beside it) comes out as from a plain
``import manim``."""

from __future__ import annotations

import json
import subprocess
import sys

from blockviz.render.manim_import import ABSENT, DEFERRED

BUILD = """
import hashlib, json, sys
{imports}
skipped = sorted(name for name in {kept_out!r} if name in sys.modules)
import bs4, IPython, networkx, networkx.algorithms
real = [getattr(module, "__file__", None) is not None for module in (networkx, networkx.algorithms, IPython)]
graph = manim.Graph([1, 2, 3], [(1, 2), (2, 3)], layout="circular")
code = manim.Code(code_string="x = 1", language="python")
points = [member.points.tobytes() for mobject in (graph, code) for member in mobject.get_family()]
points.append(str(bs4.BeautifulSoup("<p class='a'>x</p>", "html.parser").select("p.a")).encode())  # soupsieve's
print(json.dumps([skipped, real, hashlib.sha256(b"".join(points)).hexdigest()]))
"""


def built(imports: str) -> tuple[list[str], list[bool], str]:
    """In a fresh interpreter: the deferred modules imported with Manim, whether a later import
    gets real modules, and a hash of a Graph's and a Code's points."""
    run = subprocess.run(
        [sys.executable, "-c", BUILD.format(imports=imports, kept_out=DEFERRED + ABSENT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return tuple(json.loads(run.stdout.splitlines()[-1]))


def test_manim_imports_without_the_deferred_modules_and_builds_the_same_mobjects():
    deferred_first, deferred_real, deferred_points = built(
        "from blockviz.render.manim_import import import_manim\nmanim = import_manim()"
    )
    plain_first, plain_real, plain_points = built("import manim")
    assert deferred_first == []  # none of them imported with Manim
    assert plain_first == sorted(DEFERRED + ABSENT)  # a plain import would have imported every one
    assert deferred_real == plain_real == [True, True, True]  # the stand-ins left sys.modules
    assert deferred_points == plain_points
