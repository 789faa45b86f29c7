"""How many CPU cores are free for drawing now, the default number of figure workers.

The cores this process may run on (:func:`blockviz.processes.cores_available`), less the cores
the rest of the machine keeps busy: measured from the kernel's CPU-time counters (``/proc/stat``)
over a window — from :func:`snapshot` (the command's start, or this module's import) to now —
less this process's own CPU time in it. Where the counters cannot be read, or the window is
shorter than :data:`SHORTEST_WINDOW`, the 1-minute load average stands for the busy cores (it
lags by about a minute and counts processes waiting on disk as busy). On a busy machine more
workers than free cores only contend with the other work and each other: 1.16× bare matplotlib
with a worker per core against 1.01× with one, at load 9 on 2 cores (``benchmarks/figures.py``).
"""

from __future__ import annotations

import math
import os
import time
from typing import NamedTuple


class Snapshot(NamedTuple):
    """The start of a window: monotonic seconds, the machine's busy CPU seconds so far (``None``
    where ``/proc/stat`` cannot be read) and this process's own CPU seconds so far."""

    at: float
    machine_busy: float | None
    own: float


def machine_busy_seconds() -> float | None:
    """CPU seconds every core of the machine has spent busy since boot (``/proc/stat``: user,
    nice, system, irq, softirq and steal time; idle and waiting on disk are free), or ``None``
    where the file cannot be read (not Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    """CPU seconds this process has used so far, every thread (not its children)."""
    times = os.times()
    return times.user + times.system


def snapshot() -> Snapshot:
    """Now, as the start of a window for :func:`cores_free`."""
    return Snapshot(time.monotonic(), machine_busy_seconds(), own_seconds())


SHORTEST_WINDOW = 0.5
"""Seconds: a shorter window says too little (10 ms counter ticks, bursts); the load average is used."""

_IMPORTED = snapshot()
"""The window :func:`cores_free` measures when not given one starts when this module is imported."""


def busy_elsewhere(start: Snapshot, end: Snapshot) -> float | None:
    """The cores the rest of the machine kept busy on average from ``start`` to ``end``: the
    machine's busy CPU seconds less this process's own, over the seconds between; ``None`` if
    the counters are missing or the window is under :data:`SHORTEST_WINDOW`."""
    elapsed = end.at - start.at
    if start.machine_busy is None or end.machine_busy is None or elapsed < SHORTEST_WINDOW:
        return None
    return max(0.0, (end.machine_busy - start.machine_busy) - (end.own - start.own)) / elapsed


def free_of(available: int, present: int, busy: float) -> int:
    """Of ``available`` cores (this process's) on a machine of ``present``, those free while
    ``busy`` cores' worth of other work runs: ``present - busy`` rounded, at least 1, at most
    ``available``."""
    return max(1, min(available, math.floor(present - busy + 0.5)))


def cores_free(since: Snapshot | None = None) -> int:
    """The CPU cores free for drawing now (at least 1): this process's cores less those busy
    elsewhere since ``since`` (default: this module's import), or, without a usable window, less
    the 1-minute load average; every available core where neither can be read."""
    from blockviz.processes import cores_available

    available = cores_available()
    present = os.cpu_count() or available
    busy = busy_elsewhere(since or _IMPORTED, snapshot())
    if busy is None:
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average (Windows)
            return available
    return free_of(available, present, busy)
