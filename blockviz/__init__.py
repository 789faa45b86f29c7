"""blockviz: what happens inside one transformer block, with real numbers.

>>> from blockviz import record
>>> rec = record("the cat sat")
>>> rec.weights.shape          # (n_heads, n, n)
torch.Size([2, 3, 3])
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["BlockConfig", "BlockRecord", "BlockvizError", "record", "__version__"]


def __getattr__(name: str):
    # Lazy, so that `blockviz --help` does not pay for importing torch.
    if name in ("BlockRecord", "record"):
        from blockviz import block_record as record_module

        return getattr(record_module, name)
    if name == "BlockConfig":
        from blockviz.config import BlockConfig

        return BlockConfig
    if name == "BlockvizError":
        from blockviz.errors import BlockvizError

        return BlockvizError
    raise AttributeError(f"module 'blockviz' has no attribute {name!r}")
