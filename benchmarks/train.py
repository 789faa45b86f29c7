"""Training the toy model, and recording with it against the seeded block (benchmarks, not tests):
run `.venv/bin/python benchmarks/train.py [ROUNDS]`.

1. `blockviz train -o TMP` with its defaults, as a user runs it (a fresh process, wall clock and
   the child's CPU time): target ≤ 60 s of wall clock on the 2-core machine (issue 20).
2. Recording the chicken sentence in one process, one thread, after a warm-up: blockviz's seeded
   block (`blockviz.record(sentence, "seeded")`) against the trained toy model
   (`blockviz.toy.recording.record_toy(sentence)`: the learned embeddings, the block, the
   prediction, and building the record), fastest of ROUNDS each, interleaved: target ≤ 1.2×.
   Then the same as a user runs it, `blockviz record SENTENCE [--model toy]` in fresh processes
   (start-up included), fastest of 3.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from private_cache import use_private_cache  # benchmarks/private_cache.py

SENTENCE = "The chicken didn't cross the road because it was too tired."
BLOCKVIZ = str(Path(sys.executable).with_name("blockviz"))


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def train_seconds() -> tuple[float, float]:
    """Wall and CPU seconds of `blockviz train` with its defaults, in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        cpu, start = child_cpu(), time.perf_counter()
        subprocess.run([BLOCKVIZ, "train", "-o", os.path.join(folder, "model")], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start, child_cpu() - cpu


def best(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def command_seconds(*extra: str) -> float:
    return best(
        lambda: subprocess.run([BLOCKVIZ, "record", SENTENCE, *extra], check=True, stdout=subprocess.DEVNULL), 3
    )


def main(rounds: int = 50) -> None:
    use_private_cache()
    wall, cpu = train_seconds()
    print(f"blockviz train (defaults): {wall:.1f} s wall, {cpu:.1f} s CPU; target ≤ 60 s wall: {wall / 60:.2f}× of it")

    import torch

    torch.set_num_threads(1)
    from blockviz.block_record import record
    from blockviz.toy.recording import record_toy

    record(SENTENCE), record_toy(SENTENCE)  # warm-up: imports, the model folder read once per process
    seeded, toy = [], []
    for _ in range(rounds):
        seeded.append(best(lambda: record(SENTENCE), 1))
        toy.append(best(lambda: record_toy(SENTENCE), 1))
    print(
        f"record in-process: seeded {min(seeded) * 1000:.2f} ms, toy {min(toy) * 1000:.2f} ms: {min(toy) / min(seeded):.2f}× (target ≤ 1.2×)"
    )
    plain, trained = command_seconds(), command_seconds("--model", "toy")
    print(f"blockviz record (fresh process): seeded {plain:.2f} s, --model toy {trained:.2f} s: {trained / plain:.2f}×")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:2]))
