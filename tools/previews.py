"""The committed previews — the pictures README.md and docs/ show (``renders/preview/*.png``, the
explorer's screenshots ``renders/explorer-*.png``) — and how each is made.

``make previews`` (``python tools/previews.py``) makes every one again with blockviz's own
commands (the explorer's pages photographed by Playwright in Debian's Chromium, as 128-colour
PNGs) and writes ``renders/preview/sources.json``: for each preview, the SHA-256 of each group of
source files it pictures. ``tests/test_previews.py`` hashes those files again and fails, naming
the preview, when one changed since: run ``make previews``.

``python tools/previews.py NAME …`` makes only the previews whose file name contains a NAME (the
manifest is still written for all: make the others too before committing).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = Path("renders/preview/sources.json")
CHICKEN = "The chicken didn't cross the road because it was too tired."
WIDE = "The chicken didn't cross the road because it was too wide."
COLOURS = 128
"""The explorer's screenshots are quantised to this many colours (a tenth of the bytes, no visible change)."""

BLOCK = ("blockviz/block.py", "blockviz/record_fields.py", "blockviz/style.py")
"""What every preview's numbers and colours come from."""
TOY = ("blockviz/toy/trained-model/*",)
FIGURES = ("blockviz/figures/*.py",)
SCENES = ("blockviz/scenes/*.py",)
EXPLORER = ("blockviz/explorer/*.py", "blockviz/explorer/*.html", "blockviz/explorer/*.js", "blockviz/explorer/*.css")


@dataclass(frozen=True)
class Shot:
    """How an explorer page is photographed: the window's size, the whole page or the window
    only, or one element (a CSS selector)."""

    width: int
    height: int
    full_page: bool = False
    selector: str = ""


@dataclass(frozen=True)
class Preview:
    """One committed picture: ``path`` (from the repository's root), the ``blockviz`` command that
    makes it (``{out}``: a temporary folder), the file it writes there, the page's photograph
    (``shot``, for the explorer) and the globs of the source files it pictures."""

    path: str
    command: tuple[str, ...]
    made: str
    sources: tuple[str, ...]
    shot: Shot | None = None


PREVIEWS = (
    Preview(
        "renders/preview/figure-weights.png",
        (
            "figures",
            CHICKEN,
            "--model",
            "seeded",
            "--figure",
            "weights",
            "--format",
            "png",
            "--dpi",
            "110",
            "-o",
            "{out}",
        ),
        "weights.png",
        BLOCK + FIGURES,
    ),
    Preview(
        "renders/preview/figure-value-mixing.png",
        (
            "figures",
            CHICKEN,
            "--model",
            "seeded",
            "--figure",
            "value-mixing",
            "--token",
            "it",
            "--format",
            "png",
            "--dpi",
            "110",
            "-o",
            "{out}",
        ),
        "value-mixing.png",
        BLOCK + FIGURES,
    ),
    Preview(
        "renders/preview/figure-training-toy.png",
        ("figures", CHICKEN, "--token", "too", "--figure", "training", "--format", "png", "-o", "{out}"),
        "training.png",
        BLOCK + TOY + FIGURES,
    ),
    Preview(
        "renders/preview/scene-softmax-toy.png",
        ("render", CHICKEN, "--scene", "softmax", "--token", "it", "--format", "png", "-q", "m", "-o", "{out}"),
        "softmax.png",
        BLOCK + TOY + SCENES,
    ),
    Preview(
        "renders/preview/scene-softmax.png",
        (
            "render",
            CHICKEN,
            "--model",
            "seeded",
            "--scene",
            "softmax",
            "--token",
            "it",
            "--format",
            "png",
            "-q",
            "m",
            "-o",
            "{out}",
        ),
        "softmax.png",
        BLOCK + SCENES,
    ),
    Preview(
        "renders/preview/scene-block-flow.png",
        ("render", CHICKEN, "--scene", "block-flow", "--token", "it", "--format", "png", "-q", "l", "-o", "{out}"),
        "block-flow.png",
        BLOCK + TOY + SCENES,
    ),
    Preview(
        "renders/preview/scene-recap.png",
        ("render", CHICKEN, "--scene", "recap", "--token", "it", "--format", "png", "-q", "l", "-o", "{out}"),
        "recap.png",
        BLOCK + TOY + SCENES,
    ),
    Preview(
        "renders/explorer-cat-light.png",
        ("explore", "the cat sat", "--model", "seeded", "--token", "cat", "--step", "softmax", "-o", "{out}/page.html"),
        "page.html",
        BLOCK + EXPLORER,
        Shot(1000, 700, full_page=True),
    ),
    Preview(
        "renders/explorer-chicken-dark.png",
        (
            "explore",
            CHICKEN,
            "--model",
            "seeded",
            "--token",
            "it",
            "--step",
            "softmax",
            "--theme",
            "dark",
            "-o",
            "{out}/page.html",
        ),
        "page.html",
        BLOCK + EXPLORER,
        Shot(1000, 700, full_page=True),
    ),
    Preview(
        "renders/explorer-minilm-light.png",
        (
            "explore",
            CHICKEN,
            "--model",
            "minilm",
            "--layer",
            "3",
            "--head",
            "1",
            "--token",
            "it",
            "--step",
            "softmax",
            "-o",
            "{out}/page.html",
        ),
        "page.html",
        BLOCK + EXPLORER,
        Shot(1280, 900),
    ),
    Preview(
        "renders/explorer-overview-minilm.png",
        (
            "explore",
            CHICKEN,
            "--model",
            "minilm",
            "--layer",
            "3",
            "--token",
            "it",
            "--step",
            "overview",
            "--contrast",
            WIDE,
            "-o",
            "{out}/page.html",
        ),
        "page.html",
        BLOCK + EXPLORER,
        Shot(1280, 900, selector="table.ovgrid"),
    ),
    Preview(
        "renders/explorer-smollm2-dark.png",
        (
            "explore",
            CHICKEN,
            "--model",
            "smollm2",
            "--layer",
            "13",
            "--head",
            "8",
            "--token",
            "it",
            "--step",
            "rotary",
            "--theme",
            "dark",
            "-o",
            "{out}/page.html",
        ),
        "page.html",
        BLOCK + EXPLORER,
        Shot(1280, 900),
    ),
)


