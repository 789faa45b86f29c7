"""The toy language model: learned token and position embeddings, blockviz's own block, a final
LayerNorm and an unembedding.

    embed = W_E[ids]                      (n, d_model)
    pos_embed = W_pos[:n]                 (n, d_model)
    resid_post = Block(embed + pos_embed) (n, d_model)   blockviz.block.Block, pre-norm
    ln_f = LayerNorm_f(resid_post)        (n, d_model)
    logits = ln_f @ W_U                   (n, n_vocab)
    probs = softmax(logits)               (n, n_vocab)   row i: the next token after token i

(GPT-2's arrangement, Radford et al. 2019, §2.3, with one block and an untied unembedding.) The
block is :class:`blockviz.block.Block` itself, so a record of the trained model holds the numbers
its training computed. Every tensor carries leading batch dimensions through, for training.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from blockviz.block import Block, Prediction, remember
from blockviz.block_config import BlockConfig

EMBEDDING_INIT_STD = 1.0
"""Std of the initial W_E and W_pos entries (blockviz's seeded embeddings use the same scale)."""


class ToyModel(nn.Module):
    """One block between learned embeddings and an unembedding.

    Parameters (the names a model folder's ``model.safetensors`` uses, :func:`parameters`):
    the block's own (``ln1.weight`` … ``ffn.b_out``), ``W_E`` ``(n_vocab, d_model)``, ``W_pos``
    ``(max_tokens, d_model)``, ``ln_f.weight``, ``ln_f.bias`` ``(d_model,)``, ``W_U``
    ``(d_model, n_vocab)``. ``config`` must be blockviz's own block with learned positions and
    ``vocab_size`` (= n_vocab). ``seeded``: draw initial weights from ``config.seed`` (W_E, W_pos
    N(0, 1), W_U N(0, 1/d_model), the block's :func:`blockviz.block.initialise`); without, the
    caller loads them.
    """

    def __init__(self, config: BlockConfig, seeded: bool = True):
        super().__init__()
        self.config = config
        self.block = Block(config, seeded=seeded)
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

    def forward(self, ids: torch.Tensor, cache: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """``ids`` ``(…, n)`` → ``logits`` ``(…, n, n_vocab)``; intermediates go to ``cache``
        under their record names (``embed``, ``pos_embed``, the block's, ``ln_f_*``, ``logits``, ``probs``)."""
        cache = {} if cache is None else cache
        n = ids.shape[-1]
        embed = remember(cache, "embed", self.W_E[ids])
        pos_embed = remember(cache, "pos_embed", self.W_pos[:n])
        return self.unembed(self.block(embed + pos_embed, cache), cache)

    def parameters_by_name(self) -> dict[str, torch.Tensor]:
        """Every parameter under its file name (the block's without the ``block.`` prefix)."""
        return {_file_name(name): tensor for name, tensor in self.state_dict().items()}

    def load_parameters(self, tensors: dict[str, torch.Tensor]) -> None:
        """Copy ``tensors`` (named as :meth:`parameters_by_name`) into the model."""
        names = {_file_name(name): name for name in self.state_dict()}
        self.load_state_dict({names[name]: tensor for name, tensor in tensors.items()})


def _file_name(name: str) -> str:
    """A state_dict key as a model file names it: ``block.attn.W_Q`` → ``attn.W_Q``, ``unembed.W_U`` → ``W_U``."""
    return name.removeprefix("block.").removeprefix("unembed.")
