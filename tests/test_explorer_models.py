"""The explorer on a trained model's layer, in Debian's Chromium (Playwright; never `playwright install`).

Tiny random GPT-2, BERT and Llama models built from a config (tests/models_support.py) go through
every step, token and head: the steps follow the record's architecture, every step is checked
("✓ matches the record"; a later layer's input, which one layer cannot recompute, says so), the
numbers shown are the record's, nothing logs an error and axe finds no violation. The packaged
MiniLM (and SmolLM2, once) make pages of at most 3 MB whose wide rows are elided legibly.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("transformers")
from models_support import BUILDERS, SENTENCE, packaged_model_installed  # noqa: E402
from support_browser import eventually, show_token_and_head
from support_explorer import AXE, OVERFLOW, SHOWN, Opened, expected_text  # noqa: E402

from blockviz.explorer import Explorer, steps_for  # noqa: E402
from blockviz.explorer import payload as payload_module  # noqa: E402
from blockviz.models import record_layer  # noqa: E402
from blockviz.recording import record  # noqa: E402

CHICKEN = "The chicken didn't cross the road because it was too tired."
GIVEN = "ⓘ the layer's input as the model computed it"
"""The input step of a later layer: the layers before it are not in the record."""


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {family: build(root / family) for family, build in BUILDERS.items()}


def _checks(page) -> list[tuple[str, str]]:
    return page.evaluate(
        "Array.from(document.querySelectorAll('.step .check'), c => [c.closest('.step').dataset.step, c.textContent])"
    )


def _all_checked(checks, given) -> bool:
    """Every step ✓; the input step, when ``given`` (a later layer, or BERT's embedding LayerNorm), says it is the model's own."""
    for step, text in checks:
        if step == "input" and given and text.startswith(GIVEN):
            continue
        if not text.startswith("✓ matches the record (max |Δ| "):
            return False
    return True


ORDER = {
    "gpt2": [
        "input",
        "ln1",
        "qkv",
        "scores",
        "scale",
        "mask",
        "softmax",
        "mix",
        "concat",
        "project",
        "add1",
        "ln2",
        "widen",
        "activation",
        "narrow",
        "add2",
        "output",
    ],
    "bert": [
        "input",
        "qkv",
        "scores",
        "scale",
        "mask",
        "softmax",
        "mix",
        "concat",
        "project",
        "add1",
        "ln1",
        "widen",
        "activation",
        "narrow",
        "add2",
        "ln2",
        "output",
    ],
    "llama": [
        "input",
        "ln1",
        "qkv",
        "rotary",
        "scores",
        "scale",
        "mask",
        "softmax",
        "mix",
        "concat",
        "project",
        "add1",
        "ln2",
        "gate",
        "activation",
        "up",
        "gate_up",
        "narrow",
        "add2",
        "output",
    ],
}
"""The steps of each family, in the order its block computes (BERT: post-norm, LayerNorm after each add)."""


@pytest.mark.parametrize(
    ("family", "layer"), [("gpt2", 0), ("gpt2", 1), ("bert", 0), ("bert", 1), ("llama", 0), ("llama", 1)]
)
def test_every_step_of_a_tiny_model_is_checked_and_shows_the_records_numbers(browser, folders, tmp_path, family, layer):
    rec = record_layer(SENTENCE, model=folders[family], layer=layer)
    assert [s.name for s in steps_for(rec.config, rec.source)] == ORDER[family]
    path = tmp_path / f"{family}.html"
    Explorer(rec, token="it").save(path)
    opened = Opened(browser, path)
    page = opened.page
    assert page.evaluate("Array.from(document.querySelectorAll('.stepnav button'), b => b.dataset.step)") == [
        "overview",
        *ORDER[family],
    ]
    given = (
        layer == 0 and family == "bert"
    )  # BERT's embedding LayerNorm is not recorded; a later layer's input is checked against the layer before's output
    seen = set()
    for head in range(rec.config.n_heads):
        for token in range(rec.n):
            show_token_and_head(page, token, head)
            checks = _checks(page)
            assert len(checks) == len(ORDER[family]) and _all_checked(checks, given), (family, token, head, checks)
            cells = page.evaluate(SHOWN)
            wrong = [(f or p, at, text) for f, p, at, text in cells if text != expected_text(rec, f, p, at)]
            assert wrong == [], (family, token, head, wrong[:5])
            seen.update(f for f, _, _, _ in cells if f)
    assert seen == set(rec.tensors)  # every recorded tensor is on the page somewhere
    assert page.locator("[data-recorded]").count() == 0  # each in the step its declaration names, drawn by that step
    input_check = dict(_checks(page))["input"]
    assert (
        input_check.startswith(GIVEN) if given else input_check.startswith("✓")
    )  # layer 0 of GPT-2: x = embed + pos_embed; of Llama: x = embed
    if layer > 0:
        assert (
            input_check.startswith("✓ matches the record (max |Δ| 0)")
            and f"x = layer {layer - 1}'s output" in input_check
        )
        assert page.text_content("#step-input .formula") == f"x = layer {layer - 1}'s output"
    if family == "llama":  # grouped-query attention: head 3 reads key/value head 1, which heads 2 and 3 share
        page.evaluate("location.hash = '#token=0&head=3&step=qkv'")
        eventually(page, "document.querySelector('.head[aria-checked=true]').dataset.head === '3'")
        assert "Query head 3 uses key/value head 1" in page.text_content("#step-qkv .kvnote")
        assert "b_Q" not in page.text_content("#step-qkv")  # Llama has no biases
        assert "RMSNorm" in page.text_content("#step-ln1") and "mean =" not in page.text_content("#step-ln1")
    if family == "bert":
        assert page.text_content("#step-ln1 h2") == "11. LayerNorm 1 (after the add)"
    opened.close()


def test_wide_rows_elide_and_a_page_cut_to_the_shown_weight_columns_still_checks_them(
    browser, folders, tmp_path, monkeypatch
):
    # The tiny Llama as a large model would be paged: rows past 6 columns elided, weights cut to the shown columns.
    monkeypatch.setattr(payload_module, "ELIDE_ABOVE", 6)
    monkeypatch.setattr(payload_module, "FIRST", 2)
    monkeypatch.setattr(payload_module, "LAST", 1)
    monkeypatch.setattr(payload_module, "LARGEST", 2)
    monkeypatch.setattr(payload_module, "PARAMETER_BUDGET", 0)
    monkeypatch.setattr(payload_module, "TEXT_LIMIT", 0)  # numbers as base64 bytes
    rec = record_layer(SENTENCE, model=folders["llama"], layer=1)
    path = tmp_path / "cut.html"
    Explorer(rec, token="it", step="gate").save(path)
    opened = Opened(browser, path)
    page = opened.page
    for head in range(rec.config.n_heads):
        page.evaluate(f"location.hash = '#token=it&head={head}&step=gate'")
        eventually(page, f"document.querySelector('.head[aria-checked=true]').dataset.head === '{head}'")
        assert _all_checked(_checks(page), True), _checks(page)
        cells = page.evaluate(SHOWN)
        assert [c for c in cells if c[3] != expected_text(rec, *c[:3])] == []
    caption = page.text_content("#step-gate .tablebox:nth-of-type(2) .tablecap")
    assert "19 of 24 columns hidden" in caption  # d_ff 24: 2 first, 1 last, the 2 largest
    assert "carries only the columns of W_gate" in page.text_content("#step-gate")
    header = page.evaluate(
        "Array.from(document.querySelectorAll('#step-gate .tablebox:nth-of-type(2) thead th'), th => th.textContent)"
    )
    assert header[:2] == ["f0", "f1"] and "⋯" in header and header[-1] == "f23"
    page.click("#step-gate .widen-toggle")
    assert page.evaluate("document.activeElement.classList.contains('widen-toggle')")
    header = page.evaluate(
        "Array.from(document.querySelectorAll('#step-gate .tablebox:nth-of-type(2) thead th'), th => th.textContent)"
    )
    assert header == [f"f{c}" for c in range(24)]
    assert _all_checked(_checks(page), True)  # the carried columns are still the ones checked
    opened.close()


DERIVED = {
    "gpt2": {"scaled_scores", "masked_scores", "concat", "resid_mid", "resid_post", "ln1_centred", "ln2_centred"},
    "bert": {"scaled_scores", "concat", "resid_mid", "resid_post", "ln1_centred", "ln2_centred"},
    "llama": {"scaled_scores", "masked_scores", "concat", "resid_mid", "resid_post"},
}
"""The tensors a packed page derives (blockviz.explorer.derived) for each family: BERT's masked
scores are its scaled scores ("same"), Llama's RMSNorm has no centred rows."""


@pytest.mark.parametrize("family", ["gpt2", "bert", "llama"])
def test_a_packed_page_derives_its_sums_and_centred_rows_exactly_and_shows_the_records_numbers(
    browser, folders, tmp_path, monkeypatch, family
):
    monkeypatch.setattr(payload_module, "TEXT_LIMIT", 0)  # packed, as a large model's page
    rec = record_layer(SENTENCE, model=folders[family], layer=1)
    tensors = payload_module.payload(rec, 0, 0, "input", "light")["tensors"]
    derived = {name: entry["derived"] for name, entry in tensors.items() if "derived" in entry}
    assert set(derived) == DERIVED[family]
    values = {name: tensor.numpy() for name, tensor in rec.tensors.items()}
    for name, how in derived.items():  # an independent reference: torch's float32 arithmetic on the operands
        a, *rest = (rec.tensors[operand] for operand in how["of"])
        expected = {
            "add": lambda: a + rest[0],
            "centre": lambda: a - rest[0][..., None],
            "divide": lambda: a / math.sqrt(rec.config.d_head),
            "concat": lambda: a.transpose(0, 1).reshape(rec.n, -1),
        }[how["op"]]()
        assert expected.numpy().tobytes() == values[name].tobytes(), name
    path = tmp_path / f"{family}.html"
    Explorer(rec, token=0, step="input").save(path)
    opened = Opened(browser, path)
    page = opened.page
    page.check("#all-steps")
    for head in range(rec.config.n_heads):
        for token in range(rec.n):
            show_token_and_head(page, token, head)
            cells = page.evaluate(SHOWN)
            assert {f for f, _, _, _ in cells} >= set(derived)
            assert [c for c in cells if c[3] != expected_text(rec, *c[:3])] == [], (family, token, head)
            assert _all_checked(_checks(page), True)
    opened.close()


def test_a_model_layers_page_and_the_seeded_blocks_say_in_one_line_why_they_are_static(browser, folders, tmp_path):
    pages = {
        "model": record_layer(SENTENCE, model=folders["gpt2"], layer=0),
        "seeded": record("the cat sat", "seeded"),
        "toy": record("the cat sat"),
    }
    notes = {}
    for name, rec in pages.items():
        path = tmp_path / f"{name}.html"
        Explorer(rec).save(path)
        opened = Opened(browser, path)
        notes[name] = opened.page.evaluate("Array.from(document.querySelectorAll('.staticnote'), p => p.textContent)")
        assert opened.page.locator("#wb-sentence").count() == (name == "toy")
        opened.close()
    assert notes["model"] == [
        "A static page: this model's weights (hundreds of MB) are not in it, so it shows this sentence only; "
        "the toy model's page (--model toy) runs its model and takes any sentence and edit."
    ]
    assert notes["seeded"] == [
        "A static page: the seeded block embeds a word with torch's random generator seeded by a hash of the word, "
        "which the page cannot reproduce, so it shows this sentence only; the toy model's page (--model toy) runs its "
        "model and takes any sentence and edit."
    ]
    assert notes["toy"] == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_violations_on_a_model_layer(browser, folders, tmp_path, theme, monkeypatch):
    monkeypatch.setattr(payload_module, "ELIDE_ABOVE", 6)  # the elided tables and their switches too
    rec = record_layer(SENTENCE, model=folders["llama"], layer=1)
    path = tmp_path / f"{theme}.html"
    Explorer(rec, token="it", theme=theme).save(path)
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        page.check("#all-steps")
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')])"
        )
    finally:
        context.close()
    assert violations == [], violations


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    if not packaged_model_installed("minilm"):
        pytest.skip("the packaged MiniLM is not installed (make setup installs it)")
    rec = record_layer(CHICKEN, model="minilm", layer=3)
    path = tmp_path_factory.mktemp("minilm") / "minilm.html"
    Explorer(rec, token="it", head=1, step="softmax").save(path)
    return rec, path


