"""Playing a play whose frames are never drawn (``--format png``, scene builds in tests).

Manim plays a skipped play as any other, minus the frames: every animation is begun, which
copies its mobject (a fade copies it twice, to fade from and to), then finished. Only the end
state shows, and a fade's end state is known without copies: a ``FadeIn`` leaves its mobject as
it was given, a ``FadeOut`` removes it (as given, too: Manim puts a faded-out mobject back).
:func:`settle` skips those copies, and plays every other animation as Manim does: all begun,
then all finished, then all cleaned up.
"""

from __future__ import annotations

from manim import FadeIn, FadeOut

from blockviz.scenes.animation_tree import groups, leaves


def settle(scene, animations: list, **play_options) -> None:
    """Bring ``scene`` to the end of playing ``animations`` without drawing any frame.

    Mobjects enter and leave the scene as in Manim's own play, and the renderer's clock moves
    on by the play's run time (seconds), so captions are timed as in the video.
    """
    compiled = scene.compile_animations(*animations, **play_options)
    # as Scene.add_mobjects_from_animations: what the play animates, if not on the scene
    _add_missing(scene, [animation.mobject for animation in compiled if not animation.is_introducer()])
    for group in (group for animation in compiled for group in groups(animation) if group.remover):
        for leaf in leaves(group):  # as a group's clean-up does
            leaf.remover = True
    every = [leaf for animation in compiled for leaf in leaves(animation)]
    played = [leaf for leaf in every if not isinstance(leaf, (FadeIn, FadeOut))]
    # as each introducer's _setup_scene does in turn
    _add_missing(scene, [leaf.mobject for leaf in every if leaf.is_introducer()])
    for leaf in played:
        leaf.begin()
    for leaf in played:
        leaf.finish()
    for leaf in every:
        _clean_up(leaf, scene)
    _advance_clock(scene.renderer, scene.get_run_time(compiled))


def _add_missing(scene, mobjects: list) -> None:
    """Add each of ``mobjects`` not on ``scene`` (nor under one added before it), in turn, as
    Manim's ``Scene.add`` would one at a time — with the scene's family listed once and one add
    for them all (Manim lists it and restructures the scene's list at each add). The same list,
    in the same order, unless a mobject stays in front or one added holds one added before it
    (Manim's later add takes the earlier out of the list): then added one at a time. With none to
    add, the scene's family is not listed."""
    if all(mobject is None for mobject in mobjects):
        return
    on_scene = {id(member) for member in scene.get_mobject_family_members()}
    missing: list = []
    for mobject in mobjects:
        if mobject is None or id(mobject) in on_scene:
            continue
        family = {id(member) for member in mobject.get_family()}
        if scene.foreground_mobjects or any(id(earlier) in family for earlier in missing):
            for one in mobjects:
                if one is not None and one not in scene.get_mobject_family_members():
                    scene.add(one)
            return
        missing.append(mobject)
        on_scene |= family
    if missing:
        scene.add(*missing)


def _clean_up(animation, scene) -> None:
    if isinstance(animation, FadeOut):  # its own clean-up puts back the start it never left
        super(FadeOut, animation).clean_up_from_scene(scene)
    else:
        animation.clean_up_from_scene(scene)


def _advance_clock(renderer, seconds: float) -> None:
    """What Manim's renderer books for a skipped play: its time, its count, no movie part."""
    renderer.time += seconds
    renderer.num_plays += 1
    renderer.file_writer.add_partial_movie_file(None)
    renderer.animations_hashes.append(None)


__all__ = ["settle"]
