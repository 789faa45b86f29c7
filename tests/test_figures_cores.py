"""The default number of figure workers: the cores free now, from the machine's CPU-time counters
over a window less this process's own time, or the 1-minute load average without them."""

from __future__ import annotations

import time

import pytest

from blockviz.figures import cores, writing
from blockviz.figures.cores import Snapshot, busy_elsewhere, free_of


@pytest.mark.parametrize(
    ("available", "present", "busy", "free"),
    [
        (2, 2, 0.0, 2),
        (2, 2, 0.3, 2),
        (2, 2, 0.6, 1),
        (2, 2, 1.0, 1),
        (2, 2, 5.0, 1),  # two cores: idle, a little busy, one busy loop, load 5
        (1, 2, 0.2, 1),  # pinned to one core of two
        (8, 8, 6.4, 2),
        (8, 8, 30.0, 1),
        (4, 8, 1.0, 4),  # an affinity of 4 caps 7 free cores
    ],
)
def test_free_cores_are_the_cores_less_the_busy_ones_rounded(available, present, busy, free):
    assert free_of(available, present, busy) == free


def test_busy_elsewhere_is_the_machines_busy_time_less_this_processs_over_the_window():
    start = Snapshot(at=10.0, machine_busy=100.0, own=5.0)
    assert busy_elsewhere(start, Snapshot(12.0, 103.5, 6.0)) == pytest.approx(1.25)  # (3.5 − 1.0) s busy over 2 s
    assert (
        busy_elsewhere(start, Snapshot(12.0, 101.0, 6.02)) == 0.0
    )  # this process alone (counters tick by 10 ms): nothing else
    assert busy_elsewhere(start, Snapshot(10.3, 101.0, 5.1)) is None  # too short a window to tell
    assert busy_elsewhere(Snapshot(10.0, None, 5.0), Snapshot(12.0, None, 6.0)) is None  # no /proc/stat


def test_the_counters_count_this_processs_own_work():
    if cores.machine_busy_seconds() is None:
        pytest.skip("no /proc/stat here")
    start = cores.snapshot()
    while (
        cores.own_seconds() - start.own < 0.3 or time.monotonic() - start.at < cores.SHORTEST_WINDOW
    ) and time.monotonic() - start.at < 30:
        pass  # 0.3 CPU s, however busy the machine, over a window long enough to read
    end = cores.snapshot()
    own = end.own - start.own
    assert own >= 0.3 and end.machine_busy - start.machine_busy >= own - 0.05  # every core's busy time includes ours
    assert busy_elsewhere(start, end) >= 0.0


def test_without_a_window_the_load_average_stands_for_the_busy_cores(monkeypatch):
    monkeypatch.setattr(cores, "machine_busy_seconds", lambda: None)
    monkeypatch.setattr(cores.os, "cpu_count", lambda: 2)
    monkeypatch.setattr("blockviz.processes.cores_available", lambda: 2)
    for load, free in ((0.2, 2), (1.2, 1), (5.0, 1)):
        monkeypatch.setattr(cores.os, "getloadavg", lambda: (load, load, load))
        assert cores.cores_free() == free

    def unavailable():
        raise OSError("no load average")

    monkeypatch.setattr(cores.os, "getloadavg", unavailable)
    assert cores.cores_free() == 2


def test_a_window_of_busy_counters_sets_the_free_cores(monkeypatch):
    monkeypatch.setattr(cores.os, "cpu_count", lambda: 4)
    monkeypatch.setattr("blockviz.processes.cores_available", lambda: 4)
    monkeypatch.setattr(cores, "snapshot", lambda: Snapshot(13.0, 1006.0, 2.0))
    monkeypatch.setattr(cores.os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # lagging: not read when the counters say
    assert (
        cores.cores_free(since=Snapshot(10.0, 1000.0, 0.0)) == 3
    )  # (6 − 2) s busy over 3 s: 1.33 cores busy elsewhere


def test_figures_are_drawn_by_as_many_workers_as_cores_are_free(monkeypatch):
    for free in (1, 2, 5):
        monkeypatch.setattr(writing, "cores_free", lambda: free)
        assert writing._worker_count(None, 13) == (free if writing._can_fork() else 1)
    assert writing._worker_count(None, 1) == 1 and writing._worker_count(3, 13) == (3 if writing._can_fork() else 1)
