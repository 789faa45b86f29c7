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
from blockviz.page_policy import content_security_policy
from blockviz.tokens import display_token


def _asset(name: str) -> str:
    return resources.files("blockviz.explorer").joinpath(name).read_text(encoding="utf-8")


def summary_line(rec) -> str:
    """One line on the record, readable before (or without) any script: sentence, tokens, sizes;
    for trained weights (a model's layer, blockviz's trained toy model) what they are instead of the seed.

    >>> from blockviz import record
    >>> summary_line(record("the cat sat", "seeded"))[-33:]
    'FFN width 8, GELU, causal, seed 0'
    """
    c, a = rec.config, rec.architecture
    heads = f"{c.n_heads} head{'s' if c.n_heads != 1 else ''}"
    if a.grouped:
        heads += f" sharing {a.n_kv_heads} key/value heads"
    line = (
        f"blockviz explorer — “{display_token(rec.sentence)}”: {rec.n} token{'s' if rec.n != 1 else ''}, "
        f"width {c.d_model}, {heads}, FFN width {c.d_ff}, {c.activation_name}, {'causal' if a.causal else 'bidirectional'}"
    )
    if not a.is_toy:
        parts = [
            f"{a.norm_placement}-norm {a.norm_name}",
            "rotary positions" if a.rotary else "positions added",
            "gated FFN" if a.gated else "plain FFN",
        ] + ([] if a.bias else ["no biases"])
        line += ", " + ", ".join(parts)
    if rec.source.is_trained:
        return f"{line} — {rec.source.describe()}"
    return f"{line}, seed {c.seed}"


def explorer_page(
    rec, token: int, head: int, step: str, theme: str, attentions=None, contrast=None, contrast_sentence=None
) -> str:
    """The page for record ``rec``, opening on ``token`` (position), ``head``, ``step`` and ``theme``
    (already checked: see :class:`blockviz.explorer.Explorer`); ``attentions``, ``contrast`` and
    ``contrast_sentence`` for the overview (:func:`blockviz.explorer.overview.overview_payload`)."""
    script = _asset("forward.js") + "\n" + _asset("explorer.js")  # one script: one hash in the policy
    style = _asset("explorer.css")
    template = _asset("explorer.html")
    parts = {
        "{{csp}}": html.escape(content_security_policy([script], [style]), quote=False),  # it holds no "
        "{{title}}": html.escape(f"blockviz explorer — {display_token(rec.sentence)}", quote=True),
        "{{summary}}": html.escape(summary_line(rec), quote=True),
        "{{theme}}": html.escape(theme, quote=True),
        "{{style}}": style,
        "{{data}}": script_json(payload(rec, token, head, step, theme, attentions, contrast, contrast_sentence)),
        "{{script}}": script,
    }
    # Split the template once, so text put in (a sentence holding "{{script}}") is never rescanned.
    pieces = re.split(r"(\{\{[a-z]+\}\})", template)
    return "".join(parts.get(piece, piece) for piece in pieces)
