"""What some outputs need beyond a block: the prediction needs an unembedding, the training
picture a model folder ``blockviz train`` wrote. Each function says why a record does not have
it (one line, with the fix) or returns ``None``; figures (``FigureSpec.applies``) and scenes
(a scene module's ``NEEDS``) name them from :data:`NEEDS`."""

from __future__ import annotations

from blockviz.source import CHECKPOINTS


def unembedding_missing(rec) -> str | None:
    """Why ``rec`` has no next-token prediction — its block has no unembedding
    (``rec.architecture.unembedding``: only a trained toy model's has) — or ``None``."""
    if rec.architecture.unembedding:
        return None
    return (
        f"the record's block has no unembedding, so no next-token prediction ({rec.source.describe()}): try --model toy"
    )


def training_missing(rec) -> str | None:
    """Why ``rec`` has no training to show — its block was not made by ``blockviz train``
    (``rec.source.is_toy``), or its model folder has no checkpoints file (``rec.source.checkpoints``)
    — or ``None``."""
    if not rec.source.is_toy:
        return f"the record's block was not trained by blockviz train ({rec.source.describe()}): try --model toy"
    if rec.source.checkpoints is None:
        return f"the record's model folder {rec.source.path!r} has no {CHECKPOINTS}: write the folder again with blockviz train -o DIR"
    return None


NEEDS = {"unembedding": unembedding_missing, "training": training_missing}
"""Each need by the name figures and scenes state it with."""


def missing(need: str | None, rec) -> str | None:
    """Why ``rec`` lacks ``need`` (a key of :data:`NEEDS`; ``None`` needs nothing), or ``None``."""
    return None if need is None else NEEDS[need](rec)
