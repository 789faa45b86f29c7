"""The lecture's chapters and captions as text: pure functions of the parts' names, titles,
captions and durations (seconds). Nothing here reads or writes a file.

>>> chapters = chapters_of(["title", "mask"], ["Introduction", "The mask"], ["What it is.", "What it hides."], [5, 12.5])
>>> [(chapter.start, chapter.end) for chapter in chapters]
[(0.0, 5.0), (5.0, 17.5)]
>>> print(chapters_text(chapters, min_seconds=0), end="")
00:00 Introduction
00:05 The mask
"""

from __future__ import annotations

import datetime
import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import srt

YOUTUBE_MIN_CHAPTER = 10.0
"""YouTube ignores a chapter list in which any chapter is shorter than this (seconds)."""
CAPTION_LINE_LENGTH = 42
"""Longest caption line in characters (the usual subtitle guideline); longer captions wrap."""
CAPTION_LINES = 2
"""Most lines in one cue of on-screen captions (a longer caption becomes consecutive cues)."""
ON_TOP = "{\\an8}"
"""The SubRip position tag for top centre (the burned-in caption is at the bottom of the frame)."""


@dataclass(frozen=True)
class Chapter:
    """One scene's span in the lecture video: ``start`` and ``end`` in seconds from its beginning."""

    name: str
    title: str
    caption: str
    start: float
    end: float
    cues: tuple[tuple[float, str], ...] = ()
    """The captions shown on screen during the chapter: ``(seconds from the chapter's start, text)``
    in order, each shown until the next (the last until the chapter ends); empty: the one ``caption``."""


def chapters_of(
    names: Sequence[str],
    titles: Sequence[str],
    captions: Sequence[str],
    durations: Sequence[float | Fraction],
    cues: Sequence[Sequence[tuple[float, str]]] | None = None,
) -> tuple[Chapter, ...]:
    """One chapter per part, in order, each starting where the one before ends.

    ``durations`` are in seconds; exact ones (:class:`~fractions.Fraction`) are summed exactly
    and rounded to float only in the chapters. Titles and captions are put on one line (runs
    of white space become one space). ``cues`` (optional, one sequence per part) are the
    captions each part shows on screen, ``(seconds from the part's start, text)``; cues at or
    past a part's end are dropped. Raises ``ValueError`` if the sequences differ in length.
    """
    cues = [()] * len(names) if cues is None else cues
    chapters, start = [], Fraction(0)
    for name, title, caption, duration, shown in zip(names, titles, captions, durations, cues, strict=True):
        end = start + Fraction(duration)
        kept = tuple(
            (max(0.0, float(at)), one_line(said))
            for at, said in shown
            if float(at) < float(duration) and one_line(said)
        )
        chapters.append(Chapter(name, one_line(title), one_line(caption), float(start), float(end), kept))
        start = end
    return tuple(chapters)


def chapters_text(chapters: Sequence[Chapter], min_seconds: float = YOUTUBE_MIN_CHAPTER) -> str:
    """One ``MM:SS Title`` line per chapter (``H:MM:SS`` past an hour), as YouTube reads them.

    Start times are rounded down to the second, so no chapter's link skips its first frames.
    YouTube shows chapters only if the first starts at 00:00, there are at least three, and
    each lasts at least 10 s; so a chapter shorter than ``min_seconds`` (between the rounded
    times) is merged into the next one (the last into the one before), their titles joined by
    " / ". ``min_seconds=0`` keeps every chapter.
    """
    lines: list[tuple[int, list[str]]] = []  # (start in whole seconds, titles)
    end = math.floor(chapters[-1].end + 1e-9) if chapters else 0
    for chapter in chapters:
        start = math.floor(chapter.start + 1e-9)
        if lines and start - lines[-1][0] < min_seconds:
            lines[-1][1].append(chapter.title)
        else:
            lines.append((start, [chapter.title]))
    if len(lines) > 1 and end - lines[-1][0] < min_seconds:
        lines[-2][1].extend(lines.pop()[1])
    return "".join(f"{timestamp(start)} {' / '.join(titles)}\n" for start, titles in lines)


