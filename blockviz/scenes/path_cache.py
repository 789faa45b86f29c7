"""A Cairo camera that traces each shape's outline once while its points stay the same.

Manim's camera turns a shape's points into a Cairo path in Python, curve by curve, every time it
draws the shape: in every frame of a play, and again in every play's still image. A shape that
fades or changes colour keeps its points, so its path is the same each time. This camera keeps
the last path it traced for each shape with the points it was traced from, and hands Cairo that
path again while the points are unchanged (compared byte for byte).

A shape whose fill and strokes are all fully transparent (a text waiting for its half of a fade,
a ghost's glyph) leaves every pixel as it was: it is not drawn at all.
"""

from __future__ import annotations

from manim import Camera


class PathCachingCamera(Camera):
    """Manim's Cairo :class:`~manim.camera.camera.Camera`, tracing a shape's path only when its
    points (frame units, ``(n, 3)``) changed since it was last drawn."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.traced: dict[int, tuple] = {}

    def display_vectorized(self, vmobject, ctx):
        if _draws_nothing(vmobject):
            return self
        return super().display_vectorized(vmobject, ctx)

    def set_cairo_context_path(self, ctx, vmobject):
        points, frame = vmobject.points.tobytes(), tuple(ctx.get_matrix())
        kept = self.traced.get(id(vmobject))
        if kept is not None and kept[0] is vmobject and kept[1] == points and kept[2] == frame:
            ctx.new_path()
            ctx.append_path(kept[3])
            return self
        super().set_cairo_context_path(ctx, vmobject)
        self.traced[id(vmobject)] = (vmobject, points, frame, ctx.copy_path())  # the path in frame units
        return self


def _draws_nothing(vmobject) -> bool:
    """Whether ``vmobject``'s fill and its strokes (drawn or not, by their width) are all fully transparent."""
    if vmobject.get_fill_rgbas()[:, 3].any():
        return False
    return all(
        vmobject.get_stroke_width(background) == 0 or not vmobject.get_stroke_rgbas(background)[:, 3].any()
        for background in (False, True)
    )


__all__ = ["PathCachingCamera"]
