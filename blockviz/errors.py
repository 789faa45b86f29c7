"""The one exception type the library raises for bad input, and the checks of plain values that raise it."""

from __future__ import annotations

from dataclasses import fields


class BlockvizError(ValueError):
    """Bad input or an impossible request, explained in one line.

    The message names the problem and the fix, e.g.
    ``"d_model 5 is not divisible by n_heads 2: choose d_model = n_heads × d_head"``.
    The CLI turns it into a one-line error and a non-zero exit status.
    """


QUOTED_MOST = 60
"""The most characters of a user's text a message quotes (the rest is an ellipsis)."""


def quoted(text: str, most: int = QUOTED_MOST) -> str:
    """``text`` quoted for a one-line message (:func:`repr`), cut to ``most`` characters and an
    ellipsis when longer, so a pasted page never fills the terminal.

    >>> quoted("cat")
    "'cat'"
    >>> quoted("a" * 100, most=5)
    "'aaaa…'"
    """
    return repr(text if len(text) <= most else text[: most - 1] + "\u2026")


def did_you_mean(name: str, choices) -> str:
    """``"did you mean 'x'? "`` for the choice closest to a mistyped ``name``
    (:func:`difflib.get_close_matches`), or ``""`` when none is close; a message puts it before
    its list of choices.

    >>> did_you_mean("weigths", ("mask", "weights"))
    "did you mean 'weights'? "
    >>> did_you_mean("zzz", ("mask", "weights"))
    ''
    """
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def from_fields(cls, data, what: str):
    """``cls(**data)`` for a dict of ``cls``'s field names; anything else raises :class:`BlockvizError`
    naming ``what`` (``"config"``, ``"source"``)."""
    if not isinstance(data, dict):
        raise BlockvizError(f"the {what} must be an object of named fields, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BlockvizError(f"unknown {what} field {unknown[0]!r}: known fields are {', '.join(sorted(known))}")
    return cls(**data)


def check_choice(field: str, value: str, choices: tuple[str, ...]) -> None:
    """Raise :class:`BlockvizError` naming ``field`` and its ``choices`` unless ``value`` is one of them."""
    if not isinstance(value, str) or value not in choices:
        raise BlockvizError(f"{field} must be one of {', '.join(choices)}, got {value!r}")