def test_minilm_layer_3_head_1_page(browser, minilm):
    rec, path = minilm
    assert path.stat().st_size <= 3_000_000
    opened = Opened(browser, path)
    page = opened.page
    assert page.evaluate("Array.from(document.querySelectorAll('.stepnav button'), b => b.dataset.step)") == [
        "overview",
        *ORDER["bert"],
    ]
    assert _all_checked(_checks(page), True), _checks(page)
    assert page.locator(".chip.special .word").all_text_contents() == ["[CLS]", "[SEP]"]
    assert page.get_attribute(".chip[data-token='0']", "aria-label") == "token 0: [CLS] (special token)"
    it, chicken = rec.tokens.index("it"), rec.tokens.index("chicken")
    assert page.text_content(f".pattern td[data-at='1,{it},{chicken}']") == "0.72"
    assert "minilm (bert), layer 3" in page.text_content("#summary")
    cells = page.evaluate(SHOWN)
    assert [c for c in cells if c[3] != expected_text(rec, *c[:3])] == []
    page.click(".stepnav button[data-step='widen']")
    assert "of 1536 columns hidden" in page.text_content("#step-widen")
    assert page.evaluate(
        "document.querySelector('#step-widen .scroll').scrollWidth <= document.querySelector('#step-widen .scroll').clientWidth + 1"
    )  # elided: it fits
    page.click("#step-widen .widen-toggle")
    assert (
        page.get_attribute("#step-widen .tablebox:nth-of-type(2) .scroll", "role") == "region"
    )  # all 1536: they scroll in their own box
    assert _all_checked(_checks(page), True)
    page.click("#step-widen .widen-toggle")  # back to the elided rows: every step at once fits the window
    page.check("#all-steps")
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    for width in (800, 1400):
        page.set_viewport_size({"width": width, "height": 900})
        eventually(
            page,
            "() => Array.from(document.querySelectorAll('.scroll')).every(b => (b.scrollWidth > b.clientWidth + 1) === (b.getAttribute('role') === 'region'))",
        )
        measured = page.evaluate(OVERFLOW)
        assert measured["page"] <= width and [o for o in measured["out"] if not o["clipped"]] == [], (
            width,
            measured["out"][:3],
        )
    opened.close()


