"""The record as the explorer page reads it: a JSON object, numbers as short text.

Float32 records store each number as the shortest text that reads back as the same float32
(``0.1``, not ``0.10000000149011612``); the page turns it back into that float32 exactly
(``Math.fround``), so a number formatted on the page is the number formatted in Python.
Float64 records store the shortest float64 text. −∞ (a blocked cell) is ``null``.

A large record (a trained model's layer: d_model 384–576, d_ff 1536) stores its numbers as
their little-endian float32 (or float64) bytes instead, regrouped by place, deflated and base85
(:func:`~blockviz.explorer.packing.packed`) — exact and under half the size of the text — and
shows wide rows elided: the first and last columns and the largest-magnitude ones
(:func:`shown_columns`). Its weight matrices are too large for a page (MiniLM's layer holds
1.8 million parameters): the page carries only the weight columns behind the columns it shows,
and recomputes those (:data:`PARAMETER_BUDGET`).
"""

from __future__ import annotations

import json

import numpy as np
import torch

from blockviz.explorer.derived import derivation
from blockviz.explorer.overview import overview_payload
from blockviz.explorer.packing import packed
from blockviz.explorer.steps import steps_for
from blockviz.explorer.summary import summary_details
from blockviz.key_sources import SOURCE_FIELDS
from blockviz.record_fields import (
    NORM_PARAMETER_SCALE,
    OWN_BAR_NAMES,
    PARAMETER_SCALE,
    PREDICTION_FIELDS,
    SCALE_FAMILIES,
    STACK_FIELDS,
    STACK_PARAMETERS,
    bar_name,
    parameter_scale,
)
from blockviz.scale_limits import ZERO_LIMIT
from blockviz.style import (
    BLOCKED_WEIGHT_LABEL,
    DARK,
    LIGHT,
    MINUS,
    WEIGHTS_SCALE_NAME,
    hex_color,
    signed_color,
    text_color_on,
    weight_color,
)
from blockviz.tensorfile import BLOCK_PREFIX
from blockviz.tokens import display_token

DECIMALS = 2
"""Decimals of every number on the page: the figures' and scenes' format (``format_number``)."""
COLOUR_STOPS = 65
"""Samples of each colour map passed to the page; it colours a cell with the nearest one."""
SKIPPED_PARAMS = ("W_pos", "W_E")
"""Parameters the page does not need: the record's ``pos_embed`` and ``embed`` hold the rows of
the position and embedding tables it used (a trained toy model's ``W_E`` is n_vocab × d_model; its
unembedding ``W_U`` is carried, the logits step recomputes from it)."""
TEXT_LIMIT = 50_000
"""Records with more numbers than this are stored as packed bytes rather than text."""
PARAMETER_BUDGET = 200_000
"""Parameters a page carries whole; above it (a trained model's layer) only the weight columns
behind the shown columns are carried."""
ELIDE_ABOVE = 24
"""Rows with more columns than this are shown elided (the page has a switch to show them all)."""
FIRST, LAST, LARGEST = 3, 2, 7
"""An elided row shows its first FIRST and last LAST columns and the LARGEST columns of largest
magnitude (over every token of the sentence, so all tokens share the columns)."""
HEAD_FIRST, HEAD_LAST, HEAD_LARGEST = 2, 1, 4
"""The same for a head's q, k and v rows (d_head 32–64): fewer, since the page carries the W_Q,
W_K and W_V columns behind them for every head (at 12 heads × 3 matrices × d_model rows, each
column shown costs 18 kB of a MiniLM page)."""
FEATURE_AXES = ("d_model", "d_head", "d_ff")


