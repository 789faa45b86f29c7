"""SIGINT and SIGTERM end a command cleanly, every time (issue 13): exit 130 / 143, the one line
"interrupted: earlier outputs kept", no process of blockviz's left, no temporary file or folder
left, and the earlier outputs byte-identical.

The end-to-end tests start the real ``blockviz`` program and signal it once it is writing (its
first temporary file or media folder exists): SIGTERM to the process, as ``kill`` sends it, and
SIGINT to its whole process group, as a terminal's Ctrl-C does (its workers get it too). The
render is interrupted five times at different moments: a signal swallowed once in eight would
show. The rest test the pieces in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.cli.interrupts import INTERRUPTED_LINE, run_interruptibly
from blockviz.files import atomic_path, temporary_folder
from blockviz.processes import end_processes, signals_deferred, start_worker

BLOCKVIZ = Path(sys.executable).with_name("blockviz")
THIRTEEN_TOKENS = "The chicken didn't cross the road because it was too tired."
EARLIER = b"an earlier output, to be kept exactly\n"
FIGURES = ["figures", THIRTEEN_TOKENS, "-j", "2", "--format", "svg,png"]
RENDER = ["render", "the cat sat", "--scene", "softmax", "--format", "mp4", "--resolution", "160x90"]


# -- the real program ----------------------------------------------------------------------------


def temporaries(folder: Path, probes: bool = True) -> list[str]:
    """The temporary files and folders under ``folder``; with ``probes=False`` not the empty file
    that checks a folder is writable, made and removed before any work starts."""
    prefixes = ("media-", "record-", ".blockviz-probe-") if probes else ("media-", "record-")
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")
                  if path.name.endswith(".part") or path.name.startswith(prefixes))


def children_of(pid: int) -> set[int]:
    """Every living descendant of process ``pid``, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    living = set()
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                living.add(pid)
        except OSError:
            pass
    return living


