"""Tokens to grid, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/tokens_to_grid.py TokensToGrid

The scene lives in :mod:`blockviz.scenes.tokens_to_grid`;
``blockviz render --scene tokens`` renders it too.
"""

from blockviz.scenes import tokens_to_grid


class TokensToGrid(tokens_to_grid.TokensToGrid):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
