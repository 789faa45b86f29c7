"""The configuration of one block: its sizes, its choices and the seed of its weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from functools import cached_property
from pathlib import Path

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
        _check_choice("activation", self.activation, ACTIVATIONS)
        _check_choice("positional", self.positional, POSITIONAL_ENCODINGS)
        _check_choice("dtype", self.dtype, DTYPES)
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
        """The block's architecture as one value (:class:`Architecture`): what the block, the
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
CHECKPOINTS = "checkpoints.safetensors"
"""The file, in the folder of a model ``blockviz train`` made, of the lesson sentences' attention
weights at each checkpoint (what the learning scene and the training figure show)."""


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
            if not isinstance(self.vocabulary, (list, tuple)) or not all(
                isinstance(word, str) for word in self.vocabulary
            ):
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

    @property
    def is_trained(self) -> bool:
        """Whether the weights were learned: a trained model's layer or blockviz's trained toy
        model (``blockviz train``, ``--model toy``), not seeded, from a file or given."""
        return self.kind in ("model", "trained")

    @property
    def is_toy(self) -> bool:
        """Whether the record holds a model ``blockviz train`` made (``--model toy`` or its folder
        ``path``): a language model of one block, with its vocabulary.

        >>> Source("trained", model="toy").is_toy, Source().is_toy
        (True, False)
        """
        return self.kind == "trained"

    @property
    def checkpoints(self) -> Path | None:
        """The checkpoints file (:data:`CHECKPOINTS`) in the folder of the toy model the record
        came from, or ``None``: not a toy model's record, or its folder keeps no checkpoints."""
        if not self.is_toy or self.path is None:
            return None
        path = Path(self.path) / CHECKPOINTS
        return path if path.is_file() else None

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
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in asdict(self).items()
            if value is not None
        }

    @classmethod
    def from_dict(cls, data) -> Source:
        """Build from :meth:`to_dict`'s output; anything else raises :class:`BlockvizError`."""
        return _from_fields(cls, data, "source")


EMBEDDINGS = ("hashed", "table")
"""``hashed``: blockviz's seeded hash of each token (:func:`blockviz.tokens.embed`); ``table``:
rows of a trained embedding table (a model's ``wte``, ``word_embeddings``, ``embed_tokens``)."""


