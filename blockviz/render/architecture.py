"""Which scenes can draw which block: a render of a record another scene cannot draw yet is
refused in one line before anything is rendered or written (no torch, no Manim).

The attention scenes (dot products, mask, softmax, value mixing, causal vs bidirectional) do the
same maths on every architecture; the others draw parts that differ between blocks (the norm,
the positions, the FFN, the order of norm and sub-layer). :func:`cannot_draw` names what a scene
cannot draw of a record's architecture; :func:`check_scenes` refuses a render that asks for one.
"""

from __future__ import annotations

from blockviz.errors import BlockvizError


CHECKS = {
}
"""Scene name → what of a record's architecture it cannot draw yet (``None``: it can). Scenes
not listed draw every architecture."""


def cannot_draw(scene: str, rec) -> str | None:
    """What scene ``scene`` (a catalogue name) cannot draw of ``rec``'s block, or ``None``."""
    check = CHECKS.get(scene)
    return check(rec) if check is not None else None


def drawable(scenes: list[str], rec) -> list[str]:
    """The ones of ``scenes`` that can draw ``rec``."""
    return [name for name in scenes if cannot_draw(name, rec) is None]


def check_scenes(scenes: list[str], rec) -> None:
    """Refuse, in one line, a render of ``rec`` with a scene that cannot draw its block.

    Raises
    ------
    BlockvizError
        Naming the first such scene, what it cannot draw, and the scenes that can.
    """
    from blockviz.scenes.catalog import entries

    for name in scenes:
        reason = cannot_draw(name, rec)
        if reason is not None:
            able = drawable([entry.name for entry in entries() if not entry.lecture_only], rec)
            what = f"layer {rec.source.layer} of {rec.source.model}" if rec.source.is_model else "this record"
            raise BlockvizError(f"scene {name} cannot draw {reason} yet ({what}): render --scene {','.join(able)} instead")


__all__ = ["CHECKS", "cannot_draw", "check_scenes", "drawable"]
