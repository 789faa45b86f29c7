"""The record: every real intermediate tensor of one block on one sentence.

This is the single source of numbers for the CLI, the figures and the scenes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from blockviz.block import Block
from blockviz.config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.tensorfile import read_tensors, write_tensors
from blockviz.tokens import dtype_of, embed, sinusoidal_positions, tokenize
from blockviz.params import learned_positions, load_weights

ACTIVATION_NAMES = (
    "embed", "pos_embed", "resid_pre", "ln1", "query", "key", "value", "scores", "scaled_scores",
    "mask", "masked_scores", "weights", "head_outputs", "concat", "attn_out", "resid_mid", "ln2",
    "ffn_pre", "ffn_post", "ffn_out", "resid_post",
)
"""Names of the recorded activations, in the order the data flows."""

RECORD_FORMAT = "blockviz-record/1"


@dataclass(frozen=True, eq=False)
class BlockRecord:
    """Every intermediate tensor of one pre-norm decoder block on one sentence.

    No batch dimension; heads first; in ``(…, n, n)`` tensors rows are query positions and
    columns key positions. ``n`` = number of tokens, ``d_head = d_model // n_heads``.

    ==================  ========================  ==========================================
    name                shape                     what
    ==================  ========================  ==========================================
    ``embed``           ``(n, d_model)``          token vectors (seeded hash of each token)
    ``pos_embed``       ``(n, d_model)``          positional encodings
    ``resid_pre``       ``(n, d_model)``          embed + pos_embed: the block's input
    ``ln1``             ``(n, d_model)``          LayerNorm before attention
    ``query``           ``(n_heads, n, d_head)``  ln1 @ W_Q[h] + b_Q[h]
    ``key``             ``(n_heads, n, d_head)``  ln1 @ W_K[h] + b_K[h]
    ``value``           ``(n_heads, n, d_head)``  ln1 @ W_V[h] + b_V[h]
    ``scores``          ``(n_heads, n, n)``       raw dot products q·k
    ``scaled_scores``   ``(n_heads, n, n)``       scores / √d_head
    ``mask``            ``(n, n)``                M: 0 where allowed, −∞ where blocked
    ``masked_scores``   ``(n_heads, n, n)``       scaled_scores + mask
    ``weights``         ``(n_heads, n, n)``       softmax of each row; blocked cells exactly 0
    ``head_outputs``    ``(n_heads, n, d_head)``  weights @ value
    ``concat``          ``(n, d_model)``          the heads' outputs side by side
    ``attn_out``        ``(n, d_model)``          concat @ W_O + b_O
    ``resid_mid``       ``(n, d_model)``          resid_pre + attn_out
    ``ln2``             ``(n, d_model)``          LayerNorm before the FFN
    ``ffn_pre``         ``(n, d_ff)``             ln2 @ W_in + b_in: the widened rows
    ``ffn_post``        ``(n, d_ff)``             activation(ffn_pre)
    ``ffn_out``         ``(n, d_model)``          ffn_post @ W_out + b_out: narrowed back
    ``resid_post``      ``(n, d_model)``          resid_mid + ffn_out: the block's output
    ==================  ========================  ==========================================

    ``params`` holds the parameters used, by their :class:`~blockviz.block.Block` names
    (``ln1.weight`` = γ, ``ln1.bias`` = β, ``attn.W_Q`` … ``attn.b_O``, ``ln2.*``,
    ``ffn.W_in`` … ``ffn.b_out``, and ``W_pos`` ``(max_tokens, d_model)`` for learned positions).
    """

    sentence: str
    tokens: list[str]
    config: BlockConfig
    embed: torch.Tensor
    pos_embed: torch.Tensor
    resid_pre: torch.Tensor
    ln1: torch.Tensor
    query: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor
    scores: torch.Tensor
    scaled_scores: torch.Tensor
    mask: torch.Tensor
    masked_scores: torch.Tensor
    weights: torch.Tensor
    head_outputs: torch.Tensor
    concat: torch.Tensor
    attn_out: torch.Tensor
    resid_mid: torch.Tensor
    ln2: torch.Tensor
    ffn_pre: torch.Tensor
    ffn_post: torch.Tensor
    ffn_out: torch.Tensor
    resid_post: torch.Tensor
    params: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    def activations(self) -> dict[str, torch.Tensor]:
        """The recorded activations by name, in data-flow order."""
        return {name: getattr(self, name) for name in ACTIVATION_NAMES}

    def save(self, path: str | Path) -> None:
        """Write the record to ``.safetensors`` (exact) or ``.json`` (−∞ as null), atomically.

        Raises :class:`BlockvizError` for another suffix or an unwritable folder.
        """
        header = {"format": RECORD_FORMAT, "sentence": self.sentence, "tokens": self.tokens, "config": self.config.to_dict()}
        write_tensors(path, {**self.activations(), **self.params}, header)

    @classmethod
    def load(cls, path: str | Path) -> BlockRecord:
        """Read a record written by :meth:`save`; ``.safetensors`` loads back bit for bit.

        Raises :class:`BlockvizError` if the file is missing, unreadable or not a blockviz record.
        """
        tensors, header = read_tensors(path)
        missing = [name for name in ACTIVATION_NAMES if name not in tensors]
        if header.get("format") != RECORD_FORMAT or missing or "tokens" not in header:
            raise BlockvizError(f"{str(path)!r} is not a blockviz record: write one with `blockviz record … --save`")
        config = BlockConfig.from_dict(header["config"])
        dtype = dtype_of(config)
        activations = {name: tensors.pop(name).to(dtype) for name in ACTIVATION_NAMES}
        params = {name: tensor.to(dtype) for name, tensor in tensors.items()}
        sentence = header.get("sentence", " ".join(header["tokens"]))
        return cls(sentence=sentence, tokens=list(header["tokens"]), config=config, params=params, **activations)


def record(sentence: str, config: BlockConfig | None = None, weights: str | Path | Mapping[str, torch.Tensor] | None = None) -> BlockRecord:
    """Run ``sentence`` through one block and record every intermediate tensor.

    Parameters
    ----------
    sentence
        Text; split into word and punctuation tokens by :func:`blockviz.tokens.tokenize`.
    config
        Sizes and choices; :class:`BlockConfig` defaults if omitted.
    weights
        Parameters replacing the seeded ones: a ``.safetensors`` or ``.json`` file, or named
        tensors (e.g. another record's ``params``); names as in ``BlockRecord.params``.

    Raises
    ------
    BlockvizError
        For an empty sentence, more than ``config.max_tokens`` tokens, or a bad weights file.
    """
    config = config or BlockConfig()
    tokens = tokenize(sentence, config.max_tokens)
    dtype = dtype_of(config)
    block = Block(config).to(dtype)
    position_table = learned_positions(config) if config.positional == "learned" else None
    if weights is not None:
        position_table = load_weights(weights, block, config)
    with torch.no_grad():
        token_vectors = embed(tokens, config)
        if position_table is None:
            positions = sinusoidal_positions(len(tokens), config.d_model, dtype)
        else:
            positions = position_table[: len(tokens)].to(dtype)
        cache: dict[str, torch.Tensor] = {"embed": token_vectors, "pos_embed": positions}
        block(token_vectors + positions, cache)
    params = {name: tensor.detach().clone() for name, tensor in block.state_dict().items()}
    if position_table is not None:
        params["W_pos"] = position_table.to(dtype)
    return BlockRecord(sentence=sentence, tokens=tokens, config=config, params=params, **{name: cache[name] for name in ACTIVATION_NAMES})
