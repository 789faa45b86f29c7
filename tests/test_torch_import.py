"""torch imported by blockviz.render.torch_import (without torch.export and the Meta device's Python
kernels) makes the same records of blockviz's own blocks, byte for byte, as a plain ``import
torch``; and anything imported later from the parts left out is the real module, torch completed
as its own import would have."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from blockviz.render.torch_import import LEFT_OUT

SENTENCE = "The chicken didn't cross the road because it was too tired."
HEAVY = (*LEFT_OUT, "torch._decomp", "torch._refs")
"""What a plain ``import torch`` imports and the light import does not."""
RECORDS = """
import hashlib, json, sys
from blockviz.numerics import pin_environment
pin_environment()
{imports}
from blockviz.recording import record
saved = {{}}
for model in ("toy", "seeded", "copy"):
    path = {folder!r} + f"/{{model}}.safetensors"
    record({sentence!r}, model=model).save(path)
    saved[model] = hashlib.sha256(open(path, "rb").read()).hexdigest()
print(json.dumps([saved, sorted(name for name in {heavy!r} if name in sys.modules)]))
"""
LATER = """
import json, sys
from blockviz.render.torch_import import import_torch
torch = import_torch()
{later}
modules = [sys.modules[name] for name in {heavy!r}]
print(json.dumps([
    all(getattr(module, "__file__", None) for module in modules),
    torch.export is sys.modules["torch.export"] and torch._meta_registrations is sys.modules["torch._meta_registrations"],
    callable(torch.export.export) and callable(torch._decomp.decomposition_table.get),
    torch.ones(2, 3, device="meta").softmax(-1).shape == (2, 3),
    torch.Generator().manual_seed(7).initial_seed(),
]))
"""


def _run(code: str) -> list:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_records_of_the_toy_the_seeded_block_and_the_copy_model_are_the_same_bytes(tmp_path):
    made = {}
    for name, imports in {
        "plain": "import torch",
        "light": "from blockviz.render.torch_import import import_torch; import_torch()",
    }.items():
        (tmp_path / name).mkdir()
        made[name] = _run(RECORDS.format(imports=imports, folder=str(tmp_path / name), sentence=SENTENCE, heavy=HEAVY))
    assert made["light"][0] == made["plain"][0]
    assert made["plain"][1] == sorted(HEAVY)
    assert made["light"][1] == []  # recording imported no part left out


@pytest.mark.parametrize(
    "later",
    [
        "import torch._decomp",  # alone, first: a circular import, but for torch completed before it
        "x = torch.export.Dim",  # a name read from a stand-in
        "import torch._meta_registrations",  # imported while torch is completed: not run twice
        "p = torch.nn.Parameter(torch.ones(2)); torch.optim.SGD([p], lr=0.5)",  # torch.optim imports torch._dynamo
    ],
)
def test_a_later_import_of_what_was_left_out_gets_the_real_modules(later):
    real, bound, usable, meta, seed = _run(LATER.format(later=later, heavy=HEAVY))
    assert real and bound and usable and meta
    assert seed == 7