@dataclass(frozen=True)
class Architecture:
    """Which block a record holds: the facts every reader asks, as one value.

    As a Hugging Face ``PretrainedConfig`` names its model's facts (``num_key_value_heads``,
    ``hidden_act``…) for the modelling code to read in one place, this names the block's for the
    block, the record's fields (:func:`blockviz.record_fields.fields_for`), the explorer, figures
    and scenes: they read ``rec.architecture`` (or ``config.architecture``) and its predicates
    (``arch.rotary``, ``arch.has_centring``…), not the config's flags.

    ``norm`` ``layernorm|rmsnorm`` (:data:`NORMS`); ``norm_placement`` ``pre|post``
    (:data:`NORM_PLACEMENTS`; post-norm only with LayerNorm); ``positions``
    ``sinusoidal|learned|rotary`` (:data:`POSITIONAL_ENCODINGS`: the first two added before the
    block, rotary inside attention); ``ffn`` ``plain|gated`` (:data:`FFNS`); ``n_heads`` query
    heads sharing ``n_kv_heads`` key/value heads; ``bias`` whether the projections have biases;
    ``causal`` a decoder's mask (an encoder's is open); ``embedding`` ``hashed|table``
    (:data:`EMBEDDINGS`); ``model_layer`` whether the block is one layer of a trained model (its
    input is the model's hidden state, not embeddings blockviz adds up; a layer after the first
    may also record the previous layer's output); ``unembedding`` whether a final norm and an
    unembedding to logits follow the block (a language model: blockviz's trained toy model, whose
    record adds ``ln_f_*``, ``logits`` and ``probs``).

    >>> arch = BlockConfig(norm="rmsnorm", positional="rotary", n_heads=2, n_kv_heads=1).architecture
    >>> arch.has_centring, arch.rotary, arch.grouped, arch.attention_input, arch.is_toy
    (False, True, True, 'ln1', False)

    Raises
    ------
    BlockvizError
        If a fact is not one of its choices, ``n_kv_heads`` does not divide ``n_heads``, or a
        post-norm block is asked for RMSNorm.
    """

    norm: str = "layernorm"
    norm_placement: str = "pre"
    positions: str = "sinusoidal"
    ffn: str = "plain"
    n_heads: int = 2
    n_kv_heads: int = 2
    bias: bool = True
    causal: bool = True
    embedding: str = "hashed"
    model_layer: bool = False
    unembedding: bool = False

    def __post_init__(self) -> None:
        _check_choice("norm_placement", self.norm_placement, NORM_PLACEMENTS)
        _check_choice("norm", self.norm, NORMS)
        _check_choice("positions", self.positions, POSITIONAL_ENCODINGS)
        _check_choice("ffn", self.ffn, FFNS)
        _check_choice("embedding", self.embedding, EMBEDDINGS)
        if self.norm_placement == "post" and self.norm != "layernorm":
            raise BlockvizError("a post-norm block uses LayerNorm: choose norm layernorm with norm_placement post")
        for name in ("bias", "causal", "model_layer", "unembedding"):
            if not isinstance(getattr(self, name), bool):
                raise BlockvizError(f"{name} must be true or false, got {getattr(self, name)!r}")
        for name in ("n_heads", "n_kv_heads"):
            if (
                isinstance(getattr(self, name), bool)
                or not isinstance(getattr(self, name), int)
                or getattr(self, name) < 1
            ):
                raise BlockvizError(f"{name} must be a whole number ≥ 1, got {getattr(self, name)!r}")
        if self.n_kv_heads > self.n_heads or self.n_heads % self.n_kv_heads:
            raise BlockvizError(
                f"n_kv_heads must divide n_heads {self.n_heads} (1 … {self.n_heads}), got {self.n_kv_heads!r}"
            )
        if self.model_layer and self.embedding != "table":
            raise BlockvizError("a trained model's layer reads its embeddings from a table: choose embedding table")

    @classmethod
    def of(cls, config: BlockConfig, model_layer: bool = False) -> Architecture:
        """The architecture of ``config``'s block; ``model_layer``: it is one layer of a trained
        model (``rec.source.is_model``), whose embeddings are rows of the model's table. A config
        with ``vocab_size`` is blockviz's trained toy model: embeddings from its table, and an
        unembedding after the block."""
        trained = (
            config.vocab_size is not None
        )  # blockviz's trained toy model: its own table of embeddings and an unembedding
        return cls(
            norm=config.norm,
            norm_placement=config.norm_placement,
            positions=config.positional,
            ffn=config.ffn,
            n_heads=config.n_heads,
            n_kv_heads=config.kv_heads,
            bias=config.bias,
            causal=config.causal,
            embedding="table" if model_layer or trained else "hashed",
            model_layer=model_layer,
            unembedding=trained,
        )

    @property
    def is_toy(self) -> bool:
        """Whether this is blockviz's own block: pre-norm LayerNorm, positions added, a plain
        FFN with biases, a key/value per head, on blockviz's hashed embeddings (causal or not)."""
        return (
            self.pre_norm
            and self.has_centring
            and self.added_positions
            and not self.gated
            and not self.grouped
            and self.bias
            and self.embedding == "hashed"
            and not self.model_layer
            and not self.unembedding
        )

    @property
    def pre_norm(self) -> bool:
        """x + attn(norm(x)) (GPT-2, Llama)."""
        return self.norm_placement == "pre"

    @property
    def post_norm(self) -> bool:
        """norm(x + attn(x)) (BERT)."""
        return self.norm_placement == "post"

    @property
    def has_centring(self) -> bool:
        """Whether the norm subtracts each row's mean and adds β (LayerNorm; RMSNorm does neither)."""
        return self.norm == "layernorm"

    @property
    def norm_name(self) -> str:
        """The norm as written on screen and paper: ``"LayerNorm"`` or ``"RMSNorm"``."""
        return "LayerNorm" if self.has_centring else "RMSNorm"

    @property
    def rotary(self) -> bool:
        """Whether positions rotate each head's queries and keys (none is added to the input)."""
        return self.positions == "rotary"

    @property
    def added_positions(self) -> bool:
        """Whether a position vector (sinusoidal or learned) is added to each token's embedding."""
        return not self.rotary

    @property
    def learned_positions(self) -> bool:
        """Whether the added positions are rows of a table ``W_pos`` (a parameter)."""
        return self.positions == "learned"

    @property
    def gated(self) -> bool:
        """Whether the FFN is gated: (act(x W_gate) ⊙ x W_up) W_out."""
        return self.ffn == "gated"

    @property
    def grouped(self) -> bool:
        """Whether groups of query heads share a key/value head (grouped-query attention)."""
        return self.n_kv_heads != self.n_heads

    @property
    def attention_input(self) -> str:
        """The field attention reads: ``ln1`` (pre-norm) or ``resid_pre`` (post-norm)."""
        return "ln1" if self.pre_norm else "resid_pre"

    @property
    def ffn_input(self) -> str:
        """The field the FFN reads: ``ln2`` (pre-norm) or ``resid_mid_norm`` (post-norm)."""
        return "ln2" if self.pre_norm else "resid_mid_norm"

    @property
    def block_output(self) -> str:
        """The field that is the block's output: ``resid_post`` (pre-norm) or ``resid_post_norm``."""
        return "resid_post" if self.pre_norm else "resid_post_norm"


def supported_architectures(n_heads: int = 4, n_kv_heads: int = 2) -> tuple[Architecture, ...]:
    """Every architecture blockviz computes, blockviz's own block first: each combination of norm
    and placement, positions, FFN, shared key/value heads or not (``n_heads`` query heads,
    ``n_kv_heads`` when shared), biases or not, causal or not, seeded block or a model's layer;
    last, blockviz's trained toy model (:mod:`blockviz.toy`: learned positions and embeddings, an
    unembedding).

    >>> len(supported_architectures()), supported_architectures()[0].is_toy, supported_architectures()[-1].unembedding
    (289, True, True)
    """
    norms = [
        (norm, placement)
        for placement in NORM_PLACEMENTS
        for norm in NORMS
        if placement == "pre" or norm == "layernorm"
    ]
    return tuple(
        Architecture(
            norm=norm,
            norm_placement=placement,
            positions=positions,
            ffn=ffn,
            n_heads=n_heads,
            n_kv_heads=kv,
            bias=bias,
            causal=causal,
            embedding="table" if model_layer else "hashed",
            model_layer=model_layer,
        )
        for model_layer in (False, True)
        for norm, placement in norms
        for positions in POSITIONAL_ENCODINGS
        for ffn in FFNS
        for kv in (n_heads, n_kv_heads)
        for bias in (True, False)
        for causal in (True, False)
    ) + (replace(TRAINED_TOY, n_heads=n_heads, n_kv_heads=n_heads),)


TRAINED_TOY = Architecture(positions="learned", embedding="table", unembedding=True)
"""blockviz's trained toy model (:mod:`blockviz.toy`, ``--model toy``): its own pre-norm block
between a learned embedding table, learned positions and a final LayerNorm and unembedding."""
