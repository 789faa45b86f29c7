"""One transformer block as a PyTorch module, written in the order of the maths.

Pre-norm (the default, GPT-2 and Llama): x = x + attn(ln1(x)), then x = x + ffn(ln2(x))
(Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture"); post-norm (BERT,
Vaswani et al. 2017): x = ln1(x + attn(x)), then x = ln2(x + ffn(x)). The norm is LayerNorm or
RMSNorm, positions are added before the block or rotary inside attention, the FFN is plain or
gated, and keys/values may be shared by groups of heads — as :class:`~blockviz.block_config.BlockConfig`
says. Every intermediate tensor is stored in a ``cache`` dict under its record name. Rows are
``(n, d_model)``; leading batch dimensions ``(…, n, d_model)`` are carried through (training
batches, :mod:`blockviz.toy`; a record has none).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from blockviz.attention import causal_mask, dot_product_scores, mix, open_mask, scale_scores, softmax_steps
from blockviz.block_config import BlockConfig

ACTIVATION_FUNCTIONS = {
    "gelu": F.gelu,
    "relu": F.relu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
}
"""The function of each :data:`blockviz.block_config.ACTIVATIONS` name."""

Cache = dict[str, torch.Tensor]

ATTENTION_INIT_STD = 0.5
"""Std of W_Q, W_K, W_V entries: large enough that the default sentence's weights are far from uniform."""


def remember(cache: Cache, name: str, tensor: torch.Tensor) -> torch.Tensor:
    """Store a copy of ``tensor`` in ``cache`` under ``name`` (no two entries share memory) and return it."""
    cache[name] = (tensor.detach() if tensor.requires_grad else tensor).clone()
    return tensor


