"""The explorer as a workbench for blockviz's trained toy model: the page carries the model's
parameters and runs its whole forward pass (``forward.js``). In Debian's Chromium (Playwright;
never `playwright install`): ``window.blockviz.run(sentence, edits)`` equals the Python record of
that sentence with those parameters, field by field; it refuses what the CLI refuses; and the
parameters the page downloads, given to ``blockviz record --params``, reproduce its numbers.
"""

import base64
import json
import random

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from support_browser import eventually
from support_explorer import Opened, expected_text

from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.explorer import Explorer
from blockviz.explorer.payload import is_workbench, payload
from blockviz.recording import record
from blockviz.style import format_number
from blockviz.toy.recording import toy_tokens

TOLERANCE = 1e-5
"""|page − record| ≤ TOLERANCE × (1 + |record|); for the logits, the sum of 8 products
ln_f_c × W_U[c, word] whose terms can be large and cancel, × (1 + Σ_c |ln_f_c × W_U[c, word]|),
the scale of the explorer's own check of a dot product: torch's float32 matrix product rounds each
term, the page rounds as a sequential fused multiply-add does; for a LayerNorm's norm and output,
+ max|input row| / √(var + ε) × max(1, max|γ|), the factor by which it amplifies its input's
float32 rounding (a row of small variance)."""
UNKNOWN = ["zorblax", "Quux", "naïve", "42", "😀"]


@pytest.fixture(scope="module")
def trained():
    return record("the cat sat on the mat")


@pytest.fixture(scope="module")
def bench(browser, trained, tmp_path_factory):
    path = tmp_path_factory.mktemp("workbench") / "toy.html"
    Explorer(trained, token="sat").save(path)
    opened = Opened(browser, path)
    yield opened
    opened.close()


def sentences(vocabulary, count=50, seed=35):
    """``count`` sentences of the vocabulary's words (some capitalised, some unknown), 1 to 25
    tokens, the first of exactly 25 (the position limit) and one with a contraction."""
    rng = random.Random(seed)
    words = [word for word in vocabulary[1:] if word.isalpha()]
    out = []
    for k in range(count):
        length = 25 if k == 0 else rng.randint(1, 25)
        tokens = [rng.choice(words) for _ in range(length)]
        if k % 3 == 1 and length > 1:
            tokens[rng.randrange(1, length)] = rng.choice(UNKNOWN)
        if k % 5 == 2:
            tokens[0] = tokens[0].capitalize()
        out.append(" ".join(tokens))
    out[3] = "The chicken didn't cross the road because it was too tired."
    return out


def random_edits(params, count, rng):
    """``count`` single-weight edits ``{name: [[index…, value]]}``, values float32-exact."""
    names = sorted(params)
    edits = []
    for _ in range(count):
        name = rng.choice(names)
        index = [rng.randrange(size) for size in params[name].shape]
        value = float(np.float32(rng.uniform(-3.0, 3.0)))
        edits.append({name: [[*index, value]]})
    return edits


def with_edit(params, edit):
    ((name, [[*index, value]]),) = edit.items()
    changed = dict(params)
    changed[name] = params[name].clone()
    changed[name][tuple(index)] = value
    return changed


RUN_ALL = """cases => cases.map(([sentence, edits]) => {
  const out = window.blockviz.run(sentence, edits), parts = [];
  for (const name of Object.keys(out)) if (name !== 'tokens' && name !== 'unknown') parts.push(out[name].flat(4).map(v => v === null ? -Infinity : v));
  const bytes = new Uint8Array(Float64Array.from(parts.flat()).buffer);
  let text = '';
  for (let k = 0; k < bytes.length; k += 8192) text += String.fromCharCode.apply(null, bytes.subarray(k, k + 8192));
  return {tokens: out.tokens, unknown: out.unknown, names: Object.keys(out).filter(n => n !== 'tokens' && n !== 'unknown'), numbers: btoa(text)};
})"""


def test_only_the_trained_toy_models_page_is_a_workbench(trained):
    assert is_workbench(trained)
    assert not is_workbench(record("the cat sat", "seeded"))


