"""The scene catalogue: every renderable scene by name, in teaching order.

``blockviz render --list`` prints it and ``blockviz render --scene NAME`` looks names up here,
without importing Manim: each entry names its module and class, imported only when rendered.
To add a scene, append a :class:`SceneEntry` to :data:`CATALOG` (``order`` sets its place).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class SceneEntry:
    """One catalogued scene: ``name`` (the CLI's), where its class lives, what it shows."""

    name: str
    module: str  # e.g. "scenes.softmax"
    class_name: str  # e.g. "Softmax"
    description: str  # one line, shown by `blockviz render --list`
    order: float  # teaching order; lower first

    def scene_class(self):
        """The Manim scene class (imports Manim and the scene's module)."""
        return getattr(importlib.import_module(self.module), self.class_name)

    @property
    def path(self) -> str:
        """The scene file, for the plain ``manim`` command."""
        return self.module.replace(".", "/") + ".py"


CATALOG: list[SceneEntry] = [
    SceneEntry("tokens", "scenes.tokens_to_grid", "TokensToGrid", "tokens become rows: embedding + position = the n × d_model input grid", 1),
    SceneEntry("qkv", "scenes.query_key_value", "QueryKeyValue", "each row projected into a query, a key and a value for one head", 2),
    SceneEntry("dot-products", "scenes.dot_products", "DotProducts", "query · key: element-wise products, their sum in the score cell, then ÷ √d_k", 3),
    SceneEntry("mask", "scenes.mask", "Mask", "the causal mask M: later positions become −∞", 4),
    SceneEntry("softmax", "scenes.softmax", "Softmax", "row by row: exponentials, their sum, each divided by it; rows sum to 1", 5),
    SceneEntry("value-mixing", "scenes.value_mixing", "ValueMixing", "weights scale the value rows; the scaled rows add up to the output row", 6),
    SceneEntry("worked-example", "scenes.worked_example", "WorkedExample", "scores 0 and ln 3 → weights ¼, ¾ → ¼·(2, 0) + ¾·(0, 4) = (0.5, 3)", 7),
    SceneEntry("causal-vs-bidirectional", "scenes.causal_vs_bidirectional", "CausalVsBidirectional", "decoder vs encoder: masks and weights with and without the causal mask", 8),
    SceneEntry("multi-head", "scenes.multi_head", "MultiHead", "heads side by side with their own weights; outputs concatenated, times W_O = attn_out", 9),
    SceneEntry("block-flow", "scenes.block_flow", "BlockFlow", "the pre-norm block's route with shapes: LayerNorm, attention, add, LayerNorm, FFN, add", 10),
    SceneEntry("ffn", "scenes.inside_ffn", "InsideFFN", "one row through the FFN: widen to d_ff, the activation curve, narrow back", 11),
]


def entries() -> list[SceneEntry]:
    """Every catalogued scene in teaching order."""
    return sorted(CATALOG, key=lambda entry: entry.order)


def names() -> list[str]:
    return [entry.name for entry in entries()]


def lookup(names_asked: list[str] | tuple[str, ...]) -> list[SceneEntry]:
    """The entries named (``"all"`` = every scene), in teaching order, without repeats.

    Raises
    ------
    BlockvizError
        For a name not in the catalogue.
    """
    by_name = {entry.name: entry for entry in entries()}
    chosen: set[str] = set()
    for name in names_asked:
        if name == "all":
            chosen.update(by_name)
        elif name in by_name:
            chosen.add(name)
        else:
            raise BlockvizError(f"unknown scene {name!r}: choose from {', '.join(by_name)} or all (see blockviz render --list)")
    return [entry for entry in entries() if entry.name in chosen]
