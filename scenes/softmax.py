"""Softmax, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/softmax.py Softmax

The scene lives in :mod:`blockviz.scenes.softmax`;
``blockviz render --scene softmax`` renders it too.
"""

from blockviz.scenes import softmax


class Softmax(softmax.Softmax):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
