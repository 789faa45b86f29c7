"""The one exception type the library raises for bad input."""


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
