"""What some outputs need beyond a block: the prediction needs an unembedding, the training
picture a model folder ``blockviz train`` wrote, the stack's scenes a record of several blocks
(the prediction after each block: with an unembedding; the induction head's keys: their split
by source, :mod:`blockviz.key_sources`). Each function says why a record does not have
it (one line, with the fix) or returns ``None``; figures (``FigureSpec.applies``) and scenes
(a scene module's ``NEEDS``) name them from :data:`NEEDS`."""

from __future__ import annotations

from blockviz.source import CHECKPOINTS


def block_count(rec) -> int:
    """How many blocks ``rec`` holds: a record's ``blocks``, or a kept record's header's
    ``n_blocks`` (:class:`blockviz.record_format.RecordHeader`, what ``slides`` reads)."""
    return rec.n_blocks if hasattr(rec, "n_blocks") else len(rec.blocks)


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
    (``rec.source.is_toy``), its model folder has no checkpoints file (``rec.source.checkpoints``),
    or its model learnt the copy task (the copy-training figure shows that) — or ``None``."""
    if not rec.source.is_toy:
        return f"the record's block was not trained by blockviz train ({rec.source.describe()}): try --model toy"
    if rec.source.checkpoints is None:
        return f"the record's model folder {rec.source.path!r} has no {CHECKPOINTS}: write the folder again with blockviz train -o DIR"
    from blockviz.toy.copy_curves import copy_curve

    if copy_curve(rec.source.path) is not None:
        return "the record's model was trained on the copy task: its training is the copy-training figure"
    return None


def stack_missing(rec) -> str | None:
    """Why ``rec`` has no blocks to compare or compose — it holds one block — or ``None``."""
    if block_count(rec) > 1:
        return None
    return (
        "the record holds one block, so no block reads another's output: record a stack (--model copy, or --layer all)"
    )


def lens_missing(rec) -> str | None:
    """Why ``rec`` has no prediction after each block — a toy model of one block (its prediction
    figure shows it), or :func:`blockviz.logit_lens.missing_lens`: an encoder, a seeded block, one
    layer of a model — or ``None``."""
    if rec.architecture.unembedding and len(rec.blocks) == 1:
        return "the record holds one block: its prediction after that block is the prediction figure"
    if rec.architecture.unembedding or rec.lens is not None:
        return None
    from blockviz.logit_lens import missing_lens

    return missing_lens(rec)


def lens_scene_missing(rec) -> str | None:
    """Why the ``logit-lens`` scene cannot show ``rec`` — one block (:func:`stack_missing`), a
    trained model's stack (its record holds each block's top words only: the figure draws
    them), or no unembedding in its blocks — or ``None``."""
    reason = stack_missing(rec)
    if reason:
        return reason
    if not rec.architecture.unembedding and getattr(rec, "lens", None) is not None:
        return (
            f"the logit-lens scene shows a toy model's blocks, each with every word's probability; {rec.source.model}'s record "
            "holds each block's top words only: draw them with blockviz figures … --figure logit-lens"
        )
    if not rec.architecture.unembedding and rec.source.is_model:
        from blockviz.logit_lens import missing_lens

        return missing_lens(rec)
    return unembedding_missing(rec)


def key_sources_missing(rec) -> str | None:
    """Why ``rec`` cannot show where its last block's keys came from — one block, or a last
    block without ``scores_from_embed`` (only a toy model's stack records it,
    :mod:`blockviz.key_sources`) — or ``None``."""
    reason = stack_missing(rec)
    if reason:
        return reason
    if hasattr(rec, "tensors"):
        recorded = "scores_from_heads" in rec.tensors
    else:  # a kept record's header (slides): a toy model's stack always records the split
        recorded = rec.source.is_toy
    if not recorded:
        return (
            f"the record does not split its last block's scores by where the keys came from ({rec.source.describe()}): "
            "try --model copy"
        )
    return None


def copy_training_missing(rec) -> str | None:
    """Why ``rec`` has no copy-task training to show — not a model ``blockviz train --task copy``
    made (its folder's card says the task) — or ``None``."""
    if not rec.source.is_toy:
        return f"the record's block was not trained by blockviz train ({rec.source.describe()}): try --model copy"
    from blockviz.toy.copy_curves import copy_curve

    if copy_curve(rec.source.path) is None:
        return f"the record's model was not trained on the copy task ({rec.source.describe()}): try --model copy"
    return None


def repeat_missing(rec) -> str | None:
    """Why ``rec`` has no induction to measure across blocks — it holds one block
    (:func:`stack_missing`), or no word comes back after another word
    (:func:`blockviz.toy.induction.repeat_pairs`) — or ``None``."""
    from blockviz.toy.induction import repeat_pairs

    reason = stack_missing(rec)
    if reason:
        return reason
    if repeat_pairs(rec.tokens, rec.special):
        return None
    return "no word of the sentence comes back after another word, so there is no induction to measure: repeat a phrase"


NEEDS = {
    "unembedding": unembedding_missing,
    "training": training_missing,
    "stack": stack_missing,
    "lens": lens_missing,
    "copy-training": copy_training_missing,
    "repeat": repeat_missing,
    "lens-scene": lens_scene_missing,
    "key-sources": key_sources_missing,
}
"""Each need by the name figures and scenes state it with."""


def missing(need: str | None, rec) -> str | None:
    """Why ``rec`` lacks ``need`` (a key of :data:`NEEDS`; ``None`` needs nothing), or ``None``."""
    return None if need is None else NEEDS[need](rec)