def test_minilms_page_with_every_layers_weights_and_a_contrast_stays_under_1_5_mb(minilm):
    from blockviz.models.recording import model_attentions

    rec, _ = minilm  # 16 tokens: the largest case benchmarks/explorer.py measures (1.72 MB before derived tensors)
    attentions = model_attentions(CHICKEN, model="minilm")
    contrast_sentence = CHICKEN.replace("tired", "wide")
    contrast = model_attentions(contrast_sentence, model="minilm")
    page = Explorer(
        rec,
        token="it",
        head=1,
        step="overview",
        attentions=attentions,
        contrast=contrast,
        contrast_sentence=contrast_sentence,
    )
    assert len(page.html().encode()) <= 1_500_000


def test_explore_command_writes_the_minilm_page(minilm, tmp_path):
    from click.testing import CliRunner

    from blockviz.cli import main

    out = tmp_path / "it.html"
    result = CliRunner().invoke(
        main, ["explore", CHICKEN, "--model", "minilm", "--layer", "3", "--head", "1", "--token", "it", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == str(out) and 1_000_000 < out.stat().st_size <= 3_000_000
    result = CliRunner().invoke(
        main,
        ["explore", CHICKEN, "--model", "minilm", "--layer", "3", "--step", "gate", "-o", str(tmp_path / "gate.html")],
    )
    assert (
        result.exit_code == 2
        and "step 'gate' does not exist: choose one of overview, input, qkv, scores" in result.output
        and not (tmp_path / "gate.html").exists()
    )


def test_smollm2_layer_13_head_8_page(browser, tmp_path):
    if not packaged_model_installed("smollm2"):
        pytest.skip("the packaged SmolLM2 is not installed (make setup installs it)")
    rec = record_layer(CHICKEN, model="smollm2", layer=13)  # 20–75 s the first time, then cached
    path = tmp_path / "smollm2.html"
    Explorer(rec, token="it", head=8, step="rotary").save(path)
    assert path.stat().st_size <= 3_000_000
    opened = Opened(browser, path)
    page = opened.page
    assert page.evaluate("Array.from(document.querySelectorAll('.stepnav button'), b => b.dataset.step)") == [
        "overview",
        *ORDER["llama"],
    ]
    assert _all_checked(_checks(page), True), _checks(page)
    assert "Query head 8 uses key/value head 2" in page.text_content("#step-qkv")
    assert (
        page.text_content(f".pattern td[data-at='8,{rec.tokens.index('it')},{rec.tokens.index('chicken')}']") == "0.88"
    )
    assert "4-bit" in page.text_content("#summary")
    opened.close()
