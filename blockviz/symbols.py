"""The typeset name of every record field and parameter a scene or figure labels: one mapping, mathtext.

Scenes and figures label a grid by what it *is* in the block's equations, not by the record's code name:
the block's input is :math:`x`, attention's output :math:`\\mathrm{attn}(\\mathrm{LN}_1(x))`, LayerNorm's
scale :math:`\\gamma`. The names follow the pre-norm block as nanoGPT writes it (``x = x +
attn(ln_1(x))``, then ``x = x + mlp(ln_2(x))``), with one letter per point of the residual stream:

* pre-norm (GPT-2, Llama): :math:`x` → :math:`h = x + \\mathrm{attn}(\\mathrm{LN}_1(x))` →
  :math:`y = h + \\mathrm{FFN}(\\mathrm{LN}_2(h))`: each sub-layer's output is named by what it
  reads, so a label matches the formula it sits under;
* post-norm (BERT; Vaswani et al. 2017, §3.1): :math:`x + \\mathrm{attn}(x)`, normalised into
  :math:`h`, then :math:`h + \\mathrm{FFN}(h)`, normalised into the layer's output :math:`y`.

:func:`symbol` gives the mathtext of a field or parameter; :data:`FIELD_SYMBOLS`,
:data:`POST_NORM_SYMBOLS` and :func:`parameter_symbol` are the tables. A field without an entry
has no on-screen name: asking for it raises ``KeyError`` (a scene must not fall back to code).

It imports nothing of blockviz (nor Manim): the scenes (:mod:`blockviz.scenes.symbols`) and the
matplotlib figures (:mod:`blockviz.figures`) both read it.
"""

from __future__ import annotations

import re

FIELD_SYMBOLS = {
    "resid_pre": r"$x$",
    "ln1": r"$\mathrm{LN}_1(x)$",
    "query": r"$q$",
    "key": r"$k$",
    "value": r"$v$",
    "attn_out": r"$\mathrm{attn}(\mathrm{LN}_1(x))$",
    "resid_mid": r"$h$",
    "ln2": r"$\mathrm{LN}_2(h)$",
    "ffn_pre": r"$u$",
    "ffn_gate": r"$g$",
    "ffn_up": r"$u$",
    "ffn_out": r"$\mathrm{FFN}(\mathrm{LN}_2(h))$",
    "resid_post": r"$y$",
    "ln_f": r"$\mathrm{LN}_f(y)$",
}
"""Mathtext of each field a scene labels, in a pre-norm block (see the module docstring)."""

POST_NORM_SYMBOLS = {
    "attn_out": r"$\mathrm{attn}(x)$",
    "ffn_out": r"$\mathrm{FFN}(h)$",
    "resid_mid": r"$x + \mathrm{attn}(x)$",
    "resid_mid_norm": r"$h$",
    "resid_post": r"$h + \mathrm{FFN}(h)$",
    "resid_post_norm": r"$y$",
}
"""Where a post-norm block's names differ from :data:`FIELD_SYMBOLS`."""

ACTIVATED = {"ffn_post": "u", "ffn_gate_act": "g"}
"""Fields that are an activation of another: ``ffn_post = act(u)``, ``ffn_gate_act = act(g)``."""

_NORM_PARAMETERS = {"weight": r"\gamma", "bias": r"\beta"}


def symbol(field: str, rec=None) -> str:
    """The mathtext naming record field ``field`` (``"resid_pre"`` → ``"$x$"``) or parameter
    (``"ln1.weight"`` → ``"$\\gamma$"``, ``"attn.W_V"`` → ``"$W_V$"``) in ``rec``'s block.

    ``rec`` (a :class:`~blockviz.block_record.BlockRecord`) chooses the post-norm names and the
    activation's name; without it, a pre-norm block with a GELU. Raises ``KeyError`` for a field
    with no typeset name."""
    if "." in field:
        return parameter_symbol(field)
    architecture = getattr(rec, "architecture", None)
    activation = rec.config.activation_name if rec is not None else "GELU"
    if field in ACTIVATED:
        gated = architecture is not None and architecture.gated
        inner = ACTIVATED[field]
        if field == "ffn_post" and gated:
            return rf"$\mathrm{{{activation}}}(g) \odot u$"
        return rf"$\mathrm{{{activation}}}({inner})$"
    if architecture is not None and not architecture.pre_norm and field in POST_NORM_SYMBOLS:
        return POST_NORM_SYMBOLS[field]
    return FIELD_SYMBOLS[field]


def parameter_symbol(name: str) -> str:
    """The mathtext of parameter ``name`` as :mod:`blockviz.params` names it: ``ln1.weight`` →
    γ, ``ln2.bias`` → β, ``attn.W_Q`` → :math:`W_Q`, ``ffn.b_in`` → :math:`b_\\mathrm{in}`."""
    module, _, kind = name.rpartition(".")
    if module.startswith("ln") and kind in _NORM_PARAMETERS:
        return f"${_NORM_PARAMETERS[kind]}$"
    match = re.fullmatch(r"([Wb])_(\w+)", kind)
    if match is None:
        raise KeyError(name)
    letter, index = match.groups()
    return f"${letter}_{script(index)}$"


def script(index: str) -> str:
    """A sub- or superscript as mathtext: a letter or number as is (``Q``, ``10``), a word upright
    (``in`` → ``\\mathrm{in}``: a name, not a product of variables)."""
    if len(index) == 1 or index.isdigit():
        return index if len(index) == 1 else f"{{{index}}}"
    return rf"{{\mathrm{{{index}}}}}"


def bare(typeset: str) -> str:
    """A typeset name without its dollars, to go inside a longer formula or a caption. Raises
    ``ValueError`` for text that is not one ``$…$`` formula.

    >>> bare("$h$"), bare(symbol("ln1"))
    ('h', '\\\\mathrm{LN}_1(x)')
    """
    if not (len(typeset) >= 2 and typeset[0] == typeset[-1] == "$" and "$" not in typeset[1:-1]):
        raise ValueError(f"{typeset!r} is not one $…$ formula")
    return typeset[1:-1]


def indexed(letter: str, index: int | str) -> str:
    """``letter`` with subscript ``index`` as mathtext: ``indexed("q", 10)`` → ``"$q_{10}$"``."""
    return f"${letter}_{script(str(index))}$"


__all__ = ["symbol", "parameter_symbol", "bare", "indexed", "script", "FIELD_SYMBOLS", "POST_NORM_SYMBOLS"]
