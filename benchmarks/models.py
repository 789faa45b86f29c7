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

Then SmolLM2's 30 layers in one record (``--layer all``, :func:`every_layer`; alone:
`.venv/bin/python benchmarks/models.py every_layer`): its time (wall and the thread's CPU time)
and peak memory against the model's forward pass with ``output_attentions``, its size in memory
and on disk, and its largest difference from the model's own hidden states. The model runs only
through layer 0 there (checked against blockviz's); layers 1–29 are blockviz's Block alone.
"""

from __future__ import annotations

import sys
import time

import torch

from blockviz.models.recording import TOLERANCE

SENTENCE = "The chicken didn't cross the road because it was too tired."


def best(function, rounds: int, clock=time.perf_counter) -> float:
    """The fastest of ``rounds`` runs of ``function``, in seconds of ``clock`` (wall time;
    ``time.thread_time``: this thread's CPU time, less moved by other jobs on a shared machine)
    (the least disturbed run)."""
    times = []
    for _ in range(rounds):
        start = clock()
        function()
        times.append(clock() - start)
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


def every_layer(rounds: int = 7) -> None:
    """SmolLM2, all 30 layers on the 13-token sentence (issue 34): ``record(…, layer="all")``
    (the model run through layer 0 with hooks and that layer checked against blockviz's Block,
    blockviz's Block on every layer, each reading the one before's output, the record's checks,
    the record of 30 blocks, the logit lens of the focus token) against the model's own forward
    pass with ``output_attentions`` and ``output_hidden_states``, alternating, fastest of
    ``rounds`` in wall time and in CPU time; each one's peak memory in a fresh process of its own
    (:func:`memory_peak`); then the record's size in memory and as a saved .safetensors file, its
    load time, and its largest difference from the model's hidden states (:func:`largest_gap`)."""
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

    def recording():
        return record(SENTENCE, "smollm2", "all")

    forward(), recording()  # warm-up
    model_seconds, record_seconds, model_cpu, record_cpu = [], [], [], []
    for _ in range(rounds):
        model_seconds.append(best(forward, 1))
        record_seconds.append(best(recording, 1))
        model_cpu.append(best(forward, 1, time.thread_time))
        record_cpu.append(best(recording, 1, time.thread_time))
    blocks_seconds, lens_seconds = parts_of_a_record(loaded, rounds)
    model_peak, model_above = memory_peak("forward")
    record_peak, record_above = memory_peak("record")
    rec, outputs = recording(), forward()
    gap = largest_gap(rec, outputs.hidden_states, loaded.family.final_norm(loaded.model))
    model_bytes = sum(t.nbytes for t in (*outputs.attentions, *outputs.hidden_states))
    activations = sum(t.nbytes for view in rec.blocks for t in view.activations().values())
    parameters = sum(t.nbytes for view in rec.blocks for t in view.params.values())
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "smollm2.safetensors")
        rec.save(path)
        size = os.path.getsize(path)
        load_seconds = best(lambda: BlockRecord.load(path), 1)
    print(
        f"smollm2 all {len(rec.blocks)} layers, {rec.n} tokens (load average {os.getloadavg()[0]:.1f}): "
        f"record {min(record_seconds):.3f} s, model forward with attentions and hidden states "
        f"{min(model_seconds):.3f} s, ratio {min(record_seconds) / min(model_seconds):.2f} (target ≤ 2; in CPU time "
        f"{min(record_cpu):.3f} s against {min(model_cpu):.3f} s, {min(record_cpu) / min(model_cpu):.2f}; of it blockviz's "
        f"blocks alone {blocks_seconds / min(model_seconds):.2f}, the logit lens {lens_seconds / min(model_seconds):.2f}); "
        f"peak memory {record_peak / 2**10:.0f} MB against {model_peak / 2**10:.0f} MB, ratio "
        f"{record_peak / model_peak:.2f} (above the loaded model: {record_above / 2**10:.1f} MB against "
        f"{model_above / 2**10:.1f} MB); activations {activations / 2**20:.1f} MB (the model's attentions and "
        f"hidden states {model_bytes / 2**20:.1f} MB), parameters {parameters / 2**20:.0f} MB (views of the "
        f"model's own); saved {size / 2**20:.1f} MB, loaded in {load_seconds:.2f} s; largest difference from the "
        f"model's hidden states {gap:.2g} of the largest magnitude (TOLERANCE {TOLERANCE['float32']:g})"
    )


def largest_gap(rec, hidden_states, final_norm) -> float:
    """The largest difference between a layer's output in ``rec`` and the model's own hidden
    state after that layer, relative to the hidden state's largest magnitude (at least 1), as
    :data:`blockviz.models.recording.TOLERANCE` measures it; the last hidden state of a Llama
    model is after its final norm, so the last layer's output goes through ``final_norm`` first."""
    gaps = []
    for view in rec.blocks:
        after = view.source.layer + 1
        ours, theirs = view.tensors[view.architecture.block_output], hidden_states[after][0]
        if after == len(hidden_states) - 1:
            with torch.no_grad():
                ours = final_norm(ours[None])[0]
        gaps.append(float((ours - theirs).abs().max()) / max(1.0, float(theirs.abs().max())))
    return max(gaps)


def parts_of_a_record(loaded, rounds: int) -> tuple[float, float]:
    """Two parts of :func:`every_layer`'s record timed alone, fastest of ``rounds``: blockviz's
    Block run on each of the 30 layers (the model's own parameters, the record's rotary angles),
    and the logit lens of the focus token (each block's output through the final norm and the
    49,152-token unembedding)."""
    from blockviz.block import Block
    from blockviz.models.recording import _lens, _lens_rows
    from blockviz.models.tokens import model_tokens
    from blockviz.recording import record

    rec = record(SENTENCE, "smollm2", "all")
    family, config = loaded.family, rec.config
    modules = family.layers(loaded.model)
    block = Block(config, seeded=False)
    rotary = (rec.tensors["rope_cos"], rec.tensors["rope_sin"])

    def blocks():
        stream = rec.block(0).tensors["resid_pre"]
        for module in modules:
            params = family.params(module, config)
            block.load_state_dict({name: params[name] for name in block.state_dict()}, assign=True)
            with torch.no_grad():
                stream = block(stream, {}, rotary)

    tokens = model_tokens(loaded.tokenizer, SENTENCE, config.max_tokens, "smollm2")
    rows = _lens_rows(None, tokens)
    return best(blocks, rounds), best(lambda: _lens(loaded, list(rec.blocks), rows), rounds)


def memory_peak(run: str) -> tuple[int, int]:
    """The peak memory of a fresh process that loads SmolLM2 and then runs ``run`` once
    (``"forward"``: the model's forward pass with ``output_attentions``; ``"record"``: its 30
    layers recorded), in kB: ``VmHWM`` of ``/proc/self/status`` (Linux), and how far it rose above
    the memory before the run (reset there by writing 5 to ``/proc/self/clear_refs``), after the
    same run on two tokens (which pages the weights in and imports what the run needs)."""
    import subprocess

    done = subprocess.run([sys.executable, __file__, "peak", run], check=True, capture_output=True, text=True)
    peak, above = done.stdout.split()[-2:]
    return int(peak), int(above)


def _peak_of(run: str) -> None:
    """Print this process's peak and its rise above the loaded model while doing ``run`` (:func:`memory_peak`)."""
    torch.set_num_threads(1)
    from blockviz.models import load_model
    from blockviz.recording import record

    loaded = load_model("smollm2")

    def once(sentence: str):
        if run == "record":
            return record(sentence, "smollm2", "all")
        ids = torch.tensor([loaded.tokenizer(sentence)["input_ids"]])
        with torch.no_grad():
            return loaded.model(input_ids=ids, use_cache=False, output_attentions=True, output_hidden_states=True)

    once("The cat")  # the weights paged in, the modules imported: the peak is the sentence's own
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before = _status_kb("VmRSS")
    kept = once(SENTENCE)
    peak = _status_kb("VmHWM")
    del kept
    print(peak, peak - before)


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


if __name__ == "__main__":
    if sys.argv[1:] == ["every_layer"]:
        every_layer()
    elif sys.argv[1:2] == ["peak"]:
        _peak_of(sys.argv[2])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
        cached_load()
        every_layer()
