"""``blockviz compare S1 S2`` (issue 21): its rows against two independent runs (transformers on
a tiny BERT, two records of the seeded block), the words aligned, the movement ranked, the
causal note on a decoder, and its bad input."""

from __future__ import annotations

import json
import re

import pytest
import torch
from click.testing import CliRunner

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.cli import main
from blockviz.models.evidence import align_words

FIRST = "the cat sat on the mat because it was tired."
SECOND = "the dog sat on the mat because it was tired."


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers")
    from models_support import bert_folder, gpt2_folder

    root = tmp_path_factory.mktemp("compare")
    return {"bert": bert_folder(root / "bert"), "gpt2": gpt2_folder(root / "gpt2")}


def _attentions(folder, sentence):
    from transformers import AutoModel, AutoTokenizer

    ids = AutoTokenizer.from_pretrained(folder)(sentence)["input_ids"]
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions])


def _json(arguments):
    result = CliRunner().invoke(main, ["compare", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_compare_on_a_tiny_bert_is_two_independent_runs(tiny, tmp_path):
    data = _json([FIRST, SECOND, "--model", str(tiny["bert"]), "--from", "it", "-o", str(tmp_path / "c.svg")])
    a, b = _attentions(tiny["bert"], FIRST), _attentions(tiny["bert"], SECOND)
    # [CLS] the cat sat on the mat because it was tir ##ed . [SEP]: "tired" is one key (10 + 11), "cat" ↔ "dog"
    assert data["keys"] == [
        "[CLS]",
        "the",
        "cat→dog",
        "sat",
        "on",
        "the",
        "mat",
        "because",
        "it",
        "was",
        "tired",
        ".",
        "[SEP]",
    ]
    assert data["query"]["positions"] == [8, 8] and data["query_sees_difference"]

    def words(row):
        return row[:10].tolist() + [float(row[10] + row[11])] + row[12:].tolist()

    assert len(data["heads"]) == 4
    for head in data["heads"]:
        layer, index = head["layer"], head["head"]
        assert head["first"] == pytest.approx(words(a[layer, index, 8]), abs=1e-6)
        assert head["second"] == pytest.approx(words(b[layer, index, 8]), abs=1e-6)
        change = [y - x for x, y in zip(words(a[layer, index, 8]), words(b[layer, index, 8]))]
        assert head["moved"] == pytest.approx(0.5 * sum(abs(c) for c in change), abs=1e-6)
    moved = [head["moved"] for head in data["heads"]]
    assert moved == sorted(moved, reverse=True)
    svg = _svg_texts(tmp_path / "c.svg")
    best = data["heads"][0]
    assert f"Layer {best['layer']} head {best['head']}: its weights from" in " ".join(svg.split())
    assert "change (second − first)" in svg and "cat→dog" in svg
    cells = [text for text in svg.split("\n") if re.fullmatch(r"[−-]?\d\.\d\d", text)][-3 * len(data["keys"]) :]
    expected = [f"{v:.2f}" for v in best["first"] + best["second"] + best["change"]]
    assert [cell.replace("−", "-") for cell in cells] == [e if e != "-0.00" else "0.00" for e in expected]


def _svg_texts(path) -> str:
    import xml.etree.ElementTree as ElementTree

    root = ElementTree.parse(path).getroot()
    return "\n".join("".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text"))


def test_compare_on_the_seeded_block_is_two_records(tmp_path):
    config = BlockConfig(d_model=8, n_heads=2)
    first, second = "the cat sat on the mat", "the dog sat on a mat"
    data = _json([first, second, "--from", "mat", "--d-model", "8", "--heads", "2", "-o", str(tmp_path / "s.png")])
    a, b = record(first, config=config).weights, record(second, config=config).weights
    assert data["keys"] == ["the", "cat→dog", "sat", "on", "the→a", "mat"]
    for head in data["heads"]:
        assert head["first"] == pytest.approx(a[head["head"], 5].tolist(), abs=1e-6)
        assert head["second"] == pytest.approx(b[head["head"], 5].tolist(), abs=1e-6)


def test_compare_text_lists_the_most_moved_head_first_with_keys_gained_and_lost(tiny, tmp_path):
    result = CliRunner().invoke(
        main, ["compare", FIRST, SECOND, "--model", str(tiny["bert"]), "--from", "it", "-o", str(tmp_path / "t.png")]
    )
    assert result.exit_code == 0, result.output
    data = _json([FIRST, SECOND, "--model", str(tiny["bert"]), "--from", "it", "-o", str(tmp_path / "t2.png")])
    best = data["heads"][0]
    first_row = next(line for line in result.output.splitlines() if line.strip().startswith("1 "))
    assert first_row.split()[1:4] == [str(best["layer"]), str(best["head"]), f"{best['moved']:.4f}"]
    assert f"layer {best['layer']} head {best['head']}, its rows side by side:" in result.output
    assert result.output.splitlines()[-1] == str(tmp_path / "t.png")


def test_compare_on_a_decoder_says_the_query_cannot_see_the_difference(tiny, tmp_path):
    second = "the cat sat on the mat because it was a cat."
    result = CliRunner().invoke(
        main, ["compare", FIRST, second, "--model", str(tiny["gpt2"]), "--from", "it", "-o", str(tmp_path / "g.png")]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 3 and "cannot see" in lines[1] and "is causal" in lines[1]  # no ranking
    data = _json([FIRST, second, "--model", str(tiny["gpt2"]), "--from", "it", "-o", str(tmp_path / "g2.png")])
    assert not data["query_sees_difference"]
    for head in data["heads"]:  # the same prefix, the same weights; the keys after "it" hidden (0) in both
        assert head["first"] == pytest.approx(head["second"], abs=1e-5)


def test_align_words_pairs_a_replaced_word_and_leaves_others_alone():
    assert align_words(["the", "cat", "sat"], ["The", "dog", "sat"]) == [(0, 0), (1, 1), (2, 2)]
    assert align_words(["a", "b"], ["a", "x", "y", "b"]) == [(0, 0), (None, 1), (None, 2), (1, 3)]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["the cat sat", "the cat sat"], "S2 is the first sentence itself"),
        (["the cat sat", "the cat sat down", "--from", "1"], "--from 1 is ambiguous"),
        (["the cat sat", "a dog sat down", "--from", "cat"], "'cat' is in the first sentence but not in the second"),
        (["the cat sat", "the dog sat", "--from", "mouse"], "token 'mouse' is not in the sentence"),
        (["the cat sat", "--from", "cat"], "Missing argument 'S2'"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(arguments, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if "--from" not in arguments:
        arguments = [*arguments, "--from", "cat"]
    result = CliRunner().invoke(main, ["compare", *arguments, "--model", "seeded"])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_model_without_attention_weights_is_one_line_exit_2(tiny, tmp_path, monkeypatch):
    from blockviz.models import recording

    def without_weights(*_args, **_kwargs):
        raise recording.NoAttentionWeights(
            "'bert' returned no attention weights: load it with attn_implementation='eager'"
        )

    monkeypatch.setattr(recording, "model_attentions", without_weights)
    for command in (["compare", FIRST, SECOND], ["heads", FIRST, "--to", "cat", "--contrast", SECOND]):
        result = CliRunner().invoke(
            main, [*command, "--model", str(tiny["bert"]), "--from", "it", "-o", str(tmp_path / "x.png")]
        )
        assert result.exit_code == 2, result.output
        assert "returned no attention weights" in result.output and "Traceback" not in result.output
        assert not (tmp_path / "x.png").exists()


def test_compare_runs_on_the_toy_model_the_default_block(tmp_path):
    from blockviz.models.recording import model_attentions

    first, second = "the cat sat on the mat", "the dog sat on the mat"
    data = _json([first, second, "--from", "mat", "-o", str(tmp_path / "toy.png")])
    a, b = model_attentions(first, model="toy").weights, model_attentions(second, model="toy").weights
    assert data["keys"] == ["the", "cat→dog", "sat", "on", "the", "mat"]
    for head in data["heads"]:
        assert head["first"] == pytest.approx(a[0, head["head"], 5].tolist(), abs=1e-6)
        assert head["second"] == pytest.approx(b[0, head["head"], 5].tolist(), abs=1e-6)
