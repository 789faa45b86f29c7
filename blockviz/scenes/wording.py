"""How captions and chapter titles name the block's steps, read from the record's architecture:
the one place that says where another architecture's wording differs from blockviz's toy block.

The toy block is one architecture among several (:class:`blockviz.architecture.Architecture`): a
decoder (causal mask), pre-norm LayerNorm, sinusoidal positions added to the input, a plain
FFN. A caption written for it would name steps BERT or Llama lack ("blocked keys get exactly 0"
on an encoder, "subtracts its mean" on RMSNorm), so scene modules say what differs in two ways,
both read by the catalogue (:mod:`blockviz.scenes.catalog`), the lecture's chapter files and
its ``.srt``:

* a **variant** literal ``<FACT>_CHAPTER`` or ``<FACT>_CAPTION`` beside ``CHAPTER`` and
  ``CAPTION``, for a fact of :data:`FACTS`: the whole title or caption for an architecture with
  that fact. Of the variants a module states, the first in :data:`FACTS`' order that the
  architecture has is used (:meth:`Wording.pick`); ``ENCODER_CAPTION`` is the mask's caption
  without a causal mask;
* a **placeholder** ``{phrase}`` for a name of :data:`PHRASES` in any of them, filled in by
  :meth:`Wording.fill`: ``CHAPTER = "{norm}"`` is "LayerNorm" or "RMSNorm".

Scenes word their own captions from the same value (``scene.wording``): ``wording.blocked_keys``,
``wording.positions``… A name outside :data:`PHRASES` in a module's literal is refused when the
catalogue reads it.

>>> from blockviz.architecture import Architecture
>>> llama = Wording(Architecture(norm="rmsnorm", positions="rotary", ffn="gated", causal=True), "SiLU")
>>> llama.facts, llama.fill("{norm}, then the {glu} FFN")
(('RMSNORM', 'ROTARY', 'GATED'), 'RMSNorm, then the SwiGLU FFN')
>>> Wording(Architecture(norm_placement="post", causal=False, positions="learned")).facts
('ENCODER', 'POST_NORM', 'LEARNED')
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from blockviz.architecture import Architecture

FACTS = {
    "ENCODER": "no causal mask: every position may use every position (BERT, MiniLM)",
    "POST_NORM": "LayerNorm after each residual sum, not before attention and the FFN (BERT)",
    "RMSNORM": "RMSNorm: the row divided by its root mean square, no mean subtracted, no shift β (Llama, SmolLM2)",
    "LATER_LAYER": "a trained model's layer after the first: its input is the layer before's output",
    "ROTARY": "rotary positions: no position vector added to the input; each query and key turned by its position",
    "GATED": "a gated FFN: act(x W_gate) ⊙ (x W_up), then W_out (SwiGLU with SiLU)",
    "GROUPED": "grouped-query attention: groups of query heads share one key and value head (Llama, SmolLM2)",
    "LEARNED": "learned positions: a row of the table W_pos added to each embedding (GPT-2, BERT)",
}
"""The facts of an architecture a scene module may state a variant of its chapter or caption for
(``ENCODER_CAPTION``…), most telling first: a module's first variant the architecture has wins."""

PHRASES = (
    "norm",
    "norm_where",
    "activation",
    "glu",
    "positions",
    "layer",
    "previous_layer",
    "exp_of_blocked",
    "blocked_keys",
    "softmax_input",
    "head_keys",
    "head_values",
)
"""The placeholders a scene module's chapter and captions may hold (``{norm}``…): the names of
:class:`Wording`'s phrases."""

GLU_NAMES = {"SiLU": "SwiGLU", "GELU": "GeGLU", "GELU (tanh)": "GeGLU", "ReLU": "ReGLU"}
"""A gated FFN named by its activation (Shazeer 2020, "GLU Variants Improve Transformer")."""


