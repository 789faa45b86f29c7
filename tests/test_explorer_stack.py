"""The copy model's explorer page: a workbench of both blocks. In Debian's Chromium,
``window.blockviz.run(sentence, edits)`` returns the record's "blocks" layout and equals the Python
record of that sentence (with those parameters: a copy of the model folder holding them) to 1e-5;
the page holds a block selector, the residual stream across the blocks and an overview of every block.
"""

import random
import shutil
import warnings

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file
from support_browser import eventually
from support_explorer import Opened

from blockviz.block import Block, Prediction
from blockviz.block_record import BlockRecord
from blockviz.explorer import Explorer
from blockviz.explorer.payload import is_workbench
from blockviz.key_sources import SOURCE_FIELDS
from blockviz.numerics import pinned
from blockviz.record_fields import PREDICTION_FIELDS, STACK_FIELDS
from blockviz.recording import record
from blockviz.toy import toy_folder
from blockviz.toy.recording import UnknownWordsWarning

TOLERANCE = 1e-5
LATER_BLOCK_TOLERANCE = 1e-4
"""For block 1 and the model's prediction against the record end to end: block 1 reads block 0's
float32 output, which torch's matrix products round in another order than the page's sequential
fused multiply-adds (≤ 1e-5 apart, as block 0's fields); block 1's LayerNorms and products amplify
that difference (measured: ≤ 5e-5). Block 1 run by torch on the page's own block-0 output equals
the page's block 1 to TOLERANCE."""
"""As tests/test_explorer_workbench.py: |page − record| ≤ TOLERANCE × scale, the scale 1 + |record|,
for the logits 1 + Σ_c |ln_f_c × W_U[c, word]|, for a LayerNorm's norm and output + the factor by
which it amplifies its input's float32 rounding; and, since block 1 reads block 0's float32 output
(rounded in another order by torch's matrix product), for the scores 1 + Σ_c |q_c k_c| (÷ √d_head
once scaled), the scale of a dot product's rounding, as for the logits."""
SENTENCES = [
    "the cat sat on the mat the cat sat",
    "river lamp cake the dog river lamp",
    "The chicken didn't cross the road because it was too tired.",
    "the zorblax sat on the zorblax",
    "cat",
]


@pytest.fixture(scope="module")
def copy_record():
    return record(SENTENCES[0], "copy")


@pytest.fixture(scope="module")
def page(browser, copy_record, tmp_path_factory):
    path = tmp_path_factory.mktemp("stack") / "copy.html"
    Explorer(copy_record, token="cat#2").save(path)
    opened = Opened(browser, path)
    yield opened
    opened.close()


def _scales(view) -> dict:
    t, params = view.tensors, view.params
    scale = {name: 1 + tensor.double().abs() for name, tensor in t.items()}
    scale["logits"] = 1 + t["ln_f"].double().abs() @ params["W_U"].double().abs()
    dot = t["query"].double().abs() @ t["key"].double().abs().transpose(-1, -2)  # Σ_c |q_c k_c|: a dot product's scale
    scale["scores"] = 1 + dot
    for name in ("scaled_scores", "masked_scores"):
        scale[name] = 1 + dot / view.config.d_head**0.5
    for norm, source in (("ln1", "resid_pre"), ("ln2", "resid_mid"), ("ln_f", "resid_post")):
        condition = t[source].double().abs().amax(-1) / (t[f"{norm}_var"].double() + view.config.ln_eps).sqrt()
        gain = max(1.0, float(params[f"{norm}.weight"].abs().max()))
        for name in (f"{norm}_norm", norm):
            scale[name] = scale[name] + condition[:, None] * gain
    return scale


def _worst(got: dict, view, names) -> float:
    """The largest scaled difference between the page's fields ``names`` and block ``view``'s."""
    scale, worst = _scales(view), 0.0
    for name in names:
        want = view.tensors[name].double().numpy()
        mine = np.array(got[name], dtype=object)
        mine = np.where(mine == None, -np.inf, mine).astype(float)  # noqa: E711 (−∞ is null in the record's JSON)
        assert mine.shape == want.shape, name
        blocked = np.isneginf(want)
        assert np.array_equal(np.isneginf(mine), blocked), name
        error = np.abs(mine[~blocked] - want[~blocked]) / scale[name].numpy()[~blocked]
        worst = max(worst, float(error.max(initial=0.0)))
    return worst


