"""The explorer in a real browser: Debian's Chromium driven by Playwright (never `playwright install`).

Every request other than the page itself is aborted and any console error fails the test. One
browser serves the whole module.
"""

import re
from dataclasses import replace

import numpy as np
import pytest
from support_browser import eventually, show_token_and_head
from support_explorer import AXE, OVERFLOW, SHOWN, Opened, expected_text

import blockviz
from blockviz.block_record import record
from blockviz.explorer import STEP_NAMES, Explorer
from blockviz.record_fields import FIELDS
from blockviz.style import DARK, LIGHT, format_number, hex_color, signed_color, weight_color


@pytest.fixture(scope="module")
def chicken(tmp_path_factory):
    rec = record("The chicken didn't cross the road because it was too tired.")
    path = tmp_path_factory.mktemp("explorer") / "chicken.html"
    Explorer(rec, token="it").save(path)
    return rec, path


@pytest.fixture()
def opened(browser, chicken):
    pages = []

    def open_page(path=None, hash_text=""):
        pages.append(Opened(browser, path or chicken[1], hash_text))
        return pages[-1].page

    yield open_page
    for page in pages:
        page.close()


def test_every_view_shows_the_records_numbers_and_every_check(opened, chicken):
    rec, _ = chicken
    page = opened()
    seen_fields = set()
    for head in range(rec.config.n_heads):
        for token in range(rec.n):
            show_token_and_head(page, token, head)
            cells = page.evaluate(SHOWN)
            wrong = [(f or p, at, text) for f, p, at, text in cells if text != expected_text(rec, f, p, at)]
            assert wrong == [], (token, head, wrong[:5])
            seen_fields.update(f for f, _, _, _ in cells if f)
            checks = page.locator(".step .check").all_text_contents()
            assert len(checks) == len(STEP_NAMES)
            assert all(text.startswith("✓ matches the record (max |Δ| ") for text in checks), (token, head, checks)
    assert seen_fields == set(rec.tensors)  # every recorded tensor appears somewhere
    assert page.locator("[data-recorded]").count() == 0  # each in the step its declaration names, drawn by that step


def test_clicks_keys_and_the_link(opened, chicken):
    page = opened()
    assert page.evaluate("location.hash") == "#token=it&head=0&step=input"
    assert page.evaluate("document.activeElement === document.body")  # nothing clicked yet
    page.keyboard.press("ArrowRight")
    assert page.get_attribute(".chip[data-token='9']", "aria-checked") == "true"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("location.hash") == "#token=because&head=0&step=input"
    assert (
        page.evaluate("Array.from(document.querySelectorAll('.chip'), c => c.tabIndex)") == [-1] * 7 + [0] + [-1] * 5
    )  # one tab stop
    page.click(".chip[data-token='1']")
    assert page.evaluate("location.hash") == "#token=chicken&head=0&step=input"
    page.keyboard.press("ArrowRight")  # the clicked chip has the focus
    page.keyboard.press("End")
    assert page.get_attribute(".chip[data-token='12']", "aria-checked") == "true"
    assert page.evaluate("document.activeElement.dataset.token") == "12"
    page.keyboard.press("Tab")  # to the heads: one tab stop
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.head") == "1"
    page.click(".stepnav button[data-step='input']")
    for _ in range(6):
        page.keyboard.press("ArrowDown")
    assert page.evaluate("location.hash") == "#token=.&head=1&step=softmax"
    assert page.is_visible("#step-softmax") and not page.is_visible("#step-input")
    page.click(".pattern tr[data-query='5']")
    assert page.evaluate("location.hash") == "#token=the%232&head=1&step=softmax"
    page.click("#step-softmax table.nums td[data-field='weights']")
    assert page.locator("#step-softmax .operands").text_content().startswith("÷ sum = weight [0 The] = ")
    page.click("#theme-toggle")  # the focus is on a button now: ← → still choose the token
    page.keyboard.press("ArrowRight")
    assert page.get_attribute(".chip[data-token='6']", "aria-checked") == "true"
    assert page.evaluate("document.activeElement.id") == "theme-toggle"
    page.click(".stepnav button[data-step='mask']")
    page.click("#step-mask .copy >> text=Copy CSV")
    csv = page.input_value("#step-mask textarea.copied")
    page.click("#step-mask .copy >> text=Copy Markdown")
    markdown = page.input_value("#step-mask textarea.copied")
    assert "\u2212" not in csv and ",-inf\n" in csv and re.search(r",-\d\.\d\d,", csv)
    assert csv.splitlines()[0] == ",scaled,+ M,= masked" and csv.splitlines()[1].startswith("0 The,")
    assert "| \u2212\u221e |" in markdown and "\u2212" in markdown  # Markdown keeps what is shown
    # A table is one tab stop; the arrows move between its numbers and Enter shows their operands.
    assert page.evaluate(
        "Array.from(document.querySelectorAll('#step-mask table.nums'), t => t.querySelectorAll('td[tabindex=\"0\"]').length)"
    ) == [1]
    page.focus("#step-mask td.num[tabindex='0']")
    for key in ("ArrowDown", "ArrowRight", "Enter"):
        page.keyboard.press(key)
    assert page.locator("#step-mask .operands").text_content() == "+ M [1 chicken] = 0.00  (mask in the record)"
    assert page.get_attribute(".chip[data-token='6']", "aria-checked") == "true"  # the arrows stayed in the table


