"""The Content-Security-Policy of every page blockviz writes: the explorer, the slide deck, the
course index.

One policy, so the pages cannot drift apart: nothing from a network, no plugins, no forms, no
base URL; inline script and style run only by their hash (:func:`sha256_source`), inline style
attributes only by theirs; files beside the page (``'self'``) only of the kinds a page names —
the deck's reveal.js, its clips, fonts and the speaker view's frames. Pages put it in a
``<meta http-equiv>`` (:func:`policy_meta`), so it holds from ``file://`` too.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable

FILE_KINDS = ("script", "style", "media", "font", "frame")
"""Kinds of file a page may load from beside itself (``'self'``), each its own directive."""


def sha256_source(text: str) -> str:
    """The CSP source that allows exactly ``text`` (an inline script, style or style attribute).

    >>> sha256_source("")
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    """
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(
    scripts: Iterable[str] = (),
    styles: Iterable[str] = (),
    style_attributes: Iterable[str] = (),
    files: Iterable[str] = (),
) -> str:
    """The policy of a page whose inline ``scripts`` and ``styles`` (their exact texts), inline
    ``style="…"`` attributes and kinds of ``files`` beside it (of :data:`FILE_KINDS`) may run
    or load; everything else is refused.

    >>> content_security_policy(files=["media"])
    "default-src 'none'; img-src data:; media-src 'self'; base-uri 'none'; form-action 'none'"

    Raises
    ------
    ValueError
        For a kind of file not in :data:`FILE_KINDS`.
    """
    files = set(files)
    unknown = files - set(FILE_KINDS)
    if unknown:
        raise ValueError(f"unknown kind of file {sorted(unknown)[0]!r}: choose from {', '.join(FILE_KINDS)}")
    style_attributes = list(dict.fromkeys(style_attributes))
    allowed = {
        "script": [sha256_source(text) for text in scripts],
        "style": ["'unsafe-hashes'"] * bool(style_attributes)
        + [sha256_source(text) for text in [*styles, *style_attributes]],
        "media": [],
        "font": [],
        "frame": [],
    }
    directives = ["default-src 'none'"]
    for kind, sources in allowed.items():
        sources = ["'self'"] * (kind in files) + sources
        if sources:
            directives.append(f"{kind}-src {' '.join(sources)}")
        if kind == "style":
            directives.append("img-src data:")  # the explorer's drawings; nothing else loads images
    return "; ".join(directives + ["base-uri 'none'", "form-action 'none'"])


def policy_meta(policy: str) -> str:
    """The ``<meta>`` element that puts ``policy`` in force on its page."""
    return f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy, quote=False)}">'
