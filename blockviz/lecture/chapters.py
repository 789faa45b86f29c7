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
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import srt

YOUTUBE_MIN_CHAPTER = 10.0
"""YouTube ignores a chapter list in which any chapter is shorter than this (seconds)."""
CAPTION_LINE_LENGTH = 42
"""Longest caption line in characters (the usual subtitle guideline); longer captions wrap."""


@dataclass(frozen=True)
class Chapter:
    """One scene's span in the lecture video: ``start`` and ``end`` in seconds from its beginning."""

    name: str
    title: str
    caption: str
    start: float
    end: float


def chapters_of(names: Sequence[str], titles: Sequence[str], captions: Sequence[str], durations: Sequence[float | Fraction]) -> tuple[Chapter, ...]:
    """One chapter per part, in order, each starting where the one before ends.

    ``durations`` are in seconds; exact ones (:class:`~fractions.Fraction`) are summed exactly
    and rounded to float only in the chapters. Titles and captions are put on one line (runs
    of white space become one space). Raises ``ValueError`` if the sequences differ in length.
    """
    chapters, start = [], Fraction(0)
    for name, title, caption, duration in zip(names, titles, captions, durations, strict=True):
        end = start + Fraction(duration)
        chapters.append(Chapter(name, one_line(title), one_line(caption), float(start), float(end)))
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


def captions_srt(chapters: Sequence[Chapter]) -> str:
    """SubRip captions: one cue per chapter from its start to its end, its caption wrapped to
    lines of at most :data:`CAPTION_LINE_LENGTH` characters. Times are in milliseconds."""
    cues = [
        srt.Subtitle(
            index=number,
            start=datetime.timedelta(seconds=chapter.start),
            end=datetime.timedelta(seconds=chapter.end),
            content="\n".join(textwrap.wrap(chapter.caption, CAPTION_LINE_LENGTH, break_on_hyphens=False)),
        )
        for number, chapter in enumerate(chapters, start=1)
    ]
    return srt.compose(cues, reindex=False)


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
