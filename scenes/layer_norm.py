"""LayerNorm, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/layer_norm.py LayerNormRow

The scene lives in :mod:`blockviz.scenes.layer_norm`;
``blockviz render --scene layer-norm`` renders it too.
"""

from blockviz.scenes import layer_norm


class LayerNormRow(layer_norm.LayerNormRow):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
