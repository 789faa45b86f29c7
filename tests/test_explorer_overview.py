"""The explorer's overview, presenting keys, phone widths and "≈", in Debian's Chromium (Playwright;
never `playwright install`).

The overview of a tiny two-layer BERT (tests/models_support.py) shows every layer's and head's
weights row of the token — the recorded layer's the record's, the others the model's own
``output_attentions`` — and every head of the recorded layer opens its softmax step in one click.
Page Down walks every step, each fully in view; at 390 px every table too wide for its box says
so; an operand line says "=" exactly when its shown operands, computed and rounded as shown,
give its shown result.
"""

from __future__ import annotations

import math
import re

import pytest

pytest.importorskip("transformers")
from click.testing import CliRunner  # noqa: E402
from models_support import SENTENCE, bert_folder  # noqa: E402
from support_browser import eventually
from support_explorer import AXE, SHOWN, Opened, expected_text  # noqa: E402

from blockviz.block_record import record  # noqa: E402
from blockviz.explorer import Explorer, steps_for  # noqa: E402
from blockviz.models import record_layer  # noqa: E402
from blockviz.models.recording import block_attentions, model_attentions  # noqa: E402
from blockviz.style import MINUS, format_number  # noqa: E402

CONTRAST = "the cat sat on the mat because it was a dog."


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    """A two-layer BERT page recorded at layer 1, with every layer's weights and a contrast sentence."""
    root = tmp_path_factory.mktemp("overview")
    folder = bert_folder(root / "bert")
    rec = record_layer(SENTENCE, model=str(folder), layer=1)
    attentions = model_attentions(SENTENCE, model=str(folder))
    contrast = model_attentions(CONTRAST, model=str(folder))
    path = root / "bert.html"
    Explorer(
        rec,
        token="it",
        step="overview",
        attentions=attentions,
        contrast=contrast,
        contrast_sentence=CONTRAST,
    ).save(path)
    return rec, attentions, contrast, path


READOUT = """() => Array.from(document.querySelectorAll('.readout [data-field]'),
  cell => [cell.dataset.field, '', cell.dataset.at, cell.textContent])"""


def _number(text: str) -> float:
    return float(text.replace(MINUS, "-").replace("∞", "inf"))


def test_every_head_of_every_layer_shows_its_numbers_and_the_recorded_ones_open_their_steps(browser, bert):
    rec, attentions, contrast, path = bert
    opened = Opened(browser, path)
    page = opened.page
    n_layers, n_heads = attentions.weights.shape[:2]
    it = rec.tokens.index("it")
    theirs = contrast.tokens.index("it")
    assert page.locator("#step-overview").is_visible()
    assert page.locator(".ovcell").count() == n_layers * n_heads == 4
    assert "the steps of this page are layer 1's" in page.text_content("#step-overview").lower()
    for layer in range(n_layers):
        for head in range(n_heads):
            cell = page.locator(f".ovcell[data-layer='{layer}'][data-head='{head}']")
            cell.focus()  # focus shows the cell's numbers under the grid
            row = attentions.weights[layer, head, it]
            if layer == 1:  # the recorded layer: the record's own weights
                readout = page.evaluate(READOUT)
                assert [at for _, _, at, _ in readout] == [f"{head},{it},{j}" for j in range(rec.n)]
                assert all(text == expected_text(rec, f, p, at) for f, p, at, text in readout)
            else:
                shown = page.evaluate(
                    "Array.from(document.querySelectorAll('.readout [data-overview]'), c => [c.dataset.overview, c.textContent])"
                )
                assert [at for at, _ in shown] == [f"{layer},{head},{it},{j}" for j in range(rec.n)]
                assert [text for _, text in shown] == [format_number(float(w)) for w in row]
            mine = page.evaluate(
                "Array.from(document.querySelectorAll('.readout [data-contrast]'), c => [c.dataset.contrast, c.textContent])"
            )
            assert [text for _, text in mine] == [
                format_number(float(w)) for w in contrast.weights[layer, head, theirs]
            ]
            label = cell.get_attribute("aria-label")  # the numbers for a screen reader: the largest weights first
            top = int(row.argmax())
            assert label.startswith(f"{rec.tokens[top]} {format_number(float(row[top]))} ")  # what the cell shows
            assert f". layer {layer} head {head}: it → {rec.tokens[top]} {format_number(float(row[top]))}, " in label
            assert f"contrast, it → {contrast.tokens[int(contrast.weights[layer, head, theirs].argmax())]}" in label
    for head in range(n_heads):  # one click: the recorded layer's head, step by step
        page.evaluate("location.hash = '#token=it&head=0&step=overview'")
        eventually(page, "document.querySelector('#step-overview').hidden === false")
        page.click(f".ovcell[data-layer='1'][data-head='{head}']")
        assert page.get_attribute(f".head[data-head='{head}']", "aria-checked") == "true"
        assert page.evaluate("location.hash") == f"#token=it&head={head}&step=softmax"
        assert (
            page.locator("#step-softmax").is_visible() and page.evaluate("document.activeElement.id") == "title-softmax"
        )
        cells = page.evaluate(SHOWN)
        assert [c for c in cells if c[3] != expected_text(rec, *c[:3])] == []
        assert page.locator("#step-softmax .check").text_content().startswith("✓")
    page.evaluate("location.hash = '#token=it&head=0&step=overview'")  # a cell of another layer stays on the overview
    eventually(page, "document.querySelector('#step-overview').hidden === false")
    page.click(".ovcell[data-layer='0'][data-head='1']")
    assert page.evaluate("location.hash").endswith("step=overview")
    assert "blockviz explore … --layer 0" in page.text_content(".readout")
    opened.close()


