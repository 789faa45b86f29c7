"""blockviz's trained toy models: one block, learned on sentences a seeded grammar generates
(``--model toy``), and two blocks that learned to copy a repeated phrase (``--model copy``).

The block is the one blockviz records (pre-norm LayerNorm, multi-head attention with the causal
mask, FFN, residuals), between learned token and position embeddings and a final LayerNorm and
unembedding (:mod:`blockviz.toy.model`). ``blockviz train`` trains it (:mod:`blockviz.toy.build`)
on the corpus of :mod:`blockviz.toy.corpus` (``--task copy``: the sequences of
:mod:`blockviz.toy.copying`) and writes a folder (:mod:`blockviz.toy.folder`); blockviz ships the
folders its defaults make, so ``--model toy`` and ``--model copy`` need no training and no network.

>>> from blockviz.toy.recording import record_toy                           # doctest: +SKIP
>>> rec = record_toy("The chicken didn't cross the road because it was too tired.")  # doctest: +SKIP
>>> rec.source.describe()                                                   # doctest: +SKIP
'trained: one block, … parameters, on 20,000 generated sentences, loss …'

Nothing here imports torch: resolving ``--model`` asks :func:`is_toy_model` first.
"""

from __future__ import annotations

import os
from pathlib import Path

TOY = "toy"
"""The name ``--model`` takes for the toy model shipped with blockviz."""
COPY = "copy"
"""The name ``--model`` takes for the two-block copy model shipped with blockviz (``blockviz train --task copy``)."""
CARD = "card.json"
"""The model card, the file that marks a toy model folder."""
PACKAGED = (
    Path(__file__).parent / "trained-model"
)  # not a name Python could import: setuptools ships it as data, without warning
"""The folder of the model shipped with blockviz (``--model toy``)."""
PACKAGED_COPY = Path(__file__).parent / "copy-model"
"""The folder of the copy model shipped with blockviz (``--model copy``)."""
SHIPPED = {TOY: PACKAGED, COPY: PACKAGED_COPY}
"""The shipped toy models by the name ``--model`` takes."""


def toy_folder(model: str | os.PathLike) -> Path:
    """The folder of toy model ``model``: ``"toy"`` and ``"copy"`` are the shipped ones, anything
    else a folder ``blockviz train`` wrote (checked when loaded, :func:`blockviz.toy.folder.load_toy`)."""
    return SHIPPED.get(str(model).strip().lower()) or Path(model).expanduser()


def is_toy_model(model: str | os.PathLike) -> bool:
    """Whether ``model`` names a toy model: ``"toy"``, ``"copy"``, or a folder holding a toy model card."""
    return str(model).strip().lower() in SHIPPED or (toy_folder(model) / CARD).is_file()
