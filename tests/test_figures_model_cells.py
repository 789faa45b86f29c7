"""The n × n panels (queries × keys) of a trained model's layer keep square-ish cells and name
every query row on a 6.5 in page: a short page makes their cells narrower, not flatter (they
were once squashed into strips 2–4× wider than tall, every other row unnamed). Read back from
the figure: each panel's Axes size over its rows and columns, and its row-label Texts."""

from __future__ import annotations

from collections import defaultdict

import pytest

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE, packaged_model_installed  # noqa: E402

from blockviz.figures import FigureRequest, draw_figure  # noqa: E402

CHICKEN = "The chicken didn't cross the road because it was too tired."
SQUARE_FIGURES = ("scores", "mask", "weights", "causal-vs-bidirectional")
FLATTEST, NARROWEST = 1 / 1.5, 1.5
"""Bounds of a cell's width over its height."""


def square_panels(figure) -> list[dict]:
    """Every n × n heatmap of ``figure`` drawing token rows: its key, n, cell width and height
    (inches), where it stands and the sizes of its row labels."""
    width_in, height_in = figure.get_size_inches()
    rows_of = defaultdict(list)
    for text in figure.texts:
        if text.get_label().endswith(":row"):
            rows_of[text.get_label()[:-4]].append(text.get_fontsize())
    panels = []
    for ax in figure.axes:
        x0, x1 = ax.get_xlim()
        y1, y0 = ax.get_ylim()
        cols, rows = round(x1 - x0), round(y1 - y0)
        key = ax.get_label()
        if rows != cols or rows < 2 or key in ("W_O", "mask") or key.startswith("colorbar"):
            continue
        box = ax.get_position()
        panels.append(
            dict(
                key=key,
                n=rows,
                cell_w=box.width * width_in / cols,
                cell_h=box.height * height_in / rows,
                left=box.x0,
                middle=round((box.y0 + box.y1) / 2, 3),
                labels=rows_of[key],
            )
        )
    return panels


def assert_square_and_labelled(figure, n: int, page_height: float) -> None:
    panels = square_panels(figure)
    assert panels, "no n × n panel found"
    for panel in panels:
        assert panel["n"] == n
        aspect = panel["cell_w"] / panel["cell_h"]
        assert FLATTEST <= aspect <= NARROWEST, (
            f"{panel['key']}: cells {panel['cell_w']:.3f} × {panel['cell_h']:.3f} in"
        )
    by_row = defaultdict(list)
    for panel in panels:
        by_row[panel["middle"]].append(panel)
    for row in by_row.values():
        first = min(row, key=lambda panel: panel["left"])  # the first panel of a page row names the rows of all
        assert len(first["labels"]) == n, f"{first['key']}: {len(first['labels'])} of {n} rows named"
        assert min(first["labels"]) >= 6.0
    assert figure.get_size_inches()[1] <= page_height + 1e-6


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    from blockviz.models import record_layer

    root = tmp_path_factory.mktemp("models")
    return {
        family: record_layer(SENTENCE, model=str(BUILDERS[family](root / family)), layer=1)
        for family in ("bert", "llama")
    }


@pytest.mark.parametrize("name", SQUARE_FIGURES)
@pytest.mark.parametrize("family", ["bert", "llama"])
def test_tiny_models_square_panels_keep_their_cells_and_labels(records, family, name):
    rec = records[family]
    figure = draw_figure(name, FigureRequest(rec, token="it", head=rec.config.n_heads - 1, width=6.5))
    assert_square_and_labelled(figure, rec.n, 9.0)


@pytest.mark.parametrize("name", ["scores", "weights", "causal-vs-bidirectional"])
def test_tiny_llama_on_a_two_column_page(records, name):
    rec = records["llama"]
    figure = draw_figure(name, FigureRequest(rec, token="it", width=3.3))
    assert_square_and_labelled(figure, rec.n, 8.0)


@pytest.fixture(scope="module")
def minilm():
    if not packaged_model_installed("minilm"):
        pytest.skip("the packaged MiniLM is not installed")
    from blockviz.models import record_layer

    return record_layer(CHICKEN, model="minilm", layer=3)


@pytest.mark.parametrize("name", SQUARE_FIGURES)
def test_minilm_layer_3_square_panels_keep_their_cells_and_labels(minilm, name):
    figure = draw_figure(name, FigureRequest(minilm, token="it", head=1, width=6.5))
    assert_square_and_labelled(figure, 16, 9.0)
