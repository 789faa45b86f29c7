"""Attention as evidence (issue 21): baselines, sink shares, a word's pieces and the contrast,
against hand computation on hand-made tensors, the tiny models (tests/models_support.py) and
the seeded block; ``heads --contrast`` and its causal note; the head that answers."""

from __future__ import annotations

import math
import re

import pytest
import torch
from click.testing import CliRunner

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.models.evidence import (
    Side,
    Words,
    answering_head,
    baselines,
    first_difference,
    first_token_share,
    head_evidence,
    infer_causal,
    query_sees_difference,
    rank_evidence,
    sink_share,
    special_share,
    word_weights,
)

# One layer, two heads, four tokens; rows are queries. Head 0 is causal (upper triangle 0), head 1 not.
HEAD0 = [[1.0, 0, 0, 0], [0.6, 0.4, 0, 0], [0.5, 0.2, 0.3, 0], [0.1, 0.6, 0.2, 0.1]]
HEAD1 = [[0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1], [0.4, 0.4, 0.1, 0.1], [0.2, 0.3, 0.3, 0.2]]


def hand() -> torch.Tensor:
    return torch.tensor([[HEAD0, HEAD1]])


def test_baseline_is_the_mean_from_the_other_queries_that_see_the_key():
    words = Words.of_tokens(["a", "b", "c", "d"])
    causal = baselines(hand(), 3, words, causal=True)
    # head 0, key 1, query 3 left out: queries 1 and 2 see key 1 → (0.4 + 0.2) / 2
    assert float(causal[0, 0, 1]) == pytest.approx(0.3)
    # key 0: queries 0, 1, 2 → (1 + 0.6 + 0.5) / 3
    assert float(causal[0, 0, 0]) == pytest.approx(0.7)
    # key 3: only the query itself sees it → no baseline
    assert math.isnan(float(causal[0, 0, 3]))
    open_ = baselines(hand(), 3, words, causal=False)
    # head 1, key 1, every other query: (0.25 + 0.1 + 0.4) / 3
    assert float(open_[0, 1, 1]) == pytest.approx(0.25)


def test_first_special_and_sink_shares():
    special = [True, False, False, True]  # as [CLS] … [SEP]
    assert first_token_share(hand(), 3)[0].tolist() == pytest.approx([0.1, 0.2])
    assert special_share(hand(), 3, special)[0].tolist() == pytest.approx([0.2, 0.4])
    assert sink_share(hand(), 2, [False] * 4)[0].tolist() == pytest.approx([0.5, 0.4])  # the first token alone
    assert sink_share(hand(), 3, special)[0].tolist() == pytest.approx([0.2, 0.4])  # token 0 counted once
    rows = head_evidence(Side(hand(), Words.of_tokens(list("abcd")), [False] * 4, 2, 1), causal=True)
    assert [row.parks for row in rows] == [True, False]  # head 0 puts 0.5 on the first token


def test_a_words_pieces_are_one_key_their_weights_added():
    words = Words.of_tokens(["The", "suit", "case", "is"], [0, 1, 1, 2])
    assert words.groups == ((0,), (1, 2), (3,)) and words.names == ("The", "suitcase", "is")
    grouped = word_weights(hand(), words)
    assert grouped.shape == (1, 2, 4, 3)
    assert float(grouped[0, 0, 3, 1]) == pytest.approx(0.6 + 0.2)
    assert grouped.sum(-1).numpy() == pytest.approx(1.0)  # rows still sum to 1
    # a causal query sees the word only once its last piece is visible: queries 2 and 3 less query 3
    assert float(baselines(hand(), 3, words, causal=True)[0, 0, 1]) == pytest.approx(0.2 + 0.3)
    assert Words.of_tokens(["[CLS]", "a", "[SEP]"], [None, 0, None]).groups == ((0,), (1,), (2,))


