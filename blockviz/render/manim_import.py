"""Importing Manim without networkx, soupsieve and IPython, which a render never uses.

``import manim`` imports networkx, for its ``Graph`` mobject, soupsieve (through BeautifulSoup)
and IPython, for its notebook magic: about 0.2 of the 1.6 CPU seconds a still takes (``python -X
importtime``). :func:`import_manim` keeps them out while Manim imports. networkx and soupsieve
have stand-ins in ``sys.modules``: what is read from one while Manim imports
(``nx.layout.circular_layout``) is imported when first called, and what is read later comes from
the real module, so a ``Graph`` is drawn as before. IPython is marked absent: Manim imports it
only if it can, to register its magic inside a running IPython, which has imported it already.
The marks leave ``sys.modules`` when Manim's import ends: a later ``import networkx`` gets the
real module.
"""

from __future__ import annotations

import functools
import importlib
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


DEFERRED = ("networkx", "soupsieve")
"""What Manim imports for what no scene uses: networkx, for the ``Graph`` mobject; soupsieve,
which BeautifulSoup imports for CSS selectors (Manim's ``Code`` parses Pygments' HTML with it, but
selects nothing). (Not BeautifulSoup and Pygments themselves: ``manim.mobject.text.code_mobject``
checks ``isinstance(…, Tag)`` on a name it imported, which a stand-in cannot answer; not SciPy's
``Rotation``: every scene rotates, a text's outline when it is built, a line when it is placed.)"""


ABSENT = ("IPython",)
"""What Manim imports only if it can, and a render never needs: IPython, for Manim's notebook
magic (``%%manim``), registered only inside a running IPython, which has imported it already."""


def import_manim() -> types.ModuleType:
    """Import Manim (once per process) without importing the modules of :data:`DEFERRED` and
    :data:`ABSENT` (each left alone if imported already).

    Returns
    -------
    types.ModuleType
        The ``manim`` package, the same as ``import manim`` gives.
    """
    if "manim" in sys.modules:
        return sys.modules["manim"]
    stand_ins = {name: _DeferredModule(name) for name in DEFERRED if name not in sys.modules}
    stand_ins |= {name: None for name in ABSENT if name not in sys.modules}  # None: its import raises ImportError
    sys.modules.update(stand_ins)
    try:
        import manim
    finally:
        for name, module in stand_ins.items():
            if name in sys.modules and sys.modules[name] is module:
                del sys.modules[name]
    return manim