def test_a_one_block_record_is_its_own_overview_and_a_causal_query_says_it_cannot_see_the_contrast(browser, tmp_path):
    rec = record("the cat sat on the mat")
    other = record("the cat sat on the rug", config=rec.config)
    path = tmp_path / "one.html"
    Explorer(
        rec, token="cat", step="overview", contrast=block_attentions(other), contrast_sentence=other.sentence
    ).save(path)
    opened = Opened(browser, path)
    page = opened.page
    assert page.locator(".ovcell").count() == rec.config.n_heads
    assert "its weights are the same in both" in page.text_content("#step-overview .causalnote")
    page.click(".chip[data-token='5']")  # "mat" against "rug": matched by position, and it sees the difference
    assert page.locator("#step-overview .causalnote").count() == 0
    assert "(the same position)" in page.text_content("#step-overview")
    opened.close()


def _fully_in_view(page, step: str) -> bool:
    return page.evaluate(
        f"""() => {{ const box = document.getElementById('step-{step}').getBoundingClientRect();
        return box.top >= -1 && (box.bottom <= window.innerHeight + 1 || Math.abs(box.top) <= 1); }}"""
    )


@pytest.mark.parametrize("size", [(1280, 900), (390, 844)])
def test_page_down_walks_every_step_each_fully_in_view(browser, tmp_path, size):
    rec = record("The chicken didn't cross the road because it was too tired.")
    path = tmp_path / "present.html"
    Explorer(rec, token="it", step="overview").save(path)
    opened = Opened(browser, path)
    page = opened.page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    views = ["overview", *(s.name for s in steps_for(rec.config, rec.source))]
    for k, step in enumerate(views[1:], start=1):
        page.keyboard.press("PageDown")
        assert page.evaluate("location.hash").endswith(f"step={step}"), (k, step)
        assert page.locator(f"#step-{step}").is_visible() and _fully_in_view(page, step), (size, step)
    page.keyboard.press("PageDown")  # the last step stays
    assert page.evaluate("location.hash").endswith(f"step={views[-1]}")
    page.keyboard.press("p")
    assert page.evaluate("location.hash").endswith(f"step={views[-2]}") and _fully_in_view(page, views[-2])
    page.keyboard.press("n")
    page.keyboard.press("PageUp")
    assert page.evaluate("location.hash").endswith(f"step={views[-2]}")
    for _ in views:
        page.keyboard.press("PageUp")
    assert page.evaluate("location.hash").endswith("step=overview") and _fully_in_view(page, "overview")
    if size[0] < 500:  # on a phone the list of steps is above them: a tap brings the step into view
        page.evaluate("window.scrollTo(0, 0)")
        page.click(".stepnav button[data-step='mix']")
        assert _fully_in_view(page, "mix") and page.evaluate("window.scrollY") > 0
    opened.close()


CUES = """() => Array.from(document.querySelectorAll('.scroll'))
  .filter(box => box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1)
  .map(box => { const hint = box.previousElementSibling;
    return {label: box.dataset.label, cue: !!hint && hint.classList.contains('scrollhint') && hint.offsetParent !== null && /scroll/.test(hint.textContent),
            fade: box.classList.contains('more-right') && getComputedStyle(box).maskImage !== 'none'}; })"""


def test_at_390_px_no_table_hides_columns_without_a_cue(browser, bert, tmp_path):
    rec = record("The chicken didn't cross the road because it was too tired.")
    path = tmp_path / "phone.html"
    Explorer(rec, token="it").save(path)
    for page_path in (path, bert[3]):
        opened = Opened(browser, page_path)
        page = opened.page
        page.set_viewport_size({"width": 390, "height": 844})
        page.check("#all-steps")
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        eventually(
            page, "document.querySelectorAll('details table').length === document.querySelectorAll('details').length"
        )
        page.evaluate("window.dispatchEvent(new Event('resize'))")
        cues = page.evaluate(CUES)
        assert cues, "at 390 px some tables are wider than the screen"
        assert [c for c in cues if not (c["cue"] and c["fade"])] == [], cues
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the page itself never scrolls sideways
        box = page.locator(".scroll.wide").first  # scrolled to its end: the hint and the fade turn to the left
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; b.dispatchEvent(new Event('scroll')); }")
        assert box.evaluate("b => b.classList.contains('more-left') && !b.classList.contains('more-right')")
        assert box.evaluate("b => b.previousElementSibling.textContent.startsWith('←')")
        opened.close()


