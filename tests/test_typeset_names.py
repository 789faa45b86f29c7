"""Typeset names on screen (issue 24): every symbol a scene shows is mathtext from one mapping
(:mod:`blockviz.scenes.symbols`), no text shows a record's code name (``resid_pre``,
``ln1.weight``, ``W_V``…), and every sub- and superscript is at least 11 px tall at 854 × 480
and 16 px at 1280 × 720, measured on the mobjects after every play of every scene — on the
seeded block, the trained toy model and a tiny GPT-2, BERT and Llama layer."""

from __future__ import annotations

import functools

import pytest
from manim import Text, tempconfig
from support import DRY, RECORDS, named_record, shows
from support_typeset import SMALLEST, UNICODE_SUBSCRIPTS, Reader, check, code_names_in, script_pixels

from blockviz.scenes.catalog import entries
from blockviz.scenes.look import MIN_FONT_SIZE
from blockviz.scenes.symbols import indexed, parameter_symbol, symbol
from blockviz.scenes.text import SCRIPT_MARGIN, baseline, formula, glyph_scales, script_sizes, typeset


# -- the mapping -----------------------------------------------------------------------------------
def test_fields_and_parameters_have_their_papers_symbols():
    assert symbol("resid_pre") == "$x$"
    assert symbol("attn_out") == r"$\mathrm{attn}(\mathrm{LN}_1(x))$"  # under h = x + attn(LN₁(x))
    assert symbol("ffn_out") == r"$\mathrm{FFN}(\mathrm{LN}_2(h))$"  # under y = h + FFN(LN₂(h))
    assert symbol("ln2") == r"$\mathrm{LN}_2(h)$"
    assert symbol("ffn_pre") == "$u$"
    assert symbol("ln1.weight") == symbol("ln2.weight") == r"$\gamma$"
    assert symbol("ln1.bias") == r"$\beta$"
    assert parameter_symbol("attn.W_V") == "$W_V$"
    assert parameter_symbol("attn.b_O") == "$b_O$"
    assert parameter_symbol("ffn.W_in") == r"$W_{\mathrm{in}}$"  # a word upright, not i·n
    assert parameter_symbol("W_U") == "$W_U$"
    assert indexed("q", 0) == "$q_0$" and indexed("q", 10) == "$q_{10}$"  # both digits in the subscript
    with pytest.raises(KeyError):
        symbol("scores")  # no name on screen: a scene must not fall back to the code name


def test_the_architecture_chooses_the_names():
    bert = named_record("default").counterpart(causal=False)  # still pre-norm: only the mask differs
    assert symbol("resid_mid", bert) == "$h$"
    gelu = named_record("default")
    assert symbol("ffn_post", gelu) == rf"$\mathrm{{{gelu.config.activation_name}}}(u)$"


@pytest.fixture(scope="module")
def families(model_layers):
    """family → layer 1's record of a tiny random model of that family."""
    return {family: rec for family, (_, rec) in model_layers.items()}


def test_post_norm_and_gated_blocks_name_their_own_steps(families):
    bert, llama = families["bert"], families["llama"]
    assert symbol("resid_mid", bert) == r"$x + \mathrm{attn}(x)$" and symbol("resid_mid_norm", bert) == "$h$"
    assert symbol("resid_post_norm", bert) == "$y$"
    assert symbol("attn_out", bert) == r"$\mathrm{attn}(x)$" and symbol("ffn_out", bert) == r"$\mathrm{FFN}(h)$"
    name = llama.config.activation_name
    assert symbol("ffn_post", llama) == rf"$\mathrm{{{name}}}(g) \odot u$"
    assert symbol("ffn_gate_act", llama) == rf"$\mathrm{{{name}}}(g)$"


# -- measuring scripts -------------------------------------------------------------------------------
def test_glyph_scales_read_each_glyphs_size_from_the_svg():
    # Hand-worked: q at full size, both digits of 10 at mathtext's script size 0.7; a script of
    # a script (e^{s_j}: the j) at 0.7² = 0.49; a fraction's bar is a rule at 1.
    assert formula("$q_{10}$", "#ffffff").submobjects and [
        glyph.glyph_scale for glyph in formula("$q_{10}$", "#ffffff").submobjects
    ] == [1.0, 0.7, 0.7]
    assert [g.glyph_scale for g in formula("$e^{s_j}$", "#ffffff").submobjects] == [1.0, 0.7, 0.49]
    assert glyph_scales(
        '<g id="text_1"><use xlink:href="#a" transform="translate(1 2) scale(0.7)"/><path d="M 0 0 L 1 1"/></g>'
    ) == [0.7, 1.0]


def test_script_sizes_follow_the_formula_when_it_is_scaled():
    shown = formula("$W_V$", "#ffffff", 30)
    assert script_sizes(shown) == pytest.approx([21.0])
    shown.scale(0.5)
    assert script_sizes(shown) == pytest.approx([10.5])