def test_the_contrast_and_the_rankings():
    words = Words.of_tokens(list("abcd"))
    other = hand().flip(1)  # the heads swapped: head 0 reads HEAD1 and the other way round
    rows = head_evidence(
        Side(hand(), words, [False] * 4, 3, 1), causal=False, contrast=Side(other, words, [False] * 4, 3, 1)
    )
    assert [v for row in rows for v in (row.weight, row.contrast)] == pytest.approx([0.6, 0.3, 0.3, 0.6])
    assert [row.change for row in rows] == pytest.approx([-0.3, 0.3])
    # baselines: head 0 key 1 (0 + 0.4 + 0.2) / 3 = 0.2, head 1 0.25: above 0.4 and 0.05
    assert [row.above for row in rows] == pytest.approx([0.4, 0.05])
    assert [row.head for row in rank_evidence(rows, "weight")] == [0, 1]
    assert [row.head for row in rank_evidence(rows, "contrast")] == [0, 1]  # a tie in size: stable
    assert [row.head for row in rank_evidence(rows, "above-baseline")] == [0, 1]
    with pytest.raises(BlockvizError, match="rank by one of weight, contrast, above-baseline"):
        rank_evidence(rows, "loudest")


def test_the_answering_head_stands_furthest_above_its_baseline():
    # to key 1 from query 3: head 0 0.6 − (1/3)(0 + 0.4 + 0.2)... causal: (0.4 + 0.2) / 2 = 0.3 → 0.3 above; head 1 0.3 − 0.25
    best = answering_head(hand(), 3, 1, causal=True)
    assert (best.layer, best.head, best.key) == (0, 0, 1)
    assert [best.weight, best.baseline, best.above] == pytest.approx([0.6, 0.3, 0.3])
    anywhere = answering_head(hand(), 3, causal=False)  # every key, open baselines
    margins = {
        (h, k): float(hand()[0, h, 3, k]) - sum(float(hand()[0, h, q, k]) for q in range(3)) / 3
        for h in range(2)
        for k in range(4)
    }
    assert (anywhere.head, anywhere.key) == max(margins, key=margins.get)
    with pytest.raises(BlockvizError, match="comes after query position 1"):
        answering_head(hand(), 1, 3, causal=True)


