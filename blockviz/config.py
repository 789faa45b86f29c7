"""The configuration of one block: its sizes, its choices and the seed of its weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from blockviz.errors import BlockvizError

ACTIVATIONS = ("gelu", "relu")
POSITIONAL_ENCODINGS = ("sinusoidal", "learned")
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class BlockConfig:
    """Sizes and choices of one pre-norm decoder block, checked when built.

    Raises
    ------
    BlockvizError
        If a size is below 1, ``d_model`` is not divisible by ``n_heads``, or a choice
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
        for name in ("d_model", "n_heads", "d_ff", "max_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BlockvizError(f"{name} must be a whole number ≥ 1, got {value!r}")
        if self.d_model % self.n_heads:
            raise BlockvizError(
                f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}: "
                f"choose d_model = n_heads × d_head, e.g. d_model {self.n_heads * max(1, self.d_model // self.n_heads)}"
            )
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_choice("positional", self.positional, POSITIONAL_ENCODINGS)
        _check_choice("dtype", self.dtype, DTYPES)
        if not self.ln_eps > 0:
            raise BlockvizError(f"ln_eps must be > 0, got {self.ln_eps!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise BlockvizError(f"seed must be a whole number ≥ 0, got {self.seed!r}")

    @property
    def d_head(self) -> int:
        """Width of one head's query, key and value: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        """The fields as a plain JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> BlockConfig:
        """Build from :meth:`to_dict`'s output; unknown keys raise :class:`BlockvizError`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BlockvizError(f"unknown config field {unknown[0]!r}: known fields are {', '.join(sorted(known))}")
        return cls(**data)


def _check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise BlockvizError(f"{field} must be one of {', '.join(choices)}, got {value!r}")
