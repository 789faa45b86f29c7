"""A copy model's training, as its card recorded it (``curve`` in ``card.json``, written by
``blockviz train --task copy``): at each checkpoint, the training loss and the copy measures on
the held-out sequences (:mod:`blockviz.toy.induction`). The one-block contrast ships as a card
of its own, :data:`ONE_BLOCK`, so the two-block model's curves can stand beside a real run of
one block trained the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError

ONE_BLOCK = Path(__file__).parent / "one-block-copy.json"
"""The card of ``blockviz train --task copy --blocks 1`` (the copy defaults, one block), its
``made`` entry saying how it was made: the one-block contrast of the copy-training figure."""


@dataclass(frozen=True)
class CopyCurve:
    """One copy model's training: ``blocks``, the checkpoints' ``steps``, the training ``losses``
    there (``None`` where not recorded: step 0), the copy ``accuracies`` (share of the held-out
    repeated words whose top prediction is the next word), and the largest ``induction`` score of
    any head of the last block at each step; ``about``, the card's line."""

    blocks: int
    steps: list[int]
    losses: list[float | None]
    accuracies: list[float]
    induction: list[float]
    about: str


def curve_of_card(card: dict, where: str) -> CopyCurve | None:
    """The :class:`CopyCurve` of a model card, ``None`` for a card of another task than copy.

    Raises :class:`BlockvizError` (naming ``where``) for a copy card without a readable curve.
    """
    if not isinstance(card, dict) or card.get("task") != "copy":
        return None
    try:
        points = card["curve"]
        return CopyCurve(
            int(card.get("blocks", 1)),
            [int(point["step"]) for point in points],
            [None if point["loss"] is None else float(point["loss"]) for point in points],
            [float(point["accuracy"]) for point in points],
            [max(float(score) for score in point["induction"][-1]) for point in points],
            str(card.get("about", "")),
        )
    except (KeyError, TypeError, ValueError, IndexError):
        raise BlockvizError(
            f"the copy model card {where!r} holds no readable training curve: write the folder again with blockviz train --task copy -o DIR"
        ) from None


def copy_curve(folder: str | Path | None) -> CopyCurve | None:
    """The curve of the toy model in ``folder`` (its ``card.json``), ``None`` when the folder has
    no card or its model was trained on another task.

    Raises :class:`BlockvizError` for a copy card without a readable curve.
    """
    if folder is None:
        return None
    path = Path(folder) / "card.json"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return curve_of_card(card, str(path))


def one_block_curve() -> CopyCurve:
    """The shipped one-block contrast's curve (:data:`ONE_BLOCK`)."""
    card = json.loads(ONE_BLOCK.read_text(encoding="utf-8"))
    curve = curve_of_card(card, str(ONE_BLOCK))
    assert curve is not None, "the shipped one-block card is a copy card"
    return curve


def one_block_made() -> str:
    """How the shipped one-block contrast was made (its card's ``made``)."""
    return str(json.loads(ONE_BLOCK.read_text(encoding="utf-8"))["made"])
