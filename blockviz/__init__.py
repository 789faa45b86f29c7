"""blockviz: what happens inside one transformer block, with real numbers.

>>> from blockviz import record
>>> rec = record("the cat sat")  # the trained toy model, as `blockviz record "the cat sat"`
>>> rec.weights.shape          # (n_heads, n, n)
torch.Size([2, 3, 3])
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

__all__ = ["BlockConfig", "BlockRecord", "BlockvizError", "attentions", "record", "__version__"]


_LAZY = {
    "BlockRecord": "blockviz.block_record",
    "record": "blockviz.recording",
    "attentions": "blockviz.recording",
    "BlockConfig": "blockviz.block_config",
    "BlockvizError": "blockviz.errors",
}
"""Names imported on first use, so that `blockviz --help` does not pay for importing torch."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'blockviz' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