@pytest.mark.filterwarnings("ignore::blockviz.toy.recording.UnknownWordsWarning")
def test_the_pages_forward_pass_equals_the_python_record_for_50_sentences_and_1000_edits(bench, trained):
    rng = random.Random(7)
    cases = []
    for sentence in sentences(trained.source.vocabulary):
        cases.append([sentence, {}])
        cases.extend([sentence, edit] for edit in random_edits(trained.params, 20, rng))
    results = bench.page.evaluate(RUN_ALL, cases)
    assert len(results) == 50 * 21
    lengths = set()
    worst = 0.0
    for (sentence, edits), got in zip(cases, results):
        params = with_edit(trained.params, edits) if edits else None
        rec = record(sentence, "toy", params=params) if params else record(sentence)
        assert got["tokens"] == list(rec.tokens)
        unknown = [t for t in dict.fromkeys(rec.tokens) if t.lower() not in rec.source.vocabulary]
        assert got["unknown"] == unknown
        assert sorted(got["names"]) == sorted(spec.name for spec in rec.fields)
        numbers = np.frombuffer(base64.b64decode(got["numbers"]), dtype="<f8")
        want = np.concatenate([rec.tensors[name].double().reshape(-1).numpy() for name in got["names"]])
        assert numbers.shape == want.shape
        blocked = np.isneginf(want)
        assert np.array_equal(np.isneginf(numbers), blocked), (
            sentence,
            edits,
        )  # −∞ (the mask) exactly where the record has it
        scale = {name: 1 + rec.tensors[name].double().abs() for name in got["names"]}
        scale["logits"] = 1 + rec.tensors["ln_f"].double().abs() @ rec.params["W_U"].double().abs()
        for norm, source in (("ln1", "resid_pre"), ("ln2", "resid_mid"), ("ln_f", "resid_post")):
            t = rec.tensors
            condition = t[source].double().abs().amax(-1) / (t[f"{norm}_var"].double() + rec.config.ln_eps).sqrt()
            gain = max(1.0, float(rec.params[f"{norm}.weight"].abs().max()))
            for name in (f"{norm}_norm", norm):
                scale[name] = scale[name] + condition[:, None] * gain
        scales = np.concatenate([scale[name].reshape(-1).numpy() for name in got["names"]])
        error = np.abs(numbers[~blocked] - want[~blocked]) / scales[~blocked]
        where = np.repeat(got["names"], [rec.tensors[name].numel() for name in got["names"]])[~blocked]
        assert error.max() <= TOLERANCE, (sentence, edits, float(error.max()), where[error.argmax()])
        worst = max(worst, float(error.max()))
        lengths.add(len(rec.tokens))
    assert 25 in lengths and min(lengths) <= 3
    assert worst > 0  # float64 against float32: never bit-equal, so the comparison is a real one


def test_the_page_refuses_what_the_cli_refuses(bench):
    too_long = " ".join(["the"] * 26)
    with pytest.raises(BlockvizError) as cli_error:
        toy_tokens(too_long, 25)
    message = bench.page.evaluate(
        """sentence => { try { window.blockviz.run(sentence, {}); return null; } catch (e) { return e.message; } }""",
        too_long,
    )
    assert message is not None and str(cli_error.value).startswith(message.split(" (")[0])
    refusals = bench.page.evaluate(
        """() => [['', {}], ['zorblax quux', {}], ['the cat', {'attn.W_X': [[0, 0, 0, 1]]}], ['the cat', {'attn.W_Q': [[2, 0, 0, 1]]}],
                  ['the cat', {'attn.W_Q': [[0, 0, 0, NaN]]}], ['the cat', {'attn.W_Q': [[0, 0, 0, Infinity]]}], ['the cat', {'W_U': [[0, 0, '1']]}]]
          .map(([s, e]) => { try { window.blockviz.run(s, e); return null; } catch (error) { return error.message; } })"""
    )
    assert refusals[0].startswith("the sentence is empty")
    assert refusals[1].startswith("no word of the sentence is in the toy model's vocabulary")
    assert refusals[2].startswith('no parameter "attn.W_X"')
    assert refusals[3] == "index [2, 0, 0] is outside attn.W_Q, shaped 2 × 8 × 4"
    assert (
        "must be a finite number, not NaN" in refusals[4] and "not Infinity" in refusals[5] and "not 1" in refusals[6]
    )