def payload(
    rec,
    token: int,
    head: int,
    step: str,
    theme: str,
    attentions=None,
    contrast=None,
    contrast_sentence=None,
    block: int | None = None,
) -> dict:
    """Everything the page shows, JSON-ready: tokens, config, tensors, style, initial view and the
    overview (every layer's weights with ``attentions``, a contrast sentence's with ``contrast``:
    :func:`blockviz.explorer.overview.overview_payload`). Each field names the step that shows it
    (its declaration's ``explorer_step``); a step that does not draw one of its fields itself shows
    it as recorded, in a plain table.

    For a record of several blocks the page shows block ``block`` (default: the last); a
    workbench stack (:func:`is_workbench`) carries every block's parameters and no tensor: it
    computes every block itself (``forward.js``), equal to the record (tests/test_explorer_stack.py)."""
    stack = rec
    block = len(stack.blocks) - 1 if block is None else block
    rec = stack.block(block)
    bench = is_workbench(stack)
    live_only = bench and len(stack.blocks) > 1  # a stack's page draws every block from its own forward pass
    fields = [
        spec for spec in rec.fields if not (live_only and spec.name in SOURCE_FIELDS)
    ]  # scenes' split, not computed here
    names = [spec.name for spec in fields]
    big = (
        bench or sum(rec.tensors[name].numel() for name in names) > TEXT_LIMIT
    )  # a workbench page: ≤ 250 KB at 25 tokens
    columns = shown_columns(rec)
    tensors = {} if live_only else _tensors(rec, names, big)
    params, partial = (
        (stack_params(stack, big), False) if live_only else carried_params(rec, columns, big, keep_all=bench)
    )
    model = rec.source.is_model
    return {
        "format": 2,
        "sentence": display_token(rec.sentence),
        "tokens": [display_token(token_text) for token_text in rec.tokens],
        "special": list(rec.special),
        "config": {
            **rec.config.to_dict(),
            "d_head": rec.config.d_head,
            "activation_name": rec.config.activation_name,
            "kv_heads": rec.config.kv_heads,
        },
        "source": {**rec.source.to_dict(), "describe": rec.source.describe(), "is_model": model},
        "steps": [
            {"name": s.name, "title": s.title, "formula": s.formula, "kind": s.kind, "args": s.args}
            for s in steps_for(rec.config, rec.source)
        ],
        "fields": {
            spec.name: {"what": spec.what, "shape": list(spec.shape), "scale": spec.scale, "step": spec.explorer_step}
            for spec in fields
        },
        "families": families(rec),
        "clipped": clipped_families(rec),
        "scale_names": scale_names(rec),
        "tensors": tensors,
        "params": params,
        "param_families": {name: parameter_scale(name) for name in rec.params},
        "partial_params": partial,
        "columns": columns,
        "elide_above": ELIDE_ABOVE,
        "style": style(),
        "overview": overview_payload(rec, attentions, contrast, contrast_sentence),
        "initial": {"token": token, "head": head, "step": step, "theme": theme},
        "workbench": _workbench(stack, block) if bench else None,
    }


def _workbench(stack, block: int) -> dict:
    """What a workbench page needs beyond the record: its position limit, the unknown word, the
    header's words on the block (:func:`~blockviz.explorer.summary.summary_details`), and for
    a stack its blocks, the one shown, and the fields the record of a stack holds once."""
    return {
        "max_tokens": stack.config.max_tokens,
        "unknown": stack.source.vocabulary[0],
        "summary_details": summary_details(stack.block(block)),  # the header after the sentence's words
        "n_blocks": len(stack.blocks),
        "block": block,
        "stack_fields": list(STACK_FIELDS),
        "prediction_fields": list(PREDICTION_FIELDS),
    }


def stack_params(stack, big: bool) -> dict:
    """Every parameter of a stack of toy blocks under its model file's name: the ones the stack has
    once (``W_E``, ``W_pos``, ``ln_f.*``, ``W_U``), and block K's own as ``blocks.K.attn.W_Q`` …
    (:func:`blockviz.toy.model.file_shapes`)."""
    dtype = stack.config.dtype
    out = {
        name: _tensor(value, dtype, big) for name, value in stack.blocks[-1].params.items() if name in STACK_PARAMETERS
    }
    for index, view in enumerate(stack.blocks):
        for name, value in view.params.items():
            if name not in STACK_PARAMETERS:
                out[f"{BLOCK_PREFIX}{index}.{name}"] = _tensor(value, dtype, big)
    return out


