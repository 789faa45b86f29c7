"""MiniLM layer 3 on the chicken sentence as its lecture shows it (``--token it --head auto``):
the record, and each scene's build watched after every play, made once a session.
``test_head_auto.py`` (the caption that says why the head was chosen covers nothing) and
``test_label_gaps.py`` (no two labels closer than 4 px) read the same builds, so one worker runs
both (``SHARED_BUILDS`` in ``conftest.py``)."""

from __future__ import annotations

import functools

from support import THIRTEEN_TOKENS, build, caption_crossings, close_stacked_pairs, visible_texts

from blockviz.selection import AUTO

OPTIONS = {"token": "it", "head": AUTO}
"""The scene options the lecture of MiniLM layer 3 chooses."""


@functools.cache
def minilm_layer_3():
    """The record of the packaged MiniLM's layer 3 on the chicken sentence (the model must be installed)."""
    from blockviz.models import record_layer

    return record_layer(THIRTEEN_TOKENS, model="minilm", layer=3)


def watched(scene) -> dict:
    """What the tests read after a play: the texts and cells the caption covers, and the labels stacked too close."""
    return {"caption crossings": caption_crossings(scene), "close pairs": close_stacked_pairs(visible_texts(scene))}


@functools.cache
def lecture_plays(scene_name: str):
    """``(scene, inspector, [watched(scene) after each play])`` of the catalogued scene on
    :func:`minilm_layer_3` with :data:`OPTIONS`, built as :func:`support.build` does (the scene's
    own class, so a kept plan of its colour scales serves it)."""
    from blockviz.scenes.catalog import lookup

    (entry,) = lookup([scene_name])
    seen = []
    scene, inspector = build(
        entry.scene_class(), minilm_layer_3(), listeners=[lambda scene: seen.append(watched(scene))], **OPTIONS
    )
    return scene, inspector, seen
