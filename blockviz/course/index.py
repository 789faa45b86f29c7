"""The course's index page: ``<output>/index.html``, linking every output, lesson by lesson.

Plain HTML written with the standard library (every text through :func:`html.escape`), no
script, no network (the pages' Content-Security-Policy, :mod:`blockviz.page_policy`, allows its
own style only); links are relative, so the folder can be moved or served as it is.
"""

from __future__ import annotations

import html
import os
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path

from blockviz.course.jobs import CourseJob
from blockviz.course.schema import Course
from blockviz.course.stamps import stamped_outputs
from blockviz.course.work import FAILED, JobResult
from blockviz.ownership import output_file
from blockviz.page_policy import content_security_policy, policy_meta

INDEX = "index.html"
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.5}"
    "h2{border-bottom:1px solid #ccc}li{margin:.1em 0}.kind{color:#666}"
)


DECK_FILES = ("slides.html", "slides.pptx", "slides/*.json")
"""A slide deck's files a teacher opens (reveal.js, PowerPoint, manim-slides); its clips,
reveal.js's own files and its caches are there for these, not listed."""
BOOKKEEPING = ("*.key", "*.captions.json")
"""Files beside the outputs that only blockviz reads: a render's stamp, a scene's captions for the lecture."""


def linked_outputs(job: CourseJob, outputs: Sequence[Path]) -> list[Path]:
    """The ``outputs`` of ``job`` the index links: none in a hidden folder or of
    :data:`BOOKKEEPING`, and of a slide deck only its :data:`DECK_FILES`."""

    def linked(output: Path) -> bool:
        in_course = output.relative_to(job.root) if output.is_relative_to(job.root) else Path(output.name)
        if any(part.startswith(".") for part in in_course.parts) or any(output.match(name) for name in BOOKKEEPING):
            return False
        if job.kind != "slides":
            return True
        in_deck = output.relative_to(job.target)
        return any(in_deck.match(name) and len(in_deck.parts) == name.count("/") + 1 for name in DECK_FILES)

    return [output for output in outputs if linked(output)]


def write_index(course: Course, jobs: Sequence[CourseJob], results: Mapping[str, JobResult] | None = None) -> Path:
    """Write the index of ``course`` (every up-to-date job's outputs; a job not done is left
    out, a sentence's failures this run, ``results``, said once each) and return its path."""
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        policy_meta(content_security_policy(styles=[STYLE])),
        f"<title>{e(course.title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(course.title)}</h1>",
    ]
    for lesson in course.lessons:
        parts.append(f"<h2>{e(lesson.title)}</h2>")
        for sentence in lesson.sentences:
            links, errors = [], {}
            for job in jobs:
                if job.lesson != lesson.name or job.sentence != sentence:
                    continue
                result = (results or {}).get(job.id)
                if result is not None and result.status == FAILED:
                    errors[result.message] = None
                for output in linked_outputs(job, stamped_outputs(job)):
                    name = os.path.relpath(output, course.output)
                    href = urllib.parse.quote(Path(name).as_posix())
                    links.append(f'<li><span class="kind">{e(job.kind)}</span> <a href="{e(href)}">{e(href)}</a></li>')
            links += [f'<li><span class="kind">failed</span> {e(error)}</li>' for error in errors]
            listed = "".join(links) or "<li>nothing made yet</li>"
            parts.append(f"<h3>{e(sentence)}</h3><ul>{listed}</ul>")
    parts.append("</body></html>")
    path = course.output / INDEX
    with output_file(path) as partial:
        partial.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
