"""Importing torch without what blockviz's own block never runs: ``torch.export`` and torch's
Python meta kernels (``torch._meta_registrations``).

``import torch`` ends by importing ``torch.export`` and ``torch._meta_registrations``; with them
come torch's decompositions (``torch._decomp``), its primitives and references (``torch._prims``,
``torch._refs``) and, registered one decorator at a time, a Python kernel for the ``Meta`` device
of hundreds of operators: a third of torch's import (``python -X importtime -c 'import torch'``);
without them, ``torch._prims.rng_prims`` kept, torch imports in 1.36 CPU s rather than 1.67
(medians of 5 alternating, load 16). blockviz's seeded block and trained toys run eager operators on CPU tensors, which never
dispatch to ``Meta``, decompose or export, so their records are the same bytes without them
(``tests/test_torch_import.py``). :func:`import_torch` leaves both out of torch's import: while
torch imports, each stands in ``sys.modules`` as a :class:`_LazyModule`, and then leaves it.

torch imports its own parts in an order that works from ``torch/__init__`` only (``import
torch._decomp`` first ends in a circular import), so torch is completed, as its own import would
have done, the first time anything reads a name from a stand-in (``torch.export.export``) or
imports a part of torch not imported yet (``torch._dynamo``, which ``torch.optim`` imports when
first used; ``torch._meta_registrations``): :class:`_CompletesTorch` imports ``torch.export`` and
``torch._meta_registrations`` then, and that import goes on with torch whole.

For the process that makes a kept record of blockviz's own block beside a still
(:mod:`blockviz.render.record_beside`) and then exits; it imports no other part of torch. A Hugging
Face model's layer is never made there (its record is not kept, :data:`blockviz.record_cache.NOT_KEPT`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

LEFT_OUT = ("torch.export", "torch._meta_registrations")
"""The modules ``import torch`` imports last (in this order) and blockviz's block never uses:
exporting graphs, and the ``Meta`` device's Python kernels, with the decompositions, primitives
and references they import."""

KEPT = ("torch._prims.rng_prims",)
"""What torch imports through the modules of :data:`LEFT_OUT` and eager code needs, imported after
torch: ``torch._prims.rng_prims`` sets ``torch.Generator``'s metaclass (before, ``torch.Generator()``
raises: the seeded block draws its weights with one)."""


class _LazyModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module of :data:`LEFT_OUT` while torch imports, and stays
    where torch's ``__init__`` binds it (``torch.export``): a name read from it completes torch
    (:func:`_complete`) and is read from the real module."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # __path__, __spec__ …: the import system's questions
            raise AttributeError(name)
        _complete()
        return getattr(importlib.import_module(self.__name__), name)


class _CompletesTorch(importlib.abc.MetaPathFinder):
    """First in ``sys.meta_path`` after :func:`import_torch`: the first import of a part of torch
    not imported yet completes torch (:func:`_complete`) before it goes on."""

    def find_spec(self, name: str, path=None, target=None):
        if not name.startswith("torch."):
            return None
        _complete()
        done = sys.modules.pop(name, None)  # imported by _complete: else the import system runs it again
        return None if done is None else importlib.machinery.ModuleSpec(name, _Imported(done))


class _Imported(importlib.abc.Loader):
    """The loader of a module that completing torch imported while its own import was being
    found: the import gets that module as it is, not run a second time."""

    def __init__(self, module: types.ModuleType):
        self.module, self.spec = module, module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec  # the import system set it to this loader's


def _complete() -> None:
    """Import the modules of :data:`LEFT_OUT` as ``import torch`` would have (once; the stand-ins
    and :class:`_CompletesTorch` leave first)."""
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _CompletesTorch)]
    for name in LEFT_OUT:
        if isinstance(sys.modules.get(name), _LazyModule):  # read while torch imports
            del sys.modules[name]
    for name in LEFT_OUT:
        importlib.import_module(name)


def import_torch() -> types.ModuleType:
    """Import torch (once per process) without running the modules of :data:`LEFT_OUT` (each is
    run, as torch's import would have, when a name is read from its stand-in or another part of
    torch is imported), then the modules of :data:`KEPT`. If torch is imported already, it is
    returned as it is.

    Returns
    -------
    types.ModuleType
        The ``torch`` package.
    """
    if "torch" in sys.modules:
        return sys.modules["torch"]
    stand_ins = {name: _LazyModule(name) for name in LEFT_OUT if name not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        import torch

        for name in KEPT:
            importlib.import_module(name)
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    sys.meta_path.insert(0, _CompletesTorch())
    return torch