def _compare(got: dict, rec) -> tuple[float, float]:
    """The page's run (the record's "blocks" layout) against record ``rec`` of two blocks: the
    largest scaled difference in block 0 (and the embeddings), and in block 1 and the prediction.
    The scenes' split of block 1's scores by key source is the record's alone."""
    assert len(got["blocks"]) == len(rec.blocks) == 2
    assert got["tokens"] == list(rec.tokens)
    once = [*STACK_FIELDS, *PREDICTION_FIELDS]
    assert sorted(key for key in got if key not in ("tokens", "unknown", "blocks")) == sorted(once)
    first = _worst(got, rec.blocks[1], list(STACK_FIELDS))
    later = _worst(got, rec.blocks[1], list(PREDICTION_FIELDS))
    for index, (mine, view) in enumerate(zip(got["blocks"], rec.blocks)):
        names = [spec.name for spec in view.fields if spec.name not in (*STACK_FIELDS, *SOURCE_FIELDS)]
        if index == 1:
            names = [name for name in names if name not in PREDICTION_FIELDS]
        assert sorted(mine) == sorted(names), index  # block 0 keeps its logit lens
        if index == 0:
            first = max(first, _worst(mine, view, names))
        else:
            later = max(later, _worst(mine, view, names))
    return first, later


def _block_one_on(got: dict, rec):
    """Block 1 of ``rec``'s model run by torch (blockviz's Block and Prediction, as the record runs
    them) on the page's own block-0 output: the reference for the page's block 1 without the
    difference their inputs already carry."""
    view = rec.blocks[1]
    block, prediction = Block(view.config, seeded=False), Prediction(view.config)
    block.load_state_dict({name: view.params[name] for name in block.state_dict()}, assign=True)
    prediction.load_state_dict({name: view.params[name] for name in prediction.state_dict()}, assign=True)
    cache = {"embed": view.embed, "pos_embed": view.pos_embed}
    with torch.no_grad(), pinned():
        prediction(block(torch.tensor(got["blocks"][0]["resid_post"], dtype=torch.float32), cache), cache)
    names = [spec.name for spec in view.fields if spec.name not in SOURCE_FIELDS]
    return BlockRecord(
        sentence=view.sentence,
        tokens=view.tokens,
        config=view.config,
        tensors={name: cache[name] for name in names},
        params=view.params,
        source=view.source,
    )


def _assert_close(got: dict, rec, what) -> float:
    """Block 0 and the embeddings equal ``rec``'s to TOLERANCE; block 1 and the prediction equal
    torch's block 1 on the page's block-0 output to TOLERANCE, and ``rec``'s to LATER_BLOCK_TOLERANCE."""
    first, later = _compare(got, rec)
    assert first <= TOLERANCE, (what, first)
    assert later <= LATER_BLOCK_TOLERANCE, (what, later)
    own = _block_one_on(got, rec)
    names = [spec.name for spec in own.fields if spec.name not in STACK_FIELDS and spec.name not in PREDICTION_FIELDS]
    step = max(_worst(got["blocks"][1], own, names), _worst(got, own, list(PREDICTION_FIELDS)))
    assert step <= TOLERANCE, (what, step)
    return max(first, step)


def test_the_copy_models_page_is_a_workbench_of_both_blocks(copy_record):
    assert len(copy_record.blocks) == 2 and is_workbench(copy_record)
    assert not is_workbench(record("the cat sat", "seeded"))


@pytest.mark.filterwarnings("ignore::blockviz.toy.recording.UnknownWordsWarning")
def test_the_pages_stack_equals_the_python_record_for_several_sentences(page):
    worst = 0.0
    for sentence in SENTENCES:
        got = page.page.evaluate("s => window.blockviz.run(s, {})", sentence)
        rec = record(sentence, "copy")
        error = _assert_close(got, rec, sentence)
        assert got["blocks"][1]["resid_pre"] == got["blocks"][0]["resid_post"]  # one residual stream, exactly
        worst = max(worst, error)
    assert worst > 0  # float64 against float32: a real comparison