def is_workbench(rec) -> bool:
    """Whether the page of ``rec`` is a workbench: it carries every parameter of the model and runs
    its whole forward pass itself (``forward.js``), for any sentence typed and any weight edited.
    Only blockviz's trained toy models (their vocabulary, embedding table and learned positions in
    the record: a few thousand parameters), of one block or several (the copy model). A real model's layer stays a static page (its weights
    are hundreds of MB); so does the seeded block (its embedding of a word is a BLAKE2 hash seeding
    torch's normal generator, which the page cannot reproduce without torch's Mersenne Twister and
    Box–Muller).

    >>> from blockviz import record
    >>> is_workbench(record("the cat sat")), is_workbench(record("the cat sat", "seeded"))
    (True, False)
    """
    rec = rec.blocks[0]  # a stack: its first block reads the embeddings, each next the block before's output
    a = rec.architecture
    blockviz_block = a.pre_norm and a.has_centring and a.added_positions and not a.gated and not a.grouped and a.bias
    return (
        bool(rec.source.vocabulary)
        and not rec.source.is_model
        and a.unembedding
        and {"W_E", "W_pos", "W_U"} <= set(rec.params)
        and blockviz_block
        and _reads_the_embeddings(rec)
    )


def _reads_the_embeddings(rec) -> bool:
    """Whether the block reads the embeddings themselves (a one-block model, or block 0 of a
    stack): a later block's input is the block before's output, which the page does not compute."""
    return all(name in rec.tensors for name in ("embed", "pos_embed", "resid_pre")) and bool(
        (rec.tensors["embed"] + rec.tensors["pos_embed"]).equal(rec.tensors["resid_pre"])
    )


def _tensors(rec, names: list[str], big: bool) -> dict:
    """The record's tensors for the page; in a large page a tensor equal to one before it is
    written once, ``{"shape", "same": that one's name}`` (a model's ``prev_output`` is its
    ``resid_pre``; an encoder's masked scores are its scaled scores), and one the page derives
    exactly from those before it is not carried: ``{"shape", "derived": {"op", "of"}}``
    (:mod:`blockviz.explorer.derived`)."""
    dtype = rec.config.dtype
    out: dict = {}
    values: dict[str, np.ndarray] = {}
    for name in names:
        tensor = rec.tensors[name]
        if not big:
            out[name] = _tensor(tensor, dtype)
            continue
        value = _values(tensor, dtype)
        twin = next(
            (
                earlier
                for earlier in values
                if values[earlier].shape == value.shape and torch.equal(rec.tensors[earlier], tensor)
            ),
            None,
        )
        derived = None if twin else derivation(name, value, values, dtype, rec.config.d_head)
        if twin:
            out[name] = {"shape": list(tensor.shape), "same": twin}
        elif derived:
            out[name] = {"shape": list(tensor.shape), "derived": derived}
        else:
            out[name] = _tensor(tensor, dtype, big)
        values[name] = value
    return out


def _values(tensor, dtype: str) -> np.ndarray:
    """``tensor``'s numbers as the page holds them: float32 or float64, −∞ included."""
    return tensor.detach().cpu().numpy().astype(np.float32 if dtype == "float32" else np.float64)


def shown_columns(rec) -> dict:
    """The columns an elided row shows, by field: ``{field: [columns]}`` for a ``(n, width)``
    field, ``{field: [[columns of head 0], …]}`` for a per-head one; only fields wider than
    :data:`ELIDE_ABOVE`. The first :data:`FIRST`, last :data:`LAST` and the :data:`LARGEST`
    of largest magnitude over every token; q, k, v (rotated too) of a head share one set, and so
    do the FFN's hidden fields, so that the rows of one table line up.

    >>> from blockviz import record
    >>> from blockviz.block_config import BlockConfig
    >>> shown = shown_columns(record("the cat sat", config=BlockConfig(d_model=32, n_heads=1)))
    >>> len(shown["resid_pre"]) <= 3 + 2 + 7, shown["resid_pre"][:3], shown["resid_pre"][-2:]
    (True, [0, 1, 2], [30, 31])
    """
    groups: dict[str, list[str]] = {}
    for spec in rec.fields:
        if spec.shape[-1] not in FEATURE_AXES:
            continue
        if spec.shape[-1] == "d_head" and spec.scale == "qkv":
            groups.setdefault("qkv", []).append(spec.name)
        elif spec.shape[-1] == "d_ff":
            groups.setdefault("ffn", []).append(spec.name)
        else:
            groups[spec.name] = [spec.name]
    columns: dict = {}
    for members in groups.values():
        arrays = [rec.tensors[name].detach().double().abs().numpy() for name in members]
        width = arrays[0].shape[-1]
        if width <= ELIDE_ABOVE:
            continue
        if arrays[0].ndim == 3:  # per head: the largest of that head's rows
            chosen = [
                _pick(np.max([a[h] for a in arrays], axis=(0, 1)), HEAD_FIRST, HEAD_LAST, HEAD_LARGEST)
                for h in range(arrays[0].shape[0])
            ]
        else:
            chosen = _pick(np.max([a for a in arrays], axis=(0, 1)))
        for name in members:
            columns[name] = chosen
    return columns


