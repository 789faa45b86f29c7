"""The workbench in use, in Debian's Chromium: dragging a parameter's cell (every number in view
follows while the pointer moves, equal to the CLI's record with that value), and the bad input
issue 35 names — a value past float32, a value that makes a field overflow (the page says what the
CLI says and keeps its numbers)."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from support_explorer import Opened, expected_text

from blockviz.cli import main
from blockviz.explorer import Explorer
from blockviz.recording import record

SENTENCE = "the cat sat on the mat"
CELL = '#wb-params td[data-param="attn.W_Q"][data-at="0,0,1"]'
IN_VIEW = """() => Array.from(document.querySelectorAll('#step-softmax [data-field], .pattern td[data-field]'),
  cell => [cell.dataset.field, cell.dataset.at, cell.textContent])"""


@pytest.fixture(scope="module")
def trained():
    return record(SENTENCE)


@pytest.fixture
def page(browser, trained, tmp_path):
    path = tmp_path / "toy.html"
    Explorer(trained, token="mat", step="softmax").save(path)
    opened = Opened(browser, path)
    yield opened.page
    opened.close()


def _with(trained, value):
    params = {name: tensor.clone() for name, tensor in trained.params.items()}
    params["attn.W_Q"][0, 0, 1] = value
    return record(SENTENCE, "toy", params=params)


def test_dragging_a_cell_updates_every_number_in_view_while_the_pointer_moves(page, trained):
    start = float(trained.params["attn.W_Q"][0, 0, 1])
    page.locator(CELL).scroll_into_view_if_needed()
    box = page.locator(CELL).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    seen = []
    for dx in (-40, -120):  # two values, the pointer still down
        page.mouse.move(x + dx, y, steps=4)
        value = float(f"{start + dx * 0.01:.3f}")  # DRAG_STEP a pixel, 3 decimals
        shown = assert_view_shows(page, _with(trained, value), dx)
        seen.append([text for _, _, text in shown])
    assert seen[0] != seen[1]  # the numbers moved with the pointer
    assert page.evaluate("location.hash").find("edits=") < 0  # the link is written when the drag ends
    page.mouse.up()
    assert page.locator("input.celledit").count() == 0  # the release is not a click: no editor opens
    assert f"attn.W_Q[0, 0, 1] = {value} (trained " in page.inner_text(".wb-edits")
    assert "edits=" in page.evaluate("location.hash")
    assert page.get_attribute(CELL, "class") == "num draggable edited"
    rec = _with(trained, value)
    for field, at, text in page.evaluate(IN_VIEW):  # the whole page drawn again: the same numbers
        assert text == expected_text(rec, field, "", at), (field, at)
    assert page.evaluate("() => document.querySelectorAll('.pattern td.moved').length") > 0


def test_a_value_past_float32_and_one_that_overflows_are_refused_as_the_cli_refuses(page, trained, tmp_path):
    before = page.evaluate(IN_VIEW)
    page.click(CELL)
    page.fill("#wb-params input.celledit", "1e39")
    page.keyboard.press("Enter")
    assert "is 1e+39, past float32's largest (3.4e38)" in page.inner_text("#wb-note")
    assert page.evaluate(IN_VIEW) == before and "edits=" not in page.evaluate("location.hash")
    page.click(CELL)
    page.fill("#wb-params input.celledit", "3e38")
    page.keyboard.press("Enter")
    note = page.inner_text("#wb-note")
    params = {name: tensor.tolist() for name, tensor in trained.params.items()}
    params["attn.W_Q"][0][0][1] = 3e38
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(params))
    result = CliRunner().invoke(main, ["record", SENTENCE, "--model", "toy", "--params", str(path)])
    assert result.exit_code == 1
    cli = result.output.removeprefix("Error: ").strip()
    assert cli.startswith("field 'query' holds NaN or ±∞: a value overflowed")
    assert note == f"attn.W_Q[0, 0, 1] = 3e+38 refused: {cli} — nothing recomputed."
    assert page.evaluate(IN_VIEW) == before  # no NaN drawn: the numbers stay the trained ones
    assert page.get_attribute(CELL, "class") == "num draggable"


def _nudged(value: float, up: bool, shift: bool) -> float:
    """The page's Alt+↑ / Alt+↓: value ± 0.01 (Shift: ± 0.1), to 7 significant digits (toPrecision(7))."""
    return float(f"{value + (1 if up else -1) * 0.01 * (10 if shift else 1):.7g}")


def test_alt_arrows_on_a_focused_cell_do_what_a_drag_does_from_the_keyboard(page, trained):
    start = float(trained.params["attn.W_Q"][0, 0, 1])
    page.focus(CELL)
    assert page.get_attribute(CELL, "aria-keyshortcuts") == "Alt+ArrowUp Alt+ArrowDown"
    value = start
    for key, up, shift in (("Alt+ArrowUp", True, False), ("Alt+Shift+ArrowDown", False, True)):
        value = _nudged(float(np.float32(value)), up, shift)  # the page holds each value as float32
        page.keyboard.press(key)
        assert_view_shows(page, _with(trained, value), key)
        assert page.evaluate("[document.activeElement.dataset.param, document.activeElement.dataset.at]") == [
            "attn.W_Q",
            "0,0,1",
        ]  # the focus stays on the cell: the next press nudges it again
        assert f"attn.W_Q[0, 0, 1] = {value} (trained " in page.inner_text(".wb-edits")
    assert abs(value - (start + 0.01 - 0.1)) < 1e-6
    assert page.evaluate("() => document.querySelectorAll('.pattern td.moved').length") > 0
    page.keyboard.press("ArrowDown")  # without Alt the arrows still move the focus
    assert page.evaluate("document.activeElement.dataset.at") == "0,1,1"


def assert_view_shows(page, rec, step) -> list:
    """Assert the edited cell and every number in view (more than 36) read as ``rec``'s, the record
    the CLI makes with that edit; ``step`` names the move or key in a failure. Returns what is shown."""
    assert page.inner_text(CELL) == expected_text(rec, "", "attn.W_Q", "0,0,1")
    shown = page.evaluate(IN_VIEW)
    assert len(shown) > 36
    for field, at, text in shown:
        assert text == expected_text(rec, field, "", at), (step, field, at)
    return shown
