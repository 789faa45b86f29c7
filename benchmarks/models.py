"""Recording one layer of MiniLM against the model's own forward pass (a benchmark, not a test):
run `.venv/bin/python benchmarks/models.py [ROUNDS]`.

Both run after the model is loaded, in one process, one thread (as the tests), on the 13-token
sentence, one right after the other in each round:
1. the model's own forward pass: ``model(input_ids)`` (eager attention, no extra outputs), all 6 layers;
2. ``blockviz.models.record_layer(sentence, model="minilm", layer=3)``: tokenising, the forward
   pass up to layer 3 (hooks capture its input, output and attention weights), the layer again
   through blockviz's Block with every step recorded, the check against the model's own output,
   and building (validating) the record.

It prints each round's seconds, then the ratio of the fastest runs (target ≤ 2).
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
        print(f"round {round_ + 1}: model forward {model_seconds[-1] * 1000:.1f} ms, record_layer {record_seconds[-1] * 1000:.1f} ms")
    fastest_model, fastest_record = min(model_seconds), min(record_seconds)
    print(f"fastest: model forward {fastest_model * 1000:.1f} ms, record_layer {fastest_record * 1000:.1f} ms, "
          f"ratio {fastest_record / fastest_model:.2f} (target ≤ 2)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
