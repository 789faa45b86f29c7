"""Assembling the explorer: one self-contained HTML page (script, style and data inline).

The page's code is package data beside this module (``explorer.html``, ``.css``, ``.js``, and
``forward.js``: the block's arithmetic and the toy model's whole forward pass, put before
``explorer.js`` in the page's one script; vanilla, no build step). Its Content-Security-Policy
(:mod:`blockviz.page_policy`) allows exactly its own inline script and style (by hash) and forbids
every network request; the record goes in as inert JSON.
"""

from __future__ import annotations

import html
import re
from importlib import resources

from blockviz.explorer.payload import payload, script_json
from blockviz.explorer.summary import summary_line
from blockviz.page_policy import content_security_policy
from blockviz.tokens import display_token


def _asset(name: str) -> str:
    return resources.files("blockviz.explorer").joinpath(name).read_text(encoding="utf-8")


def compact_script(text: str) -> str:
    r"""``text`` (the page's JavaScript) without its indentation, blank lines and comment lines:
    the comments stay in the package's files; the page, read by a browser, is ~16 % smaller.
    Safe for this code, which has no template literal (a line starting with ``//`` or ``/*`` then
    starts a comment, never a string's or a regular expression's text).

    >>> compact_script("  /* a\n     b */\n  const x = 1; // one\n\n  // gone\n  f(x);\n")
    'const x = 1; // one\nf(x);\n'
    """
    assert "`" not in text, "a template literal: compact_script would change its text"
    out, in_comment = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if in_comment:
            in_comment = not stripped.endswith("*/")
            continue
        if stripped.startswith("/*") and "*/" not in stripped[2:-2]:
            in_comment = not stripped.endswith("*/")
            continue
        if stripped and not stripped.startswith("//"):
            out.append(stripped)
    return "\n".join(out) + "\n"


def explorer_page(
    rec,
    token: int,
    head: int,
    step: str,
    theme: str,
    attentions=None,
    contrast=None,
    contrast_sentence=None,
    block: int | None = None,
) -> str:
    """The page for record ``rec``, opening on ``token`` (position), ``head``, ``step``, ``theme``
    and, for a record of several blocks, ``block`` (already checked: see
    :class:`blockviz.explorer.Explorer`); ``attentions``, ``contrast`` and ``contrast_sentence``
    for the overview (:func:`blockviz.explorer.overview.overview_payload`)."""
    script = compact_script(_asset("forward.js") + "\n" + _asset("explorer.js"))  # one script: one hash in the policy
    style = _asset("explorer.css")
    template = _asset("explorer.html")
    parts = {
        "{{csp}}": html.escape(content_security_policy([script], [style]), quote=False),  # it holds no "
        "{{title}}": html.escape(f"blockviz explorer — {display_token(rec.sentence)}", quote=True),
        "{{summary}}": html.escape(
            summary_line(rec.block(len(rec.blocks) - 1 if block is None else block)), quote=True
        ),
        "{{theme}}": html.escape(theme, quote=True),
        "{{style}}": style,
        "{{data}}": script_json(payload(rec, token, head, step, theme, attentions, contrast, contrast_sentence, block)),
        "{{script}}": script,
    }
    # Split the template once, so text put in (a sentence holding "{{script}}") is never rescanned.
    pieces = re.split(r"(\{\{[a-z]+\}\})", template)
    return "".join(parts.get(piece, piece) for piece in pieces)
