"""Parameters from a user's file in place of the seeded ones, and the seeded learned positions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from blockviz.block import Block
from blockviz.config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.tensorfile import read_tensors
from blockviz.tokens import EMBEDDING_SCALE, dtype_of


def learned_positions(config: BlockConfig) -> torch.Tensor:
    """Seeded learned positional embeddings ``W_pos``, shape ``(max_tokens, d_model)``,
    drawn from N(0, EMBEDDING_SCALE²) with a generator seeded by ``config.seed + 1``."""
    generator = torch.Generator().manual_seed(config.seed + 1)
    table = torch.randn(config.max_tokens, config.d_model, generator=generator, dtype=torch.float64)
    return (table * EMBEDDING_SCALE).to(dtype_of(config))


def expected_shapes(block: Block, config: BlockConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter name a weights file must hold, with its shape."""
    shapes = {name: tuple(tensor.shape) for name, tensor in block.state_dict().items()}
    if config.positional == "learned":
        shapes["W_pos"] = (config.max_tokens, config.d_model)
    return shapes


def load_weights(source: str | Path | Mapping[str, torch.Tensor], block: Block, config: BlockConfig) -> torch.Tensor | None:
    """Copy the parameters in ``source`` (a file, or named tensors such as ``BlockRecord.params``)
    into ``block``; return ``W_pos`` if positions are learned.

    Names not used by the block (e.g. a saved record's activations) are ignored.

    Raises
    ------
    BlockvizError
        If the file is missing, unreadable or of another format, a parameter is missing, has
        the wrong shape (naming expected and got), or holds NaN or ±∞.
    """
    if isinstance(source, Mapping):
        tensors, where = dict(source), "the given parameters"
    else:
        tensors, where = read_tensors(source)[0], f"weights file {str(source)!r}"
    shapes = expected_shapes(block, config)
    for name, shape in shapes.items():
        _check_parameter(name, tensors.get(name), shape, where)
    dtype = dtype_of(config)
    with torch.no_grad():
        block.load_state_dict({name: tensors[name].to(dtype) for name in block.state_dict()})
    return tensors["W_pos"].to(dtype) if "W_pos" in shapes else None


def _check_parameter(name: str, tensor: torch.Tensor | None, shape: tuple[int, ...], where: str) -> None:
    if tensor is None:
        raise BlockvizError(f"{where} has no parameter {name!r}: add it with shape {list(shape)}")
    if tuple(tensor.shape) != shape:
        raise BlockvizError(f"parameter {name!r} in {where} has shape {list(tensor.shape)}, expected {list(shape)}: match the config's sizes")
    if not bool(torch.isfinite(tensor).all()):
        raise BlockvizError(f"parameter {name!r} in {where} holds NaN or ∞: every weight must be a finite number")
