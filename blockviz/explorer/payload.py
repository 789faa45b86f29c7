"""The record as the explorer page reads it: a JSON object, numbers as short text.

Float32 records store each number as the shortest text that reads back as the same float32
(``0.1``, not ``0.10000000149011612``); the page turns it back into that float32 exactly
(``Math.fround``), so a number formatted on the page is the number formatted in Python.
Float64 records store the shortest float64 text. −∞ (a blocked cell) is ``null``.
"""

from __future__ import annotations

import json

import numpy as np

from blockviz.record_fields import FIELDS, PARAMETER_SCALE
from blockviz.style import BLOCKED_WEIGHT_LABEL, DARK, LIGHT, MINUS, hex_color, signed_color, text_color_on, weight_color
from blockviz.explorer.steps import STEPS
from blockviz.tokens import display_token

DECIMALS = 2
"""Decimals of every number on the page: the figures' and scenes' format (``format_number``)."""
COLOUR_STOPS = 65
"""Samples of each colour map passed to the page; it colours a cell with the nearest one."""
SKIPPED_PARAMS = ("W_pos",)
"""Parameters the page does not need (the record's ``pos_embed`` holds the rows it used)."""


def payload(rec, token: int, head: int, step: str, theme: str) -> dict:
    """Everything the page shows, JSON-ready: tokens, config, tensors, style and initial view."""
    tensors = {name: _tensor(rec.tensors[name], rec.config.dtype) for name in (spec.name for spec in FIELDS)}
    params = {name: _tensor(value, rec.config.dtype) for name, value in rec.params.items() if name not in SKIPPED_PARAMS}
    return {
        "format": 1,
        "sentence": display_token(rec.sentence),
        "tokens": [display_token(token_text) for token_text in rec.tokens],
        "config": {**rec.config.to_dict(), "d_head": rec.config.d_head, "activation_name": rec.config.activation_name},
        "steps": [{"name": s.name, "title": s.title, "formula": s.formula} for s in STEPS],
        "fields": {spec.name: {"what": spec.what, "shape": list(spec.shape), "scale": spec.scale} for spec in FIELDS},
        "families": families(rec),
        "tensors": tensors,
        "params": params,
        "style": style(),
        "initial": {"token": token, "head": head, "step": step, "theme": theme},
    }


WEIGHTS_FAMILY = "weights"
"""The family coloured on the fixed 0–1 weights map (every other family: the signed map on
``[-limit, limit]``)."""


def families(rec) -> dict:
    """The half-width of every colour-scale family of ``rec`` (:meth:`BlockRecord.scale_limit`,
    the scale the figures and scenes use), by family name; the parameters' family is
    :data:`~blockviz.record_fields.PARAMETER_SCALE`. The page colours every number, the ones it
    derives too (a product, a term), on the scale of the family it belongs to."""
    limits = {}
    for spec in FIELDS:
        limits.setdefault(spec.scale, rec.scale_limit(spec.name))
    limits[PARAMETER_SCALE] = rec.scale_limit(PARAMETER_SCALE)
    return limits


def style() -> dict:
    """The style module's colours and number format, for the page (it restates none of them)."""
    stops = np.linspace(0.0, 1.0, COLOUR_STOPS)
    signed = [hex_color(signed_color(2 * s - 1, 1.0)) for s in stops]
    weights = [hex_color(weight_color(s)) for s in stops]
    themes = {}
    for theme in (LIGHT, DARK):
        themes[theme.name] = {key: getattr(theme, key) for key in ("background", "text", "muted_text", "grid", "blocked", "blocked_hatch")}
        themes[theme.name]["blocked_text"] = text_color_on(theme.blocked)
        themes[theme.name]["roles"] = dict(theme.roles)  # each theme's own: 4.5:1 on its page
    return {
        "themes": themes,
        "weights_family": WEIGHTS_FAMILY,
        "parameter_family": PARAMETER_SCALE,
        "signed": [[colour, text_color_on(colour)] for colour in signed],
        "weights": [[colour, text_color_on(colour)] for colour in weights],
        "decimals": DECIMALS,
        "minus": MINUS,
        "blocked_weight_label": BLOCKED_WEIGHT_LABEL,
    }


def _tensor(tensor, dtype: str) -> dict:
    array = tensor.detach().cpu().numpy()
    flat = array.astype(np.float32 if dtype == "float32" else np.float64).reshape(-1)
    # numpy writes each float as its shortest round-trip text; float() of that text keeps it short.
    values = [None if text == "-inf" else float(text) for text in flat.astype(str)]
    return {"shape": list(array.shape), "data": values}


def script_json(data: dict) -> str:
    """``data`` as JSON that can stand inside ``<script type="application/json">``: ASCII only,
    and ``<``, ``>``, ``&`` (and with them ``</script>`` and ``<!--``) written as ``\\u`` escapes,
    so no text in it can end the block or be read as markup.

    >>> script_json({"token": "</script><b>&"})
    '{"token":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

