"""The configuration of one block: its sizes, its choices and the seed of its weights
(:class:`BlockConfig`); which block that makes is its :class:`~blockviz.architecture.Architecture`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import cached_property

from blockviz.architecture import POSITIONAL_ENCODINGS, Architecture
from blockviz.errors import BlockvizError, check_choice, from_fields

ACTIVATIONS = ("gelu", "relu", "gelu_tanh", "silu")
ACTIVATION_NAMES = {"gelu": "GELU", "relu": "ReLU", "gelu_tanh": "GELU (tanh)", "silu": "SiLU"}
"""How each activation is written on screen and paper (GELU: Hendrycks & Gimpel 2016, exact erf
form as ``torch.nn.functional.gelu``; ``gelu_tanh`` its tanh approximation, GPT-2's ``gelu_new``;
ReLU: Nair & Hinton 2010; SiLU x·σ(x): Elfwing et al. 2018, Llama's gate)."""
DTYPES = ("float32", "float64")

SIZE_LIMITS = {"d_model": 4096, "n_heads": 64, "d_ff": 16384, "max_tokens": 512}
"""Largest accepted size of each field: at these a record holds a few hundred MB, well within
the machine; larger ones are refused before anything is allocated."""
MAX_SEED = 2**63 - 1
"""Seeds run from 0 to 2^63 − 1 (what ``torch.Generator.manual_seed`` takes)."""
MAX_VOCAB_SIZE = 65536
"""Largest accepted ``vocab_size`` (blockviz's trained toy model has about a hundred words)."""


@dataclass(frozen=True)
class BlockConfig:
    """Sizes and choices of one pre-norm decoder block, checked when built.

    Raises
    ------
    BlockvizError
        If a size is below 1 or above its :data:`SIZE_LIMITS` entry, the seed is outside
        0 … :data:`MAX_SEED`, ``d_model`` is not divisible by ``n_heads``, or a choice
        (activation, positional encoding, dtype) is unknown. The message names the field
        and a valid choice.
    """

    d_model: int = 4  # width of the residual stream
    n_heads: int = 2  # d_head = d_model // n_heads
    d_ff: int = 8  # width of the FFN's hidden layer
    activation: str = "gelu"  # "gelu" (exact, erf form) or "relu"
    causal: bool = True  # False: bidirectional attention, as an encoder uses
    positional: str = "sinusoidal"  # "sinusoidal" (Vaswani et al. 2017, §3.5) or "learned"
    ln_eps: float = 1e-5  # LayerNorm's ε, added to the variance
    seed: int = 0  # seeds the token embeddings and every parameter
    dtype: str = "float32"  # "float32" or "float64"
    max_tokens: int = 64  # longest sentence accepted; rows of a learned W_pos
    # The architecture (defaults: blockviz's own toy block). Real models set these (blockviz.models).
    norm_placement: str = "pre"  # "pre" or "post" (NORM_PLACEMENTS)
    norm: str = "layernorm"  # "layernorm" or "rmsnorm" (NORMS)
    ffn: str = "plain"  # "plain" or "gated" (FFNS)
    n_kv_heads: int | None = None  # key/value heads (grouped-query attention); None: n_heads
    bias: bool = True  # False: no bias in the projections (Llama)
    rope_theta: float = 10000.0  # base of the rotary frequencies (positional "rotary" only)
    vocab_size: int | None = (
        None  # a language model's unembedding width (blockviz's trained toy model); None: no prediction recorded
    )

    def __post_init__(self) -> None:
        for name, limit in SIZE_LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
                raise BlockvizError(
                    f"{name} must be a whole number from 1 to {limit}, got {value!r}: choose a smaller size"
                )
        if self.d_model % self.n_heads:
            raise BlockvizError(
                f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}: "
                f"choose d_model = n_heads × d_head, e.g. d_model {self.n_heads * max(1, self.d_model // self.n_heads)}"
            )
        check_choice("activation", self.activation, ACTIVATIONS)
        check_choice("positional", self.positional, POSITIONAL_ENCODINGS)
        check_choice("dtype", self.dtype, DTYPES)
        if self.n_kv_heads is not None:
            if (
                isinstance(self.n_kv_heads, bool)
                or not isinstance(self.n_kv_heads, int)
                or not 1 <= self.n_kv_heads <= self.n_heads
                or self.n_heads % self.n_kv_heads
            ):
                raise BlockvizError(
                    f"n_kv_heads must divide n_heads {self.n_heads} (1 … {self.n_heads}), got {self.n_kv_heads!r}"
                )
        if self.positional == "rotary" and self.d_head % 2:
            raise BlockvizError(
                f"rotary positions rotate pairs of a head's features: d_head {self.d_head} must be even"
            )
        if (
            isinstance(self.rope_theta, bool)
            or not isinstance(self.rope_theta, (int, float))
            or not 1 < self.rope_theta < 1e12
        ):
            raise BlockvizError(f"rope_theta must be a number between 1 and 1e12, got {self.rope_theta!r}")
        if isinstance(self.ln_eps, bool) or not isinstance(self.ln_eps, (int, float)) or not 0 < self.ln_eps < 1:
            raise BlockvizError(f"ln_eps must be a number between 0 and 1, got {self.ln_eps!r}")
        if not isinstance(self.causal, bool):
            raise BlockvizError(f"causal must be true or false, got {self.causal!r}")
        if self.vocab_size is not None and (
            isinstance(self.vocab_size, bool)
            or not isinstance(self.vocab_size, int)
            or not 2 <= self.vocab_size <= MAX_VOCAB_SIZE
        ):
            raise BlockvizError(
                f"vocab_size must be a whole number from 2 to {MAX_VOCAB_SIZE}, got {self.vocab_size!r}"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise BlockvizError(f"seed must be a whole number from 0 to 2**63 - 1, got {self.seed!r}")
        _ = self.architecture  # built now, so its choices (norm, placement, FFN, bias) are checked with the rest

    @property
    def activation_name(self) -> str:
        """The activation as written on screen and paper: ``"GELU"`` or ``"ReLU"``."""
        return ACTIVATION_NAMES[self.activation]

    @property
    def d_head(self) -> int:
        """Width of one head's query, key and value: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Number of key/value heads: ``n_kv_heads``, or ``n_heads`` when every head has its own."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    def kv_head_of(self, head: int) -> int:
        """The key/value head query head ``head`` reads (grouped-query attention, Ainslie et al.
        2023: consecutive query heads share one, as ``transformers``' ``repeat_kv``).

        >>> BlockConfig(d_model=8, n_heads=4, n_kv_heads=2).kv_head_of(3)
        1
        """
        return head // (self.n_heads // self.kv_heads)

    @cached_property
    def architecture(self) -> Architecture:
        """The block's architecture as one value (:class:`~blockviz.architecture.Architecture`): what the block, the
        record's fields, the explorer, figures and scenes read instead of this config's flags.
        Seeded or given weights on blockviz's hashed embeddings; a trained model's layer is
        ``Architecture.of(config, model_layer=True)`` (``rec.architecture`` says which)."""
        return Architecture.of(self)

    @classmethod
    def default(cls, name: str):
        """The default value of field ``name`` (the CLI shows these; they are stated only here)."""
        return next(f.default for f in fields(cls) if f.name == name)

    def to_dict(self) -> dict:
        """The fields as a plain JSON-ready dict (``vocab_size`` only when set)."""
        data = asdict(self)
        if data["vocab_size"] is None:
            del data["vocab_size"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> BlockConfig:
        """Build from :meth:`to_dict`'s output; unknown keys raise :class:`BlockvizError`."""
        return from_fields(cls, data, "config")


ARCHITECTURE_FIELDS = ("norm_placement", "norm", "ffn", "n_kv_heads", "bias", "rope_theta", "vocab_size")
"""The config fields that describe the architecture; a record file written before they existed
(format 2 of blockviz's toy block only) lacks them and reads them as their defaults."""
