"""Choreography: functions that return the animations scenes are made of, in the manner of
3Blue1Brown's helpers — numbers that travel on chips (:func:`carry`, :func:`gather`,
:func:`send`, :func:`fly`), grids whose cells change colour and numbers row after row
(:func:`cascade`, :func:`recolour`, :func:`replace_labels`), animations in turn
(:func:`one_after_another`, :func:`lagged`), and stand-ins for what is still to come
(:func:`ghost_of`).

A function that puts copies on the page takes the scene (a
:class:`~blockviz.scenes.base.RecordScene`): it adds them, and queues their removal in
``scene.after_play``, which the scene runs once the next play ends. Numbers never morph into
one another: the old leave, then the new arrive.
"""

from __future__ import annotations

from manim import AnimationGroup, LaggedStart, Mobject, RoundedRectangle, SVGMobject, Text, VGroup, Wait
from manim.utils.rate_functions import linear, smooth

from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, lagged_windows, within
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import MIN_CONTRAST, Look, contrast
from blockviz.scenes.text import font_size_of

FLIGHT_SHARE = 0.7
"""The share of a :func:`fly` play the text spends moving (the rest: giving way)."""


def one_after_another(*animations):
    """The animations in turn, within one play (so two texts never cross-fade in one place)."""
    return LaggedStart(*animations, lag_ratio=1.0)


def products_then_sum(line: VGroup, *with_total: Mobject):
    """A work line's second line arriving in two beats: its terms, then "= total" (its last
    two parts) with ``with_total`` (a light on the total)."""
    return one_after_another(FadeIn(VGroup(*line[:-2])), FadeIn(VGroup(*line[-2:], *with_total)))


def replace_labels(scene, grid: NumberGrid, new_labels: dict) -> list:
    """Animations turning grid labels into ``new_labels`` (``{(i, j): Text}``): the old
    numbers leave, then the new ones arrive (a digit never morphs into another). Call
    :func:`recolour` first if the cells change colour too."""
    leaving, arriving = [], []
    for (i, j), new in new_labels.items():
        old = grid.set_label(i, j, new)
        arriving.append(FadeIn(new))
        if old is None:
            continue
        grid.label_group.remove(old)
        scene.add(old)
        leaving.append(FadeOut(old))
        scene.after_play.append(lambda old=old: scene.remove(old))
    adopt(scene, grid, list(new_labels.values()))
    if not leaving:  # still the second half: a cell recoloured with them has its colour by then
        return [AnimationGroup(*(FadeIn(animation.mobject, rate_func=second_half) for animation in arriving))]
    return [one_after_another(AnimationGroup(*leaving), AnimationGroup(*arriving))]


def adopt(scene, grid: NumberGrid, labels: list) -> None:
    """After the next play, move ``labels`` (top-level while animated) back into ``grid``."""

    def settle():
        scene.remove(*labels)
        grid.label_group.add(*labels)

    scene.after_play.append(settle)


def recolour(scene, grid: NumberGrid, fills: dict) -> list:
    """Animations changing the fill of cells ``{(i, j): colour}``: a coloured copy appears
    over each cell halfway through the play — when :func:`replace_labels` and :func:`carry`
    have taken the old numbers off and not yet put the new ones on, so no number is ever
    on a colour it was not made for — and the cell takes the colour when the play ends."""
    if not fills:
        return []
    overlays = VGroup(*(grid.cells[key].copy().set_fill(fill, opacity=1) for key, fill in fills.items()))
    overlays.recolouring = True
    scene.add(overlays)

    def settle():
        for key, fill in fills.items():
            grid.cells[key].set_fill(fill, opacity=1)
        scene.remove(overlays)

    scene.after_play.append(settle)
    return [FadeIn(overlays, rate_func=halfway)]


def cascade(scene, grid: NumberGrid, fills: dict, labels: dict) -> list:
    """Animations giving cells their ``fills`` (``{(i, j): colour}``) and ``labels``
    (``{(i, j): Text}``) cell after cell, row by row, as a ``LaggedStart`` of cells
    (:func:`~blockviz.scenes.fades.lagged_windows`). In each cell's stretch of the play, as
    :func:`recolour` and :func:`replace_labels` time a whole play: its old number leaves, its
    colour changes, its new number arrives. So no frame changes more than a few cells' worth
    of pixels (a row at once was up to 9 % of a frame on three tokens: issue 36)."""
    return lagged(cascade_parts(scene, grid, fills, labels))


def cascade_parts(scene, grid: NumberGrid, fills: dict, labels: dict) -> list[list]:
    """The parts of :func:`cascade` before they are lagged: each cell's animations (row by
    row), timed over a whole play; for :func:`lagged` to run after
    another grid's parts."""
    parts = []
    for key in sorted(dict.fromkeys([*fills, *labels])):
        changes = recolour(scene, grid, {key: fills[key]} if key in fills else {})
        parts.append(changes + (replace_labels(scene, grid, {key: labels[key]}) if key in labels else []))
    return parts


def lagged(parts: list[list]) -> list:
    """``parts`` (each a list of animations timed over a whole play) one after another in
    one play, as a ``LaggedStart`` (:func:`~blockviz.scenes.fades.lagged_windows`): each
    part's animations run inside its own stretch, with their timing in it unchanged."""
    for animation in (animation for part in parts for animation in part):
        animation.run_time = 1  # each spans its part's stretch, as a play's animations span the play
    groups = [
        AnimationGroup(*part, rate_func=within(linear, start, end))
        for part, (start, end) in zip(parts, lagged_windows(len(parts)))
        if part
    ]
    for group in groups:
        group.cascade = True
    return groups


