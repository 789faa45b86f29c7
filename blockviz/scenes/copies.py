"""Copying a text as Manim copies a mobject, in about half the time.

``Mobject.copy`` is ``copy.deepcopy``: every attribute of the mobject and of each glyph under it
goes through ``deepcopy``, which rebuilds even what never changes once made — a colour, a file
path, an empty dict. Texts are copied thousands of times in a scene (each number is a copy of a
cached one, each animation copies what it moves): a third of building a still. A class that
takes :class:`CopiedFast` first among its bases is copied by :func:`copied` (and its submobjects
with it), which gives the same copy (``tests/test_copies.py`` compares every attribute).
"""

from __future__ import annotations

import copy
import enum
import pathlib

import numpy as np
from manim import ManimColor, Mobject

SHARED = frozenset(
    {
        str,
        int,
        float,
        bool,
        complex,
        bytes,
        type(None),
        np.float64,
        np.int64,
        np.bool_,
        ManimColor,
        type(pathlib.Path()),
    }
)
"""Types (exactly these, not their subclasses) whose values no one changes in place (a
``ManimColor`` is only set when it is made): a copy may share them, as ``deepcopy`` shares
strings and numbers."""


def copied(mobject, memo: dict):
    """``copy.deepcopy(mobject, memo)`` as Manim's ``Mobject.__deepcopy__`` makes it: a new object
    of its class with every attribute deep-copied and ``original_id`` naming the original.
    What :data:`SHARED` holds (and enumeration members) is shared; a numeric array is copied
    (memory order kept); an empty list or dict is a new empty one; a list of mobjects Manim copies
    plainly (submobjects) is copied here, member by member; anything else goes through
    ``deepcopy``. Objects met twice are copied once (``memo``), as ``deepcopy`` copies them."""
    result = mobject.__class__.__new__(mobject.__class__)
    memo[id(mobject)] = result
    for name, value in mobject.__dict__.items():
        kind = type(value)
        if kind in SHARED or isinstance(value, enum.Enum):
            setattr(result, name, value)
            continue
        made = memo.get(id(value))
        if made is None:
            if kind is np.ndarray and not value.dtype.hasobject:
                made = value.copy(order="K")
            elif (kind is list or kind is dict) and not value:
                made = kind()
            elif kind is list and all(_copied_alike(part) for part in value):  # submobjects, glyphs
                made = memo[id(value)] = []
                made.extend(_copy(part, memo) for part in value)
            else:
                made = copy.deepcopy(value, memo)
            memo[id(value)] = made
        setattr(result, name, made)
    result.original_id = str(id(mobject))
    return result


def _copied_alike(part) -> bool:
    """Whether ``deepcopy`` copies ``part`` as Manim's ``Mobject.__deepcopy__`` (or :func:`copied`) does."""
    return getattr(type(part), "__deepcopy__", None) in (Mobject.__deepcopy__, CopiedFast.__deepcopy__)


def _copy(part, memo: dict):
    made = memo.get(id(part))
    return copied(part, memo) if made is None else made


class CopiedFast:
    """A mixin, first among a mobject class's bases: its copies are made by :func:`copied`."""

    def __deepcopy__(self, memo: dict):
        return copied(self, memo)


def copy_of(mobject):
    """``mobject.copy()`` (Manim's: ``copy.deepcopy``) made by :func:`copied`, whatever its class."""
    return copied(mobject, {})
