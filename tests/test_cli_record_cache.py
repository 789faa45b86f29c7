"""Records kept between runs (blockviz.record_cache): the kept record is exactly the one the block
makes, any change of what it is made from misses, and only the ``blockviz`` program keeps them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz import record_cache
from blockviz.block_config import BlockConfig
from blockviz.block_record import BlockRecord, record
from blockviz.cli import main
from blockviz.cli.options import RECORD_OPTION_NAMES, build_record

SENTENCE = "The chicken didn't cross the road because it was too tired."
DEFAULTS = {
    "sentence": SENTENCE,
    "d_model": BlockConfig.default("d_model"),
    "n_heads": BlockConfig.default("n_heads"),
    "d_ff": BlockConfig.default("d_ff"),
    "activation": BlockConfig.default("activation"),
    "bidirectional": not BlockConfig.default("causal"),
    "positional": BlockConfig.default("positional"),
    "seed": BlockConfig.default("seed"),
    "dtype": BlockConfig.default("dtype"),
    "params": None,
    "record_file": None,
    "model": None,
    "layer": None,
    "trust_pickle": False,
}
"""The record options as ``blockviz record SENTENCE`` passes them, every one at its default."""


@pytest.fixture(autouse=True)
def cache_folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "records"


def built(inputs: dict, calls: list):
    def build():
        calls.append(inputs)
        return build_record(**inputs)

    return record_cache.cached_record(inputs, build)


def same_record(a: BlockRecord, b: BlockRecord) -> None:
    """Every tensor with the same dtype, shape and bytes; the same sentence, tokens, config, source."""
    assert (a.sentence, a.tokens, a.config, a.source, a.special) == (
        b.sentence,
        b.tokens,
        b.config,
        b.source,
        b.special,
    )
    for ours, theirs in ((a.tensors, b.tensors), (a.params, b.params)):
        assert list(ours) == list(theirs)
        for name in ours:
            assert (ours[name].dtype, ours[name].shape) == (theirs[name].dtype, theirs[name].shape), name
            assert ours[name].numpy().tobytes() == theirs[name].numpy().tobytes(), name


def test_the_defaults_cover_every_record_option():
    assert sorted(DEFAULTS) == sorted(RECORD_OPTION_NAMES)


@pytest.mark.parametrize(
    "options",
    [{}, {"dtype": "float64", "bidirectional": True}, {"positional": "rotary", "activation": "relu", "seed": 7}],
)
def test_a_kept_record_is_the_one_the_block_makes(options, cache_folder):
    inputs, calls = {**DEFAULTS, **options}, []
    first = built(inputs, calls)
    again = built(inputs, calls)
    assert len(calls) == 1 and len(list(cache_folder.glob("*.safetensors"))) == 1  # made once, then read back
    same_record(again, first)
    same_record(again, record(SENTENCE, BlockConfig(**{**BlockConfig().to_dict(), **_config_of(options)})))


def test_a_record_saved_made_and_saved_read_back_is_the_same_bytes(cache_folder, tmp_path):
    inputs, calls = {**DEFAULTS, "model": "toy"}, []  # the toy model's parameters: the block's, then W_pos, W_E …
    made = built(inputs, calls)
    read_back = built(inputs, calls)
    assert len(calls) == 1  # the second read from the cache
    assert list(read_back.params) == list(made.params)
    for suffix in (".json", ".safetensors"):
        made.save(tmp_path / f"made{suffix}")
        read_back.save(tmp_path / f"read-back{suffix}")
        assert (tmp_path / f"made{suffix}").read_bytes() == (tmp_path / f"read-back{suffix}").read_bytes(), suffix


def test_a_record_that_cannot_be_kept_is_still_the_one_the_block_makes():
    # Learned positions: pos_embed shares W_pos's memory, which safetensors refuses to save (for now).
    inputs, calls = {**DEFAULTS, "positional": "learned"}, []
    for _ in range(2):
        same_record(built(inputs, calls), build_record(**inputs))


def _config_of(options: dict) -> dict:
    config = {name: value for name, value in options.items() if name not in ("bidirectional",)}
    if "bidirectional" in options:
        config["causal"] = not options["bidirectional"]
    return config


@pytest.mark.parametrize(
    "change",
    [
        {"sentence": SENTENCE + " Again."},
        {"d_model": 12, "n_heads": 3},
        {"n_heads": 4},
        {"d_ff": 16},
        {"activation": "relu"},
        {"bidirectional": True},
        {"positional": "learned"},
        {"seed": 1},
        {"dtype": "float64"},
    ],
)
def test_any_changed_option_misses(change):
    calls = []
    built(DEFAULTS, calls)
    changed = built({**DEFAULTS, **change}, calls)
    assert len(calls) == 2
    same_record(changed, build_record(**{**DEFAULTS, **change}))


def test_a_parameters_file_is_keyed_by_its_bytes_and_its_path(tmp_path):
    one, other = tmp_path / "one.safetensors", tmp_path / "other.safetensors"
    record(SENTENCE).save(one)
    record(SENTENCE, BlockConfig(seed=5)).save(other)
    calls = []
    first = built({**DEFAULTS, "params": one}, calls)
    built({**DEFAULTS, "params": one}, calls)
    assert len(calls) == 1
    os.replace(other, one)  # same path, other parameters
    changed = built({**DEFAULTS, "params": one}, calls)
    assert len(calls) == 2 and not first.params["attn.W_Q"].equal(changed.params["attn.W_Q"])
    same_record(changed, build_record(**{**DEFAULTS, "params": one}))
    moved = tmp_path / "moved.safetensors"
    one.rename(moved)  # same bytes, another path: the record names its parameters file
    assert built({**DEFAULTS, "params": moved}, calls).source.path == str(moved) and len(calls) == 3


def test_a_changed_file_of_blockviz_misses():
    calls = []
    built(DEFAULTS, calls)
    block = Path(record_cache.__file__).with_name("block.py")
    status = block.stat()
    try:
        os.utime(block, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))  # as an edit does
        built(DEFAULTS, calls)
    finally:
        os.utime(block, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert len(calls) == 2


@pytest.mark.parametrize(
    "inputs",
    [{"model": "minilm", "layer": 0}, {"record_file": "rec.safetensors", "sentence": None}, {"trust_pickle": True}],
)
def test_models_and_record_files_are_not_kept(inputs):
    assert record_cache.record_key({**DEFAULTS, **inputs}) is None


def test_a_kept_record_that_cannot_be_read_is_made_again(cache_folder):
    calls = []
    built(DEFAULTS, calls)
    (kept,) = cache_folder.glob("*.safetensors")
    kept.write_bytes(kept.read_bytes()[:100])  # cut short
    same_record(built(DEFAULTS, calls), build_record(**DEFAULTS))
    same_record(built(DEFAULTS, calls), build_record(**DEFAULTS))  # replaced: read back
    assert len(calls) == 2


def test_an_unwritable_cache_folder_only_means_nothing_is_kept(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("BLOCKVIZ_CACHE_DIR", str(tmp_path / "file"))  # a file, not a folder
    calls = []
    same_record(built(DEFAULTS, calls), build_record(**DEFAULTS))


def test_the_least_recently_used_records_go_first(cache_folder, monkeypatch):
    monkeypatch.setattr(record_cache, "MAX_RECORDS", 2)
    calls = []
    for seed in (1, 2):
        built({**DEFAULTS, "seed": seed}, calls)
    os.utime(cache_folder / f"{record_cache.record_key({**DEFAULTS, 'seed': 1})}.safetensors", ns=(0, 0))
    built({**DEFAULTS, "seed": 1}, calls)  # read back: now the most recently used
    built({**DEFAULTS, "seed": 3}, calls)
    assert len(calls) == 3
    assert sorted(path.stem for path in cache_folder.glob("*.safetensors")) == sorted(
        record_cache.record_key({**DEFAULTS, "seed": seed}) for seed in (1, 3)
    )


def test_only_the_program_keeps_records(cache_folder, tmp_path):
    result = CliRunner().invoke(main, ["record", "the cat sat"])
    assert result.exit_code == 0 and not cache_folder.exists()  # a command run inside another program builds it
    program = Path(sys.executable).with_name("blockviz")
    runs = [
        subprocess.run(
            [str(program), "record", "the cat sat"], capture_output=True, text=True, env=os.environ, timeout=120
        )
        for _ in range(2)
    ]
    assert [run.returncode for run in runs] == [0, 0] and runs[0].stdout == runs[1].stdout == result.output
    assert len(list(cache_folder.glob("*.safetensors"))) == 1


def test_a_page_from_a_kept_record_is_the_page_from_a_fresh_one(cache_folder, tmp_path):
    program = Path(sys.executable).with_name("blockviz")
    for page in ("made.html", "read-back.html"):
        subprocess.run(
            [str(program), "explore", SENTENCE, "--positional", "rotary", "-o", str(tmp_path / page)],
            check=True,
            capture_output=True,
            env=os.environ,
            timeout=120,
        )
    assert len(list(cache_folder.glob("*.safetensors"))) == 1
    fresh = CliRunner().invoke(
        main, ["explore", SENTENCE, "--positional", "rotary", "-o", str(tmp_path / "fresh.html")]
    )
    assert fresh.exit_code == 0
    assert (
        (tmp_path / "read-back.html").read_bytes()
        == (tmp_path / "made.html").read_bytes()
        == (tmp_path / "fresh.html").read_bytes()
    )


def test_a_kept_records_header_says_what_the_record_says_and_is_read_without_torch(cache_folder):
    inputs, calls = {**DEFAULTS, "model": "toy"}, []
    assert record_cache.cached_header(inputs) is None  # nothing kept yet
    kept = built(inputs, calls)
    header = record_cache.cached_header(inputs)
    assert (header.sentence, header.tokens, header.config, header.source, header.special) == (
        kept.sentence,
        tuple(kept.tokens),
        kept.config,
        kept.source,
        tuple(kept.special),
    )
    assert header.architecture == kept.architecture and header.architecture.unembedding
    assert record_cache.cached_header({**inputs, "seed": 1}) is None  # another record: not kept
    read = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from blockviz import record_cache; "
            f"header = record_cache.cached_header({inputs!r}); "
            "print(len(header.tokens), 'torch' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=60,
    )
    assert read.stdout.split() == [str(len(kept.tokens)), "False"], read.stderr[-1000:]  # read, and torch not imported


def test_words_outside_the_vocabulary_are_told_once_whether_the_record_is_made_or_kept(cache_folder, tmp_path):
    program = Path(sys.executable).with_name("blockviz")
    warning = "warning: 'teacher' is not in the toy model's vocabulary: read as the unknown token <unk>"

    def run(*arguments: str) -> str:
        done = subprocess.run(
            [str(program), *arguments], capture_output=True, text=True, env=os.environ, timeout=300, check=True
        )
        return done.stderr

    made, kept = (run("record", "the teacher sat") for _ in range(2))
    assert made.count(warning) == kept.count(warning) == 1
    # a still made from nothing: its record is made in a second process, which tells; read back here, it is not told twice
    for name in ("made", "kept"):
        printed = run(
            "render", "the teacher sat", "--scene", "mask", "--format", "png", "-q", "l", "-o", str(tmp_path / name)
        )
        assert printed.count(warning) == 1, printed