def _pick(
    magnitude: np.ndarray, first: int | None = None, last: int | None = None, most: int | None = None
) -> list[int]:
    first, last, most = (
        (FIRST if first is None else first),
        (LAST if last is None else last),
        (LARGEST if most is None else most),
    )
    width = len(magnitude)
    largest = [int(c) for c in np.argsort(-np.nan_to_num(magnitude, nan=0.0, posinf=0.0), kind="stable")[:most]]
    return sorted(set(range(first)) | set(range(width - last, width)) | set(largest))


WEIGHT_OUTPUTS = {
    "attn.W_Q": "query",
    "attn.W_K": "key",
    "attn.W_V": "value",
    "attn.W_O": "attn_out",
    "ffn.W_in": "ffn_pre",
    "ffn.W_gate": "ffn_gate",
    "ffn.W_up": "ffn_up",
    "ffn.W_out": "ffn_out",
}
"""Each weight matrix and the field its columns make."""


def carried_params(rec, columns: dict, big: bool, keep_all: bool = False) -> tuple[dict, bool]:
    """The parameters the page carries, and whether any is cut to the columns shown; with
    ``keep_all`` (a workbench, :func:`is_workbench`) every one, :data:`SKIPPED_PARAMS` too.

    Every parameter is carried whole while they add up to at most :data:`PARAMETER_BUDGET`
    numbers; past it each weight matrix keeps only the columns behind the shown columns of the
    field it makes (with grouped-query attention, W_K and W_V of a key/value head those of every
    query head it serves), as ``{"shape": full shape, "columns": [[columns of head 0], …],
    "parts": [the kept (rows, columns) matrix of head 0, …]}``.
    """
    kept = {name: value for name, value in rec.params.items() if keep_all or name not in SKIPPED_PARAMS}
    dtype = rec.config.dtype
    if sum(value.numel() for value in kept.values()) <= PARAMETER_BUDGET:
        return {name: _tensor(value, dtype, big) for name, value in kept.items()}, False
    out = {}
    for name, value in kept.items():
        target = WEIGHT_OUTPUTS.get(name)
        if target is None or target not in columns:
            out[name] = _tensor(value, dtype, big)
            continue
        chosen = columns[target]
        if value.ndim == 3:  # (heads, d_model, d_head): per query head, or per key/value head
            per_head = []
            for g in range(value.shape[0]):
                if value.shape[0] == rec.config.n_heads:
                    per_head.append(chosen[g])
                else:
                    served = [h for h in range(rec.config.n_heads) if rec.config.kv_head_of(h) == g]
                    per_head.append(sorted(set().union(*(chosen[h] for h in served))))
            parts = [value[g][:, cols] for g, cols in enumerate(per_head)]
        else:
            per_head, parts = [chosen], [value[:, chosen]]
        out[name] = {
            "shape": list(value.shape),
            "columns": per_head,
            "parts": [_tensor(part, dtype, big) for part in parts],
        }
    return out, True


WEIGHTS_FAMILY = "weights"
"""The family coloured on the fixed 0–1 weights map (every other family: the signed map on
``[-limit, limit]``)."""