def test_a_deep_link_opens_its_view(opened, chicken):
    page = opened(hash_text="#token=The%231&head=1&step=mask")
    assert page.get_attribute(".chip[data-token='0']", "aria-checked") == "true"
    assert page.get_attribute(".head[data-head='1']", "aria-checked") == "true"
    assert page.is_visible("#step-mask") and page.locator("#step-mask h2").text_content() == "6. Mask"
    page.evaluate("location.hash = '#token=nonsense&head=9&step=nope'")  # ignored, no error
    assert page.get_attribute(".chip[data-token='0']", "aria-checked") == "true"


CELLS = """() => Array.from(document.querySelectorAll('.steps td.num, .pattern td[data-field]'), cell => ({
  field: cell.dataset.field || '', param: cell.dataset.param || '', at: cell.dataset.at || '', family: cell.dataset.family || '',
  blocked: cell.classList.contains('blockedcell'), plain: cell.classList.contains('plain'), colour: getComputedStyle(cell).backgroundColor,
  table: cell.closest('table').getAttribute('aria-labelledby') || 'pattern', row: cell.parentElement.querySelector('th').textContent}))"""
STOPS = np.linspace(0.0, 1.0, 65)


def rgb(hex_text):
    return "rgb({}, {}, {})".format(*(int(hex_text[k : k + 2], 16) for k in (1, 3, 5)))


def expected_colour(rec, field, value):
    """The colour of ``value`` of ``field`` on the record's one scale of its family (BlockRecord.scale_limit),
    at the nearest of the page's 65 samples of the style module's map."""
    if field == "weights":
        return rgb(hex_color(weight_color(STOPS[int(np.floor(min(1.0, max(0.0, value)) * 64 + 0.5))])))
    limit = rec.scale_limit(field)
    t = min(1.0, max(0.0, (value + limit) / (2 * limit)))
    return rgb(hex_color(signed_color(2 * STOPS[int(np.floor(t * 64 + 0.5))] - 1, 1.0)))


