"""Finding the head (issue 12): the ranking on a hand-made attentions tensor, the layer × head
figure read back, ``blockviz heads`` on tiny random models and the seeded block, its bad input,
and the packaged models' answer to "what is *it*?" (MiniLM layer 3 head 1, SmolLM2 layer 13
head 8)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from models_support import packaged_model_installed

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.figures.heads_figure import HeadsGrid, draw_heads_figure
from blockviz.figures.page import MIN_PT
from blockviz.models.heads import check_visible, heads_of, rank_heads, top_keys, weights_between
from blockviz.models.recording import block_attentions

CHICKEN = "The chicken didn't cross the road because it was too tired."


# Two layers, two heads, three tokens: only the rows of query 2 matter here (the others are one-hot).
ROWS = {(0, 0): [0.1, 0.3, 0.6], (0, 1): [0.5, 0.25, 0.25], (1, 0): [0.7, 0.2, 0.1], (1, 1): [0.5, 0.5, 0.0]}


def hand_weights() -> torch.Tensor:
    weights = torch.zeros(2, 2, 3, 3)
    weights[:, :, 0, 0] = 1.0
    weights[:, :, 1, 1] = 1.0
    for (layer, head), row in ROWS.items():
        weights[layer, head, 2] = torch.tensor(row)
    return weights


# --- the ranking ----------------------------------------------------------------------------


def test_weights_between_is_each_heads_weight_from_query_to_key():
    assert weights_between(hand_weights(), 2, 0).numpy() == pytest.approx(np.array([[0.1, 0.5], [0.7, 0.5]]))
    assert weights_between(hand_weights(), 2, 2).numpy() == pytest.approx(np.array([[0.6, 0.25], [0.1, 0.0]]))


def test_rank_heads_largest_first_ties_in_layer_then_head_order():
    ranked = rank_heads(hand_weights(), query=2, key=0)
    # 0.7 (layer 1 head 0), then the tie 0.5 of layer 0 head 1 and layer 1 head 1 (layer 0 first), then 0.1
    assert [(h.layer, h.head, h.key) for h in ranked] == [(1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 0)]
    assert [h.weight for h in ranked] == pytest.approx([0.7, 0.5, 0.5, 0.1])


def test_top_keys_per_head_largest_first_ties_earlier_key_first():
    values, keys = top_keys(hand_weights(), query=2, k=2)
    assert values.shape == keys.shape == (2, 2, 2)
    assert keys.tolist() == [
        [[2, 1], [0, 1]],
        [[0, 1], [0, 1]],
    ]  # layer 0 head 1: 0.25 = 0.25, key 1 before key 2; layer 1 head 1: 0.5 = 0.5
    assert values.numpy() == pytest.approx(np.array([[[0.6, 0.3], [0.5, 0.25]], [[0.7, 0.2], [0.5, 0.5]]]))
    assert top_keys(hand_weights(), query=2, k=10)[1].shape == (2, 2, 3)  # at most n keys


def test_heads_of_leaves_out_keys_the_causal_mask_hides():
    per_head = heads_of(hand_weights(), query=0, k=3)  # query 0 sees only itself: keys 1 and 2 have weight 0
    assert [[(h.layer, h.head, h.key, h.weight) for h in keys] for keys in per_head] == [
        [(0, 0, 0, 1.0)],
        [(0, 1, 0, 1.0)],
        [(1, 0, 0, 1.0)],
        [(1, 1, 0, 1.0)],
    ]
    per_head = heads_of(
        hand_weights(), query=2, k=3
    )  # layer 1 head 1 gives key 2 weight 0, but key 2 is the query itself: kept
    assert [(h.key, h.weight) for h in per_head[3]] == [(0, 0.5), (1, 0.5), (2, 0.0)]


def test_a_key_after_the_query_that_every_head_blocks_is_refused():
    with pytest.raises(
        BlockvizError, match=r"key 'c' \(position 2\) comes after query 'a' \(position 0\): the causal mask"
    ):
        check_visible(hand_weights(), 0, 2, ["a", "b", "c"])
    check_visible(hand_weights(), 2, 0, ["a", "b", "c"])  # before the query: fine


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rank_heads(torch.zeros(2, 3, 3), 0, 0), r"\(n_layers, n_heads, n, n\) with n ≥ 1, got \(2, 3, 3\)"),
        (lambda: rank_heads(hand_weights(), 3, 0), r"query position 3 is outside the 3 tokens \(0 … 2\)"),
        (lambda: rank_heads(hand_weights(), 0, -1), r"key position -1 is outside"),
        (lambda: top_keys(hand_weights(), 0, 0), r"keys per head must be at least 1, got 0"),
    ],
)
def test_bad_arguments_are_one_line_errors(call, message):
    with pytest.raises(BlockvizError, match=message):
        call()


def test_the_seeded_block_is_one_layer_of_attentions():
    rec = record("the cat sat", config=BlockConfig(n_heads=2))
    attentions = block_attentions(rec)
    assert attentions.weights.shape == (1, 2, 3, 3)
    assert torch.equal(attentions.weights[0], rec.weights.float())
    assert attentions.tokens == ["the", "cat", "sat"]


def test_rank_from_a_sentence_is_the_toy_models_weights_ranked():
    """The library the command calls, given a sentence: the toy model's record through the front
    door, each head's weight from "mat" to "cat" largest first; a key it lacks names the key."""
    from blockviz.heads import TokenChoiceError, rank

    ranking = rank("the cat sat on the mat", "mat", "cat", by="weight")
    expected = record_of_toy("the cat sat on the mat").weights[:, 5, 1]
    assert [row.head for row in ranking.rows] == torch.argsort(expected, descending=True, stable=True).tolist()
    assert [row.weight for row in ranking.rows] == pytest.approx(sorted(expected.tolist(), reverse=True), abs=1e-6)
    assert (ranking.query, ranking.key, ranking.layers, ranking.what) == (
        5,
        1,
        [0],
        "toy (blockviz): 1 layer × 2 heads",
    )
    with pytest.raises(TokenChoiceError) as raised:
        rank("the cat sat on the mat", "mat", "dog")
    assert raised.value.argument == "key" and "token 'dog' is not in the sentence" in str(raised.value)


