"""Manim imported by blockviz.render.manim_import leaves networkx, IPython, PyAV, numpy's f2py and
testing and SciPy's ``scipy.spatial`` package unimported (a later import gets the real modules), and a Graph, a Code
and a rotation come out as from a plain ``import manim``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from blockviz.render.manim_import import ABSENT, DEFERRED

BARE = ("scipy.spatial", "scipy.spatial.transform")
"""The packages whose ``__init__`` Manim's import skips (it reads ``Rotation`` from its own module)."""
ANGLE, AXIS = 0.7, (1.0, -2.0, 0.5)
BUILD = """
import hashlib, json, sys
{imports}
skipped = sorted(name for name in {kept_out!r} if name in sys.modules)
import av, bs4, IPython, networkx, networkx.algorithms, numpy.f2py, numpy.testing, scipy.spatial
import manim.scene.scene_file_writer, scipy._lib.array_api_compat.numpy as array_api_numpy
real = [
    getattr(module, "__file__", None) is not None
    for module in (networkx, networkx.algorithms, IPython, av, numpy.f2py, numpy.testing)
    + (scipy.spatial, scipy.spatial.transform)
]
real.append(manim.scene.scene_file_writer.av.open is av.open)  # Manim's name for PyAV reads the real one
real.append(array_api_numpy.testing.assert_allclose is numpy.testing.assert_allclose)  # so does SciPy's copy of numpy
real.append(scipy.spatial.transform.Rotation is manim.utils.space_ops.Rotation)  # one class, not two
real.append(hasattr(scipy.spatial, "KDTree") and hasattr(scipy.spatial.transform, "RotationSpline"))
graph = manim.Graph([1, 2, 3], [(1, 2), (2, 3)], layout="circular")
code = manim.Code(code_string="x = 1", language="python")
turned = manim.Square().rotate({angle}, axis={axis})
points = [member.points.tobytes() for mobject in (graph, code, turned) for member in mobject.get_family()]
points.append(str(bs4.BeautifulSoup("<p class='a'>x</p>", "html.parser").select("p.a")).encode())  # soupsieve's
rotation = manim.utils.space_ops.rotation_matrix({angle}, {axis})
points.append(rotation.tobytes())
print(json.dumps([skipped, real, hashlib.sha256(b"".join(points)).hexdigest(), rotation.tolist()]))
"""


def built(imports: str) -> tuple[list[str], list[bool], str, list]:
    """In a fresh interpreter: the modules kept out imported with Manim, whether a later import
    gets real modules, a hash of a Graph's, a Code's and a rotated Square's points and of a
    rotation matrix, and that matrix."""
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            BUILD.format(imports=imports, kept_out=DEFERRED + ABSENT + BARE, angle=ANGLE, axis=AXIS),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return tuple(json.loads(run.stdout.splitlines()[-1]))


def rodrigues(angle: float, axis) -> np.ndarray:
    """The rotation by ``angle`` (radians) about ``axis``: I + sin θ K + (1 − cos θ) K², K the
    cross-product matrix of the unit axis (Rodrigues' formula)."""
    x, y, z = np.asarray(axis) / np.linalg.norm(axis)
    cross = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) + np.sin(angle) * cross + (1 - np.cos(angle)) * cross @ cross


def test_manim_imports_without_the_kept_out_modules_and_builds_the_same_mobjects():
    deferred_first, deferred_real, deferred_points, deferred_rotation = built(
        "from blockviz.render.manim_import import import_manim\nmanim = import_manim()"
    )
    plain_first, plain_real, plain_points, plain_rotation = built("import manim")
    assert deferred_first == []  # none of them imported with Manim
    assert plain_first == sorted(DEFERRED + ABSENT + BARE)  # a plain import would have imported every one
    assert deferred_real == plain_real == [True] * 12  # the stand-ins left sys.modules
    assert deferred_points == plain_points
    assert deferred_rotation == plain_rotation
    np.testing.assert_allclose(deferred_rotation, rodrigues(ANGLE, AXIS), atol=1e-12)


def test_a_rotation_module_not_where_expected_imports_the_packages_whole():
    moved = """
import sys
from blockviz.render import manim_import
manim_import.DEFINED_IN = {"scipy.spatial.transform.Rotation": "scipy.spatial.transform._moved"}
manim = manim_import.import_manim()
import scipy.spatial
print(scipy.spatial.__file__ is not None, manim.utils.space_ops.Rotation is scipy.spatial.transform.Rotation)
"""
    run = subprocess.run([sys.executable, "-c", moved], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "True"]
