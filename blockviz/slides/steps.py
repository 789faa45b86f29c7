"""A scene's steps, from the captions its render logged: one slide each.

Every step of a scene (:meth:`blockviz.scenes.base.RecordScene.step`) says its caption as it
begins, and its render logs ``(scene time, caption)`` beside the video
(:func:`blockviz.render.run.shown_captions`). A step therefore runs from its caption's time to
the next caption's (the last to the scene's end): its animation, its hold, and any play between
it and the next caption. What comes before the first caption (the scene's title being set up)
belongs to the first step. A scene that logs no caption (the title card) is one step, with the
catalogue's caption. Pure functions: nothing here reads a file.

>>> [(s.start, s.end, s.caption) for s in steps_of("mask", "The mask", "Hides the future.", [(0.0, "a"), (3.4, "b")], 9.0)]
[(0.0, 3.4, 'a'), (3.4, 9.0, 'b')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from blockviz.lecture.chapters import one_line


@dataclass(frozen=True)
class Step:
    """One step of one scene: its span ``start`` … ``end`` in seconds of the scene's video, and
    the caption it shows. ``number`` counts the scene's steps from 1; ``why`` is what the whole
    scene shows and why (its catalogue caption), ``numbers`` the record's numbers to read out
    beside it (:meth:`~blockviz.scenes.shown.Shown.numbers_to_read`): with the caption, the
    presenter's :attr:`notes`."""

    scene: str
    chapter: str
    number: int
    start: float
    end: float
    caption: str
    why: str = ""
    numbers: str = ""

    @property
    def notes(self) -> list[str]:
        """The speaker's notes, one paragraph each: the caption (burned in the frame), then what
        the presenter says beyond it: "Why: …" (unless it is the caption itself) and "Read out: …"."""
        said = [self.caption]
        if self.why and self.why != self.caption:
            said.append(f"Why: {self.why}")
        if self.numbers:
            said.append(f"Read out: {self.numbers}")
        return said

    @property
    def duration(self) -> float:
        """Seconds from ``start`` to ``end``."""
        return self.end - self.start

    @property
    def name(self) -> str:
        """The step's file stem and anchor: ``<scene>-<number, two digits>``, e.g. ``softmax-03``."""
        return f"{self.scene}-{self.number:02d}"


def steps_of(
    scene: str,
    chapter: str,
    caption: str,
    cues: Sequence[tuple[float, str]],
    duration: float,
    numbers: str = "",
) -> list[Step]:
    """The steps of one rendered scene, in order, covering ``0`` … ``duration`` (seconds); each
    carries ``caption`` (what the scene shows) as its ``why`` and ``numbers`` to read out.

    ``cues`` are the captions the scene showed, ``(seconds from its start, text)``; a cue at or
    after ``duration`` is dropped, cues at one time share a step (their texts joined), and the
    first step starts at 0. Without a cue the scene is one step whose caption is ``caption``.

    Raises ``ValueError`` if ``duration`` is not positive.
    """
    if not duration > 0:
        raise ValueError(f"scene {scene!r} lasts {duration} s: a scene with steps lasts more than 0 s")
    spans: list[list] = []  # [start, caption]
    for at, said in sorted(cues, key=lambda cue: float(cue[0])):
        at, said = max(0.0, float(at)), one_line(said)
        if at >= duration or not said:
            continue
        if spans and at - spans[-1][0] < 1e-6:
            spans[-1][1] = f"{spans[-1][1]} {said}"
        else:
            spans.append([at, said])
    if not spans:
        spans = [[0.0, one_line(caption)]]
    spans[0][0] = 0.0
    ends = [start for start, _ in spans[1:]] + [float(duration)]
    return [
        Step(scene, one_line(chapter), number, start, end, said, one_line(caption), one_line(numbers))
        for number, ((start, said), end) in enumerate(zip(spans, ends), start=1)
    ]
