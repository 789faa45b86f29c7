"""The workbench pages (the toy model's, the copy model's two blocks) by keyboard, screen reader and
phone, in Debian's Chromium: Tab reaches every control and shows where it is; every grid has a
name; axe-core finds no violation; at 390 px wide nothing overflows the window."""

import pytest
from support_browser import eventually
from support_explorer import AXE, OVERFLOW, Opened

from blockviz.explorer import Explorer
from blockviz.recording import record

CONTROLS = """() => Array.from(document.querySelectorAll('button, input, select, textarea, a[href], [tabindex="0"]'))
  .filter(e => !e.disabled && e.tabIndex >= 0 && e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')
  .map((e, k) => { e.dataset.probe = k; return k; })"""
FOCUSED = """() => { const e = document.activeElement, s = getComputedStyle(e);
  return [e.dataset.probe === undefined ? null : Number(e.dataset.probe), s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1, e.id || e.className]; }"""
NAMES = """() => Array.from(document.querySelectorAll('table'), t => {
  const by = t.getAttribute('aria-labelledby'), named = by ? document.getElementById(by) : null;
  return (t.getAttribute('aria-label') || (named ? named.textContent : '') || (t.caption ? t.caption.textContent : '')).trim();
})"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("access")
    toy, stack = folder / "toy.html", folder / "copy.html"
    Explorer(record("the cat sat on the mat"), token="sat", step="softmax").save(toy)
    Explorer(record("the cat sat on the mat the cat", "copy"), step="softmax").save(stack)
    return {"toy": toy, "copy": stack}


@pytest.mark.parametrize("name", ["toy", "copy"])
def test_tab_reaches_every_control_and_each_shows_its_focus(browser, pages, name):
    opened = Opened(browser, pages[name])
    page = opened.page
    controls = page.evaluate(CONTROLS)
    assert len(controls) > 15
    reached, outlined = set(), set()
    for _ in range(len(controls) + 5):
        page.keyboard.press("Tab")
        probe, outline, what = page.evaluate(FOCUSED)
        if probe is not None:
            reached.add(probe)
            if outline:
                outlined.add(probe)
    missing = sorted(set(controls) - reached)
    assert missing == [], page.evaluate(
        "ks => ks.map(k => document.querySelector('[data-probe=\"' + k + '\"]').outerHTML.slice(0, 120))", missing
    )
    assert outlined == reached  # a visible outline on each (:focus-visible after a Tab)
    wanted = ["#wb-sentence", "#wb-mask", "#wb-download", "#wb-param", "#wb-param-head", "#theme-toggle"]
    if name == "copy":
        wanted.append('.bar.blocks [data-block="1"]')  # the block selector: one tab stop, the shown block
    for selector in wanted:
        assert page.evaluate(f"() => document.querySelector('{selector}').dataset.probe") is not None, selector
    opened.close()


@pytest.mark.parametrize("name", ["toy", "copy"])
def test_every_grid_has_a_name_and_axe_finds_no_violation(browser, pages, name):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(pages[name].resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        names = page.evaluate(NAMES)
        assert len(names) > 5 and all(names), names
        assert "Attention weights of head 0: rows are queries, columns keys" in names
        if name == "copy":
            assert any(text.startswith("Token 7 cat's row of the residual stream") for text in names)
            assert page.get_attribute(".bar.blocks", "aria-label") == "Block"
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')])"
        )
    finally:
        context.close()
    assert violations == [], violations


@pytest.mark.parametrize("name", ["toy", "copy"])
def test_a_phone_390_px_wide_scrolls_no_page_sideways(browser, pages, name, tmp_path):
    opened = Opened(browser, pages[name])
    page = opened.page
    page.set_viewport_size({"width": 390, "height": 844})
    eventually(
        page,
        "() => Array.from(document.querySelectorAll('.scroll')).every(b => (b.scrollWidth > b.clientWidth + 1) === (b.getAttribute('role') === 'region'))",
    )
    measured = page.evaluate(OVERFLOW)
    assert measured["width"] == 390 and measured["page"] <= 390, measured["page"]
    assert [o for o in measured["out"] if not o["clipped"]] == [], measured["out"][:3]
    assert all(box["region"] for box in measured["scrolling"] if box["wide"])  # a wide table scrolls in its own box
    page.screenshot(path=str(tmp_path / f"{name}-390.png"), full_page=True)
    opened.close()