def chapters_json(chapters: Sequence[Chapter], video_name: str) -> str:
    """The chapters as JSON: ``{"video", "duration", "chapters": [{"name", "title", "caption",
    "start", "end"}]}`` with times in seconds (rounded to the microsecond)."""
    document = {
        "video": video_name,
        "duration": round(chapters[-1].end, 6) if chapters else 0.0,
        "chapters": [
            {"name": c.name, "title": c.title, "caption": c.caption, "start": round(c.start, 6), "end": round(c.end, 6)}
            for c in chapters
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def captions_srt(chapters: Sequence[Chapter], burned_captions: bool = True) -> str:
    """SubRip captions. A chapter with :attr:`Chapter.cues` gets one cue per on-screen caption,
    from when it appears to when the next one does (the last to the chapter's end); a chapter
    without gets one cue spanning it, its ``caption``. Each cue is at most
    :data:`CAPTION_LINES` lines of at most :data:`CAPTION_LINE_LENGTH` characters: a longer
    caption is shown as consecutive cues sharing its time by length. A cue of on-screen captions
    starts with ``{\\an8}`` (top centre, in players that read the tag) so it does not sit on
    the caption drawn into the video at the bottom; without ``burned_captions`` (none drawn)
    every cue is untagged, at the bottom. Times are in milliseconds."""
    spans: list[tuple[float, float, str, str]] = []  # start, end, text, position tag
    for chapter in chapters:
        if not chapter.cues:  # its one caption, in cues of at most two lines
            spans.extend((a, b, piece, "") for a, b, piece in _split(chapter.start, chapter.end, chapter.caption))
            continue
        times = [chapter.start + at for at, _ in chapter.cues] + [chapter.end]
        for (_at, said), begin, end in zip(chapter.cues, times, times[1:]):
            spans.extend((a, b, piece, ON_TOP if burned_captions else "") for a, b, piece in _split(begin, end, said))
    cues = [
        srt.Subtitle(
            index=number,
            start=datetime.timedelta(seconds=begin),
            end=datetime.timedelta(seconds=end),
            content=tag + said,
        )
        for number, (begin, end, said, tag) in enumerate(spans, start=1)
    ]
    return srt.compose(cues, reindex=False)


def caption_lines(shown: str, width: int = CAPTION_LINE_LENGTH) -> list[str]:
    """``shown`` wrapped to lines of at most ``width`` characters (words longer than a line are cut)."""
    return textwrap.wrap(shown, width, break_on_hyphens=False) or [""]


def _split(begin: float, end: float, shown: str) -> list[tuple[float, float, str]]:
    """One caption as the fewest cues of at most :data:`CAPTION_LINES` lines each (the lines of
    a cue joined by a line break), in order, of about the same length (no one-word cue left
    over), sharing ``begin`` … ``end`` by their length in characters."""
    balanced = lines = caption_lines(shown)
    if len(lines) > CAPTION_LINES:  # more than one cue: the narrowest lines that fill the fewest cues are even
        most = CAPTION_LINES * math.ceil(len(lines) / CAPTION_LINES)
        balanced = next(
            wrapped
            for width in range(1, CAPTION_LINE_LENGTH + 1)
            if len(wrapped := caption_lines(shown, width)) <= most
        )
    pieces = ["\n".join(balanced[k : k + CAPTION_LINES]) for k in range(0, len(balanced), CAPTION_LINES)]
    total = sum(len(piece) for piece in pieces)
    found, at = [], begin
    for piece in pieces:
        later = at + (end - begin) * len(piece) / total
        found.append((at, later, piece))
        at = later
    return found


def timestamp(seconds: float) -> str:
    """``seconds`` rounded down as ``MM:SS``, or ``H:MM:SS`` from one hour: 75.9 → ``"01:15"``."""
    whole = math.floor(seconds + 1e-9)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def sidecar_paths(video: str | Path) -> tuple[Path, Path, Path]:
    """``(chapters .txt, chapters .json, captions .srt)`` beside ``video``:
    ``lecture.mp4`` → ``lecture.chapters.txt``, ``lecture.chapters.json``, ``lecture.srt``."""
    video = Path(video)
    return (
        video.with_name(f"{video.stem}.chapters.txt"),
        video.with_name(f"{video.stem}.chapters.json"),
        video.with_name(f"{video.stem}.srt"),
    )


def one_line(text: str) -> str:
    """``text`` with every run of white space (line breaks included) made one space, trimmed."""
    return " ".join(text.split())
