"""The block's parameters: their names and shapes, a user's file in place of the seeded ones,
and the seeded learned positions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.tensorfile import read_tensors
from blockviz.tokens import EMBEDDING_SCALE, dtype_of

FILE_DTYPES = (torch.float32, torch.float64)
"""Dtypes a parameters file may hold; others (ints, bool, float16, float8) are refused, not converted."""


def learned_positions(config: BlockConfig) -> torch.Tensor:
    """Seeded learned positional embeddings ``W_pos``, shape ``(max_tokens, d_model)``,
    drawn from N(0, EMBEDDING_SCALE²) with a generator seeded by ``config.seed + 1``."""
    generator = torch.Generator().manual_seed(config.seed + 1)
    table = torch.randn(config.max_tokens, config.d_model, generator=generator, dtype=torch.float64)
    return (table * EMBEDDING_SCALE).to(dtype_of(config))


def parameter_shapes(config: BlockConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter name a record or parameters file holds, with its shape (the
    :class:`~blockviz.block.Block`'s ``state_dict``, plus ``W_pos`` for learned positions).

    The toy block's: ``ln1.weight``, ``ln1.bias`` ``(d_model,)``; ``attn.W_Q/W_K/W_V``
    ``(n_heads, d_model, d_head)``, ``attn.b_Q/b_K/b_V`` ``(n_heads, d_head)``, ``attn.W_O``
    ``(d_model, d_model)``, ``attn.b_O``; ``ln2.*``; ``ffn.W_in`` ``(d_model, d_ff)``, ``ffn.b_in``,
    ``ffn.W_out`` ``(d_ff, d_model)``, ``ffn.b_out``. Other architectures: W_K, W_V, b_K, b_V have
    ``n_kv_heads`` heads; RMSNorm has no ``.bias``; a gated FFN has ``ffn.W_gate``, ``ffn.W_up``
    (and ``b_gate``, ``b_up``) instead of ``W_in``/``b_in``; without biases no ``b_*`` at all.
    With ``vocab_size`` (a trained toy model): ``W_E`` ``(vocab_size, d_model)``, the token
    embeddings; ``ln_f.weight``, ``ln_f.bias`` ``(d_model,)``; ``W_U`` ``(d_model, vocab_size)``.
    """
    arch = config.architecture
    d, h, g, e, f = config.d_model, config.n_heads, config.kv_heads, config.d_head, config.d_ff
    heads = {"Q": h, "K": g, "V": g}
    norm = {"weight": (d,), "bias": (d,)} if arch.has_centring else {"weight": (d,)}
    shapes = {f"ln1.{name}": shape for name, shape in norm.items()}
    shapes.update({f"attn.W_{kind}": (heads[kind], d, e) for kind in "QKV"})
    if arch.bias:
        shapes.update({f"attn.b_{kind}": (heads[kind], e) for kind in "QKV"})
    shapes["attn.W_O"] = (d, d)
    if arch.bias:
        shapes["attn.b_O"] = (d,)
    shapes.update({f"ln2.{name}": shape for name, shape in norm.items()})
    for name in ("gate", "up") if arch.gated else ("in",):
        shapes[f"ffn.W_{name}"] = (d, f)
        if arch.bias:
            shapes[f"ffn.b_{name}"] = (f,)
    shapes["ffn.W_out"] = (f, d)
    if arch.bias:
        shapes["ffn.b_out"] = (d,)
    if arch.learned_positions:
        shapes["W_pos"] = (config.max_tokens, d)
    if config.architecture.unembedding:
        shapes.update(
            {"W_E": (config.vocab_size, d), "ln_f.weight": (d,), "ln_f.bias": (d,), "W_U": (d, config.vocab_size)}
        )
    return shapes


def check_parameters(
    params: Mapping[str, torch.Tensor], config: BlockConfig, where: str, dtypes=FILE_DTYPES, extra_allowed: bool = False
) -> None:
    """Raise :class:`BlockvizError` unless ``params`` holds every parameter of ``config``, each a
    tensor of one of ``dtypes``, of its shape and finite; names beyond those only if ``extra_allowed``."""
    shapes = parameter_shapes(config)
    if not extra_allowed:
        extra = sorted(set(params) - set(shapes))
        if extra:
            raise BlockvizError(
                f"{where} has an unknown parameter {extra[0]!r}: the block's parameters are {', '.join(shapes)}"
            )
    for name, shape in shapes.items():
        _check_parameter(name, params.get(name), shape, where, dtypes)


def load_params(source: str | Path | Mapping[str, torch.Tensor], block, config: BlockConfig) -> torch.Tensor | None:
    """Copy the parameters in ``source`` (a file, or named tensors such as ``BlockRecord.params``)
    into ``block``; return ``W_pos`` if positions are learned.

    Names not used by the block (e.g. a saved record's activations) are ignored.

    Raises
    ------
    BlockvizError
        If the file is missing, unreadable or of another format, a parameter is missing, is not
        float32/float64, has the wrong shape (naming expected and got), or holds NaN or ±∞.
    """
    if isinstance(source, Mapping):
        tensors, where = dict(source), "the given parameters"
    else:
        tensors, where = read_tensors(source)[0], f"parameters file {str(source)!r}"
        if Path(source).suffix.lower() == ".json":
            tensors = {name: tensor.to(dtype_of(config)) for name, tensor in tensors.items()}
    check_parameters(tensors, config, where, extra_allowed=True)
    dtype = dtype_of(config)
    with torch.no_grad():
        block.load_state_dict({name: tensors[name].to(dtype) for name in block.state_dict()})
    return tensors["W_pos"].to(dtype) if config.architecture.learned_positions else None


def _check_parameter(name: str, tensor, shape: tuple[int, ...], where: str, dtypes) -> None:
    if tensor is None:
        raise BlockvizError(f"{where} has no parameter {name!r}: add it with shape {list(shape)}")
    if not isinstance(tensor, torch.Tensor):
        raise BlockvizError(f"parameter {name!r} in {where} is a {type(tensor).__name__}, not a tensor")
    if tensor.dtype not in dtypes:
        allowed = " or ".join(str(dtype).removeprefix("torch.") for dtype in dtypes)
        raise BlockvizError(
            f"parameter {name!r} in {where} has dtype {str(tensor.dtype).removeprefix('torch.')}: save parameters as {allowed}"
        )
    if tuple(tensor.shape) != shape:
        raise BlockvizError(
            f"parameter {name!r} in {where} has shape {list(tensor.shape)}, expected {list(shape)}: match the config's sizes"
        )
    if not bool(torch.isfinite(tensor).all()):
        raise BlockvizError(f"parameter {name!r} in {where} holds NaN or ∞: every weight must be a finite number")
