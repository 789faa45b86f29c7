"""What a record's block is, as the figures draw it: norm placement and kind, positions, FFN,
key/value heads — read from ``rec.config`` and ``rec.fields``, never guessed — and the
formulas, flow-diagram boxes and fields that follow from it.

Every figure draws every architecture with one function; :func:`is_general` only tells
blockviz's own block (whose few tokens keep their numbers in every attention cell, every head
shown) from the others (a trained model's layer: one head by default, colour alone where its
numbers would not fit).
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz.figures import formulas
from blockviz.symbols import bare, symbol


def is_general(rec) -> bool:
    """Whether ``rec`` is anything but blockviz's own block with its own weights."""
    return not rec.architecture.is_toy


def has(rec, *names: str) -> bool:
    """Whether the record holds every field ``names`` (``rec.fields``)."""
    held = {spec.name for spec in rec.fields}
    return all(name in held for name in names)


def norm_name(rec) -> str:
    return rec.architecture.norm_name


@dataclass(frozen=True)
class Norm:
    """One normalisation of the block: its field prefix (``ln1``), the row it normalises
    (``source``), the field it gives (``output``) and where it stands."""

    prefix: str
    source: str
    output: str
    where: str


def norms(rec) -> list[Norm]:
    """The block's two normalisations in data-flow order: pre-norm normalises each sublayer's
    input (ln1 of resid_pre, ln2 of resid_mid), post-norm each sum (ln1 of resid_mid gives
    resid_mid_norm, ln2 of resid_post gives resid_post_norm)."""
    if rec.architecture.post_norm:
        return [
            Norm("ln1", "resid_mid", "resid_mid_norm", "after attention's add, the FFN's input"),
            Norm("ln2", "resid_post", "resid_post_norm", "after the FFN's add: the block's output"),
        ]
    return [Norm("ln1", "resid_pre", "ln1", "before attention"), Norm("ln2", "resid_mid", "ln2", "before the FFN")]


def norm_fields(rec, norm: Norm) -> tuple[str, ...]:
    """The fields drawing ``norm`` step by step needs."""
    if not rec.architecture.has_centring:
        return (norm.source, f"{norm.prefix}_mean_sq", f"{norm.prefix}_norm", norm.output)
    return (
        norm.source,
        f"{norm.prefix}_mean",
        f"{norm.prefix}_centred",
        f"{norm.prefix}_var",
        f"{norm.prefix}_norm",
        norm.output,
    )


def attention_input(rec) -> str:
    """The field attention reads: ``ln1`` (pre-norm) or ``resid_pre`` (post-norm)."""
    return rec.architecture.attention_input


def ffn_input(rec) -> str:
    """The field the FFN reads: ``ln2`` (pre-norm) or ``resid_mid_norm`` (post-norm)."""
    return rec.architecture.ffn_input


def activation_name(rec) -> str:
    return "SiLU" if rec.config.activation == "silu" else rec.config.activation_name


def describe(rec) -> str:
    """A few words on the block: "post-norm LayerNorm encoder block (BERT), layer 3 of minilm"."""
    c = rec.config
    kind = "decoder" if c.causal else "encoder"
    family = (
        f" ({rec.source.family.upper() if rec.source.family in ('gpt2', 'bert') else rec.source.family.capitalize()})"
        if rec.source.is_model and rec.source.family
        else ""
    )
    where = f", layer {rec.source.layer} of {rec.source.model}" if rec.source.is_model else ""
    return f"one {c.norm_placement}-norm {norm_name(rec)} {kind} block{family}{where}"


