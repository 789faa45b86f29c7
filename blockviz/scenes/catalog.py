"""The scene catalogue: every renderable scene by name, in teaching order — a registry only.

``blockviz render --list`` prints it and ``blockviz render --scene NAME`` looks names up here,
without importing Manim: an entry names its module and class, imported only when rendered.

What a scene says about itself lives in its own module, as module-level strings read here
without importing the module (its source is parsed, the strings are literals):

* ``DESCRIPTION`` — one line for ``blockviz render --list``;
* ``CHAPTER`` — its chapter's title in the lecture;
* ``CAPTION`` — one sentence for the lecture's ``.srt`` while it plays;
* ``ENCODER_CAPTION`` (optional) — the caption for a record without the causal mask, when the
  scene shows something else then.

To add a scene: write its module (a :class:`~blockviz.scenes.base.RecordScene` subclass and
those strings) and add one line to :data:`CATALOG`; ``order`` sets its place in
``--scene all`` and in the lecture. The scene tests then build and value-check it.
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError

PACKAGE = "blockviz.scenes"
PROSE = ("DESCRIPTION", "CHAPTER", "CAPTION")
"""The strings every scene module states; ``ENCODER_CAPTION`` is optional."""


@dataclass(frozen=True)
class SceneEntry:
    """One catalogued scene: ``name`` (the CLI's), where its class lives, its teaching ``order``.

    A ``lecture_only`` scene (the title card) is left out of ``--scene all`` but can still be
    rendered by name. ``title``, ``caption``, ``encoder_caption`` and ``description`` are read
    from the scene's module (see the module docstring).
    """

    name: str
    module: str  # e.g. "blockviz.scenes.softmax"
    class_name: str  # e.g. "Softmax"
    order: float  # teaching order; lower first
    lecture_only: bool = False

    def scene_class(self):
        """The Manim scene class (imports Manim and the scene's module)."""
        return getattr(importlib.import_module(self.module), self.class_name)

    @property
    def description(self) -> str:
        """One line for ``blockviz render --list``."""
        return module_prose(self.module)["DESCRIPTION"]

    @property
    def title(self) -> str:
        """The scene's chapter title in the lecture."""
        return module_prose(self.module)["CHAPTER"]

    @property
    def caption(self) -> str:
        """One sentence on what the scene shows (the lecture's captions)."""
        return module_prose(self.module)["CAPTION"]

    @property
    def encoder_caption(self) -> str | None:
        """The caption for a record without the causal mask, if it differs."""
        return module_prose(self.module).get("ENCODER_CAPTION")

    def caption_for(self, causal: bool) -> str:
        """The caption for a record with (``causal``) or without a causal mask."""
        return self.caption if causal or self.encoder_caption is None else self.encoder_caption


def scene(name: str, module: str, class_name: str, order: float, lecture_only: bool = False) -> SceneEntry:
    """A catalogue line: ``module`` is the file's name in ``scenes/`` without ``.py``."""
    return SceneEntry(name, f"{PACKAGE}.{module}", class_name, order, lecture_only)


CATALOG: tuple[SceneEntry, ...] = (
    scene("title", "title_card", "TitleCard", 0, lecture_only=True),
    scene("worked-example", "worked_example", "WorkedExample", 0.5),
    scene("tokens", "tokens_to_grid", "TokensToGrid", 1),
    scene("layer-norm", "layer_norm", "LayerNormRow", 1.5),
    scene("qkv", "query_key_value", "QueryKeyValue", 2),
    scene("dot-products", "dot_products", "DotProducts", 3),
    scene("mask", "mask", "Mask", 4),
    scene("causal-vs-bidirectional", "causal_vs_bidirectional", "CausalVsBidirectional", 4.5),
    scene("softmax", "softmax", "Softmax", 5),
    scene("value-mixing", "value_mixing", "ValueMixing", 6),
    scene("multi-head", "multi_head", "MultiHead", 9),
    scene("block-flow", "block_flow", "BlockFlow", 10),
    scene("ffn", "inside_ffn", "InsideFFN", 11),
    scene("recap", "recap", "Recap", 12),
)


@functools.cache
def module_prose(module: str) -> dict[str, str]:
    """The prose strings (``DESCRIPTION``, ``CHAPTER``, ``CAPTION``, ``ENCODER_CAPTION``) that
    scene ``module`` states, read from its source without importing it.

    Raises
    ------
    ValueError
        If the module lacks one of :data:`PROSE` or one is not a plain string literal.
    """
    path = Path(__file__).with_name(module.rpartition(".")[2] + ".py")
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id in (*PROSE, "ENCODER_CAPTION"):
                value = ast.literal_eval(node.value)
                if not isinstance(value, str):
                    raise ValueError(f"{path.name}: {target.id} must be a string literal")
                found[target.id] = value
    missing = [name for name in PROSE if name not in found]
    if missing:
        raise ValueError(f"{path.name} does not state {', '.join(missing)}: every catalogued scene module does (see blockviz.scenes.catalog)")
    return found


def entries() -> list[SceneEntry]:
    """Every catalogued scene in teaching order, the lecture-only title card first."""
    return sorted(CATALOG, key=lambda entry: entry.order)


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
            close = difflib.get_close_matches(name, [*by_name, "all"], n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise BlockvizError(f"unknown scene {name!r}: {guess}choose from {', '.join(by_name)} or all (see blockviz render --list)")
    return [entry for entry in entries() if entry.name in chosen]