def record_of_toy(sentence):
    from blockviz.recording import record as front_door

    return front_door(sentence)


# --- the figure ------------------------------------------------------------------------------


def _texts(figure, label):
    return [text for text in figure.texts if text.get_label() == label]


def _colorbar_title(figure):
    bar = next(ax for ax in figure.axes if ax.get_label() == "colorbar")
    return [text.get_text() for text in bar.texts if text.get_label() == "title"]


def test_the_figure_writes_each_heads_weight_and_frames_the_best():
    values = np.array([[0.1, 0.5], [0.7, 0.5]])
    figure = draw_heads_figure(
        HeadsGrid(values, "Attention from “c” to “a” in every head", best=(1, 0), notes=("a note",))
    )
    assert [text.get_text() for text in _texts(figure, "heads:cell")] == ["0.10", "0.50", "0.70", "0.50"]
    assert [text.get_text() for text in _texts(figure, "heads:row")] == ["0", "1"]
    assert [text.get_text() for text in _texts(figure, "heads:col")] == ["0", "1"]
    assert [text.get_text() for text in _texts(figure, "heads:xlabel") + _texts(figure, "heads:ylabel")] == [
        "head",
        "layer",
    ]
    assert _colorbar_title(figure) == ["weight (√ scale)"]
    grid = next(ax for ax in figure.axes if ax.get_label() == "heads")
    (frame,) = [patch for patch in grid.patches if patch.get_label() == "heads:best"]
    assert frame.get_xy() == (-0.5, 0.5)  # column 0, row 1: layer 1 head 0
    # white on the darkest cell (0.7), black on the lightest (0.1)
    cells = _texts(figure, "heads:cell")
    assert (cells[2].get_color(), cells[0].get_color()) == ("#ffffff", "#000000")
    assert figure.get_size_inches()[0] == pytest.approx(6.5)


def test_without_a_key_each_cell_names_its_key_above_the_weight():
    values = np.array([[0.72, 0.2]])
    figure = draw_heads_figure(
        HeadsGrid(values, "Where “it” looks", keys=[["chicken", "[CLS]"]], head_label="query head", layers=(3,))
    )
    assert [text.get_text() for text in _texts(figure, "heads:cell")] == ["chicken\n0.72", "[CLS]\n0.20"]
    assert [text.get_text() for text in _texts(figure, "heads:row")] == ["3"]
    assert _texts(figure, "heads:xlabel")[0].get_text() == "query head"


