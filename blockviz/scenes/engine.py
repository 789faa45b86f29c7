"""The overrides of Manim's engine that make a render fast without changing a pixel
(docs/speed.md): :class:`EngineScene`, the base of :class:`~blockviz.scenes.base.RecordScene`.

Manim redraws, every frame, each mobject from the first animated one in ``scene.mobjects``
onwards; everything before it is drawn once. So: animated mobjects go to the end of the list
(:meth:`EngineScene.play`, :func:`~blockviz.scenes.drawing_order.still_first`), labels that
change are lifted out of their grid while they move, and cells change colour under an overlay
instead of being animated inside their grid (:mod:`~blockviz.scenes.choreography`); a play whose
frames are not written goes straight to its end (:mod:`~blockviz.scenes.skipped_plays`).
"""

from __future__ import annotations

from manim import Group, Scene, SVGMobject, Text, Wait
from manim.animation.animation import prepare_animation

from blockviz.scenes import drawing_order, skipped_plays
from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.grids import Highlight
from blockviz.scenes.path_cache import PathCachingCamera
from blockviz.scenes.restructuring import restructured


class EngineScene(Scene):
    """Manim's ``Scene`` drawing few shapes per frame (see the module docstring).

    Attributes
    ----------
    settles_skipped_plays
        Whether a play whose frames are skipped goes straight to its end state
        (:func:`~blockviz.scenes.skipped_plays.settle`) rather than through Manim's play.
    after_play
        Callables run once, in order, after the next play ends (the choreography's copies
        leave the page, labels go back into their grid).
    play_listeners
        Called with the scene after every play that is not a hold (progress, tests).
    """

    settles_skipped_plays = True

    def __init__(self, **kwargs) -> None:
        self.after_play: list = []
        self.play_listeners: list = []
        self._updaters_in_play: bool | None = None  # whether any mobject has an updater, during a play
        kwargs.setdefault("camera_class", PathCachingCamera)
        super().__init__(**kwargs)

    def play(self, *animations, **kwargs) -> None:
        """Manim's play, drawing few shapes per frame: the animated mobjects are drawn last
        (texts above cells, travelling numbers above texts, highlights above all); a play whose
        frames are skipped goes straight to its end (:attr:`settles_skipped_plays`) or draws
        nothing; then ``after_play`` runs, and every listener unless the play was a hold."""
        prepared = [prepare_animation(animation) for animation in animations]
        still = all(isinstance(animation, Wait) for animation in prepared)
        self._bring_to_front(prepared)
        if self.settles():
            skipped_plays.settle(self, prepared, **kwargs)
        elif self._skipping():
            with _no_drawing(self.renderer):
                super().play(*prepared, **kwargs)
        else:
            try:
                super().play(*prepared, **kwargs)
            finally:
                self._updaters_in_play = None
        while self.after_play:
            self.after_play.pop(0)()
        if not still:  # a hold changes nothing on screen
            for listener in self.play_listeners:
                listener(self)

    def begin_animations(self) -> None:
        """Begin the play's animations, with every still mobject clear of them drawn once
        (:func:`~blockviz.scenes.drawing_order.still_first`)."""
        for animation in self.animations:  # as Manim's, with the order changed before it splits moving from still
            animation._setup_scene(self)
            animation.begin()
        self.mobjects = drawing_order.still_first(self.mobjects, self.animations)
        self.moving_mobjects, self.static_mobjects = self.get_moving_and_static_mobjects(self.animations)
        self._updaters_in_play = any(member.updaters for member in self.get_mobject_family_members())

    def get_restructured_mobject_list(self, mobjects, to_remove) -> list:
        """Manim's list, found without listing every family (:func:`~blockviz.scenes.restructuring.restructured`)."""
        return restructured(mobjects, to_remove)

    def update_mobjects(self, dt: float) -> None:
        """Manim's, which calls every mobject's updaters in every frame: nothing to call in a play
        where no mobject has one (it would walk every mobject of the scene to find none)."""
        if self._updaters_in_play is False:
            return
        super().update_mobjects(dt)

    def settles(self) -> bool:
        """Whether this scene's plays go straight to their end (:attr:`settles_skipped_plays`, no
        frame written): what would only show between its frames (numbers travelling on chips)
        need not be made."""
        return self.settles_skipped_plays and self._skipping()

    def _skipping(self) -> bool:
        """Whether no frame of the plays is written: a still (``--format png``: Manim draws the
        last frame when the scene ends) or a build with animations skipped (tests)."""
        renderer = self.renderer
        output = getattr(getattr(renderer, "file_writer", None), "output_spec", None)
        return bool(getattr(renderer, "_original_skipping_status", False) or getattr(output, "is_still", False))

    def _bring_to_front(self, animations) -> None:
        animated = set()
        for animation in animations:
            for leaf in leaves(animation):
                if getattr(leaf, "mobject", None) is not None:
                    animated.add(id(leaf.mobject))
        moving = [m for m in self.mobjects if any(id(member) in animated for member in m.get_family())]
        still = [m for m in self.mobjects if m not in moving and not isinstance(m, Highlight)]
        self.mobjects = _layered(
            still + moving + [m for m in self.mobjects if isinstance(m, Highlight) and m not in moving]
        )

    def add(self, *mobjects):
        """Add ``mobjects``; texts stay drawn above cells and highlights above everything (a
        number arriving in a cell is never hidden under a cell that fades in with it)."""
        super().add(*mobjects)
        self.mobjects = _layered(self.mobjects)
        return self


class _no_drawing:
    """While a play's frames are skipped, Manim still draws its static and frozen frames (to
    reuse them in frames it will not write): ``renderer.update_frame`` and
    ``save_static_frame_data`` do nothing meanwhile, so a still costs the building and one
    drawing of the last frame."""

    def __init__(self, renderer) -> None:
        self.renderer = renderer

    def __enter__(self):
        self.renderer.update_frame = lambda *args, **kwargs: None
        self.renderer.save_static_frame_data = lambda *args, **kwargs: None
        return self

    def __exit__(self, *exc) -> None:
        del self.renderer.update_frame, self.renderer.save_static_frame_data


def _layered(mobjects: list) -> list:
    """``mobjects`` in drawing order: shapes, then texts and formulas, then numbers travelling on
    their chips, then highlights (each in the order given)."""
    texts = [m for m in mobjects if isinstance(m, (Text, SVGMobject))]
    travelling = [
        m for m in mobjects if not isinstance(m, (Text, SVGMobject, Highlight)) and _carries_travellers(m)
    ]  # a play's group holds them too
    highlights = [m for m in mobjects if isinstance(m, Highlight)]
    shapes = [m for m in mobjects if not isinstance(m, (Text, SVGMobject, Highlight)) and m not in travelling]
    return shapes + texts + travelling + highlights


def _carries_travellers(mobject) -> bool:
    """Whether ``mobject`` is a travelling chip or a play's group (a plain ``Group``, nested
    for nested animation groups) holding one."""
    if getattr(mobject, "travelling", False):
        return True
    return type(mobject) is Group and any(_carries_travellers(member) for member in mobject.submobjects)
