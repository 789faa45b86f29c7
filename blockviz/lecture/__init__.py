"""One lecture video from scene videos already rendered, with chapters and captions beside it.

* :mod:`blockviz.lecture.join` — reads each part's timestamps (PyAV) and joins the parts by
  copying their packets (no encoding again), writing every file atomically;
* :mod:`blockviz.lecture.chapters` — the chapters and captions as text, pure functions of the
  parts' names, titles, captions and durations.

Beside ``lecture.mp4`` go:

* ``lecture.chapters.txt`` — ``MM:SS Title`` lines, as YouTube reads chapters from a description
  (a scene under 10 s shares a line with its neighbour, as YouTube requires);
* ``lecture.chapters.json`` — ``{"video", "duration", "chapters": [{name, title, caption, start,
  end}]}``, times in seconds;
* ``lecture.srt`` — SubRip captions: one cue per caption shown on screen, timed with it (at most 2
  lines of at most 42 characters, placed at the top); a part that shows none (the title card) gets
  its one-sentence caption.

The chapters are also written into the MP4 itself, so players that show chapters (VLC, mpv) list
them. Which parts make a lecture, and when it is up to date, is planned by
:func:`blockviz.render.plan.plan_lecture`.
"""

from __future__ import annotations

import importlib

__all__ = [
    "LecturePart",
    "Lecture",
    "VideoInfo",
    "write_lecture",
    "probe_video",
    "Chapter",
    "chapters_of",
    "chapters_text",
    "chapters_json",
    "captions_srt",
    "timestamp",
    "sidecar_paths",
]

_LAZY = {
    **dict.fromkeys(["LecturePart", "Lecture", "VideoInfo", "write_lecture", "probe_video"], "blockviz.lecture.join"),
    **dict.fromkeys(
        ["Chapter", "chapters_of", "chapters_text", "chapters_json", "captions_srt", "timestamp", "sidecar_paths"],
        "blockviz.lecture.chapters",
    ),
}
"""Names imported on first use, so that planning a lecture (its file names) does not import PyAV."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'blockviz.lecture' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