def test_a_typeset_name_draws_its_subscripts_at_least_at_the_smallest_text_size():
    named = typeset("$q_{10}$ of “it”", 22, "#ffffff")
    symbol_part, words = named.submobjects
    assert isinstance(words, Text) and words.shown == "of “it”"
    # mathtext's 0.7 would give 15.4 (9.9 px at 480p): the formula is drawn larger instead.
    assert script_sizes(named) == pytest.approx([MIN_FONT_SIZE * SCRIPT_MARGIN] * 2)
    assert named.shown == "$q_{10}$ of “it”"
    assert script_pixels(min(script_sizes(named)), 480) >= SMALLEST[480]
    assert script_sizes(typeset("$W_O$", 30)) == pytest.approx([21.0])  # already large enough: as built


def test_words_beside_a_formula_stand_on_its_baseline():
    # "q" hangs below the baseline and "₂" lower still: centred, the words would sit low.
    named = typeset("$q_2$ of “it”", 22, "#ffffff")
    symbol_part, words = named.submobjects
    assert baseline(symbol_part) == pytest.approx(baseline(words), abs=1e-3)
    assert symbol_part.get_bottom()[1] < words.get_bottom()[1] - 0.03
    # A formula's baseline from its outlines: "x" sits on it, "×" floats above it.
    x = formula("$x$", "#ffffff", 20)
    assert baseline(x) == pytest.approx(x.get_bottom()[1], abs=0.005)
    times = formula(r"$\times\, x$", "#ffffff", 20)
    assert baseline(times) == pytest.approx(times.submobjects[1].get_bottom()[1], abs=0.005)
    assert baseline(times) < times.submobjects[0].get_bottom()[1]


# -- every scene ---------------------------------------------------------------------------------
def read(entry, rec) -> Reader:
    reader = Reader()
    with tempconfig(DRY):
        scene = entry.scene_class()(record=rec, skip_animations=True)
        scene.play_listeners.append(reader)
        scene.render()
    return reader


@functools.cache
def read_named(scene_name: str, record_name: str) -> Reader:
    (entry,) = [entry for entry in entries() if entry.name == scene_name]
    return read(entry, named_record(record_name))


RECORD_NAMES = ["default", "toy"]
CASES = [(entry.name, name) for name in RECORD_NAMES for entry in entries() if shows(entry, name)]
assert set(RECORD_NAMES) <= set(RECORDS)


@pytest.mark.parametrize(("scene_name", "record_name"), CASES, ids=[f"{s}/{r}" for s, r in CASES])
def test_no_scene_shows_a_code_name_and_every_script_is_legible(scene_name, record_name):
    check(read_named(scene_name, record_name))


MODEL_SCENES = [entry.name for entry in entries() if not entry.lecture_only and not entry.needs]


@pytest.mark.parametrize("family", ["gpt2", "bert", "llama"])
def test_no_scene_shows_a_code_name_on_a_models_layer(layer_builds, family):
    problems = {}
    for name in MODEL_SCENES:
        _, _, reader = layer_builds(family, name)
        try:
            check(reader)
        except AssertionError as failure:
            problems[name] = (sorted(reader.code_names), str(failure).splitlines()[0])
    assert problems == {}


def test_the_checks_catch_what_they_look_for():
    # Each pattern fails on the names issue 24 found on screen, and passes their typeset words.
    for code in ("resid_pre", "attn_out", "ln1.weight", "ln1.bias", "W_V", "ln2 “sat”", "ffn_pre", "+ b_O", "ln_f"):
        assert code_names_in(code), code
    for words in (
        "d_model = 4 numbers",
        "the residual stream",
        "x plus attention's output",
        "LayerNorm 2",
        "d_k grows",
        "n_heads",
    ):
        assert code_names_in(words) == [], words
    assert UNICODE_SUBSCRIPTS.search("q₁₀ of “it”")
    reader = Reader()
    reader.smallest = (14.0, "$q_0$")  # a header's subscript at 0.7 of 20: 9 px at 480p
    with pytest.raises(AssertionError, match="9.0 px"):
        check(reader)


def test_each_sublayers_label_is_the_term_its_formula_adds():
    from blockviz.figures.architecture import ffn_formula, residual_formula
    from blockviz.symbols import bare

    rec = named_record("default")  # pre-norm: h = x + attn(LN₁(x)), y = h + FFN(LN₂(h))
    formulas = " ".join(residual_formula(rec))
    for name in ("attn_out", "ffn_out"):
        assert f"+ {bare(symbol(name, rec))}" in formulas
    assert ffn_formula(rec).startswith(f"${bare(symbol('ffn_out', rec))} = ")
    assert f"({bare(symbol('ln2', rec))}\\, W_{{in}}" in ffn_formula(rec)  # it reads LN₂(h), not x
