"""The one exception type the library raises for bad input."""


class BlockvizError(ValueError):
    """Bad input or an impossible request, explained in one line.

    The message names the problem and the fix, e.g.
    ``"d_model 5 is not divisible by n_heads 2: choose d_model = n_heads × d_head"``.
    The CLI turns it into a one-line error and a non-zero exit status.
    """