def source_hashes(preview: Preview, root: Path = ROOT) -> dict[str, str]:
    """Each source glob of ``preview`` → the SHA-256 of its files (their paths and contents, in
    path order); a glob that matches no file is an error (a renamed file must be renamed here)."""
    hashes = {}
    for pattern in preview.sources:
        files = sorted(path for path in root.glob(pattern) if path.is_file())
        if not files:
            raise FileNotFoundError(f"tools/previews.py: {pattern!r} ({preview.path}) matches no file")
        digest = hashlib.sha256()
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        hashes[pattern] = digest.hexdigest()
    return hashes


def manifest(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """Every preview → :func:`source_hashes`: what ``renders/preview/sources.json`` holds."""
    return {preview.path: source_hashes(preview, root) for preview in PREVIEWS}


def make(preview: Preview, folder: Path) -> None:
    """Run ``preview``'s command into ``folder`` and put its picture at ``preview.path``."""
    arguments = [part.replace("{out}", str(folder)) for part in preview.command]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "blockviz.cli.program", *arguments], cwd=ROOT, env=environment, check=True)
    made = folder / preview.made
    if preview.shot is not None:
        made = photograph(made, preview.shot, folder / "shot.png")
    shutil.copyfile(made, ROOT / preview.path)
    print(preview.path)


def photograph(page: Path, shot: Shot, picture: Path) -> Path:
    """``page`` opened in Debian's Chromium at ``shot``'s size, photographed into ``picture`` with
    :data:`COLOURS` colours."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            window = browser.new_page(viewport={"width": shot.width, "height": shot.height})
            window.goto(page.resolve().as_uri())
            window.wait_for_selector("body[data-ready]")
            if shot.selector:
                window.locator(shot.selector).screenshot(path=str(picture))
            else:
                window.screenshot(path=str(picture), full_page=shot.full_page)
        finally:
            browser.close()
    with Image.open(picture) as image:
        image.convert("RGB").quantize(COLOURS).save(picture, optimize=True)
    return picture


def main(names: list[str]) -> None:
    chosen = [preview for preview in PREVIEWS if not names or any(name in preview.path for name in names)]
    for preview in chosen:
        with tempfile.TemporaryDirectory() as folder:
            make(preview, Path(folder))
    (ROOT / MANIFEST).write_text(json.dumps(manifest(), indent=1) + "\n", encoding="utf-8")
    print(MANIFEST)


if __name__ == "__main__":
    main(sys.argv[1:])