def _edited_copy_model(tmp_path, name, index, value):
    """A copy of the shipped copy model's folder whose parameter ``name`` holds ``value`` at ``index``."""
    folder = tmp_path / f"copy-{name}-{'-'.join(map(str, index))}"
    shutil.copytree(toy_folder("copy"), folder)
    tensors = load_file(folder / "model.safetensors")
    tensors[name][tuple(index)] = value
    save_file(tensors, folder / "model.safetensors")
    return folder


def test_edits_of_either_block_and_the_shared_parameters_equal_the_python_record(page, copy_record, tmp_path):
    rng = random.Random(34)
    names = ["blocks.0.attn.W_Q", "blocks.1.attn.W_K", "blocks.1.ffn.W_in", "blocks.0.ln1.weight", "W_E", "W_U"]
    sentence = SENTENCES[1]
    shapes = {name: tuple(tensor.shape) for name, tensor in load_file(toy_folder("copy") / "model.safetensors").items()}
    for name in names:
        index = [rng.randrange(size) for size in shapes[name]]
        if name == "W_E":
            index[0] = copy_record.source.vocabulary.index("river")  # a word of the sentence: its rows move
        value = float(np.float32(rng.uniform(-3.0, 3.0)))
        got = page.page.evaluate("([s, e]) => window.blockviz.run(s, e)", [sentence, {name: [[*index, value]]}])
        rec = record(sentence, str(_edited_copy_model(tmp_path, name, index, value)))
        _assert_close(got, rec, name)
        unedited = record(sentence, "copy")
        assert not np.allclose(np.array(got["probs"]), unedited.probs.double().numpy(), atol=1e-7), name


def test_the_page_shows_each_block_the_stream_across_blocks_and_an_overview_of_every_block(
    browser, copy_record, tmp_path
):
    path = tmp_path / "copy.html"
    Explorer(copy_record, token="cat#2", step="overview").save(path)
    opened = Opened(browser, path)
    p = opened.page
    assert p.get_attribute('.bar.blocks [data-block="1"]', "aria-checked") == "true"  # the last block first
    rows = p.evaluate("() => Array.from(document.querySelectorAll('.ovgrid tbody th'), th => th.textContent)")
    assert rows == ["block 0", "\u25b8 block 1"]
    assert p.evaluate("() => document.querySelectorAll('.ovgrid .ovcell').length") == 2 * copy_record.config.n_heads
    stream = p.inner_text("#stack-view")
    assert "The residual stream through the 2 blocks, token 7 cat" in stream
    heads = p.evaluate(
        "() => Array.from(document.querySelectorAll('#stack-view table')[0].querySelectorAll('tbody th'), th => th.textContent)"
    )
    assert heads[0] == "embed + pos_embed" and heads[-1].endswith("block 1: + FFN = resid_post")
    shown = p.evaluate(
        "() => Array.from(document.querySelectorAll('#stack-view table')[0].querySelectorAll('tbody tr'), tr => Array.from(tr.querySelectorAll('td'), td => td.textContent))"
    )
    from blockviz.style import format_number

    for k, view in enumerate(copy_record.blocks):  # block 0's output, then block 1's: the record's numbers
        assert shown[2 + 2 * k] == [format_number(float(v)) for v in view.resid_post[7]], k
    p.click('.ovcell[data-layer="0"][data-head="1"]')  # another block's cell: that block's page, that head
    eventually(
        p, "() => document.querySelector('.bar.blocks [data-block=\"0\"]').getAttribute('aria-checked') === 'true'"
    )
    assert "block=0" in p.evaluate("location.hash") and "head=1" in p.evaluate("location.hash")
    weights = p.evaluate(
        "() => Array.from(document.querySelectorAll('.pattern td[data-field=\"weights\"]'), td => [td.dataset.at, td.textContent])"
    )
    block0 = copy_record.block(0)
    for at, text in weights:
        h, q, j = map(int, at.split(","))
        assert h == 1
        if j <= q:
            assert text == format_number(float(block0.weights[h, q, j])), at
    p.click("button[data-step=input]")
    assert "x = block 0's resid_post" not in p.inner_text("#step-input")  # block 0 reads the embeddings
    p.click('.bar.blocks [data-block="1"]')
    p.click("button[data-step=input]")
    text = p.inner_text("#step-input")
    assert "block 0's resid_post" in text and "x (block 1's resid_pre)" in text and "\u2713" in text
    opened.close()


