"""One pre-norm decoder block as a PyTorch module, written in the order of the maths.

x = x + attn(ln1(x)), then x = x + ffn(ln2(x)) (pre-norm: Xiong et al. 2020, "On Layer
Normalization in the Transformer Architecture"; the parts: Vaswani et al. 2017).
Every intermediate tensor is stored in a ``cache`` dict under its record name.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from blockviz.attention import causal_mask, dot_product_scores, mix, open_mask, scale_scores, softmax_steps
from blockviz.config import BlockConfig

Cache = dict[str, torch.Tensor]

ATTENTION_INIT_STD = 0.5
"""Std of W_Q, W_K, W_V entries: large enough that the default sentence's weights are far from uniform."""


def remember(cache: Cache, name: str, tensor: torch.Tensor) -> torch.Tensor:
    """Store a copy of ``tensor`` in ``cache`` under ``name`` (no two entries share memory) and return it."""
    cache[name] = tensor.detach().clone()
    return tensor


class Attention(nn.Module):
    """Multi-head self-attention with separate, named projections.

    Parameters (``x @ W`` convention, as Q = X W^Q in Vaswani et al. 2017, §3.2.2):
    ``W_Q``, ``W_K``, ``W_V`` ``(n_heads, d_model, d_head)``; ``b_Q``, ``b_K``, ``b_V``
    ``(n_heads, d_head)``; ``W_O`` ``(d_model, d_model)``, rows = the concatenated heads in order;
    ``b_O`` ``(d_model,)``.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.config = config
        h, d, e = config.n_heads, config.d_model, config.d_head
        self.W_Q = nn.Parameter(torch.empty(h, d, e))
        self.W_K = nn.Parameter(torch.empty(h, d, e))
        self.W_V = nn.Parameter(torch.empty(h, d, e))
        self.b_Q = nn.Parameter(torch.zeros(h, e))
        self.b_K = nn.Parameter(torch.zeros(h, e))
        self.b_V = nn.Parameter(torch.zeros(h, e))
        self.W_O = nn.Parameter(torch.empty(d, d))
        self.b_O = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        """``x`` ``(n, d_model)`` → ``attn_out`` ``(n, d_model)``."""
        n = x.shape[0]
        query = remember(cache, "query", torch.einsum("nd,hde->hne", x, self.W_Q) + self.b_Q[:, None, :])
        key = remember(cache, "key", torch.einsum("nd,hde->hne", x, self.W_K) + self.b_K[:, None, :])
        value = remember(cache, "value", torch.einsum("nd,hde->hne", x, self.W_V) + self.b_V[:, None, :])
        scores = remember(cache, "scores", dot_product_scores(query, key))
        scaled_scores = remember(cache, "scaled_scores", scale_scores(scores, self.config.d_head))
        mask = causal_mask(n, x.dtype) if self.config.causal else open_mask(n, x.dtype)
        remember(cache, "mask", mask)
        masked_scores = remember(cache, "masked_scores", scaled_scores + mask)
        softmax = softmax_steps(masked_scores)
        for name in ("row_max", "exp_scores", "exp_sums", "weights"):
            remember(cache, name, getattr(softmax, name))
        head_outputs = remember(cache, "head_outputs", mix(softmax.weights, value))
        concat = remember(cache, "concat", head_outputs.transpose(0, 1).reshape(n, self.config.d_model))
        return remember(cache, "attn_out", concat @ self.W_O + self.b_O)


class LayerNorm(nn.LayerNorm):
    """LayerNorm over each row (Ba et al. 2016, Eq. 4; Vaswani et al. 2017 use it around each
    sub-layer), its statistics recorded: ``(n, d_model)`` in and out.

    mean = Σ x / d_model and var = Σ (x − mean)² / d_model (biased, as ``torch.nn.LayerNorm``)
    go to the cache as ``<name>_mean`` and ``<name>_var`` ``(n,)``, the centred rows x − mean as
    ``<name>_centred``, the normalised rows (x − mean) / √(var + ε) as ``<name>_norm``; the output γ ⊙ norm + β as ``<name>``.
    Parameters as ``nn.LayerNorm``: ``weight`` (γ) and ``bias`` (β), ``(d_model,)``.
    """

    def __init__(self, name: str, d_model: int, eps: float):
        super().__init__(d_model, eps=eps)
        self.record_name = name

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        mean = remember(cache, f"{self.record_name}_mean", x.mean(dim=-1))
        centred = remember(cache, f"{self.record_name}_centred", x - mean[:, None])
        var = remember(cache, f"{self.record_name}_var", (centred**2).mean(dim=-1))
        norm = remember(cache, f"{self.record_name}_norm", centred / torch.sqrt(var[:, None] + self.eps))
        return remember(cache, self.record_name, norm * self.weight + self.bias)


class FFN(nn.Module):
    """The position-wise feed-forward network (Vaswani et al. 2017, Eq. 2, with GELU or ReLU).

    Parameters: ``W_in`` ``(d_model, d_ff)``, ``b_in`` ``(d_ff,)``, ``W_out`` ``(d_ff, d_model)``,
    ``b_out`` ``(d_model,)``. Each row is transformed on its own.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.activation = F.gelu if config.activation == "gelu" else F.relu
        self.W_in = nn.Parameter(torch.empty(config.d_model, config.d_ff))
        self.b_in = nn.Parameter(torch.zeros(config.d_ff))
        self.W_out = nn.Parameter(torch.empty(config.d_ff, config.d_model))
        self.b_out = nn.Parameter(torch.zeros(config.d_model))

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        """``x`` ``(n, d_model)`` → ``ffn_out`` ``(n, d_model)`` through ``(n, d_ff)``."""
        ffn_pre = remember(cache, "ffn_pre", x @ self.W_in + self.b_in)
        ffn_post = remember(cache, "ffn_post", self.activation(ffn_pre))
        return remember(cache, "ffn_out", ffn_post @ self.W_out + self.b_out)