def residual_formula(rec):
    """The block's two lines as mathtext, in the scenes' names (:mod:`blockviz.symbols`):
    pre-norm h = x + attn(LN₁(x)), y = h + FFN(LN₂(h)) (Xiong et al. 2020, "On Layer
    Normalization in the Transformer Architecture", Fig. 1b) or post-norm h = LN₁(x + attn(x)),
    y = LN₂(h + FFN(h)) (Vaswani et al. 2017, §3.1: LayerNorm(x + Sublayer(x)))."""
    if rec.architecture.post_norm:
        return (
            r"$h = \mathrm{LN}_1(x + \mathrm{attn}(x))$",
            r"$y = \mathrm{LN}_2(h + \mathrm{FFN}(h))$",
        )
    return (
        rf"$h = x + \mathrm{{attn}}({bare(symbol('ln1', rec))})$",
        rf"$y = h + \mathrm{{FFN}}({bare(symbol('ln2', rec))})$",
    )


def norm_formula(rec, bias: bool):
    """The norm's formula lines as mathtext: RMSNorm (Zhang & Sennrich 2019, eq. 4) or LayerNorm
    (Ba et al. 2016, eq. 4), without β when the block has no biases."""
    if not rec.architecture.has_centring:
        return (
            r"$\mathrm{RMSNorm}(x) = \gamma \odot \frac{x}{\sqrt{\mathrm{mean}(x^2) + \epsilon}}$",
            r"$\mathrm{mean}(x^2) = \frac{1}{d}\sum_k x_k^2$",
            "no mean is subtracted",
        )
    if bias:
        return formulas.LAYER_NORM
    return (
        r"$\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}$",
    ) + formulas.LAYER_NORM[1:]


def ffn_formula(rec):
    """The FFN's formula as mathtext on the row it reads (pre-norm LN₂(h), post-norm h; named as
    :func:`blockviz.symbols.symbol` names the fields): plain act(z W_in + b_in) W_out + b_out
    (Vaswani et al. 2017, eq. 2) or gated (act(z W_gate) ⊙ z W_up) W_out (Shazeer 2020, "GLU
    Variants Improve Transformer", eq. 6; SwiGLU when act is SiLU)."""
    act = r"\mathrm{" + activation_name(rec) + "}"
    z, out = bare(symbol(ffn_input(rec), rec)), bare(symbol("ffn_out", rec))
    bias = rec.architecture.bias
    if rec.architecture.gated:
        b = (r" + b_{gate}", r" + b_{up}", r" + b_{out}") if bias else ("", "", "")
        return rf"${out} = \left({act}({z}\, W_{{gate}}{b[0]}) \odot ({z}\, W_{{up}}{b[1]})\right) W_{{out}}{b[2]}$"
    b = (r" + b_{in}", r" + b_{out}") if bias else ("", "")
    return rf"${out} = {act}({z}\, W_{{in}}{b[0]})\, W_{{out}}{b[1]}$"


ROTARY_FORMULA = r"$q_{rot} = q \odot \cos\theta_i + \mathrm{rotate\_half}(q) \odot \sin\theta_i$"
"""Rotary positions (Su et al. 2021, RoFormer, eq. 34), in the half-split pairing of Llama's
``rotate_half`` (pairs k and k + d_head/2)."""


def qkv_formula(rec):
    """The q/k/v projections as mathtext (Vaswani et al. 2017, eq. of §3.2.2); with grouped-query
    attention (Ainslie et al. 2023) K and V are indexed by the key/value head g."""
    x = attention_input(rec)
    plus = (lambda kind: rf" + b^{kind}_h") if rec.architecture.bias else (lambda kind: "")
    kv = "g" if rec.architecture.grouped else "h"
    parts = [rf"$Q = XW^Q_h{plus('Q')}$", rf"$K = XW^K_{kv}{plus('K')}$", rf"$V = XW^V_{kv}{plus('V')}$"]
    parts.append(f"$X = {bare(symbol(x, rec))}$")
    return tuple(parts)


