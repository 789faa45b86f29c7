"""The explorer's last steps for a record with an unembedding (blockviz's trained toy model): the
final LayerNorm, the logits ln_f · W_U and their softmax, the next word. Which records have them,
what the page carries for them, and in Debian's Chromium (Playwright; never `playwright install`)
the prediction it shows, the sum of its terms, and its own checks — which fail on a record whose
numbers do not follow from each other."""

from dataclasses import replace

import numpy as np
import pytest
from support_browser import eventually
from support_explorer import AXE, SHOWN, Opened, expected_text

from blockviz.block_config import BlockConfig
from blockviz.block_record import record
from blockviz.errors import BlockvizError
from blockviz.explorer import STEP_NAMES, Explorer, explore, steps_for
from blockviz.explorer.packing import unpacked
from blockviz.explorer.payload import payload
from blockviz.prediction import prediction_of
from blockviz.selection import select_token
from blockviz.source import Source
from blockviz.style import format_number
from blockviz.toy.recording import record_toy

SENTENCE = "The chicken didn't cross the road because it was too tired."
PREDICTION_STEPS = ["ln_f", "logits", "prediction"]


@pytest.fixture(scope="module")
def toy():
    return record_toy(SENTENCE)


@pytest.fixture(scope="module")
def toy_page(toy, tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "toy.html"
    Explorer(toy, token="too", step="prediction").save(path)
    return path


# ---------- which records, what the page carries ----------


def test_the_prediction_steps_follow_the_blocks_output_only_with_an_unembedding(toy):
    names = [step.name for step in steps_for(toy.config, toy.source)]
    assert names == [*STEP_NAMES, *PREDICTION_STEPS]  # the block's own steps, then the model's last step
    final = steps_for(toy.config, toy.source)[-3]
    assert final.kind == "norm" and final.args["source"] == "resid_post" and final.args["output"] == "ln_f"
    model = Source("model", model="tiny", family="gpt2", layer=0, n_layers=2, dtype="float32")
    for config in (
        BlockConfig(),
        BlockConfig(causal=False),
        BlockConfig(norm_placement="post"),
        BlockConfig(norm="rmsnorm", positional="rotary", ffn="gated", bias=False, n_kv_heads=1),
    ):
        for source in (Source(), model):
            assert not set(PREDICTION_STEPS) & {step.name for step in steps_for(config, source)}, (config, source)
    with pytest.raises(BlockvizError, match="step 'prediction' does not exist: choose one of overview, input, "):
        explore(record("the cat sat"), step="prediction")


def _read(stored) -> np.ndarray:
    if "z" in stored:  # packed (blockviz.explorer.packing)
        values = np.frombuffer(unpacked(stored["z"], stored["size"]), "<f4" if stored["size"] == 4 else "<f8")
        return values.astype(np.float32).reshape(stored["shape"])
    return np.array(stored["data"], dtype=np.float64).astype(np.float32).reshape(stored["shape"])


def test_the_page_carries_the_records_prediction_numbers_and_the_models_tables(toy):
    data = payload(toy, 10, 0, "prediction", "light")
    for name in ("ln_f_mean", "ln_f_centred", "ln_f_var", "ln_f_norm", "ln_f", "logits", "probs"):
        assert np.array_equal(_read(data["tensors"][name]), toy.tensors[name].numpy()), name
    for name in ("W_U", "ln_f.weight", "ln_f.bias"):
        assert np.array_equal(_read(data["params"][name]), toy.params[name].numpy()), name
    assert data["source"]["vocabulary"] == list(toy.source.vocabulary)
    assert len(toy.source.vocabulary) == toy.config.vocab_size == data["config"]["vocab_size"]
    # The toy model's page is a workbench: it carries the embedding and position tables too, exactly.
    wide = sorted(
        name
        for group in ("tensors", "params")
        for name, stored in data[group].items()
        if toy.config.vocab_size in stored["shape"]
    )
    assert wide == ["W_E", "W_U", "logits", "probs"]
    for name in ("W_E", "W_pos"):
        assert np.array_equal(_read(data["params"][name]), toy.params[name].numpy()), name
    assert {key: data["workbench"][key] for key in ("max_tokens", "unknown", "n_blocks", "block")} == {
        "max_tokens": 25,
        "unknown": "<unk>",
        "n_blocks": 1,
        "block": 0,
    }


# ---------- in the browser ----------

PREDICTED = """() => {
  const step = document.querySelector('#step-prediction'), first = step.querySelector('.tablebox');
  return {
    sentence: step.querySelector('.prediction').textContent,
    rows: Array.from(first.querySelectorAll('tbody tr'), tr => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]),
    sum: step.querySelector('.sumline').textContent,
  };
}"""
CHECKS = "Array.from(document.querySelectorAll('.step .check'), c => [c.closest('.step').dataset.step, c.textContent])"


@pytest.mark.parametrize(("token", "sign"), [("too", "="), ("the#2", "\u2248")])
def test_the_next_word_is_the_records_top_5_and_others_whose_terms_add_up(browser, toy, toy_page, token, sign):
    opened = Opened(browser, toy_page, f"#token={token}&head=0&step=prediction")
    shown = opened.page.evaluate(PREDICTED)
    position = select_token(toy.tokens, token)
    guess = prediction_of(toy, position)
    terms, total = guess.terms(2), format_number(guess.total, 2)
    assert guess.sign(2) == sign  # both cases: the rounded terms add up exactly, and they do not
    named = ", ".join(f"{word!r} {term}" for word, term in zip(guess.words, terms))
    assert "<unk>" not in guess.words
    hidden_words = len(toy.source.vocabulary) - 1 - len(guess.words)  # the vocabulary's words less the shown
    assert shown["sentence"] == f"After {toy.tokens[position]!r}, the block predicts {named}, \u2026"
    assert shown["rows"] == [
        *([word, term] for word, term in zip(guess.words, terms)),
        [f"+ others ({hidden_words} words and <unk>)", terms[-1]],
        [f"{sign} total", total],
    ]
    assert shown["sum"].startswith(f"{' + '.join(terms)} {sign} {total}")
    written = sum(float(term) for term in terms)
    if sign == "=":
        assert abs(written - float(total)) < 0.005 and total == "1.00"
    else:  # each of the 6 terms is rounded on its own: they miss the total by at most 6 half-hundredths
        assert 0.005 <= abs(written - float(total)) <= 6 * 0.005
        assert shown["sum"].endswith(f"as written they add up to {format_number(written, 2)})")
    checks = dict(opened.page.evaluate(CHECKS))
    assert all(checks[name].startswith("✓ matches the record (max |Δ| ") for name in PREDICTION_STEPS), checks
    opened.close()


def test_every_token_every_step_is_checked_and_shows_the_records_numbers(browser, toy, toy_page):
    opened = Opened(browser, toy_page)
    page = opened.page
    for token in range(toy.n):
        page.evaluate(f"location.hash = '#token={token}&head=0&step=logits'")
        eventually(page, f"document.querySelector('.chip[aria-checked=true]').dataset.token === '{token}'")
        checks = page.evaluate(CHECKS)
        assert [name for name, _ in checks] == [*STEP_NAMES, *PREDICTION_STEPS]
        assert all(text.startswith("✓ matches the record (max |Δ| ") for _, text in checks), (token, checks)
        cells = page.evaluate(SHOWN)
        wrong = [(f or p, at, text) for f, p, at, text in cells if text != expected_text(toy, f, p, at)]
        assert wrong == [], (token, wrong[:5])
        shown = {f for f, _, _, _ in cells}
        assert {"ln_f_mean", "ln_f_var", "ln_f_centred", "ln_f_norm", "ln_f", "logits", "probs"} <= shown
        assert page.locator("[data-recorded]").count() == 0  # each in the step its declaration names, drawn by it
    opened.close()


def test_the_largest_ten_words_show_and_a_switch_shows_all(browser, toy, toy_page):
    opened = Opened(browser, toy_page, "#token=too&head=0&step=logits")
    page = opened.page
    rows = "() => Array.from(document.querySelectorAll('#step-logits tbody th'), th => th.textContent)"
    logits = toy.logits[select_token(toy.tokens, "too")].numpy()
    largest = [toy.source.vocabulary[w] for w in np.argsort(-logits, kind="stable")]
    assert page.evaluate(rows) == ["ln_f of 10 too", *largest[:10]]
    page.click("#step-logits .words-toggle")
    assert page.evaluate(rows) == ["ln_f of 10 too", *largest]
    assert page.evaluate("document.activeElement.classList.contains('words-toggle')")
    assert page.locator("#step-logits .check").text_content().startswith("✓ matches the record")
    opened.close()


def test_a_record_whose_logits_do_not_follow_fails_the_check(browser, toy, tmp_path):
    logits = toy.logits.clone()
    logits[10, int(toy.probs[10].argmax())] += (
        0.05  # the top word's: no longer ln_f · W_U, and probs no longer its softmax
    )
    path = tmp_path / "wrong.html"
    Explorer(replace(toy, tensors={**toy.tensors, "logits": logits}), token="too").save(path)
    opened = Opened(browser, path)
    checks = dict(opened.page.evaluate(CHECKS))
    assert checks["ln_f"].startswith("✓") and checks["logits"].startswith("✗") and checks["prediction"].startswith("✗")
    opened.close()


def test_axe_finds_no_violations_in_the_prediction_steps(browser, toy_page):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(toy_page.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        page.check("#all-steps")
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')])"
        )
    finally:
        context.close()
    assert violations == [], violations