class Interruption:
    """One run of ``blockviz ARGS -o OUT`` to be sent ``signum`` (to its process, or as Ctrl-C to
    its process group) ``delay`` s after its first temporary file or folder appears (not the
    writable-folder probe) and it has at least ``workers`` child processes. OUT holds ``earlier``,
    an earlier output the run would replace."""

    def __init__(self, folder: Path, args: list[str], earlier: str, signum: int, to_group: bool, delay: float = 0.0, workers: int = 0):
        assert BLOCKVIZ.exists(), f"no blockviz program beside {sys.executable}: install the package (make setup)"
        self.out, self.earlier, self.signum, self.to_group, self.delay, self.workers = folder / "out", earlier, signum, to_group, delay, workers
        self.out.mkdir(parents=True)
        (self.out / earlier).write_bytes(EARLIER)
        self.process = subprocess.Popen([str(BLOCKVIZ), *args, "-o", str(self.out)], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.seen: set[int] = set()
        self.writing_since: float | None = None
        self.signalled_at: float | None = None

    def step(self) -> None:
        """Look at the run once: note its processes, signal it when it is time."""
        if self.signalled_at is not None:
            return
        children = children_of(self.process.pid)
        self.seen |= children
        assert self.process.poll() is None, ("blockviz ended before it was signalled", self.process.communicate())
        if self.writing_since is None and len(children) >= self.workers and temporaries(self.out, probes=False):
            self.writing_since = time.monotonic()
        if self.writing_since is not None and time.monotonic() >= self.writing_since + self.delay:
            (os.killpg if self.to_group else os.kill)(self.process.pid, self.signum)
            self.signalled_at = time.monotonic()

    def check(self) -> set[int]:
        """Everything the issue asks of an interrupted run; returns the processes it had."""
        _, stderr = self.process.communicate(timeout=30)
        took = time.monotonic() - self.signalled_at
        assert self.process.returncode == 128 + self.signum, (self.process.returncode, stderr.decode())
        assert stderr.decode().splitlines() == [INTERRUPTED_LINE]
        assert took < 20, f"{took:.1f} s from the signal to the exit"
        deadline = time.monotonic() + 5
        while alive(self.seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(self.seen), f"processes left: {alive(self.seen)} of {self.seen}"
        assert temporaries(self.out) == []
        assert (self.out / self.earlier).read_bytes() == EARLIER
        return self.seen

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def interrupt_all(runs: list[Interruption], timeout: float = 90) -> list[set[int]]:
    """Run side by side (a few seconds of start-up each, shared), signal each when it is time, check each."""
    try:
        started = time.monotonic()
        while any(run.signalled_at is None for run in runs):
            assert time.monotonic() - started < timeout, "blockviz wrote no temporary file in time"
            for run in runs:
                run.step()
            time.sleep(0.01)
        return [run.check() for run in runs]
    finally:
        for run in runs:
            run.kill()


def test_sigterm_and_ctrl_c_end_figures_and_their_workers(tmp_path):
    from blockviz.figures.registry import FIGURE_NAMES

    last = f"{FIGURE_NAMES[-1]}.svg"  # drawn last: not yet replaced when the signal comes
    terminated, interrupted = interrupt_all([
        Interruption(tmp_path / "term", FIGURES, last, signal.SIGTERM, to_group=False, workers=2),
        Interruption(tmp_path / "int", FIGURES, last, signal.SIGINT, to_group=True, workers=2),
    ])
    assert len(terminated) >= 2 and len(interrupted) >= 2  # the forked workers were there, and are gone


def test_signals_end_a_render_every_time(tmp_path):
    # SIGINT five times, at different moments, to the process or (as Ctrl-C) its group; and SIGTERM.
    interrupt_all([
        *(Interruption(tmp_path / f"int-{attempt}", RENDER, "softmax.mp4", signal.SIGINT, to_group=attempt % 2 == 1, delay=0.15 * attempt) for attempt in range(5)),
        Interruption(tmp_path / "term", RENDER, "softmax.mp4", signal.SIGTERM, to_group=False, delay=0.3),
    ])


# -- the pieces, in this process -----------------------------------------------------------------


def interrupted_exit(command, signum=signal.SIGTERM):
    """Run ``command`` as the CLI runs a command; return the exit code it ends with."""
    with pytest.raises(SystemExit) as ended:
        run_interruptibly(command)
    return ended.value.code


def test_a_signal_unwinds_removes_temporaries_and_says_one_line(tmp_path, capsys):
    (tmp_path / "a.svg").write_bytes(EARLIER)

    def command():
        with temporary_folder(tmp_path / ".cache", "media-"), atomic_path(tmp_path / "a.svg") as partial:
            partial.write_bytes(b"half")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        raise AssertionError("not interrupted")

    assert interrupted_exit(command) == 143
    assert capsys.readouterr().err == INTERRUPTED_LINE + "\n"
    assert temporaries(tmp_path) == [] and (tmp_path / "a.svg").read_bytes() == EARLIER


class SignalledWhileFinalised:
    """Gets a signal while Python finalises it, where an exception can only be "ignored"."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:  # the handler runs in here, and its exception is swallowed
            pass


def test_a_signal_swallowed_by_a_finaliser_is_raised_again(capsys):
    finished = []

    def command():
        SignalledWhileFinalised()  # dropped at once: __del__ runs here
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            pass
        finished.append(True)

    assert interrupted_exit(command) == 130
    assert finished == []
    assert capsys.readouterr().err == INTERRUPTED_LINE + "\n"  # no "Exception ignored in …"


def test_a_command_that_swallows_the_signal_still_ends_as_interrupted(capsys):
    def command():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except BaseException:  # noqa: B036 — some library code does this
            pass
        return "finished anyway"

    assert interrupted_exit(command) == 130
    assert capsys.readouterr().err == INTERRUPTED_LINE + "\n"


def test_a_second_signal_keeps_the_first_ones_exit_code(capsys):
    def command():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C pressed while it stops
            time.sleep(5)

    assert interrupted_exit(command) == 143
    assert capsys.readouterr().err == INTERRUPTED_LINE + "\n"


def test_handlers_are_put_back_after_a_command():
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    result = CliRunner().invoke(main, ["record", "a"])
    assert result.exit_code == 0
    assert {number: signal.getsignal(number) for number in before} == before


def test_signals_while_workers_start_wait_until_they_have_started():
    caught = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert caught == []
        time.sleep(0.05)
        assert caught == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def _worker_writing(folder: str) -> None:
    start_worker()
    with temporary_folder(Path(folder), "media-"), atomic_path(Path(folder) / "a.mp4") as partial:
        partial.write_bytes(b"half")
        time.sleep(30)


def test_a_worker_told_to_stop_removes_its_temporaries_and_exits(tmp_path):
    (tmp_path / "a.mp4").write_bytes(EARLIER)
    with signals_deferred():
        worker = multiprocessing.get_context("fork").Process(target=_worker_writing, args=(str(tmp_path),))
        worker.start()
    deadline = time.monotonic() + 10
    while len(temporaries(tmp_path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(temporaries(tmp_path)) == 2
    os.kill(worker.pid, signal.SIGINT)  # ignored: the parent decides
    time.sleep(0.1)
    assert worker.is_alive()
    end_processes([worker])
    assert worker.exitcode == 128 + signal.SIGTERM
    assert temporaries(tmp_path) == [] and (tmp_path / "a.mp4").read_bytes() == EARLIER


def test_an_interrupted_command_sweeps_a_temporary_folder_a_late_writer_made_again(tmp_path, capsys):
    """A thread still writing when the command is interrupted (Manim's video encoder) may make
    its temporary folder again after the folder was removed on the way out: the command waits
    for such threads, then sweeps once more, so nothing is left."""
    import threading

    writers = []

    def command():
        with temporary_folder(tmp_path / ".cache", "media-") as folder:
            def late_writer():
                time.sleep(0.3)
                (folder / "partial_movie_files").mkdir(parents=True, exist_ok=True)
                (folder / "partial_movie_files" / "segment.mp4").write_bytes(b"late")

            writers.append(threading.Thread(target=late_writer))
            writers[0].start()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        raise AssertionError("not interrupted")

    assert interrupted_exit(command) == 143
    assert not writers[0].is_alive()  # waited for before the last sweep
    assert capsys.readouterr().err == INTERRUPTED_LINE + "\n"
    assert temporaries(tmp_path) == []