class Block(nn.Module):
    """A pre-norm decoder block: ``(n, d_model)`` in, ``(n, d_model)`` out.

    Parameter names (``state_dict`` keys, the names a weights file uses): ``ln1.weight`` (γ),
    ``ln1.bias`` (β), ``attn.W_Q`` … ``attn.b_O``, ``ln2.weight``, ``ln2.bias``,
    ``ffn.W_in`` … ``ffn.b_out``.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.ln1 = LayerNorm("ln1", config.d_model, config.ln_eps)
        self.attn = Attention(config)
        self.ln2 = LayerNorm("ln2", config.d_model, config.ln_eps)
        self.ffn = FFN(config)
        initialise(self, config.seed)

    def forward(self, resid_pre: torch.Tensor, cache: Cache | None = None) -> torch.Tensor:
        """``resid_pre`` ``(n, d_model)`` → ``resid_post`` ``(n, d_model)``; intermediates go to ``cache``."""
        cache = {} if cache is None else cache
        remember(cache, "resid_pre", resid_pre)
        ln1 = self.ln1(resid_pre, cache)
        resid_mid = remember(cache, "resid_mid", resid_pre + self.attn(ln1, cache))
        ln2 = self.ln2(resid_mid, cache)
        return remember(cache, "resid_post", resid_mid + self.ffn(ln2, cache))


def initialise(block: Block, seed: int) -> None:
    """Seeded initial weights: attention projections N(0, ATTENTION_INIT_STD²); W_O, W_in, W_out
    N(0, 1/fan_in); biases 0; LayerNorm γ = 1, β = 0. The same seed gives the same weights."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in block.named_parameters():
            if name.endswith(("W_Q", "W_K", "W_V")):
                std = ATTENTION_INIT_STD
            elif name.split(".")[-1].startswith("W_"):
                std = 1.0 / math.sqrt(parameter.shape[0])
            else:
                continue
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64) * std)