SIGNED = re.compile(r"(−?[\d.]+|−?∞)")


def test_approximately_equal_exactly_where_the_shown_numbers_need_rounding(browser, tmp_path):
    """Each exp cell of the softmax reads "exp(m − max) S₁ exp(d) S₂ e": S₁ is "=" exactly when the shown
    m − max is the shown d, S₂ exactly when exp(shown d) rounds to the shown e (the videos' rule)."""
    rec = record("The chicken didn't cross the road because it was too tired.")
    path = tmp_path / "approx.html"
    Explorer(rec, token="tired", step="softmax").save(path)
    opened = Opened(browser, path)
    page = opened.page
    signs = []
    for token in (1, 8, 12):
        for head in range(rec.config.n_heads):
            page.evaluate(f"location.hash = '#token={token}&head={head}&step=softmax'")
            eventually(page, f"document.querySelector('.chip[aria-checked=true]').dataset.token === '{token}'")
            for cell in page.locator("#step-softmax td[data-field='exp_scores']").all():
                cell.click()
                line = page.locator("#step-softmax .operands").text_content().split(" = ", 1)[1]
                match = re.fullmatch(r"exp\((\S+) − (\S+)\) ([=≈]) exp\((\S+)\) ([=≈]) (\S+)", line)
                assert match, line
                m, top, first, d, second, e = match.groups()
                difference = _number(m) - _number(top)
                assert first == ("=" if format_number(difference) == d else "≈"), line
                assert second == ("=" if format_number(math.exp(_number(d))) == e else "≈"), line
                signs += [first, second]
            cell = page.locator("#step-softmax td[data-field='weights']").first  # weight = exp / sum
            cell.click()
            line = page.locator("#step-softmax .operands").text_content().split(" = weight [0 The] = ", 1)[1]
            e, total, sign, w = re.fullmatch(r"(\S+) / (\S+) ([=≈]) (\S+)", line).groups()
            assert sign == ("=" if format_number(_number(e) / _number(total)) == w else "≈"), line
    assert "≈" in signs and "=" in signs  # both happen in this sentence
    opened.close()


def test_axe_finds_no_violations_on_the_overview(browser, bert):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(bert[3].resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        page.focus(".ovcell[data-layer='0'][data-head='1']")
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')])"
        )
    finally:
        context.close()
    assert violations == [], violations


def test_explore_contrast_refuses_the_same_sentence_and_a_record_file(tmp_path):
    from blockviz.cli.group import main

    runner = CliRunner()
    page = tmp_path / "page.html"
    same = runner.invoke(
        main, ["explore", "the cat sat", "--model", "seeded", "--contrast", " the cat sat ", "-o", str(page)]
    )
    assert same.exit_code == 2 and "is SENTENCE itself" in same.output and not page.exists()
    saved = tmp_path / "cat.safetensors"
    record("the cat sat").save(saved)
    from_file = runner.invoke(main, ["explore", "--record", str(saved), "--contrast", "the dog sat", "-o", str(page)])
    assert from_file.exit_code == 2 and "--contrast records its sentence afresh" in from_file.output
    assert not page.exists()
    made = runner.invoke(
        main,
        [
            "explore",
            "the cat sat",
            "--model",
            "seeded",
            "--contrast",
            "the dog sat",
            "--step",
            "overview",
            "-o",
            str(page),
        ],
    )
    assert made.exit_code == 0, made.output
    assert '"contrast":{"sentence":"the dog sat"' in page.read_text(encoding="utf-8")


def test_explore_a_model_layer_carries_every_layers_weights_and_the_contrasts(bert, tmp_path):
    from blockviz.cli.group import main
    from blockviz.errors import BlockvizError
    from blockviz.explorer.overview import overview_payload

    rec, attentions, contrast, path = bert
    folder = path.parent / "bert"
    page = tmp_path / "cli.html"
    result = CliRunner().invoke(
        main,
        [
            "explore",
            SENTENCE,
            "--model",
            str(folder),
            "--layer",
            "1",
            "--step",
            "overview",
            "--contrast",
            CONTRAST,
            "-o",
            str(page),
        ],
    )
    assert result.exit_code == 0, result.output
    overview = overview_payload(rec, attentions, contrast, CONTRAST)
    assert overview["layers"] == [0, 1] and overview["recorded"] == 1
    assert overview["others"]["shape"] == [1, rec.config.n_heads, rec.n, rec.n]  # layer 0 only: layer 1 is the record's
    text = page.read_text(encoding="utf-8")
    assert '"layers":[0,1],"recorded":1' in text and f'"sentence":"{CONTRAST}"' in text
    with pytest.raises(BlockvizError, match="not of the record's tokens"):
        overview_payload(rec, contrast)  # another sentence's attentions are not this record's overview
