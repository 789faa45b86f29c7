"""The reveal.js deck: one HTML page, one slide per step, that runs from local files, offline.

reveal.js is not part of blockviz: it is npm's ``reveal.js`` package, unpacked by the set-up into
``<python prefix>/share/reveal.js`` (or wherever ``$BLOCKVIZ_REVEAL`` points). Its ``dist/``
(without source maps), its speaker-notes plugin and its licence are copied beside the deck, so
the folder can be moved or zipped whole; the page names no other file and nothing on a network,
and its Content-Security-Policy (:mod:`blockviz.page_policy`) lets it load nothing else: inline,
only its own script and style and the speaker view's, by hash.

Each scene is a vertical stack of its steps (its chapter title in the stack's ``data-chapter``
and in each slide's title); the deck moves through them in order with → or Space
(``navigationMode: "linear"``). Each slide plays its step's clip once, from the start, when it
is shown, and holds its last frame; its notes (:attr:`~blockviz.slides.steps.Step.notes`) are the speaker's (S opens the speaker view).
Clips are named in ``data-src``: reveal.js loads those of the slides near the current one only.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import sys
from collections.abc import Sequence
from html.parser import HTMLParser
from itertools import groupby
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.page_policy import content_security_policy, policy_meta
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
    "plugin/notes/speaker-view.html",
)
"""What the deck loads (the notes plugin writes the speaker view's page into its window): a folder
without them is not reveal.js 4 or 5."""
INSTALL_HINT = (
    "no reveal.js found, so no slides.html: run `make setup` (it unpacks npm's reveal.js@5 into "
    ".venv/share/reveal.js) or point $BLOCKVIZ_REVEAL at an unpacked reveal.js package"
)
SPEAKER_VIEW = REVEAL_FILES[-1]
"""The notes plugin's speaker view, the page it writes into the window S opens."""
THEMES = {"light": "white", "dark": "black"}
"""blockviz theme → reveal.js theme."""
SPEAKER_LABELS_PX = 48
"""How far the speaker view's next-slide preview starts from its frame's top: below its labels
(10 px from the top of the view, 34 px high; the frame itself starts 7 px down), with a margin."""


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
    (paths relative to ``folder``, where the page goes) and its notes (a ``<p>`` per paragraph) as ``<aside class="notes">``.

    ``size`` is the videos' ``(width, height)`` in pixels: the deck's own size, so a clip fills
    its slide; ``theme`` is ``"light"`` or ``"dark"``, ``background`` the videos' page colour.
    ``folder`` already holds reveal.js (:func:`copy_reveal`): the page's policy allows its speaker
    view's inline script and style by their hashes.
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
    style = _STYLE.format(background=background, labels=SPEAKER_LABELS_PX)
    script = f"\n{_UPCOMING_CHECK}\nReveal.initialize(Object.assign({json.dumps(settings)}, {{ plugins: [RevealNotes] }}));\n"
    speaker_view = _inline_parts((folder / REVEAL_FOLDER / SPEAKER_VIEW).read_text(encoding="utf-8"))
    policy = content_security_policy(
        scripts=[script, *speaker_view.scripts],
        styles=[style, *speaker_view.styles],
        style_attributes=speaker_view.style_attributes,
        files=[
            "script",
            "style",
            "media",
            "font",
            "frame",
        ],  # reveal.js, its themes' fonts, the clips, the speaker view's slides
    )
    return _PAGE.format(
        policy=policy_meta(policy),
        title=html.escape(title),
        theme=THEMES[theme],
        style=style,
        reveal=REVEAL_FOLDER,
        stacks="\n".join(stacks),
        script=script,
    )


class _InlineParts(HTMLParser):
    """The inline ``scripts``, ``styles`` and ``style_attributes`` of a page, each exactly as written."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.style_attributes: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag, attrs) -> None:
        self.style_attributes += [value for name, value in attrs if name == "style" and value is not None]
        if tag in ("script", "style") and not any(name == "src" for name, _ in attrs):
            self._open = []
            (self.scripts if tag == "script" else self.styles).append("")

    def handle_data(self, data) -> None:
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag) -> None:
        if tag in ("script", "style") and self._open is not None:
            (self.scripts if tag == "script" else self.styles)[-1] = "".join(self._open)
            self._open = None


def _inline_parts(page: str) -> _InlineParts:
    """What of ``page`` (the notes plugin's speaker view) runs inline: the deck's policy allows these by hash,
    as the speaker view's window, opened blank by the deck, keeps the deck's policy."""
    parts = _InlineParts()
    parts.feed(page)
    parts.close()
    return parts


def _slide(clip: Clip, folder: Path) -> str:
    step = clip.step
    source = html.escape(clip.video.relative_to(folder).as_posix())
    label = html.escape(f"{step.chapter}, step {step.number}")
    return (
        f'<section id="{step.name}" aria-label="{label}">'
        f'<video data-autoplay{"" if clip.sound else " muted"} playsinline data-src="{source}"></video>'
        f'<aside class="notes">{"".join(f"<p>{html.escape(said)}</p>" for said in step.notes)}</aside></section>'
    )


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{policy}
<title>{title}</title>
<link rel="stylesheet" href="{reveal}/dist/reset.css">
<link rel="stylesheet" href="{reveal}/dist/reveal.css">
<link rel="stylesheet" href="{reveal}/dist/theme/{theme}.css">
<style>{style}</style>
</head>
<body>
<div class="reveal">
<div class="slides">
{stacks}
</div>
</div>
<script src="{reveal}/dist/reveal.js"></script>
<script src="{reveal}/plugin/notes/notes.js"></script>
<script>{script}</script>
</body>
</html>
"""
_UPCOMING_CHECK = (
    'if (/[?&]controls=false(&|$)/.test(location.search)) document.documentElement.classList.add("upcoming");'
)
"""The speaker view shows the next slide in a frame of this page with ``?receiver&…&controls=false``
(reveal.js 5's ``plugin/notes/speaker-view.html``) and draws its labels, "Upcoming" and the layout
menu, 34 px high over that frame's top corners, where every scene's title is: there, the deck
starts below them (:data:`_STYLE`)."""
_STYLE = """
.reveal-viewport {{ background: {background}; }}
html.upcoming .reveal {{ position: absolute; top: {labels}px; height: calc(100% - {labels}px); }}
.reveal .slides section {{ padding: 0; }}
.reveal .slides video {{ display: block; width: 100%; height: 100%; margin: 0; object-fit: contain; }}
"""