def flow_boxes(rec, theme):
    """The block-flow diagram's boxes ``(name, text, colour, kind)`` — kind ``stream`` (on the
    residual stream), ``branch`` (a sublayer beside it) or ``add`` (⊕) — in data-flow order, and
    the text beside each ⊕: pre-norm x → norm → attention → ⊕ → norm → FFN → ⊕; post-norm
    x → attention → ⊕ → norm → FFN → ⊕ → norm. Fields are named as in the scenes
    (:func:`blockviz.symbols.symbol`, mathtext mixed with words)."""
    c, n = rec.config, rec.n
    rows = f"{n} × {c.d_model}"
    norm = norm_name(rec)
    rotary = c.positional == "rotary"
    heads = [f"{c.n_heads} heads × width {c.d_head}"] + (
        [f"sharing {c.kv_heads} key/value heads"] if c.kv_heads != c.n_heads else []
    )
    mask = "causal mask" if c.causal else "no mask (bidirectional)"
    attention = "\n".join(
        ["multi-head attention"] + (["rotary q and k"] if rotary else []) + heads + [mask, f"{rows} \u2192 {rows}"]
    )
    act = activation_name(rec)
    if c.ffn == "gated":
        ffn = f"gated FFN\n{act}(x W_gate) \u2299 (x W_up)\n{rows} \u2192\ngate, up {n} × {c.d_ff}\n\u2192 {rows}"
    else:
        ffn = f"FFN ({act})\n{rows} \u2192 {n} × {c.d_ff}\n\u2192 {rows}"
    outputs = {"add1": f"{symbol('attn_out', rec)}\n{rows}", "add2": f"{symbol('ffn_out', rec)}\n{rows}"}
    x = f"{symbol('resid_pre', rec)} (residual stream)\n{rows}"
    if c.norm_placement == "post":
        boxes = [
            ("resid_pre", x, theme.residual, "stream"),
            ("attention", attention, theme.output, "branch"),
            ("add1", symbol("resid_mid", rec), theme.residual, "add"),
            ("ln1", f"{norm}\n\u2192 {symbol('resid_mid_norm', rec)}\n{rows}", theme.residual, "stream"),
            ("ffn", ffn, theme.ffn, "branch"),
            ("add2", symbol("resid_post", rec), theme.residual, "add"),
            ("ln2", f"{norm}\n{rows}", theme.residual, "stream"),
            ("resid_post_norm", f"{symbol('resid_post_norm', rec)} (output)\n{rows}", theme.residual, "stream"),
        ]
    else:
        boxes = [
            ("resid_pre", x, theme.residual, "stream"),
            ("ln1", f"{norm}\n{rows}", theme.residual, "branch"),
            ("attention", attention, theme.output, "branch"),
            ("add1", symbol("resid_mid", rec), theme.residual, "add"),
            ("ln2", f"{norm}\n{rows}", theme.residual, "branch"),
            ("ffn", ffn, theme.ffn, "branch"),
            ("add2", symbol("resid_post", rec), theme.residual, "add"),
            ("resid_post", f"{symbol('resid_post', rec)} (output)\n{rows}", theme.residual, "stream"),
        ]
    return boxes, outputs


def multi_head_formula(rec) -> str:
    if rec.architecture.bias:
        return formulas.MULTI_HEAD
    return r"$\mathrm{MultiHead}(X) = \mathrm{Concat}(z_1, \ldots, z_h)\, W^O$"


# -- what figures read on each architecture (blockviz.figures.registry names these) ----------


def norm_figure_reads(rec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields and parameters the layer-norm figure reads: each norm's statistics, steps and
    output (:func:`norm_fields`), and each norm's γ."""
    return (
        tuple(field for norm in norms(rec) for field in norm_fields(rec, norm)),
        tuple(f"{norm.prefix}.weight" for norm in norms(rec)),
    )


def ffn_figure_reads(rec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields the FFN figure reads: its input (:func:`ffn_input`), its hidden fields (gated:
    gate, activated gate, up; plain: pre-activation) and its output."""
    if rec.architecture.gated:
        return (ffn_input(rec), "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out"), ()
    return (ffn_input(rec), "ffn_pre", "ffn_post", "ffn_out"), ()


def residual_figure_reads(rec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields the residual-stream figure reads besides the stream's sums: a post-norm
    block's normalised sums."""
    return (("resid_mid_norm", "resid_post_norm") if rec.architecture.post_norm else ()), ()