def test_causality_and_where_sentences_differ():
    assert infer_causal(hand()[:, :1]) and not infer_causal(hand())
    assert first_difference(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert first_difference(["a", "b"], ["a", "b", "c"]) == 2 and first_difference(["a"], ["a"]) is None
    assert not query_sees_difference(1, 1, 2, causal=True)
    assert query_sees_difference(1, 1, 2, causal=False) and query_sees_difference(2, 2, 2, causal=True)


def test_the_seeded_blocks_evidence_is_its_records(tmp_path):
    rec = record("the cat sat on the mat", config=BlockConfig(d_model=8, n_heads=2))
    result = CliRunner().invoke(
        main,
        ["heads", "the cat sat on the mat", "--from", "mat", "--to", "cat", "--heads", "2", "--d-model", "8"]
        + ["--rank", "weight", "-o", str(tmp_path / "h.png")],
    )
    assert result.exit_code == 0, result.output
    weights = rec.weights.float()  # (2 heads, 6, 6), causal
    for line in result.output.splitlines():
        match = re.match(r"^\s+\d+\s+0\s+(\d)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if match:
            head, weight, baseline, above, first, special = match.groups()
            expected_baseline = float(weights[int(head), 1:5, 1].mean())  # queries 1 … 4 see key 1
            assert float(weight) == pytest.approx(float(weights[int(head), 5, 1]), abs=5e-5)
            assert float(baseline) == pytest.approx(expected_baseline, abs=5e-5)
            assert float(first) == pytest.approx(float(weights[int(head), 5, 0]), abs=5e-5)
            assert float(special) == 0.0
    assert "from the other queries that see it" in result.output


# --- the tiny models ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers")
    from models_support import bert_folder, gpt2_folder

    root = tmp_path_factory.mktemp("evidence")
    return {"bert": bert_folder(root / "bert"), "gpt2": gpt2_folder(root / "gpt2")}


def _transformers_attentions(folder, sentence):
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    encoding = tokenizer(sentence)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([encoding["input_ids"]]), output_attentions=True)
    return torch.stack([a[0] for a in out.attentions]), encoding.word_ids()


def test_a_tiny_berts_split_word_is_one_key_with_its_pieces_added(tiny, tmp_path):
    sentence = "the cat sat on the mat because it was tired."  # tired = tir + ##ed
    attentions, word_ids = _transformers_attentions(tiny["bert"], sentence)
    tir = word_ids.index(word_ids[10])  # [CLS] the cat sat on the mat because it was tir ##ed . [SEP]
    assert (tir, word_ids[11]) == (10, word_ids[10])
    result = CliRunner().invoke(
        main,
        ["heads", sentence, "--model", str(tiny["bert"]), "--from", "it", "--to", "tired", "--rank", "weight"]
        + ["-o", str(tmp_path / "b.png")],
    )
    assert result.exit_code == 0, result.output
    assert "'tired' is 2 tokens ('tir' + 'ed', positions 10–11): one key, its pieces' weights added" in result.output
    expected = attentions[:, :, 8, 10] + attentions[:, :, 8, 11]  # query "it" at 8
    rows = [line.split() for line in result.output.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+\s+\d\.\d{4}", line)]
    assert len(rows) == 4
    for _rank, layer, head, weight, *_ in rows:
        assert float(weight) == pytest.approx(float(expected[int(layer), int(head)]), abs=5e-5)
    # [CLS] and [SEP] are the special tokens: the special share is their weights
    special = attentions[:, :, 8, 0] + attentions[:, :, 8, -1]
    for _rank, layer, head, _w, _b, _a, first, special_share_, *_ in rows:
        assert float(first) == pytest.approx(float(attentions[int(layer), int(head), 8, 0]), abs=5e-5)
        assert float(special_share_) == pytest.approx(float(special[int(layer), int(head)]), abs=5e-5)


def test_heads_contrast_on_a_tiny_bert_is_two_independent_runs(tiny, tmp_path):
    first, second = "the cat sat on the mat because it was tired.", "the dog sat on the mat because it was tired."
    a, _ = _transformers_attentions(tiny["bert"], first)
    b, _ = _transformers_attentions(tiny["bert"], second)
    result = CliRunner().invoke(
        main,
        ["heads", first, "--model", str(tiny["bert"]), "--from", "it", "--to", "mat", "--contrast", second]
        + ["-o", str(tmp_path / "c.png")],
    )
    assert result.exit_code == 0, result.output
    assert "largest change in the contrast sentence first" in result.output
    rows = [line.split() for line in result.output.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+\s+\d\.\d{4}", line)]
    changes = []
    for _rank, layer, head, weight, contrast, change, *_ in rows:
        layer, head = int(layer), int(head)
        assert float(weight) == pytest.approx(float(a[layer, head, 8, 6]), abs=5e-5)
        assert float(contrast) == pytest.approx(float(b[layer, head, 8, 6]), abs=5e-5)
        assert float(change) == pytest.approx(float(b[layer, head, 8, 6] - a[layer, head, 8, 6]), abs=1e-4)
        changes.append(abs(float(change)))
    assert changes == sorted(changes, reverse=True)


def test_heads_contrast_on_a_decoder_says_the_query_cannot_see_the_difference(tiny, tmp_path):
    first, second = "the cat sat on the mat because it was tired.", "the cat sat on the mat because it was a cat."
    result = CliRunner().invoke(
        main,
        ["heads", first, "--model", str(tiny["gpt2"]), "--from", "it", "--to", "cat", "--contrast", second]
        + ["-o", str(tmp_path / "g.png")],
    )
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "cannot see" in line]
    assert len(notes) == 1 and "is causal, so every weight from 'it' is the same in both" in notes[0]
    assert "largest weight above the head's baseline first" in result.output  # not ranked by the contrast


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--to", "cat", "--contrast", "the cat sat"], "the contrast sentence is the sentence itself"),
        (["--contrast", "the dog sat"], "--contrast compares one weight: give --to KEY"),
        (["--to", "cat", "--rank", "contrast"], "ranking by contrast needs --contrast S2"),
        (["--to", "cat", "--contrast", "a cat"], "'sat' is in the first sentence but not in the second"),
    ],
)
def test_heads_contrast_bad_input_is_one_line_exit_2_nothing_written(extra, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["heads", "the cat sat", "--from", "sat", "--model", "seeded", *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    assert list(tmp_path.iterdir()) == []
