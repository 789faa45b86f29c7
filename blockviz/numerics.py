"""Pinned numerics: torch's arithmetic the same bits on every x86-64 CPU with AVX2.

PyTorch chooses its kernels by the CPU it runs on: ATen's vectorised kernels for the widest
instructions the CPU has (AVX-512, AVX2 or neither: ``torch.backends.cpu.get_cpu_capability()``),
MKL's matrix products likewise, and oneDNN's GELU likewise. Each width adds in another order, the
last bits differ, and 4,000 training steps grow that into other weights and another loss. Pinned,
every CPU runs the same instructions:

- ``ATEN_CPU_CAPABILITY=default``: ATen's kernels built for plain x86-64, chosen on every CPU;
- ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility on its one SSE2 code path
  without the approximate ``rcpps``/``rsqrtps``, the branch it keeps on Intel's and other CPUs;
- oneDNN off inside :func:`pinned` (GELU then is ATen's), one thread, deterministic algorithms.

What still depends on the CPU is the C library's ``expf``, ``logf``, ``erff`` …, which glibc
picks by the CPU too: its FMA versions on every CPU with AVX2, so AVX2 and AVX-512 machines agree
(an older CPU without them may round a few results differently).

The two variables count only if set before torch is loaded: the ``blockviz`` program sets them at
its start (:func:`pin_environment`), so ``blockviz train``'s files and the records of the toy and
the seeded block (which run inside :func:`pinned`) are the same bytes on AVX2 and AVX-512 machines
alike. A Python process that imports torch itself is pinned only if it set them first
(:func:`is_pinned`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, MutableMapping

PINNED_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
"""The variables that choose the same ATen and MKL code on every x86-64 CPU."""


def pin_environment(environ: MutableMapping[str, str] | None = None) -> None:
    """Set :data:`PINNED_ENVIRONMENT` in ``environ`` (this process's environment if omitted),
    replacing values already there. Only a torch loaded afterwards follows them."""
    (os.environ if environ is None else environ).update(PINNED_ENVIRONMENT)


def is_pinned() -> bool:
    """Whether this process's torch runs ATen's plain kernels and MKL's compatible branch
    (loads torch)."""
    import torch

    return torch.backends.cpu.get_cpu_capability() == "DEFAULT" and os.environ.get("MKL_CBWR") == "COMPATIBLE"


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """One thread, deterministic algorithms and oneDNN off inside; the previous settings restored
    after."""
    import torch

    threads, strict, onednn = (
        torch.get_num_threads(),
        torch.get_deterministic_debug_mode(),
        torch.backends.mkldnn.enabled,
    )
    torch.set_num_threads(1)
    # torch.use_deterministic_algorithms(True) sets the same flag, but first imports
    # torch._inductor for its compiler's setting (no compiling here): 1 CPU s of every record made
    torch.set_deterministic_debug_mode("error")
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.set_deterministic_debug_mode(strict)
        torch.backends.mkldnn.enabled = onednn
