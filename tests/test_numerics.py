"""blockviz.numerics: the environment the program pins, and what ``pinned()`` sets and restores.
That the pin makes the same bytes on every CPU is ``test_toy_reproducible``'s."""

import subprocess
import sys

import pytest
import torch

from blockviz.numerics import pin_environment, pinned


def _settings() -> tuple[int, bool, bool]:
    return torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(), torch.backends.mkldnn.enabled


def test_pin_environment_replaces_what_the_environment_said_and_keeps_the_rest():
    environ = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AUTO", "PATH": "/bin"}
    pin_environment(environ)
    assert environ == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "PATH": "/bin"}


def test_pinned_runs_one_thread_deterministic_algorithms_and_no_onednn_then_restores_them():
    before = _settings()
    torch.set_num_threads(2)
    try:
        with pinned():
            assert _settings() == (1, True, False)
        assert _settings() == (2, before[1], before[2])
        with pytest.raises(ValueError), pinned():
            raise ValueError("restored on the way out too")
        assert _settings() == (2, before[1], before[2])
    finally:
        torch.set_num_threads(before[0])


def test_pinned_restores_a_warn_only_mode():
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with pinned():
            assert (
                torch.are_deterministic_algorithms_enabled()
                and not torch.is_deterministic_algorithms_warn_only_enabled()
            )
        assert torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


def test_pinned_does_not_import_torchs_compiler():
    # torch.use_deterministic_algorithms imports torch._inductor (and dynamo): 1 CPU s of a record
    code = "import sys, torch; from blockviz.numerics import pinned\nwith pinned(): pass\nprint('torch._inductor' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
