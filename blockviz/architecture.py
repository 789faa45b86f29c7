"""Which block a record holds, as one value (:class:`Architecture`), and every architecture
blockviz computes (:func:`supported_architectures`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from blockviz.errors import BlockvizError, check_choice

POSITIONAL_ENCODINGS = ("sinusoidal", "learned", "rotary")
"""``sinusoidal`` and ``learned`` are added to the token vectors before the block; ``rotary``
(Su et al. 2021, RoFormer) rotates each head's queries and keys inside attention instead."""
NORM_PLACEMENTS = ("pre", "post")
"""``pre``: x + attn(norm(x)) (GPT-2, Llama; Xiong et al. 2020); ``post``: norm(x + attn(x))
(BERT, Vaswani et al. 2017)."""
NORMS = ("layernorm", "rmsnorm")
"""``layernorm`` (Ba et al. 2016): γ ⊙ (x − mean)/√(var + ε) + β; ``rmsnorm`` (Zhang & Sennrich
2019): γ ⊙ x/√(mean(x²) + ε), no centring, no β."""
FFNS = ("plain", "gated")
"""``plain``: act(x W_in + b_in) W_out + b_out; ``gated`` (Shazeer 2020, GLU variants):
(act(x W_gate) ⊙ x W_up) W_out."""

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

    >>> from blockviz.block_config import BlockConfig
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
        check_choice("norm_placement", self.norm_placement, NORM_PLACEMENTS)
        check_choice("norm", self.norm, NORMS)
        check_choice("positions", self.positions, POSITIONAL_ENCODINGS)
        check_choice("ffn", self.ffn, FFNS)
        check_choice("embedding", self.embedding, EMBEDDINGS)
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
    def of(cls, config, model_layer: bool = False) -> Architecture:
        """The architecture of ``config``'s block (a :class:`~blockviz.block_config.BlockConfig`);
        ``model_layer``: it is one layer of a trained model (``rec.source.is_model``), whose
        embeddings are rows of the model's table. A config with ``vocab_size`` is blockviz's
        trained toy model: embeddings from its table, and an unembedding after the block."""
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
