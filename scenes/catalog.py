"""The scene catalogue: every renderable scene by name, in teaching order.

``blockviz render --list`` prints it and ``blockviz render --scene NAME`` looks names up here,
without importing Manim: each entry names its module and class, imported only when rendered.
Each entry also gives its lecture chapter's title and the one-sentence caption the lecture's
``.srt`` shows while it plays. To add a scene, append a :class:`SceneEntry` to :data:`CATALOG`
(``order`` sets its place in ``--scene all`` and in the lecture).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class SceneEntry:
    """One catalogued scene: ``name`` (the CLI's), where its class lives, what it shows.

    ``title`` names its chapter in the lecture; ``caption`` says in one sentence what it shows
    (the lecture's captions), and ``encoder_caption`` replaces it for a bidirectional record
    when the scene shows something else then. A ``lecture_only`` scene (the title card) is left
    out of ``--scene all`` but can still be rendered by name.
    """

    name: str
    module: str  # e.g. "blockviz.scenes.softmax"
    class_name: str  # e.g. "Softmax"
    description: str  # one line, shown by `blockviz render --list`
    order: float  # teaching order; lower first
    title: str  # chapter title, e.g. "Softmax"
    caption: str  # one sentence for the lecture's .srt
    encoder_caption: str | None = None  # the caption when there is no causal mask, if it differs
    lecture_only: bool = False

    def scene_class(self):
        """The Manim scene class (imports Manim and the scene's module)."""
        return getattr(importlib.import_module(self.module), self.class_name)

    def caption_for(self, causal: bool) -> str:
        """The caption for a record with (``causal``) or without a causal mask."""
        return self.caption if causal or self.encoder_caption is None else self.encoder_caption

    @property
    def path(self) -> str:
        """The scene file, for the plain ``manim`` command."""
        return self.module.replace(".", "/") + ".py"


CATALOG: list[SceneEntry] = [
    SceneEntry(
        "title", "blockviz.scenes.title_card", "TitleCard", "the lecture's title card: the sentence, its tokens and the block's sizes", 0,
        title="Introduction",
        caption="One sentence is cut into tokens and sent through one transformer block; these are the block's sizes.",
        lecture_only=True,
    ),
    SceneEntry(
        "tokens", "blockviz.scenes.tokens_to_grid", "TokensToGrid", "tokens become rows: embedding + position = the n × d_model input grid", 1,
        title="Tokens to grid",
        caption="Each token becomes one row of numbers: its embedding plus its position's encoding, giving the n × d_model grid that enters the block.",
    ),
    SceneEntry(
        "qkv", "blockviz.scenes.query_key_value", "QueryKeyValue", "each row projected into a query, a key and a value for one head", 2,
        title="Query, key, value",
        caption="Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value.",
    ),
    SceneEntry(
        "dot-products", "blockviz.scenes.dot_products", "DotProducts", "query · key: element-wise products, their sum in the score cell, then ÷ √d_k", 3,
        title="Dot products",
        caption="Each query meets each key: their element-wise products add up to one score, and every score is divided by √d_k.",
    ),
    SceneEntry(
        "mask", "blockviz.scenes.mask", "Mask", "the causal mask M: later positions become −∞", 4,
        title="The causal mask",
        caption="The mask adds 0 where a key is allowed and −∞ where it comes later: a position uses itself and earlier positions, never later ones.",
        encoder_caption="Without a causal mask M is all 0: nothing is blocked, and every position may use every position, earlier and later.",
    ),
    SceneEntry(
        "softmax", "blockviz.scenes.softmax", "Softmax", "row by row: exponentials, their sum, each divided by it; rows sum to 1", 5,
        title="Softmax",
        caption="Row by row, each score is exponentiated and divided by the row's sum, so the weights add up to 1 and blocked keys get exactly 0.",
    ),
    SceneEntry(
        "value-mixing", "blockviz.scenes.value_mixing", "ValueMixing", "weights scale the value rows; the scaled rows add up to the output row", 6,
        title="Value mixing",
        caption="A token's weights scale the value rows, and the scaled rows add up to its output row, as long as one value vector.",
    ),
    SceneEntry(
        "worked-example", "blockviz.scenes.worked_example", "WorkedExample", "scores 0 and ln 3 → weights ¼, ¾ → ¼·(2, 0) + ¾·(0, 4) = (0.5, 3)", 7,
        title="A worked example",
        caption="Scores 0 and ln 3 give exponentials 1 and 3, weights ¼ and ¾, and the mixture ¼·(2, 0) + ¾·(0, 4) = (0.5, 3).",
    ),
    SceneEntry(
        "causal-vs-bidirectional", "blockviz.scenes.causal_vs_bidirectional", "CausalVsBidirectional", "decoder vs encoder: masks and weights with and without the causal mask", 8,
        title="Causal vs bidirectional",
        caption="The same sentence with and without the causal mask: a decoder's token reads only earlier tokens, an encoder's may use later ones too.",
    ),
    SceneEntry(
        "multi-head", "blockviz.scenes.multi_head", "MultiHead", "heads side by side with their own weights; outputs concatenated, times W_O = attn_out", 9,
        title="Multi-head attention",
        caption="Several attention heads read the same rows, each with its own weights; their outputs are concatenated and multiplied by W_O to give the attention output.",
    ),
    SceneEntry(
        "block-flow", "blockviz.scenes.block_flow", "BlockFlow", "the pre-norm block's route with shapes: LayerNorm, attention, add, LayerNorm, FFN, add", 10,
        title="The block's flow",
        caption="The pre-norm block normalizes, attends, adds the input back, normalizes, applies the FFN and adds again, so the grid leaves with the shape it came in and blocks can stack.",
    ),
    SceneEntry(
        "ffn", "blockviz.scenes.inside_ffn", "InsideFFN", "one row through the FFN: widen to d_ff, the activation curve, narrow back", 11,
        title="Inside the FFN",
        caption="The FFN widens one token's row to d_ff numbers, bends each through GELU (or ReLU), and narrows it back; every row goes through the same function without reading any other row.",
    ),
]


def entries() -> list[SceneEntry]:
    """Every catalogued scene in teaching order, the lecture-only title card first."""
    return sorted(CATALOG, key=lambda entry: entry.order)


def names() -> list[str]:
    """Every catalogued scene's name, in teaching order."""
    return [entry.name for entry in entries()]


def lecture_entries() -> list[SceneEntry]:
    """The lecture's parts in the order it shows them: the title card, then every scene."""
    return entries()


def lookup(names_asked: list[str] | tuple[str, ...]) -> list[SceneEntry]:
    """The entries named (``"all"`` = every scene but the lecture-only title card), in teaching
    order, without repeats.

    Raises
    ------
    BlockvizError
        For a name not in the catalogue.
    """
    by_name = {entry.name: entry for entry in entries()}
    chosen: set[str] = set()
    for name in names_asked:
        if name == "all":
            chosen.update(entry.name for entry in entries() if not entry.lecture_only)
        elif name in by_name:
            chosen.add(name)
        else:
            raise BlockvizError(f"unknown scene {name!r}: choose from {', '.join(by_name)} or all (see blockviz render --list)")
    return [entry for entry in entries() if entry.name in chosen]
