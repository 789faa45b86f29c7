"""Words, not code names, on screen (issue 36): no ``d_model``, ``d_head``, ``d_ff``, ``d_k``,
``resid_pre``, ``resid_post``, ``pos_embed`` or ``probs[10]`` in what a viewer reads — every
caption and title of every catalogued scene on "the cat sat" and on the chicken sentence (focus
"it"), the slide notes built from them, the explorer page's visible text and step formulas, and
the text of every figure (``blockviz figures``, SVG), and a stack's figures (``--model copy``)
with no subscript written as plain text either. Scenes are built without rendering
(:func:`support.build`). Each failure names the place and the code name."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from support import DEFAULT_SENTENCE, THIRTEEN_TOKENS, build

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.explorer import steps_for
from blockviz.explorer.page import explorer_page
from blockviz.scenes.catalog import entries
from blockviz.scenes.wording import Wording
from blockviz.slides.steps import steps_of

PLAIN_SUBSCRIPT = re.compile(r"\b[A-Za-z]+_\{?[A-Za-z0-9]+")
"""A subscript written as plain text (``W_OV``, ``y_k``): a figure footnote typesets it ($W_{OV}$) or says it in words."""
INDEXED_FIELD = re.compile(r"\b[a-z]+(?:_[a-z]+)+\[")
"""A record field indexed as code (``head_outputs[0, 2]``): a figure's footnote says it in words."""
CODE_NAME = re.compile(r"\b(?:d_model|d_head|d_ff|d_k|resid_pre|resid_post|pos_embed)\b|\bprobs\[\d+\]")
STACK_FIGURES = "stack-weights,composition,induction,logit-lens,copy-training"
SENTENCES = {"the cat sat": (DEFAULT_SENTENCE, None), "chicken": (THIRTEEN_TOKENS, "it")}


def code_names(said: dict[str, str]) -> list[tuple[str, str]]:
    """``(place, code name)`` for every code name in ``said`` (place → what is read there)."""
    return [(where, match) for where, text in said.items() for match in CODE_NAME.findall(text)]


def visible_text(page: str) -> str:
    """The page's text a reader sees: its markup without scripts, styles and tags."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.fixture(scope="module", params=list(SENTENCES))
def lecture(request):
    """(sentence name, record, {scene name: built scene}) for every catalogued scene it shows."""
    sentence, token = SENTENCES[request.param]
    rec = record(sentence)
    options = {"token": token} if token else {}
    scenes = {
        entry.name: build(entry.scene_class(), rec, **options)[0]
        for entry in entries()
        if entry.missing_for(rec) is None
    }
    return request.param, rec, scenes


def test_the_check_finds_each_code_name_and_passes_words():
    found = code_names(
        {"a": "d_model = 4, d_head 2, 4 → d_ff = 8 as d_k grows", "b": "resid_pre + pos_embed → probs[10]"}
    )
    assert [name for _, name in found] == ["d_model", "d_head", "d_ff", "d_k", "resid_pre", "pos_embed", "probs[10]"]
    assert code_names({"c": "the width, 4 numbers; each head's width; resid_post_norm; the FFN's hidden width"}) == []


def test_no_caption_title_or_slide_note_names_code(lecture):
    name, rec, scenes = lecture
    wording = Wording.of(rec)
    said = {}
    for entry in entries():
        if entry.name not in scenes:
            continue
        scene = scenes[entry.name]
        said[f"{name}: {entry.name} title"] = getattr(scene.title_mobject, "shown", "")
        said[f"{name}: {entry.name} chapter"] = f"{entry.title_for(wording)} | {entry.caption_for(wording)}"
        for at, caption in scene.captions:
            said[f"{name}: {entry.name} caption at {at:.1f} s"] = caption
        start = scene.captions[0][0] if scene.captions else 0.0
        cues = [(at - start, caption) for at, caption in scene.captions]
        last = max((at for at, _ in cues), default=0.0) + 1.0
        numbers = scene.numbers_to_read()
        for step in steps_of(entry.name, entry.title_for(wording), entry.caption_for(wording), cues, last, numbers):
            said[f"{name}: slide note {step.name}"] = " | ".join([step.chapter, *step.notes])
    assert len(said) > 3 * len(scenes)
    found = code_names(said)
    assert found == [], f"code names on screen: {found}"


@pytest.mark.parametrize("sentence", list(SENTENCES))
def test_the_explorer_page_and_its_steps_show_no_code_name(sentence):
    rec = record(SENTENCES[sentence][0])
    page = explorer_page(rec, 0, 0, "input", "dark")
    said = {f"{sentence}: explorer page": visible_text(page)}
    assert "blockviz explorer" in said[f"{sentence}: explorer page"]
    for step in steps_for(rec.config):
        what = step.args.get("what", "")
        said[f"{sentence}: explorer step {step.name}"] = f"{step.title} | {step.formula} | {what}"
    found = code_names(said)
    assert found == [], f"code names on screen: {found}"


@pytest.mark.parametrize("sentence", list(SENTENCES))
def test_no_figure_names_code(sentence, tmp_path):
    text, token = SENTENCES[sentence]
    arguments = ["figures", text, "--format", "svg", "-o", str(tmp_path)] + (["--token", token] if token else [])
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    said = {}
    for svg in sorted(tmp_path.glob("*.svg")):
        root = ET.parse(svg).getroot()
        texts = ["".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text")]
        said[f"{sentence}: figure {svg.name}"] = "\n".join(texts)
    assert len(said) >= 10 and all("\n" in text for text in said.values())
    found = code_names(said) + [(where, name) for where, text in said.items() for name in INDEXED_FIELD.findall(text)]
    assert found == [], f"code names on screen: {found}"


def svg_texts(folder) -> dict[str, str]:
    """Figure file name → its SVG's text elements, one a line."""
    said = {}
    for svg in sorted(folder.glob("*.svg")):
        root = ET.parse(svg).getroot()
        said[svg.name] = "\n".join(
            "".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text")
        )
    return said


def test_the_check_finds_a_plain_subscript_and_passes_a_typeset_one():
    assert PLAIN_SUBSCRIPT.findall("what each writes (W_OV = W_V W_O); (y_k: block k's output)") == [
        "W_OV",
        "W_V",
        "W_O",
        "y_k",
    ]
    assert PLAIN_SUBSCRIPT.findall("what each writes (WOV = WV WO); the query (Q); block 1's head") == []
    assert INDEXED_FIELD.findall("z = head_outputs[0, 2], the sum") == ["head_outputs["]
    assert INDEXED_FIELD.findall("z, head 0's output for token 2, is the sum [of 3 keys]") == []


def test_a_stacks_figures_name_no_code_and_typeset_their_subscripts(tmp_path):
    """The composition figure's footnote (and the logit lens's) once wrote W_OV, W_Q … and y_k as
    plain text; now in words, the symbols typeset in the heading's formulas (mathtext, which an
    SVG draws as paths: not in its text)."""
    arguments = [
        "figures",
        "lamp cake river tall dog lamp cake river",
        "--model",
        "copy",
        "--figure",
        STACK_FIGURES,
        "--format",
        "svg",
    ]
    result = CliRunner().invoke(main, [*arguments, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    said = svg_texts(tmp_path)
    assert len(said) == 5 and "standard normal" in said["composition.svg"]
    found = code_names(said) + [(where, name) for where, text in said.items() for name in PLAIN_SUBSCRIPT.findall(text)]
    assert found == [], f"code names on screen: {found}"