def test_one_number_has_one_colour_the_records_scale_of_its_family(opened, chicken):
    rec, _ = chicken
    page = opened()
    page.check("#all-steps")
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    eventually(
        page, "() => document.querySelectorAll('details table').length === document.querySelectorAll('details').length"
    )
    cells = page.evaluate(CELLS)
    families = {spec.name: spec.scale for spec in FIELDS}
    sums = [cell for cell in cells if cell["row"] == "Σ over the keys"]
    assert sums and all(cell["plain"] and not cell["family"] for cell in sums)  # a sum is uncoloured
    cells = [cell for cell in cells if not cell["plain"]]
    assert all(cell["family"] or cell["blocked"] for cell in cells)  # every other number is on a family's scale
    colours, tables = {}, {}
    for cell in cells:
        if cell["field"] and not cell["blocked"]:
            index = tuple(int(k) for k in cell["at"].split(","))
            value = float(rec.tensors[cell["field"]][index])
            assert cell["family"] == families[cell["field"]]
            assert cell["colour"] == expected_colour(rec, cell["field"], value), cell
            colours.setdefault((cell["field"], cell["at"]), set()).add(cell["colour"])
            tables.setdefault((cell["field"], cell["at"]), set()).add(cell["table"])
    assert all(len(found) == 1 for found in colours.values())
    in_two_tables = {field for (field, _), found in tables.items() if len(found) >= 2}
    assert {
        "resid_pre",
        "ln1",
        "query",
        "scores",
        "scaled_scores",
        "masked_scores",
        "weights",
        "head_outputs",
        "concat",
        "resid_mid",
        "ffn_pre",
        "ffn_post",
    } <= in_two_tables
    # Numbers the page derives are on the scale of what they add up to; parameters on theirs (γ, β: the norms' own).
    derived = {cell["row"]: cell["family"] for cell in cells if not cell["field"] and not cell["param"]}
    assert (
        derived["concat · W_O"] == derived["ffn_post · W_out"] == "residual" and derived["ln2 · W_in"] == "ffn_hidden"
    )
    assert derived["√(var + ε), ε = 0.00001"] == "variance"
    assert {cell["param"]: cell["family"] for cell in cells if cell["param"]} == {
        name: "norm_parameters" if name.startswith("ln") else "parameters"
        for name in {cell["param"] for cell in cells if cell["param"]}
    }
    assert {cell["family"] for cell in cells if cell["param"]} == {"parameters", "norm_parameters"}
    # Role colours: each theme's own.
    role = "getComputedStyle(document.documentElement).getPropertyValue('--q').trim()"
    assert page.evaluate(role) == LIGHT.query
    page.click("#theme-toggle")
    assert (
        page.evaluate(role) == DARK.query
        and page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--v').trim()") == DARK.value
    )
    # On paper: the light theme's colours (dark text on the white page), every step.
    page.uncheck("#all-steps")
    page.emulate_media(media="print")
    eventually(page, f"() => {role} === '{LIGHT.query}'")
    assert page.evaluate("getComputedStyle(document.querySelector('th.rowhead')).color") == rgb(LIGHT.text)
    assert page.locator(".step:visible").count() == len(STEP_NAMES) + 1 and not page.is_visible(".stepnav")
    page.emulate_media(media="screen")
    eventually(page, f"() => {role} === '{DARK.query}'")


MOVED = ("embed", "ln1_mean", "query", "mask", "row_max", "weights")
"""Fields of every shape, (n, d_model), (n,), (n_heads, n, d_head), (n, n), (n_heads, n) and
(n_heads, n, n), declared (in the test) for a step that does not draw them."""


def test_a_field_its_step_does_not_draw_has_its_place_there_as_recorded(browser, chicken, tmp_path, monkeypatch):
    from blockviz.explorer import page as assembling

    rec, _ = chicken
    made = assembling.payload

    def moved(*args, **kwargs):  # as if these fields were new: the scale step has no table of its own for them
        data = made(*args, **kwargs)
        for name in MOVED:
            data["fields"][name]["step"] = "scale"
        return data

    monkeypatch.setattr(assembling, "payload", moved)
    path = tmp_path / "moved.html"
    Explorer(rec, token="it", head=1, step="scale").save(path)
    opened = Opened(browser, path)
    page = opened.page
    tables = "#step-scale [data-recorded]"
    assert page.evaluate(f"Array.from(document.querySelectorAll('{tables}'), t => t.dataset.recorded)") == list(MOVED)
    assert page.locator("[data-recorded]").count() == len(MOVED)  # the other steps draw their own fields
    assert page.locator(f"{tables} + p.check").count() == 1  # after the step's own table, before its check
    assert page.text_content("#step-scale .check").startswith("✓ matches the record")
    cells = page.evaluate(
        SHOWN.replace(".steps [data-field], .steps [data-param], .pattern [data-field]", f"{tables} [data-field]")
    )
    places = {}
    for field, _, at, text in cells:
        assert text == expected_text(rec, field, "", at), (field, at, text)
        places.setdefault(field, []).append(at)
    it, head, n = 8, 1, rec.n
    assert places == {
        "embed": [f"{it},{c}" for c in range(4)],
        "ln1_mean": [f"{it}"],
        "query": [f"{head},{it},{c}" for c in range(2)],
        "mask": [f"{it},{j}" for j in range(n)],
        "row_max": [f"{head},{it}"],
        "weights": [f"{head},{it},{j}" for j in range(n)],
    }
    assert page.evaluate(f"document.querySelector('{tables}[data-recorded=mask] thead').textContent").endswith(
        "11 tired12 ."
    )  # keys as columns, labelled with their tokens
    for cell in page.evaluate(CELLS):
        if cell["table"] != "pattern" and cell["field"] in MOVED and not cell["blocked"]:
            value = float(rec.tensors[cell["field"]][tuple(int(k) for k in cell["at"].split(","))])
            assert cell["colour"] == expected_colour(rec, cell["field"], value), cell  # its family's scale
    opened.close()


