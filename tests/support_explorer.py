"""Shared helpers of the explorer's browser tests: a page opened in Debian's Chromium that allows
only its own file and keeps every console error, the scripts that read a page back, and the text
a cell of a record shows."""

from pathlib import Path

from blockviz.style import BLOCKED_WEIGHT_LABEL, format_number


class Opened:
    """A page of the browser that allows only its own file, and keeps every console error."""

    def __init__(self, browser, path, hash_text="", ready=True):
        self.errors = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.errors.append(f"dialog {dialog.message}"), dialog.dismiss()))
        url = path.resolve().as_uri()
        self.page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.split("#")[0] == url
                else (self.errors.append(f"request {route.request.url}"), route.abort())
            ),
        )
        self.page.goto(url + hash_text)
        if ready:
            self.page.wait_for_selector("body[data-ready]")

    def close(self):
        self.context.close()
        assert self.errors == [], self.errors


SHOWN = """() => Array.from(document.querySelectorAll('.steps [data-field], .steps [data-param], .pattern [data-field]'),
  cell => [cell.dataset.field || '', cell.dataset.param || '', cell.dataset.at, cell.textContent])"""


def expected_text(rec, field, param, at):
    tensor = rec.tensors[field] if field else rec.params[param]
    index = tuple(int(k) for k in at.split(",")) if at else ()
    if field in ("weights", "exp_scores") and float(rec.tensors["mask"][index[1:]]) == float("-inf"):
        return BLOCKED_WEIGHT_LABEL  # as in the figures and scenes: a blocked weight reads "0"
    return format_number(float(tensor[index]))


OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, out = [];
  for (const node of document.querySelectorAll('body *')) {
    const box = node.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const scroller = node.parentElement && node.parentElement.closest('.scroll');
    const clipped = scroller !== null;  // inside a box that scrolls on its own (and does not widen the page)
    if (box.left < -0.5 || box.right > width + 0.5) out.push({tag: node.tagName, cls: String(node.className), clipped: clipped, left: box.left, right: box.right});
  }
  const scrolling = Array.from(document.querySelectorAll('.scroll'), box => ({wide: box.scrollWidth > box.clientWidth + 1, region: box.getAttribute('role') === 'region' && box.tabIndex === 0}));
  return {width: width, page: document.documentElement.scrollWidth, out: out, scrolling: scrolling};
}"""


AXE = Path(__file__).with_name("vendor") / "axe.min.js"
