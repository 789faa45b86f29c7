"""The committed previews are as new as the code they picture: renders/preview/sources.json,
written by ``make previews`` (tools/previews.py), holds the SHA-256 of each preview's source
files, and they are hashed again here."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def previews_tool():
    """tools/previews.py, loaded from its file (it is no package; its dataclasses need it in
    ``sys.modules`` while it runs)."""
    spec = importlib.util.spec_from_file_location("previews_tool", ROOT / "tools" / "previews.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_preview_is_newer_than_the_code_it_pictures():
    tool = previews_tool()
    recorded = json.loads((ROOT / tool.MANIFEST).read_text(encoding="utf-8"))
    stale = [
        f"{preview.path} ({pattern})"
        for preview in tool.PREVIEWS
        for pattern, digest in tool.source_hashes(preview).items()
        if recorded.get(preview.path, {}).get(pattern) != digest
    ]
    assert not stale, "older than the code they picture, run make previews: " + ", ".join(stale)
    assert set(recorded) == {preview.path for preview in tool.PREVIEWS}


def test_every_picture_the_pages_show_is_a_preview_make_previews_makes():
    """No committed picture is made by hand: each one README.md and docs/ show is in the list."""
    tool = previews_tool()
    shown = {
        part.split(")")[0]
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for part in page.read_text(encoding="utf-8").split("](")[1:]
        if part.startswith("renders/")
    }
    assert shown <= {preview.path for preview in tool.PREVIEWS}
    assert all((ROOT / preview.path).is_file() for preview in tool.PREVIEWS)


def test_a_changed_source_makes_its_previews_stale(tmp_path):
    """The hash follows the files' contents: one byte more in a figure module changes the figures'
    hash and not the scenes'."""
    tool = previews_tool()
    for pattern in {pattern for preview in tool.PREVIEWS for pattern in preview.sources}:
        for path in ROOT.glob(pattern):
            if path.is_file():
                target = tmp_path / path.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
    figure, scene = (next(p for p in tool.PREVIEWS if p.path.endswith(name)) for name in ("weights.png", "recap.png"))
    before = {p.path: tool.source_hashes(p, tmp_path) for p in (figure, scene)}
    assert before[figure.path] == tool.source_hashes(figure)
    with open(tmp_path / "blockviz" / "figures" / "heatmap.py", "a", encoding="utf-8") as file:
        file.write("\n")
    assert tool.source_hashes(figure, tmp_path)["blockviz/figures/*.py"] != before[figure.path]["blockviz/figures/*.py"]
    assert tool.source_hashes(scene, tmp_path) == before[scene.path]
