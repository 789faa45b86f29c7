"""blockviz's cache folder: where it is, and a GGUF file converted once, atomically."""

from __future__ import annotations

import pytest

from blockviz.models.cache import COMPLETE, cache_dir, cached_gguf


def test_the_cache_folder_follows_xdg_and_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("BLOCKVIZ_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "blockviz"
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_a_gguf_file_is_converted_once_and_an_interrupted_conversion_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "model.Q4_1.gguf"
    gguf.write_bytes(b"gguf")
    made = []

    def convert(folder):
        made.append(folder)
        (folder / "config.json").write_text("{}")

    first = cached_gguf(gguf, convert)
    assert cached_gguf(gguf, convert) == first and len(made) == 1
    assert sorted(path.name for path in first.iterdir()) == [COMPLETE, "config.json"]

    gguf.write_bytes(b"gguf, changed")  # a changed file gets a folder of its own

    def interrupted(folder):
        (folder / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached_gguf(gguf, interrupted)
    assert [path.name for path in (tmp_path / "cache" / "models").iterdir()] == [first.name]