def fly(scene, source: Text, target: Mobject):
    """One animation: a copy of the text ``source`` moves onto the text in ``target`` (a text,
    or a header on its chip), taking its size, its first glyph onto the target's first glyph
    — the same glyphs all the way, legible in flight, where a transform between two strings
    garbles them — then gives way to ``target`` (which may be shortened: “grandm…”)."""
    copy = source.copy()
    scene.add(copy)
    scene.after_play.append(lambda: scene.remove(copy))
    anchor = next((member for member in target.get_family() if isinstance(member, Text)), target)
    goal = copy.copy().scale(font_size_of(anchor) / font_size_of(source))
    ends = (goal[0], anchor[0]) if len(goal.submobjects) and len(anchor.submobjects) else (goal, anchor)
    goal.shift(ends[1].get_center() - ends[0].get_center())
    move = copy.animate(run_time=FLIGHT_SHARE / (1 - FLIGHT_SHARE)).become(goal)
    return one_after_another(move, AnimationGroup(FadeOut(copy), FadeIn(target)))


def carry(scene, sources, targets):
    """One animation: copies of ``sources`` slide onto ``targets`` on their chips, leave
    (the number, then its chip), then the ``targets`` arrive (numbers move where they are
    used; no digit morphs into another)."""
    return one_after_another(*_ride(scene, sources, targets), AnimationGroup(*(FadeIn(target) for target in targets)))


def gather(scene, sources, target):
    """One animation: copies of ``sources`` slide together onto ``target`` on their chips,
    leave, then ``target`` arrives (a mean or a sum made of them)."""
    return one_after_another(*_ride(scene, sources, [target] * len(sources)), FadeIn(target))


def send(scene, sources, targets):
    """One animation: copies of ``sources`` slide onto ``targets`` (mobjects or points) on
    their chips and leave (the number, then its chip); what they make arrives in a later step."""
    return one_after_another(*_ride(scene, sources, targets))


def _ride(scene, sources, targets) -> tuple[AnimationGroup, AnimationGroup]:
    """Copies of ``sources`` on their chips, in the scene until the play ends: (their moves
    onto ``targets``, their leaving). Where no frame of the play is drawn (a still:
    ``scene.settles()``), no copy is made: only the seconds their moves and leaving take."""
    if scene.settles():
        return _unseen(sources), _unseen(sources)
    copies = [travelling(source, scene.look) for source in sources]
    scene.add(*copies)
    scene.after_play.append(lambda: scene.remove(*copies))
    moves = [copy.animate.move_to(target) for copy, target in zip(copies, targets)]
    return AnimationGroup(*moves), AnimationGroup(*(Conceal(copy) for copy in copies))


def _unseen(sources) -> AnimationGroup:
    """The time, and nothing else, of a group of one animation of a copy of each of ``sources``
    (each lasts Manim's default second)."""
    return AnimationGroup(*([Wait()] if len(sources) else []))


def travelling(source: Mobject, look: Look) -> Mobject:
    """A copy of ``source`` to move across the page, over cells of any colour: it travels
    on a chip of a colour it is readable on (``look``'s page, else white or black), drawn above
    every text, so it never has less than 4.5:1 contrast on its way."""
    copy = source.copy()
    color = source.get_fill_color().to_hex() if hasattr(source, "get_fill_color") else look.text
    chip = RoundedRectangle(corner_radius=0.04, width=copy.width + 0.12, height=copy.height + 0.1, stroke_width=0)
    page = look.background
    under = (
        page
        if contrast(color, page) >= MIN_CONTRAST
        else "#ffffff"
        if contrast(color, "#ffffff") >= MIN_CONTRAST
        else "#000000"
    )
    chip.set_fill(under, opacity=1).move_to(copy)
    moving = VGroup(chip, copy)
    moving.travelling = True
    return moving


def ghost_of(*mobjects: Mobject, opacity: float = 1.0, outline: str | None = None) -> VGroup:
    """A dim copy of ``mobjects`` (a stand-in for what is still to come): each part's fill and
    stroke at ``opacity`` times their own, so an outline without fill (a path, an arrow's line)
    stays without fill. Every member is marked ``.ghost`` (tests count no text of its own).

    With ``outline`` (a colour), the stand-in is drawn as outlines instead: no text at all (a
    dim number is neither readable nor absent), every shape unfilled with its edge in
    ``outline`` at full opacity — empty cells where the numbers will come."""
    ghost = VGroup(*(mobject.copy() for mobject in mobjects))
    glyphs = {id(glyph) for part in ghost.get_family() if isinstance(part, SVGMobject) for glyph in part.get_family()}
    for member in ghost.get_family():
        if len(member.points) and hasattr(member, "get_fill_opacity"):
            if outline is None:
                member.set_fill(opacity=member.get_fill_opacity() * opacity, family=False)
                member.set_stroke(opacity=member.get_stroke_opacity() * opacity, family=False)
            elif id(member) in glyphs:
                member.set_fill(opacity=0, family=False).set_stroke(opacity=0, family=False)
            else:
                member.set_fill(opacity=0, family=False)
                if member.get_stroke_width() > 0:
                    member.set_stroke(outline, opacity=1, family=False)
        member.ghost = True
    return ghost


def second_half(t: float) -> float:
    """A rate function that waits for the first half, then eases over the second."""
    return smooth(max(0.0, 2 * t - 1))


def halfway(t: float) -> float:
    """A rate function that jumps from 0 to 1 halfway (a cell's colour changes while no number is on it)."""
    return 0.0 if t < 0.5 else 1.0