def test_mask_off_lets_every_token_see_every_token(bench):
    off = bench.page.evaluate("() => window.blockviz.run('the cat sat', {}, {maskOff: true})")
    on = bench.page.evaluate("() => window.blockviz.run('the cat sat', {})")
    weights, causal = np.array(off["weights"]), np.array(on["weights"])
    assert off["mask"] == [[0.0] * 3] * 3 and on["mask"][0] == [0.0, None, None]
    assert (weights > 0).all() and np.allclose(weights.sum(-1), 1)
    assert np.array_equal(weights[:, 2], causal[:, 2])  # the last token saw every key already
    assert not np.allclose(weights[:, 0], causal[:, 0])


def test_a_record_of_the_toy_model_with_params_from_a_file(tmp_path, trained):
    edited = with_edit(trained.params, {"attn.W_Q": [[0, 0, 1, 0.5]]})
    path = tmp_path / "params.json"
    path.write_text(json.dumps({name: tensor.tolist() for name, tensor in edited.items()}))
    from_file = record("the cat sat", "toy", params=path)
    given = record("the cat sat", "toy", params=edited)
    assert torch.equal(from_file.probs, given.probs) and not torch.equal(given.probs, record("the cat sat").probs)
    assert from_file.params["attn.W_Q"][0, 0, 1] == 0.5
    saved = tmp_path / "saved.json"
    given.save(saved)  # a saved toy record works as the file too
    assert torch.equal(record("the cat sat", "toy", params=saved).weights, given.weights)
    result = CliRunner().invoke(
        main, ["record", "the cat sat", "--model", "toy", "--params", str(path), "--save", str(tmp_path / "out.json")]
    )
    assert result.exit_code == 0, result.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({**{name: tensor.tolist() for name, tensor in edited.items()}, "attn.W_Q": [[0.0]]}))
    result = CliRunner().invoke(main, ["record", "the cat sat", "--model", "toy", "--params", str(wrong)])
    assert result.exit_code != 0 and "has shape [1, 1], expected [2, 8, 4]" in result.output


# ---------- the workbench in the page: typing, editing, the link, the download ----------


def _shown_weights(page):
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.pattern td[data-field="weights"]'), td => [td.dataset.at, td.textContent])"""
    )


def test_typing_a_sentence_and_editing_a_cell_recompute_every_step_as_the_cli_does(browser, trained, tmp_path):
    path, opened = open_toy_page(browser, trained, tmp_path)
    page = opened.page
    page.fill("#wb-sentence", "the dog sat on the zorblax")
    eventually(
        page, "() => document.querySelector('.bar.tokens').innerText.includes('zorblax')"
    )  # drawn on the next frame
    assert page.inner_text(".bar.tokens").count("zorblax") == 1
    assert "“zorblax” is not in the toy model's vocabulary: read as <unk>" in page.inner_text("#wb-note")
    assert page.get_attribute('[data-token="5"]', "class") == "chip unknown"
    cell = '#wb-params [data-param="attn.W_Q"][data-at="0,0,1"]'
    page.click(cell)
    page.keyboard.type("NaN")
    page.keyboard.press("Enter")
    assert "is not a finite number: attn.W_Q[0, 0, 1] keeps" in page.inner_text("#wb-params .operands")
    assert page.evaluate("location.hash").find("edits=") < 0  # refused: nothing changed
    page.fill("#wb-params input.celledit", "2.5")
    page.keyboard.press("Enter")
    assert page.get_attribute(cell, "class") == "num draggable edited"  # a parameter: drag it, or type
    assert page.evaluate("document.activeElement.dataset.at") == "0,0,1"  # the focus stays on the cell
    with page.expect_download() as download:
        page.click("#wb-download")
    saved = tmp_path / "parameters.json"
    download.value.save_as(saved)
    out = tmp_path / "record.json"
    result = CliRunner().invoke(
        main, ["record", "the dog sat on the zorblax", "--model", "toy", "--params", str(saved), "--save", str(out)]
    )
    assert result.exit_code == 0, result.output
    rec = record("the dog sat on the zorblax", "toy", params=saved)
    assert float(rec.params["attn.W_Q"][0, 0, 1]) == 2.5
    shown = _shown_weights(page)
    assert len(shown) == 36
    for at, text in shown:
        assert text == expected_text(rec, "weights", "", at), at
    moved = page.evaluate("() => document.querySelectorAll('.pattern td.moved').length")
    before, mask = record("the dog sat on the zorblax").weights, rec.tensors["mask"]
    assert moved == sum(
        format_number(float(rec.weights[0, q, j])) != format_number(float(before[0, q, j]))
        for q in range(6)
        for j in range(6)
        if mask[q, j] == 0
    )
    assert moved > 0
    link = page.evaluate("location.hash")
    assert "sentence=the%20dog%20sat%20on%20the%20zorblax" in link and "edits=" in link
    again = Opened(browser, path, link)  # a link keeps the sentence and the edits
    assert _shown_weights(again.page) == shown
    assert "attn.W_Q[0, 0, 1] = 2.5 (trained " in again.page.inner_text(".wb-edits")
    again.page.click("#wb-reset-all")
    assert again.page.evaluate("() => document.querySelectorAll('td.edited').length") == 0
    assert [text for _, text in _shown_weights(again.page)] == [
        expected_text(record("the dog sat on the zorblax"), "weights", "", at) for at, _ in shown
    ]
    again.close()
    opened.close()


