"""The logit lens: each block's prediction through the final norm and unembedding, recorded."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from support_stack import toy_stack

from blockviz import BlockRecord, BlockvizError
from blockviz.cli import main
from blockviz.logit_lens import missing_lens
from blockviz.prediction import lens_rows, prediction_of
from blockviz.recording import record as record_of
from blockviz.selection import default_token


@pytest.fixture(scope="module")
def stack():
    return toy_stack(n_blocks=3)


def test_the_last_blocks_lens_is_the_records_own_prediction(stack):
    for row in range(stack.n):
        rows = lens_rows(stack, row)
        assert len(rows) == 3
        own = prediction_of(stack, row)  # the record's probs
        assert rows[-1].words == own.words and np.array_equal(rows[-1].probabilities, own.probabilities)
        assert rows[0].words == prediction_of(stack.block(0), row).words
        for guess in rows:
            assert guess.probabilities.sum() + guess.others == pytest.approx(1, abs=1e-5)


def test_a_one_block_toy_records_lens_is_its_prediction(stack):
    one = stack.block(0)
    assert [guess.words for guess in lens_rows(one, 2)] == [prediction_of(one, 2).words]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    pytest.importorskip("transformers")
    from models_support import SENTENCE, gpt2_folder

    from blockviz.recording import record

    folder = gpt2_folder(tmp_path_factory.mktemp("gpt2"))
    return folder, record(SENTENCE, str(folder), "all")


def test_a_decoders_lens_is_its_hidden_states_through_ln_f_and_the_tied_unembedding(gpt2):
    from models_support import SENTENCE
    from transformers import AutoTokenizer, GPT2LMHeadModel

    folder, _ = gpt2
    rec = record_of(SENTENCE, str(folder), "all", lens_rows=range(11))  # every row
    model = GPT2LMHeadModel.from_pretrained(folder).eval()  # lm_head tied to wte
    ids = AutoTokenizer.from_pretrained(folder)(SENTENCE, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        outputs = model(input_ids=ids, output_hidden_states=True)
        after_block_0 = model.lm_head(model.transformer.ln_f(outputs.hidden_states[1]))[0].softmax(-1)
    expected = [after_block_0, outputs.logits[0].softmax(-1)]  # the last hidden state has ln_f already
    assert rec.lens.n_blocks == 2 and rec.lens.rows == tuple(range(rec.n))
    for block, probabilities in enumerate(expected):
        top = torch.topk(probabilities, 5, dim=-1)
        for row in rec.lens.rows:
            guess = lens_rows(rec, row)[block]
            assert np.allclose(guess.probabilities, top.values[row].numpy(), atol=1e-5)
            assert guess.others == pytest.approx(float(1 - top.values[row].sum()), abs=1e-5)


def test_the_lens_is_saved_and_a_tampered_one_refused(gpt2, tmp_path):
    _, rec = gpt2
    path = tmp_path / "g.json"
    rec.save(path)
    loaded = BlockRecord.load(path)
    assert loaded.lens == rec.lens
    document = json.loads(path.read_text())
    document["logit_lens"]["probs"][1][0][0] += 0.1
    path.write_text(json.dumps(document))
    with pytest.raises(BlockvizError, match="logit lens"):
        BlockRecord.load(path)


def test_record_prints_the_lens_table(gpt2):
    folder, rec = gpt2
    from models_support import SENTENCE

    result = CliRunner().invoke(main, ["record", SENTENCE, "--model", str(folder), "--layer", "all", "--decimals", "3"])
    assert result.exit_code == 0, result.output
    table = result.output[result.output.index("logit lens") :].splitlines()
    last = lens_rows(rec, default_token(list(rec.tokens), rec.special))[1]  # the last word's
    assert table[3].split()[:3] == ["1", "(layer", "1)"]
    assert f"{last.probabilities[0]:.3f}" in table[3] and table[3].rstrip().endswith("1.000")


def test_an_encoder_says_why_it_has_none(tmp_path):
    pytest.importorskip("transformers")
    from models_support import SENTENCE, bert_folder

    from blockviz.recording import record

    rec = record(SENTENCE, str(bert_folder(tmp_path / "bert")), "all")
    assert rec.lens is None and lens_rows(rec, 0) is None
    assert "is an encoder (bidirectional, no unembedding): it predicts no next token" in missing_lens(rec)


def test_the_lens_holds_the_default_focus_token_or_the_tokens_asked_for(gpt2):
    from models_support import SENTENCE

    from blockviz.recording import record

    folder, rec = gpt2
    assert rec.lens.rows == (default_token(list(rec.tokens), rec.special),)
    assert lens_rows(rec, rec.n - 1) is None
    assert record(SENTENCE, str(folder), "all", lens_rows=["cat", 0]).lens.rows == (0, rec.tokens.index("cat"))
    first = record(SENTENCE, str(folder), "all", lens_rows=[0])
    assert first.lens.rows == (0,) and lens_rows(first, 1) is None
    assert [guess.words for guess in lens_rows(first, 0)] == [list(words[0]) for words in first.lens.words]
    every = record(SENTENCE, str(folder), "all", lens_rows=range(rec.n))
    for row in rec.lens.rows:  # a row's prediction does not depend on which other rows are computed
        assert [guess.words for guess in lens_rows(every, row)] == [guess.words for guess in lens_rows(rec, row)]
    assert missing_lens(first, 1).startswith(
        f"no logit lens after token {first.tokens[1]!r} (1): the record holds it after"
    )
    with pytest.raises(BlockvizError, match=f"token position {rec.n} is outside the sentence"):
        record(SENTENCE, str(folder), "all", lens_rows=[rec.n])


def test_figures_draw_the_lens_after_the_token_asked_for(gpt2, tmp_path):
    from models_support import SENTENCE

    folder, rec = gpt2
    args = ["figures", SENTENCE, "--model", str(folder), "--layer", "all", "--format", "svg"]
    args += ["--figure", "logit-lens,stack-weights"]
    result = CliRunner().invoke(main, [*args, "--token", "cat", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    svg = next(tmp_path.glob("*logit-lens*.svg")).read_text()
    after_cat = lens_rows(record_of(SENTENCE, str(folder), "all", lens_rows=["cat"]), rec.tokens.index("cat"))
    assert f"{after_cat[0].probabilities[0]:.2f}" in svg
    for name in ("logit-lens", "stack-weights"):  # the footer names both layers (wrapped where the folder's path ends)
        assert "layers 0–1 of 0–1" in svg_words(next(tmp_path.glob(f"*{name}*.svg")))


def svg_words(path) -> str:
    """The text of an SVG whose text matplotlib kept as text, its lines joined by spaces."""
    return " ".join(re.findall(r"<text[^>]*>([^<]*)", path.read_text()))


def test_the_lens_scene_of_a_models_layers_is_refused_with_what_holds_the_lens(gpt2, tmp_path):
    from models_support import SENTENCE

    folder, _ = gpt2
    args = ["render", SENTENCE, "--model", str(folder), "--layer", "all", "--scene", "logit-lens", "--format", "png"]
    result = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "holds each block's top words only: draw them with blockviz figures … --figure logit-lens" in result.output
    assert "no unembedding" not in result.output and not (tmp_path / "out").exists()


def test_record_prints_the_lens_after_the_token_asked_for_and_refuses_one_the_sentence_lacks(gpt2, tmp_path):
    from models_support import SENTENCE

    folder, rec = gpt2
    args = ["record", SENTENCE, "--model", str(folder), "--layer", "all", "--decimals", "3"]
    result = CliRunner().invoke(main, [*args, "--token", "cat"])
    assert result.exit_code == 0, result.output
    table = result.output[result.output.index("logit lens") :].splitlines()
    after_cat = lens_rows(record_of(SENTENCE, str(folder), "all", lens_rows=["cat"]), rec.tokens.index("cat"))
    assert f"{after_cat[1].probabilities[0]:.3f}" in table[3] and "cat" in table[0]
    saved = tmp_path / "r.safetensors"
    result = CliRunner().invoke(main, [*args, "--token", "zebra", "--save", str(saved)])
    assert result.exit_code != 0 and "zebra" in result.output and not saved.exists()
