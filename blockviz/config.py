"""The configuration of one block: its sizes, its choices and the seed of its weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from blockviz.errors import BlockvizError

ACTIVATIONS = ("gelu", "relu", "gelu_tanh", "silu")
ACTIVATION_NAMES = {"gelu": "GELU", "relu": "ReLU", "gelu_tanh": "GELU (tanh)", "silu": "SiLU"}
"""How each activation is written on screen and paper (GELU: Hendrycks & Gimpel 2016, exact erf
form as ``torch.nn.functional.gelu``; ``gelu_tanh`` its tanh approximation, GPT-2's ``gelu_new``;
ReLU: Nair & Hinton 2010; SiLU x·σ(x): Elfwing et al. 2018, Llama's gate)."""
POSITIONAL_ENCODINGS = ("sinusoidal", "learned", "rotary")
"""``sinusoidal`` and ``learned`` are added to the token vectors before the block; ``rotary``
(Su et al. 2021, RoFormer) rotates each head's queries and keys inside attention instead."""
DTYPES = ("float32", "float64")
NORM_PLACEMENTS = ("pre", "post")
"""``pre``: x + attn(norm(x)) (GPT-2, Llama; Xiong et al. 2020); ``post``: norm(x + attn(x))
(BERT, Vaswani et al. 2017)."""
NORMS = ("layernorm", "rmsnorm")
"""``layernorm`` (Ba et al. 2016): γ ⊙ (x − mean)/√(var + ε) + β; ``rmsnorm`` (Zhang & Sennrich
2019): γ ⊙ x/√(mean(x²) + ε), no centring, no β."""
FFNS = ("plain", "gated")
"""``plain``: act(x W_in + b_in) W_out + b_out; ``gated`` (Shazeer 2020, GLU variants):
(act(x W_gate) ⊙ x W_up) W_out."""

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
    vocab_size: int | None = None  # a language model's unembedding width (blockviz's trained toy model); None: no prediction recorded

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
        _check_choice("norm_placement", self.norm_placement, NORM_PLACEMENTS)
        _check_choice("norm", self.norm, NORMS)
        _check_choice("ffn", self.ffn, FFNS)
        if self.norm_placement == "post" and self.norm != "layernorm":
            raise BlockvizError("a post-norm block uses LayerNorm: choose norm layernorm with norm_placement post")
        if self.n_kv_heads is not None:
            if isinstance(self.n_kv_heads, bool) or not isinstance(self.n_kv_heads, int) or not 1 <= self.n_kv_heads <= self.n_heads or self.n_heads % self.n_kv_heads:
                raise BlockvizError(f"n_kv_heads must divide n_heads {self.n_heads} (1 … {self.n_heads}), got {self.n_kv_heads!r}")
        if self.positional == "rotary" and self.d_head % 2:
            raise BlockvizError(f"rotary positions rotate pairs of a head's features: d_head {self.d_head} must be even")
        if not isinstance(self.bias, bool):
            raise BlockvizError(f"bias must be true or false, got {self.bias!r}")
        if isinstance(self.rope_theta, bool) or not isinstance(self.rope_theta, (int, float)) or not 1 < self.rope_theta < 1e12:
            raise BlockvizError(f"rope_theta must be a number between 1 and 1e12, got {self.rope_theta!r}")
        if isinstance(self.ln_eps, bool) or not isinstance(self.ln_eps, (int, float)) or not 0 < self.ln_eps < 1:
            raise BlockvizError(f"ln_eps must be a number between 0 and 1, got {self.ln_eps!r}")
        if not isinstance(self.causal, bool):
            raise BlockvizError(f"causal must be true or false, got {self.causal!r}")
        if self.vocab_size is not None and (isinstance(self.vocab_size, bool) or not isinstance(self.vocab_size, int) or not 2 <= self.vocab_size <= MAX_VOCAB_SIZE):
            raise BlockvizError(f"vocab_size must be a whole number from 2 to {MAX_VOCAB_SIZE}, got {self.vocab_size!r}")
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

    @property
    def is_toy(self) -> bool:
        """Whether this is the architecture of blockviz's own block (pre-norm LayerNorm, added
        positions, plain FFN with biases, one key/value per head)."""
        return (self.norm_placement, self.norm, self.ffn, self.n_kv_heads, self.bias) == ("pre", "layernorm", "plain", None, True) and self.positional != "rotary"

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
        return _from_fields(cls, data, "config")


def _from_fields(cls, data, what: str):
    """``cls(**data)`` for a dict of ``cls``'s field names; anything else raises :class:`BlockvizError`
    naming ``what`` (``"config"``, ``"source"``)."""
    if not isinstance(data, dict):
        raise BlockvizError(f"the {what} must be an object of named fields, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BlockvizError(f"unknown {what} field {unknown[0]!r}: known fields are {', '.join(sorted(known))}")
    return cls(**data)


def _check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise BlockvizError(f"{field} must be one of {', '.join(choices)}, got {value!r}")


ARCHITECTURE_FIELDS = ("norm_placement", "norm", "ffn", "n_kv_heads", "bias", "rope_theta", "vocab_size")
"""The config fields that describe the architecture; a record file written before they existed
(format 2 of blockviz's toy block only) lacks them and reads them as their defaults."""

SOURCE_KINDS = ("seeded", "file", "given", "model", "trained")


@dataclass(frozen=True)
class Source:
    """Where a record's weights (and input) came from.

    ``kind``: ``"seeded"`` (blockviz's seeded random weights), ``"file"`` (``--params FILE``,
    ``path``), ``"given"`` (tensors passed in Python) or ``"model"`` (a trained model's layer:
    ``model`` is the name or folder given, ``family`` ``gpt2|bert|llama``, ``layer`` 0-based of
    ``n_layers``, ``dtype`` the weights' dtype as loaded, ``note`` e.g. the quantisation) or
    ``"trained"`` (a model ``blockviz train`` made: ``model`` ``toy`` or its folder, ``note`` what
    it is, "trained: one block, …", ``vocabulary`` its words in id order, the columns of the
    record's ``logits`` and ``probs``).

    >>> Source().describe()
    'seeded random weights'
    >>> Source("model", model="minilm", family="bert", layer=3, n_layers=6, dtype="float32").describe()
    'minilm (bert), layer 3 of 0–5, float32'
    """

    kind: str = "seeded"
    path: str | None = None
    model: str | None = None
    family: str | None = None
    layer: int | None = None
    n_layers: int | None = None
    dtype: str | None = None
    note: str | None = None
    vocabulary: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _check_choice("source kind", self.kind, SOURCE_KINDS)
        if self.vocabulary is not None:
            if not isinstance(self.vocabulary, (list, tuple)) or not all(isinstance(word, str) for word in self.vocabulary):
                raise BlockvizError("the source's vocabulary must be a list of words")
            object.__setattr__(self, "vocabulary", tuple(self.vocabulary))
        for name in ("path", "model", "family", "dtype", "note"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise BlockvizError(f"the source's {name} must be a string, got {getattr(self, name)!r}")
        for name in ("layer", "n_layers"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise BlockvizError(f"the source's {name} must be a whole number ≥ 0, got {value!r}")
        if self.kind == "model" and (self.model is None or self.family is None or self.layer is None):
            raise BlockvizError("a model source names its model, family and layer")
        if self.kind == "trained" and self.model is None:
            raise BlockvizError("a trained source names its model (toy or a folder)")

    @property
    def is_model(self) -> bool:
        """Whether the record holds a trained model's layer."""
        return self.kind == "model"

    def describe(self) -> str:
        """One line for titles and terminal output."""
        if self.kind == "seeded":
            return "seeded random weights"
        if self.kind in ("file", "given"):
            return f"parameters from {self.path}" if self.path else "given parameters"
        if self.kind == "trained":
            return self.note or f"trained: {self.model}"
        last = f" of 0–{self.n_layers - 1}" if self.n_layers else ""
        note = f"; {self.note}" if self.note else ""
        return f"{self.model} ({self.family}), layer {self.layer}{last}, {self.dtype}{note}"

    def to_dict(self) -> dict:
        """The non-empty fields as a JSON-ready dict."""
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_dict(cls, data) -> Source:
        """Build from :meth:`to_dict`'s output; anything else raises :class:`BlockvizError`."""
        return _from_fields(cls, data, "source")


@dataclass(frozen=True)
class Architecture:
    """Which block a record holds, in a few words (what figures and scenes draw from).

    ``norm_placement`` ``pre|post``; ``norm`` ``layernorm|rmsnorm``; ``positions``
    ``added|rotary``; ``ffn`` ``plain|gated``; ``n_kv_heads`` (= n_heads without grouped-query
    attention); ``causal``; ``source`` where the weights came from.
    """

    norm_placement: str
    norm: str
    positions: str
    ffn: str
    n_kv_heads: int
    causal: bool
    source: Source

    @classmethod
    def of(cls, config: BlockConfig, source: Source | None = None) -> Architecture:
        """The descriptor of ``config`` (and ``source``, seeded by default)."""
        positions = "rotary" if config.positional == "rotary" else "added"
        return cls(config.norm_placement, config.norm, positions, config.ffn, config.kv_heads, config.causal, source or Source())