def test_mask_off_hostile_text_and_the_position_limit(browser, trained, tmp_path):
    path = tmp_path / "toy.html"
    Explorer(trained).save(path)
    opened = Opened(browser, path)
    page = opened.page
    page.check("#wb-mask")
    eventually(page, "() => location.hash.includes('mask=off')")
    assert page.evaluate("() => document.querySelectorAll('.pattern td.blockedcell').length") == 0
    page.fill("#wb-sentence", 'the cat <img src=x onerror=alert(1)> "</script>')
    eventually(page, "() => document.querySelector('.bar.tokens').innerText.includes('onerror')")
    assert page.evaluate("() => document.querySelectorAll('script').length") == 2  # the data and the page's own script
    assert page.evaluate("() => document.querySelectorAll('img').length") == 0
    assert "img" in page.inner_text(".bar.tokens")
    page.fill("#wb-sentence", " ".join(["the"] * 26))
    page.wait_for_selector("#wb-sentence[aria-invalid]")
    assert page.inner_text("#wb-note").startswith("the sentence has 26 tokens, more than max_tokens 25")
    assert page.get_attribute("#wb-sentence", "aria-invalid") == "true"
    assert page.inner_text(".bar.tokens").count("img") == 1  # nothing recomputed past the limit
    opened.close()


def test_every_workbench_control_is_reached_by_the_keyboard_and_the_pattern_is_legible(browser, trained, tmp_path):
    path = tmp_path / "toy.html"
    Explorer(trained).save(path)
    opened = Opened(browser, path)
    page = opened.page
    reached = []
    for _ in range(60):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id || document.activeElement.className"))
    for control in ("wb-sentence", "wb-mask", "wb-download", "wb-param", "wb-param-head"):
        assert control in reached, (control, reached)
    page.focus("#wb-download")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    size = page.evaluate(
        """() => { const t = document.querySelector('.pattern table.grid'), td = t.querySelector('td[data-field]');
                   return [t.getBoundingClientRect().width, parseFloat(getComputedStyle(td).fontSize)]; }"""
    )
    assert size[0] >= 240 and size[1] >= 12
    assert page.evaluate("() => document.querySelectorAll('.legend').length") >= 2
    opened.close()


def test_the_toy_models_page_stays_small_and_a_real_model_stays_static(trained, tmp_path):
    words = [word for word in trained.source.vocabulary[1:] if word.isalpha()]
    longest = " ".join(random.Random(0).sample(words, 25))  # 25 different words: the least compressible numbers
    path = tmp_path / "long.html"
    Explorer(record(longest)).save(path)
    assert path.stat().st_size <= 250_000
    text = path.read_text()
    assert "default-src 'none'" in text and "'unsafe-inline'" not in text


