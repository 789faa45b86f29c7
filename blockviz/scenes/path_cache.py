"""A Cairo camera that draws the same pixels as Manim's with less work per shape.

* **A path is traced once while its points stay the same.** Manim's camera turns a shape's points
  into a Cairo path in Python, curve by curve, every time it draws the shape: in every frame of a
  play, and again in every play's still image. A shape that fades or changes colour keeps its
  points, so its path is the same each time. This camera keeps the last path it traced for each
  shape with the points it was traced from, and hands Cairo that path again while the points are
  unchanged (compared byte for byte).
* **What shows nothing is not drawn.** A shape whose fill and strokes are all fully transparent
  (a text waiting for its half of a fade, a row of a cascade not yet begun: about half the shapes
  of a frame) leaves every pixel as it was.
* **Less Python per shape**: a shape's kind is told by one ``isinstance``, its colour handed to
  Cairo as plain floats (the same doubles).
* **A play's families are listed once.** The shapes a frame draws are the moving mobjects' families
  (Manim lists them again, from every mobject down, in every frame); they are listed once per
  play, and each frame only leaves out those without points.
"""

from __future__ import annotations

import itertools

from manim import Camera, VMobject
from manim.utils.family import extract_mobject_family_members


class PathCachingCamera(Camera):
    """Manim's Cairo :class:`~manim.camera.camera.Camera`, tracing a shape's path only when its
    points (frame units, ``(n, 3)``) changed since it was last drawn, drawing no shape that
    shows nothing, and listing the families of a play's moving mobjects once."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.traced: dict[int, tuple] = {}
        self._listed: tuple | None = None  # (mobjects list, its length, their families)

    def capture_mobjects(self, mobjects, **kwargs) -> None:
        shown = [
            mobject
            for mobject in self.get_mobjects_to_display(mobjects, **kwargs)
            if not (isinstance(mobject, VMobject) and _draws_nothing(mobject))
        ]
        for shapes, group in itertools.groupby(shown, lambda mobject: isinstance(mobject, VMobject)):
            if shapes:  # Manim's type_or_raise builds its table of kinds again for each mobject
                self.display_multiple_vectorized_mobjects(list(group), self.pixel_array)
                continue
            for kind, same in itertools.groupby(group, self.type_or_raise):
                self.display_funcs[kind](list(same), self.pixel_array)

    def set_cairo_context_color(self, ctx, rgbas, vmobject):
        if len(rgbas) != 1:  # a gradient
            return super().set_cairo_context_color(ctx, rgbas, vmobject)
        red, green, blue, alpha = rgbas[0].tolist()  # the same doubles as Manim's numpy scalars, unpacked faster
        ctx.set_source_rgba(blue, green, red, alpha)  # Cairo's surface holds BGRA
        return self

    def get_mobjects_to_display(self, mobjects, include_submobjects: bool = True, excluded_mobjects=None) -> list:
        if not include_submobjects or excluded_mobjects:
            return super().get_mobjects_to_display(mobjects, include_submobjects, excluded_mobjects)
        listed = self._listed
        if listed is None or listed[0] is not mobjects or listed[1] != len(mobjects):
            families = extract_mobject_family_members(mobjects, use_z_index=self.use_z_index)
            if any(member.updaters for member in families):  # an updater may change a family between frames
                return super().get_mobjects_to_display(mobjects, include_submobjects, excluded_mobjects)
            listed = self._listed = (mobjects, len(mobjects), families)
        return [member for member in listed[2] if len(member.points)]

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
    """Whether ``vmobject``'s fill and its strokes (drawn or not, by their width) are all fully
    transparent: drawn, it would leave every pixel as it was (Cairo's ``OVER`` with a clear source)."""
    if _opaque_anywhere(vmobject.get_fill_rgbas()):
        return False
    return not any(
        vmobject.get_stroke_width(background) > 0 and _opaque_anywhere(vmobject.get_stroke_rgbas(background))
        for background in (False, True)
    )


def _opaque_anywhere(rgbas) -> bool:
    """Whether any of ``rgbas`` (``(n, 4)``, a gradient's stops) has an alpha above 0 (or there are none)."""
    return len(rgbas) == 0 or bool(rgbas[0, 3]) or (len(rgbas) > 1 and bool(rgbas[:, 3].any()))


__all__ = ["PathCachingCamera"]
