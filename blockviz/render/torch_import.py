"""Importing torch without what blockviz's own block never runs: ``torch.export`` and torch's
Python meta kernels (``torch._meta_registrations``).

``import torch`` ends by importing ``torch.export`` and ``torch._meta_registrations``; with them
come torch's decompositions (``torch._decomp``), its primitives and references (``torch._prims``,
``torch._refs``) and, registered one decorator at a time, a Python kernel for the ``Meta`` device
of hundreds of operators: about half of torch's import (``python -X importtime -c 'import
torch'``; 2.1 CPU s against 1.1 here). blockviz's seeded block and trained toys run eager
operators on CPU tensors, which never dispatch to ``Meta``, decompose or export, so their records
are the same bytes without them (``tests/test_torch_import.py``). :func:`import_torch` leaves
both out of torch's import: while torch imports, each stands in ``sys.modules`` as a
:class:`_LazyModule`, and then leaves it. A later ``import torch.export`` or ``import
torch._meta_registrations`` runs the real module (the meta kernels registered then, as torch
would have), and a name read from ``torch.export`` (``torch.export.export``) imports the real
module first.

Only for the process that makes a kept record of blockviz's own block beside a still
(:mod:`blockviz.render.record_beside`) and then exits. A Hugging Face model's layer is never made
there (its record is not kept, :data:`blockviz.record_cache.NOT_KEPT`): Transformers builds models
on the ``Meta`` device and imports ``torch.export`` itself.
"""

from __future__ import annotations

import importlib
import sys
import types

LEFT_OUT = ("torch.export", "torch._meta_registrations")
"""The modules ``import torch`` imports last and blockviz's block never uses: exporting graphs,
and the ``Meta`` device's Python kernels, with the decompositions, primitives and references they
import."""


KEPT = ("torch._prims.rng_prims",)
"""What torch imports through the modules of :data:`LEFT_OUT` and eager code needs, imported after
torch: ``torch._prims.rng_prims`` sets ``torch.Generator``'s metaclass (before, ``torch.Generator()``
raises: the seeded block draws its weights with one)."""


class _LazyModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module of :data:`LEFT_OUT` while torch imports; a name read
    from it (then or later) is read from the real module, imported on that first read."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # __path__, __spec__ …: the import system's questions
            raise AttributeError(name)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]  # read while torch imports: the real module, now
        return getattr(importlib.import_module(self.__name__), name)


def import_torch() -> types.ModuleType:
    """Import torch (once per process) without running the modules of :data:`LEFT_OUT` (the
    stand-ins are bound where torch's ``__init__`` binds them, ``torch.export``; each real module
    is imported when first read or imported), then the modules of :data:`KEPT`. If torch is
    imported already, it is returned as it is.

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
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    for name in KEPT:
        importlib.import_module(name)
    return torch
