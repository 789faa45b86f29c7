"""The explorer page of a MiniLM layer with every layer's weights: its size and its time to
interactive in headless Chromium (a benchmark, not a test): run
`.venv/bin/python benchmarks/explorer.py [ROUNDS]`.

For two sentences — 13 MiniLM tokens ("The chicken crossed the road because it was too tired.",
[CLS] and [SEP] included) and the chicken sentence (16) — it writes the page of layer 3 with the
overview of all 6 layers × 12 heads (``model_attentions``, the model loaded once), then the same
with a ``--contrast`` sentence, and prints each page's size and what in it is largest (the
record's tensors, the carried weight columns, the overview). Issue 35's target: every one of
the four ≤ 1.5 MB.

Then it opens each page ROUNDS times (default 5) in Debian's Chromium (Playwright, a fresh
browser context each time, the page from disk) and prints the median and fastest time from the
start of navigation to the page being interactive: the moment its script marks
``body[data-ready]`` (every step built and checked), read in the page from ``performance.now()``
by an observer added before the page's own script. Target: ≤ 1 s.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from private_cache import use_private_cache  # benchmarks/private_cache.py

SENTENCES = {
    13: "The chicken crossed the road because it was too tired.",
    16: "The chicken didn't cross the road because it was too tired.",
}
CONTRAST = {
    13: "The chicken crossed the road because it was too wide.",
    16: "The chicken didn't cross the road because it was too wide.",
}
CHROMIUM = os.environ.get("BLOCKVIZ_CHROMIUM", "/usr/bin/chromium")
READY = """new MutationObserver((changes, observer) => {
  if (document.body && document.body.hasAttribute('data-ready')) { window.__ready = performance.now(); observer.disconnect(); }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-ready']});"""


def write_pages(folder: Path) -> dict[str, Path]:
    from blockviz.explorer import Explorer
    from blockviz.explorer.payload import payload
    from blockviz.models import record_layer
    from blockviz.models.recording import model_attentions

    pages = {}
    for n, sentence in SENTENCES.items():
        start = time.perf_counter()
        rec = record_layer(sentence, model="minilm", layer=3)
        attentions = model_attentions(sentence, model="minilm")
        contrast = model_attentions(CONTRAST[n], model="minilm")
        made = time.perf_counter() - start
        assert rec.n == n, (rec.n, rec.tokens)
        for name, extra in (
            ("overview", {}),
            ("contrast", {"contrast": contrast, "contrast_sentence": CONTRAST[n]}),
        ):
            path = folder / f"minilm-{n}-{name}.html"
            start = time.perf_counter()
            Explorer(rec, token="it", head=1, step="overview", attentions=attentions, **extra).save(path)
            written = time.perf_counter() - start
            parts = payload(rec, rec.tokens.index("it"), 1, "overview", "light", attentions, extra.get("contrast"))
            sizes = {
                key: len(json.dumps(parts[key], separators=(",", ":"))) for key in ("tensors", "params", "overview")
            }
            print(
                f"{n} tokens, {name}: {path.stat().st_size / 1e6:.3f} MB "
                f"({'within' if path.stat().st_size <= 1_500_000 else 'OVER'} 1.5 MB; "
                f"tensors {sizes['tensors'] / 1e6:.2f} MB, weight columns {sizes['params'] / 1e6:.2f} MB, "
                f"overview {sizes['overview'] / 1e6:.3f} MB); recorded + attentions {made:.1f} s, page written {written:.2f} s"
            )
            pages[f"{n}-{name}"] = path
    return pages


def time_to_interactive(pages: dict[str, Path], rounds: int) -> None:
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for name, path in pages.items():
            times = []
            for _ in range(rounds):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.add_init_script(READY)
                page.goto(path.resolve().as_uri())
                page.wait_for_selector("body[data-ready]")
                while (
                    page.evaluate("window.__ready") is None
                ):  # polled: wait_for_function may eval, which the policy refuses
                    time.sleep(0.01)
                times.append(page.evaluate("window.__ready") / 1000)
                context.close()
            print(
                f"{name}: interactive after {statistics.median(times):.2f} s (median of {rounds}; fastest {min(times):.2f} s)"
            )
        browser.close()


def main() -> None:
    use_private_cache()
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch_threads()
    with tempfile.TemporaryDirectory() as folder:
        pages = write_pages(Path(folder))
        time_to_interactive(pages, rounds)
    print(f"load average {os.getloadavg()[0]:.1f}")


def torch_threads() -> None:
    import torch

    torch.set_num_threads(1)


if __name__ == "__main__":
    main()