@pytest.mark.parametrize("layers, heads, keys", [(6, 12, False), (6, 12, True), (30, 9, False), (30, 9, True)])
def test_the_grid_is_legible_on_a_text_column(layers, heads, keys):
    """6.5 in wide, at most 8.5 in tall; every cell written at 6 pt or more, inside its cell."""
    values = np.random.default_rng(0).dirichlet(np.ones(16), size=(layers, heads))[..., 0] * 3 % 1
    names = [["because", "chicken"] * (heads // 2) + ["[CLS]"] * (heads % 2) for _ in range(layers)] if keys else None
    figure = draw_heads_figure(HeadsGrid(values, "title", keys=names, best=(0, 0)))
    width, height = figure.get_size_inches()
    assert width == pytest.approx(6.5) and height <= 8.5 + 1e-6
    cells = _texts(figure, "heads:cell")
    assert len(cells) == layers * heads
    assert min(text.get_fontsize() for text in cells) >= MIN_PT
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    grid = next(ax for ax in figure.axes if ax.get_label() == "heads")
    box = grid.get_window_extent(renderer)
    cell_width, cell_height = box.width / heads, box.height / layers
    extents = [text.get_window_extent(renderer) for text in cells]
    assert max(extent.width for extent in extents) <= cell_width
    assert max(extent.height for extent in extents) <= cell_height
    if keys:
        assert {text.get_text().split("\n")[0] for text in cells} == {
            name for row in names for name in row
        }  # names whole, not cut


# --- the command on tiny models and the seeded block ------------------------------------------

RANK_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(?:(\d+)\s+)?(\d+\.\d{4})(?:\s.*)?$")
"""The ranking's first columns; the evidence columns (issue 21: baseline, above, first, special,
parks) follow the weight and are tested in tests/test_evidence.py."""


def ranking_rows(output: str) -> list[tuple]:
    """``(rank, layer, head, kv head or None, weight)`` of each row of the printed ranking."""
    rows = []
    for line in output.splitlines():
        match = RANK_ROW.match(line)
        if match:
            rank, layer, head, kv, weight = match.groups()
            rows.append((int(rank), int(layer), int(head), None if kv is None else int(kv), float(weight)))
    return rows


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A tiny random Llama (2 layers, 4 query heads sharing 2 key/value heads) saved as a folder,
    and its own attentions on the test sentence ``(n_layers, n_heads, n, n)`` from ``transformers``."""
    pytest.importorskip("transformers")
    from models_support import SENTENCE, llama_folder
    from transformers import AutoTokenizer, LlamaModel

    folder = llama_folder(tmp_path_factory.mktemp("llama"))
    ids = AutoTokenizer.from_pretrained(folder)(SENTENCE)["input_ids"]
    model = LlamaModel.from_pretrained(folder, attn_implementation="eager").eval()
    with torch.no_grad():
        attentions = torch.stack(
            [layer[0] for layer in model(input_ids=torch.tensor([ids]), output_attentions=True).attentions]
        )
    return folder, SENTENCE, attentions


def test_heads_ranks_a_tiny_llamas_query_heads_as_the_model_computes_them(tiny_llama, tmp_path):
    folder, sentence, attentions = tiny_llama
    n = attentions.shape[-1]
    query, key = n - 1, 1
    figure = tmp_path / "llama.svg"
    result = CliRunner().invoke(
        main,
        ["heads", sentence, "--model", str(folder), "--from", str(query), "--to", str(key), "--rank", "weight"]
        + ["--figure", str(figure)],
    )
    assert result.exit_code == 0, result.output
    expected = attentions[:, :, query, key]  # (2 layers, 4 heads)
    order = sorted(
        ((float(expected[layer, head]), layer, head) for layer in range(2) for head in range(4)),
        key=lambda item: -item[0],
    )
    rows = ranking_rows(result.output)
    assert [(layer, head) for _, layer, head, _, _ in rows] == [(layer, head) for _, layer, head in order]
    assert [weight for *_, weight in rows] == pytest.approx([weight for weight, _, _ in order], abs=5e-5)
    assert [kv for _, _, head, kv, _ in rows] == [
        head // 2 for _, _, head, _, _ in rows
    ]  # heads 0, 1 read key/value head 0; 2, 3 read 1
    assert "2 layers × 4 query heads, every 2 sharing a key/value head" in result.output
    assert result.output.splitlines()[-1] == str(figure) and figure.stat().st_size > 0
    svg = figure.read_text(encoding="utf-8")
    assert "query head" in svg and "weight (√ scale)" in svg


def test_heads_top_and_layer_and_keys_per_head(tiny_llama, tmp_path):
    folder, sentence, attentions = tiny_llama
    query = attentions.shape[-1] - 1
    result = CliRunner().invoke(
        main,
        [
            "heads",
            sentence,
            "--model",
            str(folder),
            "--from",
            str(query),
            "--to",
            "0",
            "--rank",
            "weight",
            "--top",
            "2",
            "--layer",
            "1",
            "--figure",
            str(tmp_path / "a.png"),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = ranking_rows(result.output)
    expected = attentions[1, :, query, 0]
    assert [(layer, head) for _, layer, head, _, _ in rows] == [
        (1, int(head)) for head in torch.argsort(expected, descending=True, stable=True)[:2]
    ]
    assert "the 2 highest of 4 heads" in result.output
    keys = CliRunner().invoke(
        main,
        [
            "heads",
            sentence,
            "--model",
            str(folder),
            "--from",
            str(query),
            "--top",
            "1",
            "--figure",
            str(tmp_path / "b.png"),
        ],
    )
    assert keys.exit_code == 0, keys.output
    lines = [line.split() for line in keys.output.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+\s", line)]
    assert len(lines) == 8  # every layer × head, one key each
    for layer, head, _kv, _name, position, weight, *_sink in lines:  # issue 21: the sink share and flag follow
        best = int(torch.argmax(attentions[int(layer), int(head), query]))
        assert position == f"({best})"
        assert float(weight) == pytest.approx(float(attentions[int(layer), int(head), query, best]), abs=5e-5)


def test_heads_on_the_seeded_block_writes_renders_slug_heads_png(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["heads", "the cat sat on the mat", "--from", "the#2", "--to", "cat", "--rank", "weight"]
        + ["--heads", "4", "--d-model", "8"],
    )
    assert result.exit_code == 0, result.output
    rec = record("the cat sat on the mat", config=BlockConfig(d_model=8, n_heads=4))
    expected = rec.weights[:, 4, 1]
    rows = ranking_rows(result.output)
    assert [head for _, _, head, _, _ in rows] == torch.argsort(expected, descending=True, stable=True).tolist()
    assert [weight for *_, weight in rows] == pytest.approx(sorted(expected.tolist(), reverse=True), abs=5e-5)
    assert {layer for _, layer, _, _, _ in rows} == {0}
    assert "the seeded block (seeded random weights): 1 layer × 4 heads" in result.output
    assert result.output.splitlines()[-1] == "renders/the-cat-sat-on-the-mat/heads.png"


@pytest.mark.parametrize(
    "arguments, code, message",
    [
        (
            ["the cat sat", "--from", "dog"],
            2,
            "token 'dog' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat', 2 'sat'",
        ),
        (["the cat sat", "--from", "cat", "--to", "the#2"], 2, "'the' occurs once, so the#2 does not exist"),
        (
            ["the cat sat", "--from", "cat", "--to", "sat"],
            1,
            "key 'sat' (position 2) comes after query 'cat' (position 1)",
        ),
        (["the cat sat", "--from", "cat", "--model", "nosuch"], 1, "unknown model 'nosuch'"),
        (["the cat sat", "--to", "cat"], 2, "Missing option '--from'"),
        (
            ["the cat sat", "--from", "cat", "--figure", "heads.gif"],
            2,
            "names no figure format: end it in .png, .svg, .pdf",
        ),
        (["the cat sat", "--from", "cat", "--layer", "0"], 2, "--layer 0 goes with --model NAME|PATH"),
        (["the cat sat", "--from", "cat", "--trust-pickle"], 2, "--trust-pickle goes with --model NAME|PATH"),
        (["the cat sat", "--from", "cat", "--model", "minilm", "--seed", "3"], 2, "drop --seed with --model"),
        (["the cat sat", "--from", "cat", "--model", "minilm", "--dtype", "float64"], 2, "drop --dtype with --model"),
        (["a " * 70, "--from", "a", "--model", "seeded"], 2, "more than max_tokens 64"),
        (["the " * 30, "--from", "the"], 2, "or record it with --model seeded"),
        (
            ["the cat sat", "--from", "cat", "-o", "/proc/heads.png"],
            1,
            "cannot write to folder '/proc': it is not writable",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(arguments, code, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["heads", *arguments])
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_tiny_bert_longer_than_its_positions_is_one_line(tmp_path):
    pytest.importorskip("transformers")
    from models_support import bert_folder

    folder = bert_folder(tmp_path / "bert")
    result = CliRunner().invoke(
        main,
        ["heads", "the cat sat " * 20, "--model", str(folder), "--from", "cat", "--figure", str(tmp_path / "x.png")],
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "Error" in result.output
    assert not (tmp_path / "x.png").exists()


# --- the packaged models ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def packaged_runs(tmp_path_factory):
    """``blockviz heads`` on the chicken sentence for each packaged model, with --to chicken and
    without: ``{(model, "to"|"keys"): (result, figure path)}``; each model is loaded once (per process)."""
    pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("heads")
    runs = {}
    for name in ("minilm", "smollm2"):
        if not packaged_model_installed(name):
            pytest.fail(f"the packaged model {name} is not installed: make setup installs it")
        for mode, extra in (("to", ["--to", "chicken", "--rank", "weight"]), ("keys", ["--top", "1"])):
            figure = folder / f"{name}-{mode}.svg"
            runs[name, mode] = (
                CliRunner().invoke(
                    main, ["heads", CHICKEN, "--model", name, "--from", "it", *extra, "--figure", str(figure)]
                ),
                figure,
            )
    return runs


@pytest.mark.parametrize(
    "name, first, second",
    [("minilm", (3, 1, None, 0.7196), (5, 11, None, 0.7163)), ("smollm2", (13, 8, 2, 0.8771), (3, 8, 2, 0.6524))],
)
def test_the_packaged_models_answer_it_is_the_chicken(packaged_runs, name, first, second):
    """MiniLM: layer 3 head 1 first (0.720), though layer 5 head 11 comes within 0.01 (0.716: the
    figure's 3 decimals tell them apart); SmolLM2: layer 13 head 8 first (0.88, key/value head 2),
    well ahead of layer 3 head 8 (0.65)."""
    result, figure = packaged_runs[name, "to"]
    assert result.exit_code == 0, result.output
    rows = ranking_rows(result.output)
    assert len(rows) == {"minilm": 72, "smollm2": 270}[name]
    assert rows[0][1:4] == first[:3] and rows[0][4] == pytest.approx(first[3], abs=2e-4) and rows[0][4] >= 0.5
    assert rows[1][1:4] == second[:3] and rows[1][4] == pytest.approx(second[3], abs=2e-4)
    assert [weight for *_, weight in rows] == sorted((weight for *_, weight in rows), reverse=True)
    svg = " ".join(_svg_texts(figure).split())  # the note's lines joined
    decimals = 3 if name == "minilm" else 2  # 0.7196 and 0.7163 are told apart at 3
    assert (
        "weight (√ scale)" in svg
        and f"Framed: the largest, layer {first[0]} head {first[1]} ({first[3]:.{decimals}f})" in svg
    )
    assert f" {first[3]:.{decimals}f} " in svg and f" {second[3]:.{decimals}f} " in svg


def test_the_packaged_figures_read_back(packaged_runs):
    """The figure of each model's weights from "it" to "chicken": the named head's cell reads its
    weight (≥ 0.5), every head has its cell, the colour bar says what the colours are."""
    from blockviz.models import model_attentions

    for name, (layer, head) in {"minilm": (3, 1), "smollm2": (13, 8)}.items():
        attentions = model_attentions(CHICKEN, model=name)  # loaded already: the same model object
        it, chicken = attentions.tokens.index("it"), attentions.tokens.index("chicken")
        values = attentions.weights[:, :, it, chicken].numpy()
        figure = draw_heads_figure(HeadsGrid(values, "t", best=(layer, head)))
        cells = [text.get_text() for text in _texts(figure, "heads:cell")]
        assert len(cells) == values.size == {"minilm": 72, "smollm2": 270}[name]
        assert (
            cells[layer * values.shape[1] + head] == {"minilm": "0.720", "smollm2": "0.88"}[name]
        )  # the framed one told apart
        assert _colorbar_title(figure) == ["weight (√ scale)"]


def test_the_packaged_models_top_key_of_the_head_is_chicken(packaged_runs):
    """Without --to: the head's largest key is "chicken", in the table and in the figure's cell."""
    for name, (layer, head, chicken, weight) in {
        "minilm": (3, 1, 2, "0.7196"),
        "smollm2": (13, 8, 1, "0.8771"),
    }.items():
        result, figure = packaged_runs[name, "keys"]
        assert result.exit_code == 0, result.output
        row = next(line.split() for line in result.output.splitlines() if re.match(rf"^\s+{layer}\s+{head}\s", line))
        assert row[-4:-1] == ["chicken", f"({chicken})", weight]  # issue 21: then the sink share (no "parks" flag here)
        assert 0 <= float(row[-1]) < 0.5
        assert f"chicken\n{float(weight):.2f}" in _svg_texts(figure)


def _svg_texts(path) -> str:
    """The SVG's text elements (text is kept as text: ``svg.fonttype`` none), lines joined by "\\n"."""
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(path).getroot()
    return "\n".join("".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text"))


def test_the_grid_has_the_decimals_that_tell_the_framed_head_apart():
    """MiniLM's "it" → "chicken": layer 3 head 1 has 0.7196, layer 5 head 11 0.7163 — both 0.72
    with 2 decimals; the whole grid takes 3 (one format), and at most 4."""
    figure = draw_heads_figure(HeadsGrid(np.array([[0.7196, 0.1], [0.2, 0.7163]]), "title", best=(0, 0)))
    assert [text.get_text() for text in _texts(figure, "heads:cell")] == ["0.720", "0.100", "0.200", "0.716"]
    assert HeadsGrid(np.array([[0.71963, 0.71961]]), "t", best=(0, 0)).decimals == 4  # no more than 4
    assert HeadsGrid(np.array([[0.5, 0.5]]), "t", best=(0, 0)).decimals == 2  # an equal weight is not told apart
    assert HeadsGrid(np.array([[0.7196, 0.7163]]), "t").decimals == 2  # nothing framed


def test_output_is_a_file_or_a_folder_as_the_other_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    into = CliRunner().invoke(main, ["heads", "the cat sat", "--from", "cat", "-o", "out/"])
    assert into.exit_code == 0, into.output
    assert (
        into.output.splitlines()[-1] == "out/heads-toy.png" and (tmp_path / "out" / "heads-toy.png").stat().st_size > 0
    )
    (tmp_path / "existing").mkdir()
    existing = CliRunner().invoke(
        main, ["heads", "the cat sat", "--from", "cat", "--model", "seeded", "--output", "existing"]
    )
    assert existing.output.splitlines()[-1] == "existing/heads.png" and (tmp_path / "existing" / "heads.png").is_file()
    named = CliRunner().invoke(main, ["heads", "the cat sat", "--from", "cat", "-o", "deeper/grid.svg"])
    assert named.output.splitlines()[-1] == "deeper/grid.svg" and (
        tmp_path / "deeper" / "grid.svg"
    ).read_text().startswith("<?xml")


def test_a_decoders_first_token_without_a_key_is_one_line_not_a_table_of_ones(tmp_path, monkeypatch):
    from blockviz.heads import rank

    first = rank(CHICKEN, "The")
    assert first.causal and first.keys is None and first.horizon is not None
    assert rank(CHICKEN, "chicken").horizon is None  # the second token sees two: its keys are listed
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["heads", CHICKEN, "--from", "The"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:] == [
        "'The' is the first token and toy is causal: it sees only itself, so every head puts all its weight (1) "
        "on it — nothing to list, no figure written"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_contrast_that_differs_only_where_the_model_reads_alike_gets_the_same_tokens_note():
    from blockviz.heads import compare, rank

    lower = "the" + CHICKEN[3:]
    ranking = rank(CHICKEN, "it", "chicken", contrast=lower)  # the toy's vocabulary ignores case
    assert ranking.notes == [
        "the two sentences have the same tokens to toy ('The' and 'the' are one input to it): "
        "every weight from 'it' is the same in both"
    ]
    assert ranking.contrast is None and all(row.change is None for row in ranking.rows)
    assert compare(CHICKEN, lower, "it").seeing == ranking.notes[0]
    seeded = rank("The cat sat", "sat", "cat", model="seeded", contrast="the cat sat")  # its embeddings do not
    assert seeded.notes == [] and seeded.contrast is not None
    assert max(abs(row.change) for row in seeded.rows) > 0.01
