"""docs/figure_template.py, the figure docs/writing-a-figure.md starts a new figure from: registered
as the guide says (its module among the figures, its ``SPEC`` in the registry), it is drawn by
``draw_figure`` as wide as the page and legible at 3 and 13 tokens, its written sum is the
record's row of weights, and the guide shows the template's own code."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import LONG_SENTENCE
from figure_cache import sentence_record
from support_figures import assert_legible, texts_by_label

from blockviz.figures import FigureRequest, draw_figure, registry
from blockviz.style import format_number

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "figure_template.py"
GUIDE = ROOT / "docs" / "writing-a-figure.md"


@pytest.fixture(scope="module")
def registered():
    """The template as the guide has it added: ``blockviz.figures.weight_rows`` and a registry
    entry (patched in for this module only)."""
    spec = importlib.util.spec_from_file_location("blockviz.figures.weight_rows", TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    patch = pytest.MonkeyPatch()
    patch.setitem(sys.modules, "blockviz.figures.weight_rows", module)
    patch.setattr(registry, "FIGURES", registry.FIGURES + (module.SPEC,))
    yield module
    patch.undo()


@pytest.mark.parametrize("width", [3.3, 6.5, None], ids=lambda width: f"width-{width or 'auto'}")
@pytest.mark.parametrize("sentence", ["the cat sat", LONG_SENTENCE])
def test_the_template_is_drawn_as_wide_as_the_page_and_legible(registered, sentence, width):
    figure = draw_figure("weight-rows", FigureRequest(sentence_record(sentence), width=width))
    assert_legible(figure, width)


def test_the_template_writes_the_records_row_and_its_sum(registered):
    rec = sentence_record(LONG_SENTENCE)
    request = FigureRequest(rec, token="it", head=1)
    texts = texts_by_label(draw_figure("weight-rows", request))
    row = np.asarray(rec.tensors["weights"][1, request.query], dtype=float)
    terms = " + ".join(format_number(float(weight), 3) for weight in row)
    assert re.sub(r"\s+", " ", texts["row_sum"]) == f"{terms} = {format_number(float(row.sum()), 3)}"
    assert texts["heading"].startswith("Weight rows: head 1")
    assert registered.SPEC.reads(rec) == (("weights", "mask"), ())


def test_the_guide_shows_the_templates_code():
    """The guide includes the template by the docs' snippets (``--8<--``), never a copy."""
    guide = GUIDE.read_text(encoding="utf-8")
    assert '--8<-- "docs/figure_template.py:spec"' in guide
    assert '--8<-- "docs/figure_template.py:draw"' in guide
    assert "def weight_rows" not in guide
