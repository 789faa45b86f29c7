"""The records a course's jobs draw: one per sentence, model and layer, made once per process."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=16)
def course_record(sentence: str, model: str, layer: int | None):
    """The record of ``sentence`` on ``model`` (``"seeded"``: blockviz's seeded block with its
    default sizes; else :func:`blockviz.models.recording.record_layer`, ``layer`` 0 unless given),
    kept for the life of this process."""
    if model == "seeded":
        from blockviz.block_record import record

        return record(sentence)
    from blockviz.models.recording import record_layer

    return record_layer(sentence, model=model, layer=layer or 0)