class Attention(nn.Module):
    """Multi-head self-attention with separate, named projections.

    Parameters (``x @ W`` convention, as Q = X W^Q in Vaswani et al. 2017, §3.2.2):
    ``W_Q`` ``(n_heads, d_model, d_head)``, ``W_K``, ``W_V`` ``(n_kv_heads, d_model, d_head)``;
    ``b_Q`` ``(n_heads, d_head)``, ``b_K``, ``b_V`` ``(n_kv_heads, d_head)``; ``W_O``
    ``(d_model, d_model)``, rows = the concatenated heads in order; ``b_O`` ``(d_model,)``.
    Without biases (``config.architecture.bias`` false) the ``b_*`` are absent. With grouped-query attention
    the recorded ``key`` and ``value`` are each query head's own, ``(n_heads, n, d_head)``
    (query head h reads key/value head ``config.kv_head_of(h)``). With rotary positions
    ``query``/``key`` are recorded before rotation and ``query_rot``/``key_rot`` after.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.config = config
        self.arch = config.architecture
        h, g, d, e = config.n_heads, config.kv_heads, config.d_model, config.d_head
        self.W_Q = nn.Parameter(torch.empty(h, d, e))
        self.W_K = nn.Parameter(torch.empty(g, d, e))
        self.W_V = nn.Parameter(torch.empty(g, d, e))
        if self.arch.bias:
            self.b_Q = nn.Parameter(torch.zeros(h, e))
            self.b_K = nn.Parameter(torch.zeros(g, e))
            self.b_V = nn.Parameter(torch.zeros(g, e))
        self.W_O = nn.Parameter(torch.empty(d, d))
        if self.arch.bias:
            self.b_O = nn.Parameter(torch.zeros(d))

    def _project(self, x: torch.Tensor, kind: str) -> torch.Tensor:
        """``x @ W[h] (+ b[h])`` for every head of projection ``kind`` (Q, K or V): ``(heads, n, d_head)``."""
        projected = torch.einsum("...nd,hde->...hne", x, getattr(self, f"W_{kind}"))
        return projected + getattr(self, f"b_{kind}")[:, None, :] if self.arch.bias else projected

    def _per_query_head(self, tensor: torch.Tensor) -> torch.Tensor:
        """``(n_kv_heads, n, d_head)`` → ``(n_heads, n, d_head)``: each query head's key/value head."""
        group = self.config.n_heads // self.config.kv_heads
        return tensor if group == 1 else tensor.repeat_interleave(group, dim=-3)

    def forward(
        self, x: torch.Tensor, cache: Cache, rotary: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """``x`` ``(n, d_model)`` → ``attn_out`` ``(n, d_model)``; ``rotary`` = (cos, sin)
        ``(n, d_head)`` for rotary positions (computed from ``config.rope_theta`` if omitted)."""
        n = x.shape[-2]
        query = remember(cache, "query", self._project(x, "Q"))
        key = remember(cache, "key", self._per_query_head(self._project(x, "K")))
        value = remember(cache, "value", self._per_query_head(self._project(x, "V")))
        if self.arch.rotary:
            cos, sin = (
                rotary if rotary is not None else rotary_angles(n, self.config.d_head, self.config.rope_theta, x.dtype)
            )
            remember(cache, "rope_cos", cos)
            remember(cache, "rope_sin", sin)
            query = remember(cache, "query_rot", rotate(query, cos, sin))
            key = remember(cache, "key_rot", rotate(key, cos, sin))
        scores = remember(cache, "scores", dot_product_scores(query, key))
        scaled_scores = remember(cache, "scaled_scores", scale_scores(scores, self.config.d_head))
        mask = causal_mask(n, x.dtype) if self.arch.causal else open_mask(n, x.dtype)
        remember(cache, "mask", mask)
        masked_scores = remember(cache, "masked_scores", scaled_scores + mask)
        softmax = softmax_steps(masked_scores)
        for name in ("row_max", "exp_scores", "exp_sums", "weights"):
            remember(cache, name, getattr(softmax, name))
        head_outputs = remember(cache, "head_outputs", mix(softmax.weights, value))
        concat = remember(cache, "concat", head_outputs.transpose(-3, -2).reshape(*x.shape[:-1], self.config.d_model))
        projected = concat @ self.W_O
        return remember(cache, "attn_out", projected + self.b_O if self.arch.bias else projected)


def rotary_angles(
    n: int, d_head: int, theta: float, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotary angles, each ``(n, d_head)``: position p, frequency
    θ^(−2i/d_head) for i < d_head/2, repeated for the two halves (Su et al. 2021, RoFormer §3.4.2,
    in the half-split layout of ``transformers``' Llama ``rotate_half``)."""
    frequency = 1.0 / theta ** (torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * frequency
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary positions applied to ``x`` ``(heads, n, d_head)`` with cos, sin ``(n, d_head)``:
    x ⊙ cos + rotate_half(x) ⊙ sin, rotate_half(x) = (−x₂, x₁) for the halves x₁, x₂ — each pair
    (x[i], x[i + d_head/2]) turned by its angle (Su et al. 2021, Eq. 34)."""
    half = x.shape[-1] // 2
    rotated_half = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated_half * sin


class LayerNorm(nn.LayerNorm):
    """LayerNorm over each row (Ba et al. 2016, Eq. 4; Vaswani et al. 2017 use it around each
    sub-layer), its statistics recorded: ``(n, d_model)`` in and out.

    mean = Σ x / d_model and var = Σ (x − mean)² / d_model (biased, as ``torch.nn.LayerNorm``)
    go to the cache as ``<name>_mean`` and ``<name>_var`` ``(n,)``, the centred rows x − mean as
    ``<name>_centred``, the normalised rows (x − mean) / √(var + ε) as ``<name>_norm``; the output γ ⊙ norm + β as ``<name>``.
    Parameters as ``nn.LayerNorm``: ``weight`` (γ) and ``bias`` (β), ``(d_model,)``.
    """

    def __init__(self, name: str, d_model: int, eps: float, output: str | None = None):
        super().__init__(d_model, eps=eps)
        self.record_name = name
        self.output_name = output or name  # post-norm: resid_mid_norm, resid_post_norm

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        mean = remember(cache, f"{self.record_name}_mean", x.mean(dim=-1))
        centred = remember(cache, f"{self.record_name}_centred", x - mean[..., None])
        var = remember(cache, f"{self.record_name}_var", (centred**2).mean(dim=-1))
        norm = remember(cache, f"{self.record_name}_norm", centred / torch.sqrt(var[..., None] + self.eps))
        return remember(cache, self.output_name, norm * self.weight + self.bias)


class RMSNorm(nn.Module):
    """RMSNorm over each row (Zhang & Sennrich 2019, Eq. 4; Llama's ``LlamaRMSNorm``):
    ``(n, d_model)`` in and out.

    mean_sq = Σ x² / d_model goes to the cache as ``<name>_mean_sq`` ``(n,)``, the normalised
    rows x / √(mean_sq + ε) as ``<name>_norm``, the output γ ⊙ norm as ``<name>`` (or
    ``output``). No centring, no β. Parameter: ``weight`` (γ) ``(d_model,)``.
    """

    def __init__(self, name: str, d_model: int, eps: float, output: str | None = None):
        super().__init__()
        self.record_name = name
        self.output_name = output or name
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        mean_sq = remember(cache, f"{self.record_name}_mean_sq", (x * x).mean(dim=-1))
        norm = remember(cache, f"{self.record_name}_norm", x * torch.rsqrt(mean_sq[..., None] + self.eps))
        return remember(cache, self.output_name, self.weight * norm)


class FFN(nn.Module):
    """The position-wise feed-forward network (Vaswani et al. 2017, Eq. 2, with the config's
    activation), plain or gated (Shazeer 2020, "GLU Variants Improve Transformer", Eq. 6).

    Plain: ``W_in`` ``(d_model, d_ff)``, ``b_in`` ``(d_ff,)``; recorded ``ffn_pre`` = x W_in + b_in,
    ``ffn_post`` = act(ffn_pre). Gated: ``W_gate``, ``W_up`` ``(d_model, d_ff)`` (and ``b_gate``,
    ``b_up`` with biases); recorded ``ffn_gate`` = x W_gate, ``ffn_gate_act`` = act(ffn_gate),
    ``ffn_up`` = x W_up, ``ffn_post`` = ffn_gate_act ⊙ ffn_up. Both: ``W_out`` ``(d_ff, d_model)``,
    ``b_out`` ``(d_model,)``; ``ffn_out`` = ffn_post W_out + b_out. Each row is transformed on its own.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.arch = config.architecture
        self.activation = ACTIVATION_FUNCTIONS[config.activation]
        d, f = config.d_model, config.d_ff
        if self.arch.gated:
            self.W_gate = nn.Parameter(torch.empty(d, f))
            self.W_up = nn.Parameter(torch.empty(d, f))
            if self.arch.bias:
                self.b_gate = nn.Parameter(torch.zeros(f))
                self.b_up = nn.Parameter(torch.zeros(f))
        else:
            self.W_in = nn.Parameter(torch.empty(d, f))
            if self.arch.bias:
                self.b_in = nn.Parameter(torch.zeros(f))
        self.W_out = nn.Parameter(torch.empty(f, d))
        if self.arch.bias:
            self.b_out = nn.Parameter(torch.zeros(d))

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        product = x @ getattr(self, f"W_{name}")
        return product + getattr(self, f"b_{name}") if self.arch.bias else product

    def forward(self, x: torch.Tensor, cache: Cache) -> torch.Tensor:
        """``x`` ``(n, d_model)`` → ``ffn_out`` ``(n, d_model)`` through ``(n, d_ff)``."""
        if self.arch.gated:
            gate = remember(cache, "ffn_gate", self._linear(x, "gate"))
            gate_act = remember(cache, "ffn_gate_act", self.activation(gate))
            up = remember(cache, "ffn_up", self._linear(x, "up"))
            ffn_post = remember(cache, "ffn_post", gate_act * up)
        else:
            ffn_pre = remember(cache, "ffn_pre", self._linear(x, "in"))
            ffn_post = remember(cache, "ffn_post", self.activation(ffn_pre))
        return remember(cache, "ffn_out", self._linear(ffn_post, "out"))


class Block(nn.Module):
    """One block: ``(n, d_model)`` in, ``(n, d_model)`` out; pre-norm by default, post-norm if
    ``config.architecture.post_norm``.

    Parameter names (``state_dict`` keys, the names a weights file uses): ``ln1.weight`` (γ),
    ``ln1.bias`` (β; LayerNorm only), ``attn.W_Q`` … ``attn.b_O``, ``ln2.weight``, ``ln2.bias``,
    ``ffn.W_in`` … ``ffn.b_out`` (gated: ``ffn.W_gate``, ``ffn.W_up``); see
    :func:`blockviz.params.parameter_shapes`.
    """

    def __init__(self, config: BlockConfig, seeded: bool = True):
        super().__init__()
        self.config = config
        self.arch = config.architecture
        self.ln1 = self._norm("ln1", "ln1" if self.arch.pre_norm else "resid_mid_norm")
        self.attn = Attention(config)
        self.ln2 = self._norm("ln2", "ln2" if self.arch.pre_norm else "resid_post_norm")
        self.ffn = FFN(config)
        if seeded:  # False: the caller loads every parameter (a model's layer), so drawing seeded ones is wasted
            initialise(self, config.seed)

    def _norm(self, name: str, output: str) -> nn.Module:
        if self.arch.has_centring:
            return LayerNorm(name, self.config.d_model, self.config.ln_eps, output)
        return RMSNorm(name, self.config.d_model, self.config.ln_eps, output)

    def forward(
        self,
        resid_pre: torch.Tensor,
        cache: Cache | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """``resid_pre`` ``(n, d_model)`` → the block's output ``(n, d_model)`` (``resid_post``,
        post-norm: ``resid_post_norm``); intermediates go to ``cache``. ``rotary`` = (cos, sin)
        ``(n, d_head)``, for rotary positions only (default: :func:`rotary_angles`)."""
        cache = {} if cache is None else cache
        remember(cache, "resid_pre", resid_pre)
        if self.arch.post_norm:
            resid_mid = remember(cache, "resid_mid", resid_pre + self.attn(resid_pre, cache, rotary))
            resid_mid_norm = self.ln1(resid_mid, cache)
            resid_post = remember(cache, "resid_post", resid_mid_norm + self.ffn(resid_mid_norm, cache))
            return self.ln2(resid_post, cache)
        ln1 = self.ln1(resid_pre, cache)
        resid_mid = remember(cache, "resid_mid", resid_pre + self.attn(ln1, cache, rotary))
        ln2 = self.ln2(resid_mid, cache)
        return remember(cache, "resid_post", resid_mid + self.ffn(ln2, cache))


class Prediction(nn.Module):
    """A language model's last step after its block (GPT-2's ``ln_f`` and unembedding, Radford
    et al. 2019, §2.3): ``resid_post`` ``(n, d_model)`` → the final LayerNorm ``ln_f`` (its
    statistics recorded as ``ln_f_*``), ``logits`` = ln_f @ W_U ``(n, vocab_size)``, and
    ``probs`` = softmax(logits): row i's probabilities of the token after token i.

    Parameters: ``ln_f.weight`` (γ), ``ln_f.bias`` (β) ``(d_model,)``, ``W_U``
    ``(d_model, vocab_size)``; ``config.vocab_size`` must be set.
    """

    def __init__(self, config: BlockConfig):
        super().__init__()
        self.ln_f = LayerNorm("ln_f", config.d_model, config.ln_eps)
        self.W_U = nn.Parameter(torch.empty(config.d_model, config.vocab_size))

    def forward(self, resid_post: torch.Tensor, cache: Cache) -> torch.Tensor:
        """``resid_post`` ``(…, n, d_model)`` → ``logits`` ``(…, n, vocab_size)``."""
        logits = remember(cache, "logits", self.ln_f(resid_post, cache) @ self.W_U)
        remember(cache, "probs", torch.softmax(logits, dim=-1))
        return logits


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