def test_every_table_fits_or_scrolls_in_its_own_box_at_every_width(browser, tmp_path, chicken):
    long = record(" ".join(("the quick brown fox jumps over the lazy dog and then it runs away " * 4).split()[:45]))
    wide = record("the cat sat", config=replace(chicken[0].config, d_model=48))
    pages = {"13": chicken[1], "45": tmp_path / "long.html", "wide": tmp_path / "wide.html"}
    Explorer(long, step="softmax").save(pages["45"])
    Explorer(wide).save(pages["wide"])
    for name, path in pages.items():
        opened = Opened(browser, path)
        page = opened.page
        page.check("#all-steps")  # every step at once
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        for width in (800, 1000, 1100, 1400):
            page.set_viewport_size({"width": width, "height": 900})
            eventually(
                page,
                "() => Array.from(document.querySelectorAll('.scroll')).every(b => (b.scrollWidth > b.clientWidth + 1) === (b.getAttribute('role') === 'region'))",
            )
            measured = page.evaluate(OVERFLOW)
            assert measured["width"] == width and measured["page"] <= width, (name, width)
            if name == "wide":  # 48 columns: they scroll inside their own box, a focusable named region
                assert [o for o in measured["out"] if not o["clipped"]] == [], (name, width, measured["out"][:3])
                assert any(box["wide"] for box in measured["scrolling"]) and all(
                    box["region"] for box in measured["scrolling"] if box["wide"]
                )
            else:  # the default sizes: every table fits, nothing is wider than the window
                assert measured["out"] == [], (name, width, measured["out"][:3])
                assert not any(box["wide"] for box in measured["scrolling"]), (name, width)
        opened.close()


def test_hostile_token_text_stays_text(browser, tmp_path):
    tokens = ["</script><img src=x onerror=alert(1)>", "a&amp;b\"'\u2028", "<!--"]
    rec = replace(record("a b c"), tokens=tokens, sentence="</script><img src=x onerror=alert(1)>")
    path = tmp_path / "hostile.html"
    Explorer(rec).save(path)
    opened = Opened(browser, path)
    page = opened.page
    assert page.locator(".chip .word").all_text_contents() == tokens
    assert page.locator("img").count() == 0
    assert page.evaluate("document.title") == "blockviz explorer — </script><img src=x onerror=alert(1)>"
    opened.close()


def test_in_a_sandboxed_srcdoc_iframe_the_page_works_without_history(browser, tmp_path, chicken):
    host = tmp_path / "notebook.html"  # what a notebook shows: the summary line and the iframe
    host.write_text(
        "<!DOCTYPE html><meta charset='utf-8'><body>" + Explorer(chicken[0], token=2)._repr_html_(), encoding="utf-8"
    )
    opened = Opened(browser, host, ready=False)
    frame = opened.page.frame_locator("iframe")
    frame.locator("body[data-ready]").wait_for()
    frame.locator(".chip[data-token='4']").click()
    assert frame.locator(".chip[data-token='4']").get_attribute("aria-checked") == "true"
    assert frame.locator(".step .check").first.text_content().startswith("✓")
    opened.close()


def test_64_tokens_load_and_respond(browser, tmp_path):
    rec = record(" ".join(f"w{k}" for k in range(64)))
    path = tmp_path / "long.html"
    Explorer(rec).save(path)
    opened = Opened(browser, path)
    page = opened.page
    page.click(".chip[data-token='10']")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute(".chip[data-token='11']", "aria-checked") == "true"
    assert len(page.locator(".step .check.ok").all()) == len(STEP_NAMES)
    assert page.locator(".pattern td[data-field]").count() == 0  # an overview in colour: 64 × 64 cells without text
    page.check("#pattern-numbers")  # its numbers, one switch away
    cells = page.evaluate(SHOWN.replace(".steps [data-field], .steps [data-param], ", ""))
    assert len(cells) == 64 * 64 and all(
        text == expected_text(rec, f, p, at) for f, p, at, text in cells if at.startswith("0,")
    )
    assert (
        page.get_attribute(".pattern .scroll", "role") == "region"
        and page.evaluate("document.activeElement.id") == "pattern-numbers"
    )
    opened.close()


SMALLEST_TEXT = """() => Array.from(document.querySelectorAll('body *')).filter(e => !(e instanceof SVGElement)
  && e.getClientRects().length && Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()))
  .map(e => [parseFloat(getComputedStyle(e).fontSize), e.tagName + ' ' + e.textContent.trim().slice(0, 20)])
  .sort((a, b) => a[0] - b[0]).slice(0, 3)"""
