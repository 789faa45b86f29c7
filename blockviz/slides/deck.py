"""Writing the whole deck from rendered scenes: their steps cut into clips, then the three
presentations of them, all in one folder.

Into ``folder`` go ``slides.html`` (reveal.js, when it is installed: :mod:`~blockviz.slides.reveal`),
``slides.pptx`` (:mod:`~blockviz.slides.pptx_deck`), ``slides/Lecture.json``
(:mod:`~blockviz.slides.manim_slides_json`) and the clips they share, ``slides/files/Lecture/<scene>-<NN>.mp4``
with a poster ``.png`` each. Everything is written in a temporary folder first and moved into
place when complete: an error or an interruption leaves the previous deck as it was.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from blockviz import style
from blockviz.errors import BlockvizError
from blockviz.files import temporary_folder, writable_folder, writing
from blockviz.lecture.join import LecturePart, probe_video
from blockviz.ownership import refuse_foreign, remember, remove_own
from blockviz.render.plan import CACHE_FOLDER
from blockviz.slides import manim_slides_json, pptx_deck, reveal
from blockviz.slides.clips import Clip, cut_clips
from blockviz.slides.steps import steps_of

HTML_NAME = "slides.html"
PPTX_NAME = "slides.pptx"
CLIPS_FOLDER = "slides"
"""manim-slides' folder: its JSON, and the clips in ``files/<presentation>/``."""


def deck_paths(folder: str | Path) -> list[Path]:
    """Every file and folder :func:`write_deck` may replace or remove in ``folder``."""
    return [Path(folder) / name for name in (HTML_NAME, PPTX_NAME, CLIPS_FOLDER, reveal.REVEAL_FOLDER)]


@dataclass(frozen=True)
class Deck:
    """What :func:`write_deck` wrote: the deck's files (``html`` ``None`` without reveal.js,
    ``pptx`` ``None`` without python-pptx), every clip in order, and one-line notes for the user
    (how to get what was not written)."""

    folder: Path
    html: Path | None
    pptx: Path | None
    json: Path
    clips: list[Clip]
    notes: list[str] = field(default_factory=list)

    def files(self) -> list[Path]:
        """The deck files written, in the order a user opens them."""
        return [path for path in (self.html, self.pptx, self.json) if path is not None]


def write_deck(parts: Sequence[LecturePart], folder: str | Path, theme: str = "light", title: str = "blockviz") -> Deck:
    """Cut every part (a rendered scene, with the captions it showed) into its steps' clips and
    write the deck into ``folder``: one slide per step, in the order of ``parts``.

    ``theme`` is the scenes' (``"light"`` or ``"dark"``): the slides' background and reveal.js's
    theme follow it. ``title`` is the HTML page's title.

    Raises
    ------
    BlockvizError
        If there is no part, a part's video is missing or unreadable, the parts differ in size,
        ``$BLOCKVIZ_REVEAL`` names a folder without reveal.js, or ``folder`` cannot be written
        (nothing of the new deck is left then).
    """
    if not parts:
        raise BlockvizError("a deck needs at least one rendered scene: choose scenes with --scene")
    source = reveal.find_reveal()
    infos = [probe_video(part.video, part.name) for part in parts]
    sizes = {(info.width, info.height) for info in infos}
    if len(sizes) > 1:
        raise BlockvizError(
            f"the scenes differ in size ({', '.join(f'{w}x{h}' for w, h in sorted(sizes))}): render them with the same options"
        )
    size = sizes.pop()
    background = style.theme(theme).background
    folder = writable_folder(folder)
    refuse_foreign(deck_paths(folder))
    notes = []
    with temporary_folder(folder / CACHE_FOLDER, "slides-") as work, writing(folder):
        files = work / CLIPS_FOLDER / "files" / manim_slides_json.LECTURE
        files.mkdir(parents=True)
        clips: list[Clip] = []
        for part, info in zip(parts, infos):
            steps = steps_of(part.name, part.title, part.caption, part.cues, float(info.duration), part.numbers)
            clips.extend(cut_clips(part.video, steps, files))
        (work / CLIPS_FOLDER / f"{manim_slides_json.LECTURE}.json").write_text(
            manim_slides_json.presentation_json(clips, work, size, background), encoding="utf-8"
        )
        made = [CLIPS_FOLDER]
        if pptx_deck.pptx_available():
            pptx_deck.write_pptx(clips, work / PPTX_NAME, size, background)
            made.append(PPTX_NAME)
        else:
            notes.append(pptx_deck.INSTALL_HINT)
        if source is not None:
            reveal.copy_reveal(source, work)
            (work / HTML_NAME).write_text(
                reveal.deck_html(title, clips, work, size, theme, background), encoding="utf-8"
            )
            made += [reveal.REVEAL_FOLDER, HTML_NAME]
        else:
            notes.append(reveal.INSTALL_HINT)
        _move_into(work, folder, made, stale=[HTML_NAME, reveal.REVEAL_FOLDER, PPTX_NAME])
    moved = [folder / clip.video.relative_to(work) for clip in clips]
    clips = [
        dataclasses.replace(clip, video=video, poster=video.with_suffix(".png")) for clip, video in zip(clips, moved)
    ]
    return Deck(
        folder=folder,
        html=folder / HTML_NAME if HTML_NAME in made else None,
        pptx=folder / PPTX_NAME if PPTX_NAME in made else None,
        json=folder / CLIPS_FOLDER / f"{manim_slides_json.LECTURE}.json",
        clips=clips,
        notes=notes,
    )


def _move_into(work: Path, folder: Path, names: list[str], stale: list[str]) -> None:
    """Replace ``folder``'s ``names`` with ``work``'s (folders first, the pages that link to them
    last), and remove the ``stale`` ones not made this time (an old page would show old clips);
    only files blockviz wrote are replaced or removed (:mod:`blockviz.ownership`)."""
    refuse_foreign([folder / name for name in (*names, *stale)])
    remember([work / name for name in names if (work / name).is_dir()])  # a folder's manifests move with it
    for name in stale:
        if name not in names:
            remove_own(folder / name)
    for name in sorted(names, key=lambda name: (work / name).is_file()):
        target = folder / name
        if (work / name).is_dir():
            remove_own(target)
        os.replace(work / name, target)
    remember([folder / name for name in names if (folder / name).is_file()])
