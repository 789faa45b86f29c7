"""The deck as manim-slides reads it: ``slides/<Lecture>.json``, a ``PresentationConfig``.

manim-slides (``manim_slides/config.py``) validates a JSON document ``{"slides": [SlideConfig…],
"resolution": [width, height], "background_color": …}``; each ``SlideConfig`` has the fields of
its ``BaseSlideConfig`` (``loop``, ``auto_next``, ``playback_rate``, ``reversed_playback_rate``,
``notes``, ``dedent_notes``, ``skip_animations``, ``src``) and its ``file`` and ``rev_file``,
paths relative to the JSON file's folder's parent (``PresentationConfig.from_file``). blockviz
writes the same keys without depending on manim-slides; ``rev_file`` is the clip itself (as
manim-slides' own ``skip_reversing`` does), so playing a slide backwards replays it.
``manim-slides present Lecture`` and ``manim-slides convert Lecture slides.html`` then work in the
deck's folder without manim-slides' renderer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from blockviz.slides.clips import Clip

LECTURE = "Lecture"
"""The presentation's name: ``slides/Lecture.json``, clips in ``slides/files/Lecture/``."""


def presentation(clips: Sequence[Clip], folder: Path, size: tuple[int, int], background: str) -> dict:
    """manim-slides' ``PresentationConfig`` of ``clips`` as a dict; ``folder`` is the deck's (the
    JSON file's parent's parent: the clips' paths are relative to it)."""
    slides = []
    for clip in clips:
        file = clip.video.relative_to(folder).as_posix()
        slides.append(
            {
                "loop": False,
                "auto_next": False,
                "playback_rate": 1.0,
                "reversed_playback_rate": 1.0,
                "notes": "\n\n".join(clip.step.notes),
                "dedent_notes": True,
                "skip_animations": False,
                "src": None,
                "file": file,
                "rev_file": file,
            }
        )
    return {"slides": slides, "resolution": [size[0], size[1]], "background_color": background}


def presentation_json(clips: Sequence[Clip], folder: Path, size: tuple[int, int], background: str) -> str:
    """:func:`presentation` as indented JSON text (UTF-8, as manim-slides writes it)."""
    return json.dumps(presentation(clips, folder, size, background), indent=2, ensure_ascii=False) + "\n"