@dataclass(frozen=True)
class Wording:
    """The words for one record's block: its ``architecture``, its ``activation`` as written on
    screen (``"GELU"``, ``"SiLU"``: :attr:`blockviz.block_config.BlockConfig.activation_name`) and, for
    a trained model's layer, which ``layer`` (0-based; 0 for a seeded block)."""

    architecture: Architecture
    activation: str = "GELU"
    layer: int = 0

    @classmethod
    def of(cls, rec) -> Wording:
        """The wording of record ``rec``'s block."""
        source = rec.source
        layer = source.layer if source.is_model and source.layer is not None else 0
        return cls(rec.architecture, rec.config.activation_name, layer)

    @property
    def facts(self) -> tuple[str, ...]:
        """The names of :data:`FACTS` this block has, in that order."""
        arch = self.architecture
        has = {
            "ENCODER": not arch.causal,
            "POST_NORM": arch.post_norm,
            "RMSNORM": not arch.has_centring,
            "LATER_LAYER": arch.model_layer and self.layer > 0,
            "ROTARY": arch.rotary,
            "GATED": arch.gated,
            "GROUPED": arch.grouped,
            "LEARNED": arch.learned_positions,
        }
        return tuple(fact for fact in FACTS if has[fact])

    def pick(self, plain: str, variants: dict[str, str]) -> str:
        """The text for this block, filled in (:meth:`fill`): the variant (``fact`` → text) of its
        first fact that has one, else ``plain``."""
        chosen = next((variants[fact] for fact in self.facts if fact in variants), plain)
        return self.fill(chosen)

    def fill(self, template: str) -> str:
        """``template`` with each ``{phrase}`` of :data:`PHRASES` replaced by this block's words.

        Raises ``KeyError`` for a placeholder outside :data:`PHRASES` (the catalogue refuses such
        a module first: :func:`placeholders`)."""
        return template.format_map({name: getattr(self, name) for name in PHRASES})

    # -- the phrases (PHRASES) --------------------------------------------------------------------
    @property
    def norm(self) -> str:
        """The norm's name: "LayerNorm" or "RMSNorm"."""
        return self.architecture.norm_name

    @property
    def norm_where(self) -> str:
        """Where the two norms sit in the block (pre-norm: before each sublayer; post-norm: after each sum)."""
        if self.architecture.post_norm:
            return "after attention's sum and again after the FFN's"
        return "before attention and again before the FFN"

    @property
    def glu(self) -> str:
        """A gated FFN's name: "SwiGLU" (SiLU), "GeGLU" (GELU), "ReGLU" (ReLU)."""
        return GLU_NAMES.get(self.activation, f"{self.activation}-gated")

    @property
    def positions(self) -> str:
        """What an added position is: "sinusoidal encoding" or "learned vector, a row of the position table"
        (rotary positions add none: "rotation of the query and key")."""
        positions = self.architecture.positions
        if positions == "learned":
            return "learned vector, a row of the position table"
        if positions == "rotary":
            return "rotation of the query and key"
        return "sinusoidal encoding"

    @property
    def previous_layer(self) -> int:
        """The layer whose output enters this one (a later layer of a trained model)."""
        return max(self.layer - 1, 0)

    @property
    def exp_of_blocked(self) -> str:
        """What softmax's exponential does to a blocked score: ", and exp(−∞) = 0" (a causal mask),
        nothing without one."""
        return ", and exp(−∞) = 0" if self.architecture.causal else ""

    @property
    def blocked_keys(self) -> str:
        """What softmax gives the keys the mask blocks: "blocked keys get exactly 0"; without a
        causal mask "no key is masked to 0"."""
        return "blocked keys get exactly 0" if self.architecture.causal else "no key is masked to 0"

    @property
    def softmax_input(self) -> str:
        """What softmax is applied to, row by row: "the masked scores" (a causal mask added),
        without one "the scaled scores" (Vaswani et al. 2017, eq. 1: QKᵀ/√d_k)."""
        return "the masked scores" if self.architecture.causal else "the scaled scores"

    @property
    def head_keys(self) -> str:
        """What each head reads the rows through: "its own query and key weights"; with
        grouped-query attention, "its own query weights and its group's shared key weights"."""
        if self.architecture.grouped:
            return "its own query weights and its group's shared key weights"
        return "its own query and key weights"

    @property
    def head_values(self) -> str:
        """Whose values a head mixes: "its own values"; with grouped-query attention, "its group's shared values"."""
        return "its group's shared values" if self.architecture.grouped else "its own values"


def toy_wording(causal: bool = True) -> Wording:
    """The wording of blockviz's toy block, a decoder (``causal``) or an encoder."""
    return Wording(Architecture(causal=causal))


def placeholders(template: str) -> list[str]:
    """The ``{names}`` in ``template`` (``string.Formatter``'s reading), in order.

    Raises ``ValueError`` for a malformed one (an unmatched brace)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
