"""The options of one training run of the toy model, and their defaults (those of the model
blockviz ships). No torch here: the CLI shows these defaults without loading it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from blockviz.block_config import BlockConfig
from blockviz.toy.copying import CopyRecipe
from blockviz.toy.corpus import CorpusRecipe

TASKS = ("lessons", "copy")
"""What a toy model learns: the lesson sentences' grammar (the shipped toy), or copying a
repeated phrase (:mod:`blockviz.toy.copying`, the shipped copy model)."""


@dataclass(frozen=True)
class TrainOptions:
    """Sizes, steps, seed and optimiser settings of one training run."""

    d_model: int = 8
    n_heads: int = 2
    d_ff: int = 16
    steps: int = 4000
    seed: int = 0
    batch: int = 32
    learning_rate: float = 0.03
    weight_decay: float = 0.01
    warmup: int = 100
    attention_init: float | None = 0.2  # std of the initial W_Q, W_K, W_V; None: the block's own seeded init (0.5)
    position_init: float = 0.1  # std of the initial W_pos entries (W_E's is 1): small, so a query is mostly its word
    checkpoints: tuple[int, ...] = (0, 100, 250, 500, 1000, 2000)
    corpus: CorpusRecipe = field(default_factory=CorpusRecipe)
    task: str = "lessons"
    blocks: int = 1
    copy: CopyRecipe = field(default_factory=CopyRecipe)

    @classmethod
    def for_task(cls, task: str, **chosen) -> TrainOptions:
        """The options of ``task`` (one of :data:`TASKS`): its defaults (:data:`COPY_DEFAULTS` for
        ``copy``) with the ``chosen`` ones (those ``None`` left out) in their place."""
        defaults = COPY_DEFAULTS if task == "copy" else {}
        return cls(task=task, **{**defaults, **{name: value for name, value in chosen.items() if value is not None}})

    def config(self, max_tokens: int, vocab_size: int) -> BlockConfig:
        """The model's config: learned positions, ``max_tokens`` of them, and ``vocab_size`` words."""
        return BlockConfig(
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            positional="learned",
            seed=self.seed,
            max_tokens=max_tokens,
            vocab_size=vocab_size,
        )

    @classmethod
    def default(cls, name: str):
        """The default of field ``name``."""
        return next(f.default for f in fields(cls) if f.name == name)


COPY_DEFAULTS = {
    "d_model": 16,
    "n_heads": 2,
    "d_ff": 32,
    "blocks": 2,
    "steps": 1600,
    "batch": 64,
    "learning_rate": 0.01,
    "attention_init": 0.2,
    "position_init": 1.0,
    "checkpoints": (0, 200, 400, 600, 800, 1000, 1200),
    "copy": CopyRecipe(shortest=8, longest=11),
}
"""The copy task's defaults (those of the shipped copy model) where they differ from the toy's.
Trained on phrases of 8–11 words (more predicted positions per sequence: at 3–5 words the model
stayed on its plateau through 1,600 steps), measured on phrases of 3–5
(:data:`blockviz.toy.induction.MEASURED_PHRASES`)."""
