"""Which layers of a trained model a record holds: one (``3``), every one (``"all"``), or a
range (``"0-3"``, both ends included), as ``--layer`` takes them."""

from __future__ import annotations

import re

from blockviz.errors import BlockvizError

ALL = "all"
"""``--layer all``: every layer of the model, one record of a stack of blocks."""

_RANGE = re.compile(r"(\d+)-(\d+)")


def parse_layers(text) -> int | str:
    """``text`` as a layer choice: a whole number ≥ 0 (one layer) as an ``int``, ``"all"``, or a
    range ``"A-B"`` with A ≤ B, as given.

    >>> parse_layers("3"), parse_layers("all"), parse_layers("0-3")
    (3, 'all', '0-3')

    Raises
    ------
    BlockvizError
        For anything else (a negative layer, a range whose end comes before its start).
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise BlockvizError(f"layer {text} is not a layer: layers are numbered from 0")
        return text
    given = str(text).strip().lower()
    if given.isdigit():
        return int(given)
    if given == ALL:
        return ALL
    found = _RANGE.fullmatch(given)
    if found is None:
        raise BlockvizError(f"{text!r} is not a layer: give a layer from 0 (3), a range (0-3) or all")
    first, last = int(found[1]), int(found[2])
    if last < first:
        raise BlockvizError(
            f"the range {text!r} ends before it starts: give the first layer first (e.g. {last}-{first})"
        )
    return f"{first}-{last}"


def is_several(choice) -> bool:
    """Whether ``choice`` (:func:`parse_layers`) may ask for more than one layer: ``"all"`` or a range."""
    return isinstance(choice, str)


def chosen_layers(choice, n_layers: int, name: str) -> range:
    """The layers ``choice`` (:func:`parse_layers`) asks for of a model of ``n_layers`` layers
    (named ``name`` in messages), in order.

    >>> chosen_layers("all", 6, "minilm"), chosen_layers("2-3", 6, "minilm"), chosen_layers(4, 6, "minilm")
    (range(0, 6), range(2, 4), range(4, 5))

    Raises :class:`BlockvizError` for a layer the model lacks.
    """
    choice = parse_layers(choice)
    if choice == ALL:
        return range(n_layers)
    if isinstance(choice, int):
        first = last = choice
    else:
        first, last = (int(part) for part in choice.split("-"))
    if last >= n_layers:
        raise BlockvizError(f"layer {last} is out of range: {name} has layers 0 to {n_layers - 1}")
    return range(first, last + 1)