"""The three smallest texts on the page (SVG left out): font size in CSS px, and what they say."""

LEAST_TEXT_PX = 12
"""No text of the page is smaller: the chips' positions, the copy buttons (0.75rem)."""


@pytest.mark.parametrize("tokens", [13, 64])
def test_no_text_is_under_12_px_the_dense_patterns_row_labels_neither(browser, tmp_path, chicken, tokens):
    """The attention pattern was the page's smallest text (0.7rem, 11.2 px: ~9 px in the README's
    preview), its dense rows' labels 7 px at 64 tokens; now no text is under 12 px, and in a dense
    pattern whose rows are narrower every other row is labelled, the selected one always."""
    rec = chicken[0] if tokens == 13 else record(" ".join(f"w{k}" for k in range(tokens)))
    path = tmp_path / "page.html"
    Explorer(rec, token=5, step="overview").save(path)
    opened = Opened(browser, path)
    page = opened.page
    smallest = page.evaluate(SMALLEST_TEXT)
    assert smallest[0][0] >= LEAST_TEXT_PX, smallest
    labels = page.evaluate(
        "Array.from(document.querySelectorAll('.pattern tbody th'), th => [th.textContent, th.getBoundingClientRect().top])"
    )
    shown = [(text, top) for text, top in labels if text]
    assert "5" in [text for text, _ in shown] if tokens == 64 else len(shown) == tokens
    assert all(lower - upper >= LEAST_TEXT_PX for (_, upper), (_, lower) in zip(shown, shown[1:])), shown
    opened.close()


@pytest.mark.parametrize("token, says_so", [(2, True), (1, False)])
def test_the_mask_step_says_when_its_token_sees_every_key(browser, tmp_path, token, says_so):
    """ "the cat sat": the last token's causal mask blocks nothing (every +M is 0), so the step
    says to choose an earlier token to see a key blocked; "cat"'s blocks "sat" and says nothing of it."""
    rec = record("the cat sat")
    path = tmp_path / "page.html"
    Explorer(rec, token=token, step="mask").save(path)
    opened = Opened(browser, path)
    notes = " ".join(opened.page.locator(".note").all_inner_texts())
    assert ("choose an earlier token to see a key blocked" in notes) == says_so
    tables = " ".join(opened.page.locator("table.nums").all_inner_texts())
    assert ("\u2212\u221e" in tables) != says_so  # a key blocked is shown
    opened.close()


@pytest.mark.parametrize("trained", [True, False])
def test_the_input_step_says_when_its_rows_as_written_do_not_add_up(browser, tmp_path, trained):
    """x = embed + position, each shown to 2 decimals. The trained toy's "cat" has columns whose
    rows as written miss x by 0.01 (each rounded on its own), so the step says why; the seeded
    block's rows add up as written in every column, and it says nothing."""
    rec = blockviz.record("the cat sat") if trained else record("the cat sat")
    shown = [float(format_number(float(v)).replace("\u2212", "-")) for v in (*rec.embed[1], *rec.pos_embed[1])]
    d = rec.config.d_model
    sums = (rec.embed[1].double() + rec.pos_embed[1].double()).tolist()
    missed = [c for c in range(d) if format_number(shown[c] + shown[d + c]) != format_number(sums[c])]
    assert bool(missed) == trained  # worked out here, apart from the page
    path = tmp_path / "page.html"
    Explorer(rec, token=1, step="input").save(path)
    opened = Opened(browser, path)
    notes = " ".join(opened.page.locator(".note").all_inner_texts())
    assert ("as written may add up to 0.01 more or less" in notes) == trained
    opened.close()


def test_the_activation_curves_labels_are_12_px_too(browser, tmp_path, chicken):
    """The activation step's curve (an SVG, left out of the page-wide measure above) labels its
    axes at 12 px, not the 11 it had."""
    path = tmp_path / "page.html"
    Explorer(chicken[0], token=5, step="activation").save(path)
    opened = Opened(browser, path)
    sizes = opened.page.evaluate(
        "Array.from(document.querySelectorAll('.curve text'), t => parseFloat(getComputedStyle(t).fontSize))"
    )
    assert len(sizes) == 2 and min(sizes) >= LEAST_TEXT_PX, sizes
    opened.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_accessibility_violations(browser, tmp_path, theme):
    # The page's Content-Security-Policy forbids any script but its own; the check's context
    # bypasses it to inject axe-core (vendored in tests/, never in the page).
    rec = record("The chicken didn't cross the road because it was too tired.")
    path = tmp_path / f"{theme}.html"
    Explorer(rec, token="it", step="softmax", theme=theme).save(path)
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        page.check("#all-steps")  # every step's tables, the term tables too
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
        violations = page.evaluate(
            "async () => (await axe.run(document)).violations.map(v => [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')])"
        )
    finally:
        context.close()
    assert violations == [], violations


