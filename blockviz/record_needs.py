"""What some outputs need beyond a block: the prediction needs an unembedding, the training
picture a model folder ``blockviz train`` wrote, the stack's scenes a record of several blocks
(the prediction after each block: with an unembedding; the induction head's keys: their split
by source, :mod:`blockviz.key_sources`). Each function says why a record does not have
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


def blocks_missing(rec) -> str | None:
    """Why ``rec`` shows no stack — it holds one block (``len(rec.blocks)``) — or ``None``."""
    if len(rec.blocks) > 1:
        return None
    return (
        "the record holds one block, and this scene shows a stack of blocks: try --model copy "
        "(and leave --block out, which shows one block)"
    )


def lens_missing(rec) -> str | None:
    """Why ``rec`` has no prediction after each block to show — one block, or no unembedding
    in its blocks (a trained model's lens is not drawn as a scene) — or ``None``."""
    return blocks_missing(rec) or unembedding_missing(rec)


def key_sources_missing(rec) -> str | None:
    """Why ``rec`` cannot show where its last block's keys came from — one block, or a last
    block without ``scores_from_embed`` (only a toy model's stack records it,
    :mod:`blockviz.key_sources`) — or ``None``."""
    if blocks_missing(rec):
        return blocks_missing(rec)
    if "scores_from_heads" not in rec.tensors:
        return (
            f"the record does not split its last block's scores by where the keys came from ({rec.source.describe()}): "
            "try --model copy"
        )
    return None


NEEDS = {
    "unembedding": unembedding_missing,
    "training": training_missing,
    "blocks": blocks_missing,
    "lens": lens_missing,
    "key-sources": key_sources_missing,
}
"""Each need by the name figures and scenes state it with."""


def missing(need: str | None, rec) -> str | None:
    """Why ``rec`` lacks ``need`` (a key of :data:`NEEDS`; ``None`` needs nothing), or ``None``."""
    return None if need is None else NEEDS[need](rec)
