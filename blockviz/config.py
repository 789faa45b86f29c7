"""The configuration of one block: its sizes, its choices and the seed of its weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from blockviz.errors import BlockvizError

ACTIVATIONS = ("gelu", "relu")
ACTIVATION_NAMES = {"gelu": "GELU", "relu": "ReLU"}
"""How each activation is written on screen and paper (GELU: Hendrycks & Gimpel 2016, exact erf
form as ``torch.nn.functional.gelu``; ReLU: Nair & Hinton 2010)."""
POSITIONAL_ENCODINGS = ("sinusoidal", "learned")
DTYPES = ("float32", "float64")

SIZE_LIMITS = {"d_model": 4096, "n_heads": 64, "d_ff": 16384, "max_tokens": 512}
"""Largest accepted size of each field: at these a record holds a few hundred MB, well within
the machine; larger ones are refused before anything is allocated."""
MAX_SEED = 2**63 - 1
"""Seeds run from 0 to 2^63 − 1 (what ``torch.Generator.manual_seed`` takes)."""


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

    def __post_init__(self) -> None:
        for name, limit in SIZE_LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
                raise BlockvizError(f"{name} must be a whole number from 1 to {limit}, got {value!r}: choose a smaller size")
        if self.d_model % self.n_heads:
            raise BlockvizError(
                f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}: "
                f"choose d_model = n_heads × d_head, e.g. d_model {self.n_heads * max(1, self.d_model // self.n_heads)}"
            )
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_choice("positional", self.positional, POSITIONAL_ENCODINGS)
        _check_choice("dtype", self.dtype, DTYPES)
        if isinstance(self.ln_eps, bool) or not isinstance(self.ln_eps, (int, float)) or not 0 < self.ln_eps < 1:
            raise BlockvizError(f"ln_eps must be a number between 0 and 1, got {self.ln_eps!r}")
        if not isinstance(self.causal, bool):
            raise BlockvizError(f"causal must be true or false, got {self.causal!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise BlockvizError(f"seed must be a whole number from 0 to 2**63 - 1, got {self.seed!r}")

    @property
    def activation_name(self) -> str:
        """The activation as written on screen and paper: ``"GELU"`` or ``"ReLU"``."""
        return ACTIVATION_NAMES[self.activation]

    @property
    def d_head(self) -> int:
        """Width of one head's query, key and value: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    @classmethod
    def default(cls, name: str):
        """The default value of field ``name`` (the CLI shows these; they are stated only here)."""
        return next(f.default for f in fields(cls) if f.name == name)

    def to_dict(self) -> dict:
        """The fields as a plain JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> BlockConfig:
        """Build from :meth:`to_dict`'s output; unknown keys raise :class:`BlockvizError`."""
        if not isinstance(data, dict):
            raise BlockvizError(f"the config must be an object of named fields, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BlockvizError(f"unknown config field {unknown[0]!r}: known fields are {', '.join(sorted(known))}")
        return cls(**data)


def _check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise BlockvizError(f"{field} must be one of {', '.join(choices)}, got {value!r}")