def test_a_notebook_run_by_nbclient_shows_a_working_explorer(browser, tmp_path):
    import nbclient
    import nbformat

    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell('from blockviz import record\nrec = record("the cat sat")\nrec'),
            nbformat.v4.new_code_cell('rec.explore(token="cat", step="softmax")'),
        ]
    )
    nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    summary, explorer = (cell.outputs[0]["data"]["text/html"] for cell in notebook.cells)
    assert "<table>" in summary and "exp_scores" in summary  # the record: a summary table, not the page
    assert explorer.count("<iframe") == 1 and 'sandbox="allow-scripts allow-downloads"' in explorer
    host = tmp_path / "output.html"
    host.write_text("<!DOCTYPE html><meta charset='utf-8'><body>" + explorer, encoding="utf-8")
    opened = Opened(browser, host, ready=False)
    frame = opened.page.frame_locator("iframe")
    frame.locator("body[data-ready]").wait_for()
    assert frame.locator(".chip[data-token='1']").get_attribute("aria-checked") == "true"  # "cat", as asked
    frame.locator(".chip[data-token='2']").click()
    assert frame.locator(".chip[data-token='2']").get_attribute("aria-checked") == "true"
    opened.close()


def test_the_colour_scales_are_named_as_the_scenes_bars_name_them(opened):
    """The legends name each scale by its quantity, with the scenes' colour-bar names
    (``record_fields.SCALE_FAMILIES``), never by a family's key ("residual", "qkv", "ffn_hidden")."""
    page = opened()
    page.click("text=show the colour scales")
    labels = page.locator("#legend-list .legend .label").all_text_contents()
    assert labels == [
        f"{name}: "
        for name in (
            "weights (\u221a scale)",
            "residual stream",
            "variance",
            "q, k, v",
            "scores",
            "mask",
            "exp(scores)",
            "sums of exp",
            "heads' outputs",
            "FFN hidden",
            "parameters",
            "\u03b3, \u03b2",
        )
    ]
    assert page.locator(".pattern .legend .label").all_text_contents() == ["weights (\u221a scale): "]


def test_an_outlier_clips_its_scale_and_the_legend_says_so(opened, chicken, tmp_path):
    """SmolLM2's first token reaches 22,543 in the residual stream: the page colours that family
    on its clipped scale (the figures' and scenes'), marks the cells beyond it, writes their real
    numbers, and its legend names the scale and the largest value; the seeded block has no legend."""
    from support import with_outlier

    rec = with_outlier(chicken[0], 22543.0)
    limit = rec.scale_limit("resid_pre")
    path = tmp_path / "outlier.html"
    Explorer(rec, token=0, step="input").save(path)
    page = opened(path)
    legend = page.locator(".clipnote").text_content()
    assert f"residual stream ±{format_number(limit)}" in legend and "22543.00" in legend
    cells = page.evaluate(
        CELLS.replace(
            "family: cell.dataset.family || '',",
            "family: cell.dataset.family || '', clipped: cell.classList.contains('clipped'), text: cell.textContent,",
        )
    )
    outlier = [cell for cell in cells if cell["field"] == "resid_pre" and cell["at"] == "0,0"]
    assert outlier and all(cell["clipped"] and cell["text"] == "22543.00" for cell in outlier)
    assert all(
        cell["colour"] == expected_colour(rec, "resid_pre", 22543.0) == expected_colour(rec, "resid_pre", limit)
        for cell in outlier
    )  # the end colour
    for cell in cells:
        if cell["field"] and not cell["blocked"]:
            value = float(rec.tensors[cell["field"]][tuple(int(k) for k in cell["at"].split(","))])
            assert cell["clipped"] == (cell["family"] == "residual" and abs(value) > limit), cell
            if cell["plain"]:  # a Σ row: uncoloured
                assert cell["colour"] == "rgba(0, 0, 0, 0)", cell
            else:
                assert cell["colour"] == expected_colour(rec, cell["field"], value), cell
    plain = opened()
    assert plain.locator(".clipnote").count() == 0 and plain.locator("td.clipped").count() == 0
