"""Taking mobjects out of a scene's list, as Manim does, without listing every family.

Every ``Scene.add`` and ``Scene.remove`` restructures the scene's list of mobjects: a mobject to
take out is dropped, a group holding one is replaced by its other parts
(``Scene.get_restructured_mobject_list``). Manim lists the whole family of every mobject on the
list to find out whether it holds one (``Mobject.get_family``, which builds the list and then
removes repeats), so each add or remove costs as much as listing every mobject on screen; a
scene adds and removes hundreds of times. :func:`restructured` gives the same list, in the same
order, walking each family only until it meets a mobject to take out.
"""

from __future__ import annotations

from collections.abc import Iterable


def restructured(mobjects: Iterable, to_remove: Iterable) -> list:
    """``mobjects`` less every one in ``to_remove``, each group that holds one (at any depth)
    replaced by its submobjects, restructured in turn: ``Scene.get_restructured_mobject_list``'s
    list, in its order.

    The same result as Manim's, which narrows the mobjects to take out to those in the group's
    family before it looks at the group's submobjects: a submobject's family lies within its
    group's, so the mobjects left out of that narrowing are never met below the group.
    """
    removed = set(to_remove)
    kept: list = []
    _keep_from(mobjects, removed, kept)
    return kept


def _keep_from(mobjects: Iterable, removed: set, kept: list) -> None:
    for mobject in mobjects:
        if mobject in removed:
            continue
        if _holds_any(mobject, removed):
            _keep_from(mobject.submobjects, removed, kept)
        else:
            kept.append(mobject)


def _holds_any(mobject, removed: set) -> bool:
    """Whether ``mobject`` or any mobject under it is in ``removed``."""
    waiting, seen = [mobject], set()
    while waiting:
        member = waiting.pop()
        if member in removed:
            return True
        if member in seen:  # a mobject under two groups, or a cycle
            continue
        seen.add(member)
        waiting.extend(member.submobjects)
    return False
