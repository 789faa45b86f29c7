"""What a record you can trust costs (a benchmark, not a test): run
`.venv/bin/python benchmarks/records.py [--memory]`.

1. Access: a read of ``rec.weights`` and ``rec.tensors[...]`` on a 64-token toy record hands out
   a fresh copy (:class:`blockviz.read_only.ReadOnlyTensors`); printed in microseconds beside a
   plain dict lookup and one indexing of the tensor, and for the whole ``figures`` path's reads.
2. Load: ``BlockRecord.load`` of that record saved as .json and .safetensors (the check of its
   claims included), milliseconds, median of 5.
3. ``--memory``: the peak resident memory of loading a JSON record of short numbers near the
   64 MB limit (written to a temporary folder: the worst case for parsing) and a safetensors
   record, each in a fresh process (its own peak, ``VmHWM`` of ``/proc/self/status``, after the imports and after the load; Linux).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

SENTENCE = " ".join(["the", "cat", "sat", "on", "mat", "because", "it", "was"] * 8)  # 64 tokens


def access() -> None:
    from blockviz.block_record import record

    rec = record(SENTENCE)
    plain = dict(rec.tensors.items())
    rounds = 20_000
    rows = {
        "dict lookup (before: a plain mapping)": lambda: plain["weights"],
        "rec.tensors['weights'] (a copy)": lambda: rec.tensors["weights"],
        "rec.weights (a copy)": lambda: rec.weights,
        "rec.weights[0, 1, 2] (a copy, then indexing)": lambda: rec.weights[0, 1, 2],
        "plain['weights'][0, 1, 2] (indexing alone)": lambda: plain["weights"][0, 1, 2],
    }
    print(f"access on a {rec.n}-token record ({tuple(rec.weights.shape)} weights), µs per read, best of 3:")
    for name, read in rows.items():
        best = min(timeit.repeat(read, number=rounds, repeat=3)) / rounds * 1e6
        print(f"  {best:8.2f}  {name}")
    every = min(timeit.repeat(lambda: [rec.tensors[name] for name in rec.tensors], number=200, repeat=3)) / 200 * 1e3
    print(f"  every field once: {every:.2f} ms ({len(rec.tensors)} fields)")


def load() -> None:
    from blockviz import BlockRecord
    from blockviz.block_record import record

    rec = record(SENTENCE)
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".json", ".safetensors"):
            path = Path(folder) / f"r{suffix}"
            rec.save(path)
            times = []
            for _ in range(5):
                start = time.perf_counter()
                BlockRecord.load(path)
                times.append(time.perf_counter() - start)
            print(f"load {suffix}: {statistics.median(times) * 1e3:.1f} ms (median of 5, checks included)")


PEAK = """
import re, sys
import torch
from blockviz.block_record import BlockRecord
from blockviz.errors import BlockvizError

def peak_kb():  # VmHWM: this process's own peak (ru_maxrss would carry the parent's across fork and exec)
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\\s+(\\d+)", status.read())[1])

before = peak_kb()
try:
    BlockRecord.load(sys.argv[1])
except BlockvizError:
    pass  # the short-number file is refused by its checks, after it has been read
print((peak_kb() - before) / 1024)
"""


def memory() -> None:
    import json

    from blockviz import BlockConfig
    from blockviz.block_record import record
    from blockviz.params import parameter_shapes
    from blockviz.record_fields import fields_for

    def filled(shape):
        return 0.5 if not shape else [filled(shape[1:]) for _ in range(shape[0])]

    config = BlockConfig(d_model=1088, n_heads=8, d_ff=4352, positional="learned", max_tokens=512, seed=3)
    tokens = SENTENCE.split()[:60]
    with tempfile.TemporaryDirectory() as folder:
        short = Path(folder) / "short.json"
        tensors = {spec.name: filled(spec.sizes(len(tokens), config)) for spec in fields_for(config)}
        tensors.update({name: filled(shape) for name, shape in parameter_shapes(config).items()})
        short.write_text(
            json.dumps(
                {
                    "format": "blockviz-record/2",
                    "sentence": " ".join(tokens),
                    "tokens": tokens,
                    "config": config.to_dict(),
                    "tensors": tensors,
                },
                separators=(",", ":"),
            )
        )
        del tensors
        small = BlockConfig(d_model=424, n_heads=8, d_ff=1696, positional="learned", max_tokens=512, seed=3)
        rec = record(" ".join(tokens), small)
        paths = [short, Path(folder) / "r.json", Path(folder) / "r.safetensors"]
        rec.save(paths[1])
        rec.save(paths[2])
        for path in paths:
            added = float(
                subprocess.run(
                    [sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, check=True
                ).stdout
            )
            size = path.stat().st_size / 2**20
            print(f"peak memory of loading {path.name}: {added:.0f} MB for a {size:.1f} MB file ({added / size:.1f}×)")


if __name__ == "__main__":
    access()
    load()
    if "--memory" in sys.argv:
        memory()
