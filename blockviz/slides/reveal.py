"""The reveal.js deck: one HTML page, one slide per step, that runs from local files, offline.

reveal.js is not part of blockviz: it is npm's ``reveal.js`` package, unpacked by the set-up into
``<python prefix>/share/reveal.js`` (or wherever ``$BLOCKVIZ_REVEAL`` points). Its ``dist/``
(without source maps), its speaker-notes plugin and its licence are copied beside the deck, so
the folder can be moved or zipped whole; the page names no other file and nothing on a network.

Each scene is a vertical stack of its steps (its chapter title in the stack's ``data-chapter``
and in each slide's title); the deck moves through them in order with → or Space
(``navigationMode: "linear"``). Each slide plays its step's clip once, from the start, when it
is shown, and holds its last frame; its caption is the speaker's notes (S opens the speaker view).
Clips are named in ``data-src``: reveal.js loads those of the slides near the current one only.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import sys
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.slides.clips import Clip

REVEAL_ENVIRONMENT_VARIABLE = "BLOCKVIZ_REVEAL"
"""A folder holding npm's ``reveal.js`` package (its ``dist/``, ``plugin/notes/``, ``LICENSE``)."""
REVEAL_FOLDER = "reveal.js"
"""The copy's folder beside the deck."""
REVEAL_FILES = (
    "dist/reveal.js",
    "dist/reveal.css",
    "dist/theme/white.css",
    "dist/theme/black.css",
    "plugin/notes/notes.js",
)
"""What the deck loads: a folder without them is not reveal.js 4 or 5."""
INSTALL_HINT = (
    "no reveal.js found, so no slides.html: run `make setup` (it unpacks npm's reveal.js@5 into "
    ".venv/share/reveal.js) or point $BLOCKVIZ_REVEAL at an unpacked reveal.js package"
)
THEMES = {"light": "white", "dark": "black"}
"""blockviz theme → reveal.js theme."""


def find_reveal() -> Path | None:
    """The reveal.js package folder: ``$BLOCKVIZ_REVEAL`` if set, else ``<sys.prefix>/share/reveal.js``;
    ``None`` if it is not there.

    Raises
    ------
    BlockvizError
        If ``$BLOCKVIZ_REVEAL`` is set but lacks a file of :data:`REVEAL_FILES` (the message names it).
    """
    named = os.environ.get(REVEAL_ENVIRONMENT_VARIABLE)
    folder = Path(named) if named else Path(sys.prefix) / "share" / "reveal.js"
    missing = [name for name in REVEAL_FILES if not (folder / name).is_file()]
    if not missing:
        return folder
    if named:
        raise BlockvizError(
            f"${REVEAL_ENVIRONMENT_VARIABLE} is {named!r}, which has no {missing[0]}: point it at an unpacked reveal.js@5 package"
        )
    return None


def copy_reveal(source: Path, folder: Path) -> Path:
    """Copy reveal.js's ``dist/`` (no source maps or ES modules), ``plugin/notes/`` and its
    ``LICENSE`` into ``folder/reveal.js``; return that folder."""
    target = folder / REVEAL_FOLDER
    shutil.copytree(source / "dist", target / "dist", ignore=shutil.ignore_patterns("*.map", "*.esm.js"))
    shutil.copytree(source / "plugin" / "notes", target / "plugin" / "notes", ignore=shutil.ignore_patterns("*.esm.js"))
    for name in ("LICENSE", "package.json"):
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    return target


def deck_html(
    title: str, clips: Sequence[Clip], folder: Path, size: tuple[int, int], theme: str, background: str
) -> str:
    """The deck's page: one ``<section>`` per clip (stacked by scene), each with its ``<video>``
    (paths relative to ``folder``, where the page goes) and its caption as ``<aside class="notes">``.

    ``size`` is the videos' ``(width, height)`` in pixels: the deck's own size, so a clip fills
    its slide; ``theme`` is ``"light"`` or ``"dark"``, ``background`` the videos' page colour.
    """
    stacks = []
    for _, scene_clips in groupby(clips, key=lambda clip: clip.step.scene):
        scene_clips = list(scene_clips)
        chapter = html.escape(scene_clips[0].step.chapter)
        slides = "\n".join(_slide(clip, folder) for clip in scene_clips)
        stacks.append(f'<section data-chapter="{chapter}">\n{slides}\n</section>')
    settings = {
        "width": size[0],
        "height": size[1],
        "margin": 0,
        "minScale": 0.05,
        "maxScale": 20.0,
        "hash": True,
        "navigationMode": "linear",
        "controls": True,
        "progress": True,
        "slideNumber": "c/t",
        "transition": "none",
        "backgroundTransition": "none",
    }
    return _PAGE.format(
        title=html.escape(title),
        theme=THEMES[theme],
        background=background,
        reveal=REVEAL_FOLDER,
        stacks="\n".join(stacks),
        settings=json.dumps(settings),
    )


def _slide(clip: Clip, folder: Path) -> str:
    step = clip.step
    source = html.escape(clip.video.relative_to(folder).as_posix())
    label = html.escape(f"{step.chapter}, step {step.number}")
    return (
        f'<section id="{step.name}" aria-label="{label}">'
        f'<video data-autoplay{"" if clip.sound else " muted"} playsinline data-src="{source}"></video>'
        f'<aside class="notes">{html.escape(step.caption)}</aside></section>'
    )


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{reveal}/dist/reset.css">
<link rel="stylesheet" href="{reveal}/dist/reveal.css">
<link rel="stylesheet" href="{reveal}/dist/theme/{theme}.css">
<style>
.reveal-viewport {{ background: {background}; }}
.reveal .slides section {{ padding: 0; }}
.reveal .slides video {{ display: block; width: 100%; height: 100%; margin: 0; object-fit: contain; }}
</style>
</head>
<body>
<div class="reveal">
<div class="slides">
{stacks}
</div>
</div>
<script src="{reveal}/dist/reveal.js"></script>
<script src="{reveal}/plugin/notes/notes.js"></script>
<script>
Reveal.initialize(Object.assign({settings}, {{ plugins: [RevealNotes] }}));
</script>
</body>
</html>
"""
