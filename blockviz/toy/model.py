"""The toy language model: learned token and position embeddings, a stack of blockviz's own
blocks (one for the shipped toy, two for the copy model), a final LayerNorm and an unembedding.

    embed = W_E[ids]                          (n, d_model)
    pos_embed = W_pos[:n]                     (n, d_model)
    resid_post_0 = Block_0(embed + pos_embed) (n, d_model)   blockviz.block.Block, pre-norm
    resid_post_k = Block_k(resid_post_k-1)    (n, d_model)   the residual stream, block after block
    ln_f = LayerNorm_f(resid_post_last)       (n, d_model)
    logits = ln_f @ W_U                       (n, n_vocab)
    probs = softmax(logits)                   (n, n_vocab)   row i: the next token after token i

(GPT-2's arrangement, Radford et al. 2019, §2.3, with an untied unembedding.) Each block is
:class:`blockviz.block.Block` itself, so a record of the trained model holds the numbers its
training computed. Every tensor carries leading batch dimensions through, for training.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from blockviz.block import Block, Prediction, initialise, remember
from blockviz.block_config import BlockConfig
from blockviz.params import parameter_shapes

EMBEDDING_INIT_STD = 1.0
"""Std of the initial W_E and W_pos entries (blockviz's seeded embeddings use the same scale)."""
BLOCK_SEED_STEP = 1000
"""Block K of a stack draws its initial weights from ``seed + BLOCK_SEED_STEP * K`` (block 0 as the one-block toy)."""


class ToyModel(nn.Module):
    """``n_blocks`` blocks between learned embeddings and an unembedding.

    Parameters (the names a model folder's ``model.safetensors`` uses, :meth:`parameters_by_name`):
    the block's own (``ln1.weight`` … ``ffn.b_out``) for one block, ``blocks.K.ln1.weight`` …
    for block K (0-based) of several, ``W_E`` ``(n_vocab, d_model)``, ``W_pos``
    ``(max_tokens, d_model)``, ``ln_f.weight``, ``ln_f.bias`` ``(d_model,)``, ``W_U``
    ``(d_model, n_vocab)``. ``config`` must be blockviz's own block with learned positions and
    ``vocab_size`` (= n_vocab). ``seeded``: draw initial weights from ``config.seed`` (W_E, W_pos
    N(0, 1), W_U N(0, 1/d_model), each block's :func:`blockviz.block.initialise`, block K from
    ``config.seed + BLOCK_SEED_STEP * K``); without, the caller loads them.
    """

    def __init__(self, config: BlockConfig, seeded: bool = True, n_blocks: int = 1):
        super().__init__()
        self.config = config
        self.n_blocks = n_blocks
        if n_blocks == 1:  # the shipped toy's names: block.ln1.weight …, written ln1.weight …
            self.block = Block(config, seeded=seeded)
        else:
            self.blocks = nn.ModuleList(Block(config, seeded=False) for _ in range(n_blocks))
            if seeded:
                for index, block in enumerate(self.blocks):
                    initialise(block, config.seed + BLOCK_SEED_STEP * index)
        d, n_vocab = config.d_model, config.vocab_size
        self.W_E = nn.Parameter(torch.empty(n_vocab, d))
        self.W_pos = nn.Parameter(torch.empty(config.max_tokens, d))
        self.unembed = Prediction(config)
        if seeded:  # False: the caller loads every parameter (a model folder)
            generator = torch.Generator().manual_seed(config.seed + 2)
            with torch.no_grad():
                self.W_E.copy_(torch.randn(n_vocab, d, generator=generator) * EMBEDDING_INIT_STD)
                self.W_pos.copy_(torch.randn(config.max_tokens, d, generator=generator) * EMBEDDING_INIT_STD)
                self.unembed.W_U.copy_(torch.randn(d, n_vocab, generator=generator) / math.sqrt(d))

    @property
    def stack(self) -> list[Block]:
        """The blocks in the order the residual stream meets them."""
        return [self.block] if self.n_blocks == 1 else list(self.blocks)

    def forward(
        self,
        ids: torch.Tensor,
        cache: dict[str, torch.Tensor] | None = None,
        block_caches: list[dict[str, torch.Tensor]] | None = None,
    ) -> torch.Tensor:
        """``ids`` ``(…, n)`` → ``logits`` ``(…, n, n_vocab)``; intermediates go to ``cache``
        under their record names (``embed``, ``pos_embed``, ``ln_f_*``, ``logits``, ``probs``, and
        the block's own for one block); block K's go to ``block_caches[K]`` if given (for one
        block, ``cache`` itself)."""
        cache = {} if cache is None else cache
        if block_caches is None:
            block_caches = [cache] if self.n_blocks == 1 else [{} for _ in range(self.n_blocks)]
        n = ids.shape[-1]
        embed = remember(cache, "embed", self.W_E[ids])
        resid = embed + remember(cache, "pos_embed", self.W_pos[:n])
        for block, block_cache in zip(self.stack, block_caches, strict=True):
            resid = block(resid, block_cache)
        return self.unembed(resid, cache)

    def parameters_by_name(self) -> dict[str, torch.Tensor]:
        """Every parameter under its file name (one block's without the ``block.`` prefix, a
        stack's as ``blocks.K.…``)."""
        return {_file_name(name): tensor for name, tensor in self.state_dict().items()}

    def load_parameters(self, tensors: dict[str, torch.Tensor]) -> None:
        """Copy ``tensors`` (named as :meth:`parameters_by_name`) into the model."""
        names = {_file_name(name): name for name in self.state_dict()}
        self.load_state_dict({names[name]: tensor for name, tensor in tensors.items()})


STACK_SHARED = ("W_pos", "W_E", "ln_f.weight", "ln_f.bias", "W_U")
"""The parameters a stack of blocks has once (embeddings, final LayerNorm, unembedding)."""


def file_shapes(config: BlockConfig, n_blocks: int = 1) -> dict[str, tuple[int, ...]]:
    """Every parameter a model folder of ``n_blocks`` blocks holds, with its shape: one block's
    as :func:`blockviz.params.parameter_shapes`, a stack's block parameters as ``blocks.K.…``."""
    shapes = parameter_shapes(config)
    if n_blocks == 1:
        return shapes
    per_block = {name: shape for name, shape in shapes.items() if name not in STACK_SHARED}
    stacked = {f"blocks.{k}.{name}": shape for k in range(n_blocks) for name, shape in per_block.items()}
    return {**stacked, **{name: shapes[name] for name in STACK_SHARED}}


def _file_name(name: str) -> str:
    """A state_dict key as a model file names it: ``block.attn.W_Q`` → ``attn.W_Q``, ``unembed.W_U`` → ``W_U``."""
    return name.removeprefix("block.").removeprefix("unembed.")