def test_completion_a_legend_for_every_scale_the_hover_readout_and_resetting_one_edit(browser, trained, tmp_path):
    path, opened = open_toy_page(browser, trained, tmp_path)
    page = opened.page
    page.fill("#wb-sentence", "the ch")
    options = page.evaluate("Array.from(document.querySelectorAll('#wb-words option'), o => o.value)")
    assert "the chicken" in options and all(option.startswith("the ch") for option in options)
    families = payload(trained, 2, 0, "input", "light")["families"]
    legends = dict(
        page.evaluate(
            "Array.from(document.querySelectorAll('#legend-list .legend'), p => [p.dataset.family, p.textContent])"
        )
    )
    assert set(legends) == set(families)  # one legend a colour scale, the weights' 0 to 1 among them
    zero_to_one = page.evaluate(
        "Array.from(document.querySelectorAll('#legend-list .legend[data-family=\"weights\"] .label'), p => p.textContent)"
    )
    assert zero_to_one == [
        "weights (\u221a scale): ",
        "probability (\u221a scale): ",
    ]  # the next-token probabilities' own
    for family, limit in families.items():
        if family == "mask":  # 0 or −∞ (the toy is causal): no scale to read, its two values as the tables draw them
            assert legends[family] == "mask:  0 for a key seen,  \u2212\u221e for a key blocked"
        elif family in ("variance", "exp_scores", "exp_sums"):  # never negative: from 0, not from −limit
            assert legends[family].endswith(f": 0{format_number(limit)}"), (family, legends[family])
        elif family != "weights":
            assert legends[family].endswith(f"\u2212{format_number(limit)}{format_number(limit)}"), (
                family,
                legends[family],
            )
    page.fill("#wb-sentence", "the cat sat")
    eventually(page, "() => document.querySelectorAll('.pattern td[data-field=\"weights\"]').length === 9")
    page.hover('.pattern td[data-at="0,2,1"]')
    rec = record("the cat sat")
    assert page.inner_text(".pattern .hoverline") == f"sat → cat: {format_number(float(rec.weights[0, 2, 1]))}"
    cell = '#wb-params [data-param="attn.W_Q"][data-at="0,0,1"]'
    page.click(cell)
    page.fill("#wb-params input.celledit", "2.5")
    page.keyboard.press("Enter")
    assert page.locator("td.edited").count() > 0 and "edits=" in page.evaluate("location.hash")
    page.click('button[aria-label="reset attn.W_Q[0, 0, 1]"]')
    assert page.locator("td.edited").count() == 0 and page.locator(".wb-edits li").count() == 0
    assert "edits=" not in page.evaluate("location.hash")
    assert page.evaluate("document.activeElement.id") == "wb-sentence"  # not lost: "reset all" is disabled now
    assert [text for _, text in _shown_weights(page)] == [
        expected_text(rec, "weights", "", at) for at, _ in _shown_weights(page)
    ]
    opened.close()


def open_toy_page(browser, trained, tmp_path):
    """The trained toy's workbench page on "sat", written under ``tmp_path`` and opened in
    Chromium: ``(path, opened)`` (close ``opened`` at the end)."""
    path = tmp_path / "toy.html"
    Explorer(trained, token="sat").save(path)
    return path, Opened(browser, path)


def test_the_header_follows_the_sentence_typed_and_the_box_shows_it_whole(browser, trained, tmp_path):
    from blockviz.explorer.summary import summary_line

    _, opened = open_toy_page(browser, trained, tmp_path)
    page = opened.page
    assert page.inner_text("#summary") == summary_line(trained)
    typed = "The dog didn't cross the street because it was too scared."
    page.fill("#wb-sentence", typed)
    eventually(page, "() => document.querySelector('.bar.tokens').innerText.includes('scared')")
    assert page.inner_text("#summary") == summary_line(record(typed))  # the CLI's header for that sentence
    assert "13 tokens" in page.inner_text("#summary")
    assert page.title() == f"blockviz explorer — {typed}"
    box = page.evaluate(
        "(() => { const b = document.getElementById('wb-sentence'); return [b.scrollWidth, b.clientWidth]; })()"
    )
    assert box[0] <= box[1], box  # the whole sentence in view, none of it scrolled out of the box
    opened.close()
