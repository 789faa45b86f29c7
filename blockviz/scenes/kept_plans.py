"""Colour-scale plans kept, so that a scene built again needs no dry build to plan its scales.

A scene plans its colour scales with a first, dry build (:mod:`blockviz.scenes.shown_scales`).
The plan depends on the record's content (:func:`~blockviz.record_digest.record_digest`), the
scene's class, its options (token, head, to, detail, pace, theme, burned captions), the layout
Manim's text gets (:func:`~blockviz.scenes.text.layout_key`: pixel and frame size, renderer;
text widths decide layouts, and layouts what is shown together) and blockviz's code. For the
same of all these a plan is kept:

* in this process, the last :data:`MEMO_SIZE` plans (tests and ``render --scene all`` build
  scenes again and again);
* on disk, in :func:`plans_folder` (beside the kept records, :mod:`blockviz.record_cache`), one
  small JSON file per plan named by a hash of all the above and
  :func:`~blockviz.record_cache.code_stamp` (an edit of blockviz is another key), written
  atomically; at most :data:`MAX_PLANS` files, the least recently used removed first. A file that
  cannot be read back is planned again and replaced; a folder that cannot be written only means
  nothing is kept. A scene class defined inside a function (a test's) is kept in this process only.

A plan maps each grid's request, ``(family, values)``, to its half-width, and each layout
choice the dry build made (:func:`choice_key`: a number the real build need not search for again)
to its value; the file stores every float as its hexadecimal form (:meth:`float.hex`), so a plan
read back is the same bits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.files import atomic_path, prune_least_recent
from blockviz.record_digest import record_digest

MEMO_SIZE = 64
"""Plans kept in one process at most."""
MAX_PLANS = 1024
"""Plan files kept at most (a plan is a few kilobytes)."""
FORMAT = 1
"""The plan file's format: a file of another is planned again."""

Plan = dict[tuple, float]

_memo: OrderedDict[tuple, Plan] = OrderedDict()


def plans_folder() -> Path:
    """Where kept plans are: ``<blockviz's cache folder>/plans``, beside the kept records."""
    from blockviz.models.cache import cache_dir

    return cache_dir() / "plans"


def kept_plan(scene_class: type, record, options: dict, layout: tuple, plan: Callable[[], Plan]) -> Plan:
    """The colour-scale plan of ``scene_class`` built with ``record`` and ``options`` on a canvas
    of ``layout``: kept in this process or on disk, else ``plan()`` (the dry build), then kept.
    Raises what ``plan`` raises, nothing of its own."""
    shown = (record_digest(record), json.dumps(options, sort_keys=True, default=repr), layout)
    memo_key = (scene_class, *shown)
    if memo_key in _memo:
        _memo.move_to_end(memo_key)
        return _memo[memo_key]
    path = _plan_path(scene_class, shown)
    made = _read(path) if path is not None else None
    if made is None:
        made = plan()
        if path is not None:
            _write(path, made)
    _memo[memo_key] = made
    while len(_memo) > MEMO_SIZE:
        _memo.popitem(last=False)
    return made


def forget_plans() -> None:
    """Forget the plans kept in this process (the files stay)."""
    _memo.clear()


def choice_key(name: str) -> tuple[str, tuple]:
    """The key under which a plan keeps the layout choice ``name`` (e.g. how many rows of W_O the
    multi-head scene draws): a family no grid's request has, and no values.

    >>> choice_key("multi-head rows")
    ('layout choice: multi-head rows', ())
    """
    return (f"layout choice: {name}", ())


def plan_to_json(plan: Plan) -> list:
    """``plan`` as JSON data: ``[family, [value.hex(), …], limit.hex()]`` per request, exact."""
    return [
        [family, [float(value).hex() for value in values], float(limit).hex()]
        for (family, values), limit in plan.items()
    ]


def plan_from_json(data) -> Plan:
    """The plan :func:`plan_to_json` wrote, bit for bit.

    Raises
    ------
    ValueError
        If ``data`` is not such a plan.
    """
    if not isinstance(data, list):
        raise ValueError("a plan is a list")
    plan: Plan = {}
    for family, values, limit in data:
        if family is not None and not isinstance(family, str):
            raise ValueError("a family is a name or null")
        plan[(family, tuple(float.fromhex(value) for value in values))] = float.fromhex(limit)
    return plan


def _plan_path(scene_class: type, shown: tuple) -> Path | None:
    """The file of this plan; ``None`` for a class defined inside a function (its name does not
    say what it is across processes)."""
    name = f"{scene_class.__module__}.{scene_class.__qualname__}"
    if "<locals>" in name:
        return None
    from manim import __version__ as manim_version

    from blockviz.record_cache import code_stamp

    keyed = json.dumps([FORMAT, name, *shown, code_stamp(), manim_version], sort_keys=True, default=repr)
    return (
        plans_folder() / f"{hashlib.blake2b(keyed.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()}.json"
    )


def _read(path: Path) -> Plan | None:
    """The plan kept at ``path``, or ``None`` if there is none or it cannot be read back."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("format") != FORMAT:
            return None
        plan = plan_from_json(kept["plan"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    with contextlib.suppress(OSError):  # removed meanwhile by another process
        os.utime(path)  # recently used: pruned last
    return plan


def _write(path: Path, plan: Plan) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as partial:
            partial.write_text(json.dumps({"format": FORMAT, "plan": plan_to_json(plan)}), encoding="utf-8")
    except (BlockvizError, OSError):  # a folder that cannot be written: nothing is kept
        return
    _prune(path.parent)


def _prune(folder: Path) -> None:
    """Remove the least recently used plans beyond :data:`MAX_PLANS`."""
    prune_least_recent(folder, "*.json", MAX_PLANS)
