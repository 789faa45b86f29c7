"""Recording one layer of MiniLM against the model's own forward pass, and SmolLM2's load from
blockviz's cache (benchmarks, not tests): run `.venv/bin/python benchmarks/models.py [ROUNDS]`.

Both run after the model is loaded, in one process, one thread (as the tests), on the 13-token
sentence, one right after the other in each round:
1. the model's own forward pass: ``model(input_ids)`` (eager attention, no extra outputs), all 6 layers;
2. ``blockviz.models.record_layer(sentence, model="minilm", layer=3)``: tokenising, the forward
   pass up to layer 3 (hooks capture its input, output and attention weights), the layer again
   through blockviz's Block with every step recorded, the check against the model's own output,
   and building (validating) the record.

It prints each round's seconds, then the ratio of the fastest runs (target ≤ 2).

Then SmolLM2's second load (issue 12: under 2 s): its GGUF file already dequantised into the
cache (the first load does it, 20–75 s), each round loads the cached safetensors folder again
(``blockviz.models.loading._load`` without its per-process memo: config, tokenizer, weights),
and MiniLM's folder the same way as an anchor of similar size (its weights 90 MB, SmolLM2's
540 MB as float32). It prints the fastest cached load, its ratio to the 2 s target and to MiniLM's.

Then SmolLM2's 30 layers in one record (``--layer all``, :func:`every_layer`): its time against the
model's forward pass with ``output_attentions``, its size in memory and on disk.
"""

from __future__ import annotations

import sys
import time

import torch

SENTENCE = "The chicken didn't cross the road because it was too tired."


def best(function, rounds: int) -> float:
    """The fastest of ``rounds`` runs of ``function``, in seconds (the least disturbed on a shared machine)."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(rounds: int = 20) -> None:
    torch.set_num_threads(1)
    from blockviz.models import load_model, record_layer

    loaded = load_model("minilm")
    ids = torch.tensor([loaded.tokenizer(SENTENCE)["input_ids"]])

    def forward():
        with torch.no_grad():
            loaded.model(input_ids=ids)

    def recording():
        record_layer(SENTENCE, model="minilm", layer=3)

    forward(), recording()  # warm-up
    model_seconds, record_seconds = [], []
    for round_ in range(rounds):
        model_seconds.append(best(forward, 1))
        record_seconds.append(best(recording, 1))
        print(
            f"round {round_ + 1}: model forward {model_seconds[-1] * 1000:.1f} ms, record_layer {record_seconds[-1] * 1000:.1f} ms"
        )
    fastest_model, fastest_record = min(model_seconds), min(record_seconds)
    print(
        f"fastest: model forward {fastest_model * 1000:.1f} ms, record_layer {fastest_record * 1000:.1f} ms, "
        f"ratio {fastest_record / fastest_model:.2f} (target ≤ 2)"
    )


CACHED_LOAD_TARGET = 2.0
"""Seconds SmolLM2's load from the cache may take (issue 12)."""


def cached_load(rounds: int = 5) -> None:
    torch.set_num_threads(1)
    from blockviz.models.loading import _load, first_load_is_slow, load_model
    from blockviz.models.resolve import resolve_model

    if first_load_is_slow("smollm2"):
        print("SmolLM2 is not cached yet: dequantising it once (20–75 s), not timed")
        load_model("smollm2")
    seconds = {}
    for name in ("smollm2", "minilm"):
        location = resolve_model(name)
        seconds[name] = best(lambda: _load.__wrapped__(location, False, "float32"), rounds)
    print(
        f"cached load: smollm2 {seconds['smollm2']:.2f} s (fastest of {rounds}), ratio to the {CACHED_LOAD_TARGET:.0f} s target "
        f"{seconds['smollm2'] / CACHED_LOAD_TARGET:.2f} (target ≤ 1); minilm {seconds['minilm']:.2f} s, ratio smollm2 / minilm {seconds['smollm2'] / seconds['minilm']:.2f}"
    )


def every_layer(rounds: int = 3) -> None:
    """SmolLM2, all 30 layers on the 13-token sentence (issue 34): ``record(…, layer="all")``
    (one forward pass with hooks, every layer again through blockviz's Block, checks, the
    record of 30 blocks) against the model's own forward pass with ``output_attentions`` and
    ``output_hidden_states``, alternating, fastest of ``rounds``; then the record's size in
    memory (its tensors and parameters) and as a saved .safetensors file, and its load time."""
    import os
    import tempfile

    torch.set_num_threads(1)
    from blockviz.block_record import BlockRecord
    from blockviz.models import load_model
    from blockviz.recording import record

    loaded = load_model("smollm2")
    ids = torch.tensor([loaded.tokenizer(SENTENCE)["input_ids"]])

    def forward():
        with torch.no_grad():
            return loaded.model(input_ids=ids, use_cache=False, output_attentions=True, output_hidden_states=True)

    kept = {}

    def recording():
        kept["rec"] = record(SENTENCE, "smollm2", "all")

    forward(), recording()  # warm-up
    model_seconds, record_seconds = [], []
    for _ in range(rounds):
        model_seconds.append(best(forward, 1))
        record_seconds.append(best(recording, 1))
    rec = kept["rec"]
    outputs = forward()
    model_bytes = sum(t.nbytes for t in (*outputs.attentions, *outputs.hidden_states))
    activations = sum(t.nbytes for view in rec.blocks for t in view.activations().values())
    parameters = sum(t.nbytes for view in rec.blocks for t in view.params.values())
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "smollm2.safetensors")
        rec.save(path)
        size = os.path.getsize(path)
        load_seconds = best(lambda: BlockRecord.load(path), 1)
    print(
        f"smollm2 all {len(rec.blocks)} layers, {rec.n} tokens: record {min(record_seconds):.2f} s, model forward with "
        f"attentions and hidden states {min(model_seconds) * 1000:.0f} ms, ratio {min(record_seconds) / min(model_seconds):.1f}; "
        f"activations {activations / 2**20:.1f} MB (the model's attentions and hidden states {model_bytes / 2**20:.1f} MB), "
        f"parameters {parameters / 2**20:.0f} MB; saved {size / 2**20:.0f} MB, loaded in {load_seconds:.2f} s"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
    cached_load()
    every_layer()