def test_the_copy_models_page_is_small(copy_record, tmp_path):
    words = [word for word in copy_record.source.vocabulary[1:] if word.isalpha()]
    longest = " ".join(random.Random(0).sample(words, copy_record.config.max_tokens))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownWordsWarning)
        rec = record(longest, "copy")
    path = tmp_path / "long.html"
    Explorer(rec).save(path)
    assert path.stat().st_size <= 250_000


def test_explore_block_k_opens_the_copy_models_page_on_that_block(tmp_path):
    from click.testing import CliRunner

    from blockviz.cli import main

    pages = {}
    for block in ("0", "1"):
        out = tmp_path / f"block{block}.html"
        result = CliRunner().invoke(
            main, ["explore", "the cat sat on the cat", "--model", "copy", "--block", block, "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        text = out.read_text()
        pages[block] = text[text.index('"workbench":') :][:2000]
    assert '"n_blocks":2,"block":0' in pages["0"] and '"n_blocks":2,"block":1' in pages["1"]
    result = CliRunner().invoke(
        main, ["explore", "the cat", "--model", "copy", "--block", "2", "-o", str(tmp_path / "no.html")]
    )
    assert result.exit_code == 2 and "block 2 is out of range: the record has 2 blocks, 0–1" in result.output
    assert not (tmp_path / "no.html").exists()


def test_in_python_a_stack_explores_as_its_page_of_every_block(copy_record):
    import blockviz

    page = blockviz.explore(copy_record, token="cat", block=0)
    assert (page.block, page.token) == (0, 1) and repr(page).endswith("theme='light', block=0)")
    assert copy_record.explore().block == 1  # the last block by default
    assert '"n_blocks":2,"block":0' in page.html()
    assert 'sandbox="allow-scripts allow-downloads"' in page._repr_html_()  # the notebook's iframe may download
    with pytest.raises(blockviz.BlockvizError, match="^block 2 is out of range: the record has 2 blocks, 0–1$"):
        blockviz.explore(copy_record, block=2)


def test_the_copy_models_downloaded_parameters_reproduce_the_page(browser, copy_record, tmp_path):
    path = tmp_path / "copy.html"
    Explorer(copy_record, step="softmax").save(path)
    opened = Opened(browser, path)
    page = opened.page
    page.click('.bar.blocks [data-block="0"]')
    page.select_option("#wb-param", "attn.W_K")
    cell = '#wb-params td[data-param="attn.W_K"][data-at="0,3,1"]'
    page.click(cell)
    page.fill("#wb-params input.celledit", "-1.75")
    page.keyboard.press("Enter")
    assert "blocks.0.attn.W_K[0, 3, 1] = -1.75 (trained " in page.inner_text(".wb-edits")
    with page.expect_download() as download:
        page.click("#wb-download")
    saved = tmp_path / "parameters.json"
    download.value.save_as(saved)
    assert "--model copy --params parameters.json" in page.inner_text("#wb-note")
    sentence = copy_record.sentence
    got = page.evaluate("s => window.blockviz.run(s, {'blocks.0.attn.W_K': [[0, 3, 1, -1.75]]})", sentence)
    opened.close()
    rec = record(sentence, "copy", params=saved)
    assert float(rec.block(0).params["attn.W_K"][0, 3, 1]) == -1.75
    folder = _edited_copy_model(tmp_path, "blocks.0.attn.W_K", [0, 3, 1], -1.75)
    assert torch.equal(rec.probs, record(sentence, str(folder)).probs)  # the file holds the page's parameters
    _assert_close(got, rec, "downloaded")


def test_params_of_a_stack_missing_a_blocks_table_is_one_line(copy_record):
    from blockviz import BlockvizError

    tables = load_file(toy_folder("copy") / "model.safetensors")
    del tables["blocks.1.attn.W_Q"]
    with pytest.raises(
        BlockvizError,
        match=r"^the given parameters has no parameter 'blocks.1.attn.W_Q': add it with shape \[2, 16, 8\]$",
    ):
        record("the cat sat", "copy", params=tables)
