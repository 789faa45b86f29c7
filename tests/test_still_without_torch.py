"""A still from a kept record needs no torch (blockviz.record_arrays) nor PyAV
(blockviz.render.manim_import): the record read back as numpy arrays holds the same numbers,
chooses the same head, and draws the same PNG."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from blockviz import record_cache
from blockviz.array_evidence import answering_head_of_arrays, largest_weight_of
from blockviz.block_config import BlockConfig
from blockviz.cli import main
from blockviz.cli.options import build_record
from blockviz.models.evidence import answering_head, largest_weight
from blockviz.record_arrays import ArrayRecord, read_kept

SENTENCE = "The chicken didn't cross the road because it was too tired."
STILL = ["render", SENTENCE, "--scene", "softmax", "--token", "it", "--format", "png", "--resolution", "320x180"]
TOY = {
    "sentence": SENTENCE,
    **{
        name: BlockConfig.default(name)
        for name in ("d_model", "n_heads", "d_ff", "activation", "positional", "seed", "dtype")
    },
    "bidirectional": not BlockConfig.default("causal"),
    "params": None,
    "model": "toy",
}
"""The record options as ``blockviz render SENTENCE`` passes them: the packaged toy model's record."""
WITHOUT_TORCH_NOR_PYAV = """
import sys


class NoTorchNorPyAV:  # the program with `import torch` and `import av` failing: ImportError names them
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "av"):
            raise ImportError(f"{name} imported")


sys.meta_path.insert(0, NoTorchNorPyAV())
sys.argv = ["blockviz", *sys.argv[1:]]
from blockviz.cli.program import main

main()
"""


@pytest.fixture(autouse=True)
def cache_folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "records"


def kept_and_read(sentence: str = SENTENCE):
    """The toy model's record of ``sentence`` as the block makes it, and as the cache reads it back without torch."""
    inputs = {**TOY, "sentence": sentence}
    made = record_cache.cached_record(inputs, lambda: build_record(**inputs))
    return made, record_cache.cached_record(inputs, lambda: pytest.fail("the kept record was made again"), arrays=True)


def test_a_kept_record_reads_back_as_numpy_arrays_bit_for_bit():
    made, read = kept_and_read()
    assert isinstance(read, ArrayRecord) and not isinstance(made, ArrayRecord)
    assert (read.sentence, read.tokens, read.config, read.source, read.special, read.fields) == (
        made.sentence,
        made.tokens,
        made.config,
        made.source,
        made.special,
        made.fields,
    )
    for ours, theirs in ((read.tensors, made.tensors), (read.params, made.params)):
        assert list(ours) == list(theirs)  # the same order: what is listed or drawn in turn comes in turn
        for name, array in ours.items():
            assert array.dtype == theirs[name].numpy().dtype and array.tobytes() == theirs[name].numpy().tobytes()
    assert [read.scale_of(name) for name in ("weights", "scores", "resid_pre", "attn.W_Q", "ln1.weight")] == [
        made.scale_of(name) for name in ("weights", "scores", "resid_pre", "attn.W_Q", "ln1.weight")
    ]
    with pytest.raises(ValueError):  # read-only: a scene cannot change the record it draws
        read.weights[0, 0, 0] = 9.0


def test_the_torch_record_of_an_array_record_is_the_same_bytes_on_disk(tmp_path):
    made, read = kept_and_read()
    made.save(tmp_path / "made.safetensors")
    read.save(tmp_path / "read.safetensors")
    assert (tmp_path / "read.safetensors").read_bytes() == (tmp_path / "made.safetensors").read_bytes()


def test_a_file_that_is_not_a_record_is_refused_and_then_made_again(cache_folder):
    made, _ = kept_and_read()
    (kept,) = cache_folder.glob("*.safetensors")
    kept.write_bytes(b"not safetensors")
    with pytest.raises(Exception, match="is not a valid"):
        read_kept(kept)
    again = record_cache.cached_record(TOY, lambda: made, arrays=True)
    assert again is made


@pytest.mark.parametrize("sentence", [SENTENCE, "the cat sat on the mat because it was warm"])
def test_the_head_and_the_largest_weight_are_chosen_as_with_torch(sentence):
    made, read = kept_and_read(sentence)
    weights = made.weights
    for query in range(1, made.n):
        theirs, ours = (
            answering_head(weights[None], query, causal=True),
            answering_head_of_arrays(read.weights, query, None, True),
        )
        assert (ours.head, ours.key, ours.weight) == (theirs.head, theirs.key, theirs.weight)
        assert ours.baseline == pytest.approx(theirs.baseline, abs=1e-6)  # float32 means, added in another order
        for head in range(made.config.n_heads):
            theirs = largest_weight(weights[None], 0, head, query, made.special, True)
            ours = largest_weight_of(read.weights, head, query, read.special, True)
            assert (ours.key, ours.weight, ours.reading) == (theirs.key, theirs.weight, theirs.reading)
            assert (
                math.isclose(ours.baseline, theirs.baseline, abs_tol=1e-6)
                or np.isnan([ours.baseline, theirs.baseline]).all()
            )


@pytest.mark.render
def test_a_still_from_a_kept_record_imports_no_torch_nor_pyav_and_is_the_same_png(tmp_path):
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def program(code: str, folder: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code, *STILL, "-o", str(tmp_path / folder)],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )

    made = program("from blockviz.cli.program import main; main()", "made")  # keeps the record
    assert made.returncode == 0, made.stderr[-2000:]
    read = program(WITHOUT_TORCH_NOR_PYAV, "read")
    assert read.returncode == 0, read.stderr[-2000:]  # it would fail on an `import torch` or `import av`
    fresh = CliRunner().invoke(main, [*STILL, "-o", str(tmp_path / "fresh")])  # the record made, with torch
    assert fresh.exit_code == 0, fresh.output
    png = (tmp_path / "fresh" / "softmax.png").read_bytes()
    assert (tmp_path / "read" / "softmax.png").read_bytes() == png
    assert (tmp_path / "made" / "softmax.png").read_bytes() == png
