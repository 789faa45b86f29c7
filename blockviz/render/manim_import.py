"""Importing Manim without what a still never uses: networkx, soupsieve, IPython, PyAV, numpy's
``f2py`` and ``testing``, and most of ``scipy.spatial``.

``import manim`` imports networkx, for its ``Graph`` mobject, soupsieve (through BeautifulSoup),
IPython, for its notebook magic, PyAV, for videos, numpy's ``f2py`` and ``testing``, which SciPy's
array-API copy of numpy reads, and ``scipy.spatial``, for ``Rotation`` alone, whose package
imports k-d trees, Delaunay and distances (SciPy's sparse matrices, linear algebra and special
functions). :func:`import_manim` keeps them out while Manim imports: Manim's import over numpy
takes 0.44 CPU s rather than 0.95, of the 1.2 a still takes (``python -X importtime``,
``benchmarks/still.py``). The modules of :data:`DEFERRED` have stand-ins in ``sys.modules``: what
is read from one while Manim imports (``nx.layout.circular_layout``) is imported when first
called, and what is read later comes from the real module, so a ``Graph`` is drawn and a video
written as before. IPython is marked absent: Manim imports it only if it can, to register its
magic inside a running IPython, which has imported it already. ``Rotation`` is read from the
module that defines it, ``scipy.spatial.transform._rotation``, its packages standing bare in
``sys.modules`` (their folders, without their ``__init__``). The marks leave ``sys.modules`` when
Manim's import ends: a later ``import networkx`` gets the real module, and a later ``import
scipy.spatial`` runs the packages' ``__init__``, whose ``Rotation`` is the class Manim holds.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
import types


class _DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module while Manim imports.

    What Manim reads from it then (``nx.layout.circular_layout``) is a :class:`_Deferred`; what
    is read from it later is the real module's.
    """

    def __getattr__(self, name: str):
        if name.startswith("__"):  # __path__, __file__ …: the import system's questions
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:  # Manim is importing
            return _Deferred(self.__name__, (name,))
        return getattr(importlib.import_module(self.__name__), name)


class _Deferred:
    """An attribute path in a module not imported yet (``networkx``, ``layout.circular_layout``):
    calling it imports the module and calls the real attribute."""

    def __init__(self, module: str, path: tuple[str, ...]):
        self._module, self._path = module, path

    def _real(self):
        return functools.reduce(getattr, self._path, importlib.import_module(self._module))

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Deferred(self._module, (*self._path, name))

    def __call__(self, *args, **kwargs):
        return self._real()(*args, **kwargs)


DEFERRED = ("networkx", "soupsieve", "av", "numpy.f2py", "numpy.testing")
"""What Manim imports for what no scene uses, or no still: networkx, for the ``Graph`` mobject;
soupsieve, which BeautifulSoup imports for CSS selectors (Manim's ``Code`` parses Pygments' HTML
with it, but selects nothing); PyAV (``av``), which Manim calls only to write or read a video
(``av.open``), never for a PNG; numpy's Fortran wrapper generator and test helpers, which numpy
imports when first read and SciPy's array-API copy of numpy (imported with ``Rotation``) reads
with every other name of numpy. A submodule's stand-in is also its package's attribute, as an
import would make it. (Not BeautifulSoup and Pygments themselves:
``manim.mobject.text.code_mobject`` checks ``isinstance(…, Tag)`` on a name it imported, which a
stand-in cannot answer; not SciPy's ``Rotation``, which every scene uses: a text's outline is
rotated when it is built, a line when it is placed — see :data:`DEFINED_IN`.)"""


ABSENT = ("IPython",)
"""What Manim imports only if it can, and a render never needs: IPython, for Manim's notebook
magic (``%%manim``), registered only inside a running IPython, which has imported it already."""


DEFINED_IN = {"scipy.spatial.transform.Rotation": "scipy.spatial.transform._rotation"}
"""What Manim imports from a package whose ``__init__`` imports far more, and the module that
defines it: SciPy's ``Rotation``, which ``manim.utils.space_ops.rotation_matrix`` uses (every scene
rotates), from a package that imports k-d trees, Delaunay and distances (``scipy.spatial``) and
rotation splines (``scipy.spatial.transform``, SciPy's linear algebra)."""


class _BarePackage(types.ModuleType):
    """A package in ``sys.modules`` whose ``__init__`` has not run: its submodules import from its
    folder, and a name of :data:`DEFINED_IN` is read from the module that defines it."""

    def __getattr__(self, name: str):
        module = DEFINED_IN.get(f"{self.__name__}.{name}")
        if module is None:
            raise AttributeError(name)
        return getattr(importlib.import_module(module), name)


def _bare_packages() -> dict[str, types.ModuleType]:
    """Put in ``sys.modules`` a :class:`_BarePackage` for each package between the top-level one
    and a module of :data:`DEFINED_IN` that is not imported yet; return them (none, if a module of
    :data:`DEFINED_IN` is not where it is expected: then Manim imports the packages whole)."""
    bare: dict[str, types.ModuleType] = {}
    for module in DEFINED_IN.values():
        top, *inner = module.split(".")
        for depth in range(1, len(inner)):
            name = ".".join([top, *inner[:depth]])
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)  # imports the packages above, bare or whole
            if spec is None or spec.submodule_search_locations is None:
                _remove(bare)
                return {}
            bare[name] = sys.modules[name] = _BarePackage(name)
            bare[name].__path__ = list(spec.submodule_search_locations)
        parent = sys.modules.get(module.rpartition(".")[0])
        if importlib.machinery.PathFinder.find_spec(module, getattr(parent, "__path__", None)) is None:
            _remove(bare)
            return {}
    return bare


def _remove(stand_ins: dict[str, types.ModuleType | None]) -> None:
    """Take ``stand_ins`` out of ``sys.modules`` and off their packages (each only if it is
    still there)."""
    for name, module in stand_ins.items():
        if name in sys.modules and sys.modules[name] is module:
            del sys.modules[name]
        package, _, attribute = name.rpartition(".")
        if module is not None and package in sys.modules and vars(sys.modules[package]).get(attribute) is module:
            delattr(sys.modules[package], attribute)


def import_manim() -> types.ModuleType:
    """Import Manim (once per process) without importing the modules of :data:`DEFERRED` and
    :data:`ABSENT` nor the packages above those of :data:`DEFINED_IN` (each left alone if
    imported already).

    Returns
    -------
    types.ModuleType
        The ``manim`` package, the same as ``import manim`` gives.
    """
    if "manim" in sys.modules:
        return sys.modules["manim"]
    for package in {name.rpartition(".")[0] for name in DEFERRED} - {""}:
        importlib.import_module(package)  # numpy, for its submodules' stand-ins: Manim imports it anyway
    stand_ins = {name: _DeferredModule(name) for name in DEFERRED if name not in sys.modules}
    stand_ins |= {name: None for name in ABSENT if name not in sys.modules}  # None: its import raises ImportError
    sys.modules.update(stand_ins)
    _attach(stand_ins)
    try:
        stand_ins |= _bare_packages()
        import manim
    finally:
        _remove(stand_ins)
    return manim


def _attach(stand_ins: dict[str, types.ModuleType | None]) -> None:
    """Make each stand-in of a submodule its package's attribute, as an import would (numpy
    imports its submodules when first read, ``numpy.testing``: it would import the real one)."""
    for name, module in stand_ins.items():
        package, _, attribute = name.rpartition(".")
        if package and module is not None:
            setattr(sys.modules[package], attribute, module)
