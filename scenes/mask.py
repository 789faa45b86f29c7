"""The causal mask, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/mask.py Mask

The scene lives in :mod:`blockviz.scenes.mask`;
``blockviz render --scene mask`` renders it too.
"""

from blockviz.scenes import mask


class Mask(mask.Mask):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