def families(rec) -> dict:
    """The half-width of every colour-scale family of ``rec`` (:meth:`BlockRecord.scale_limit`,
    the scale the figures and scenes use), by family name; the parameters' families are
    :data:`~blockviz.record_fields.PARAMETER_SCALE` and, the norms' γ and β,
    :data:`~blockviz.record_fields.NORM_PARAMETER_SCALE`. The page colours every number, the ones
    it derives too (a product, a term), on the scale of the family it belongs to."""
    limits = {}
    for spec in rec.fields:
        if spec.scale not in limits:  # one scale per family: computed once
            limits[spec.scale] = rec.scale_limit(spec.name)
    for family in (PARAMETER_SCALE, NORM_PARAMETER_SCALE):
        limits[family] = rec.scale_limit(family)
    return limits


def scale_names(rec) -> dict:
    """What the page's legends call each colour scale, as the scenes' colour bars do
    (:func:`~blockviz.record_fields.bar_name`): ``families`` by family (``"residual"`` →
    ``"residual stream"``; the weights' ``"weights (√ scale)"``), and ``fields`` the fields of
    ``rec`` named by their own quantity on the weights' map
    (:data:`~blockviz.record_fields.OWN_BAR_NAMES`: ``"probs"`` → ``"probability (√ scale)"``)."""
    beta = "ln1.bias" in rec.params
    names = {family: bar_name(family, beta) for family in families(rec)}
    names[WEIGHTS_FAMILY] = f"{bar_name(WEIGHTS_FAMILY)} ({WEIGHTS_SCALE_NAME})"
    own = {
        spec.name: f"{OWN_BAR_NAMES[spec.name].bar} ({WEIGHTS_SCALE_NAME})"
        for spec in rec.fields
        if spec.name in OWN_BAR_NAMES
    }
    return {"families": names, "fields": own}


def clipped_families(rec) -> dict:
    """The largest |value| of each colour-scale family whose scale an outlier clips
    (:meth:`BlockRecord.scale_of`), by family name: the page marks the cells beyond the scale
    (drawn in its end colour) and says so in its legend. Empty for blockviz's seeded block."""
    names = {spec.scale: spec.name for spec in rec.fields}
    names[PARAMETER_SCALE] = PARAMETER_SCALE
    names[NORM_PARAMETER_SCALE] = NORM_PARAMETER_SCALE
    scales = {family: rec.scale_of(name) for family, name in names.items()}
    return {family: scale.largest for family, scale in scales.items() if scale.clipped}


def style() -> dict:
    """The style module's colours and number format, for the page (it restates none of them)."""
    stops = np.linspace(0.0, 1.0, COLOUR_STOPS)
    signed = [hex_color(signed_color(2 * s - 1, 1.0)) for s in stops]
    weights = [hex_color(weight_color(s)) for s in stops]
    themes = {}
    for theme in (LIGHT, DARK):
        themes[theme.name] = {
            key: getattr(theme, key) for key in ("background", "text", "muted_text", "grid", "blocked", "blocked_hatch")
        }
        themes[theme.name]["blocked_text"] = text_color_on(theme.blocked)
        themes[theme.name]["roles"] = dict(theme.roles)  # each theme's own: 4.5:1 on its page
    return {
        "themes": themes,
        "weights_family": WEIGHTS_FAMILY,
        "signed": [[colour, text_color_on(colour)] for colour in signed],
        "weights": [[colour, text_color_on(colour)] for colour in weights],
        "decimals": DECIMALS,
        "minus": MINUS,
        "blocked_weight_label": BLOCKED_WEIGHT_LABEL,
        "zero_limit": ZERO_LIMIT,
        "never_negative": sorted(name for name, family in SCALE_FAMILIES.items() if family.never_negative),
    }


def _tensor(tensor, dtype: str, big: bool = False) -> dict:
    array = tensor.detach().cpu().numpy()
    flat = np.ascontiguousarray(_values(tensor, dtype).reshape(-1))
    if big:  # exact, −∞ included, in little-endian bytes, packed
        return {
            "shape": list(array.shape),
            "size": flat.itemsize,
            "z": packed(flat.astype(flat.dtype.newbyteorder("<")).tobytes(), flat.itemsize),
        }
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
