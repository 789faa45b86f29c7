"""Causal vs bidirectional, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/causal_vs_bidirectional.py CausalVsBidirectional

The scene lives in :mod:`blockviz.scenes.causal_vs_bidirectional`;
``blockviz render --scene causal-vs-bidirectional`` renders it too.
"""

from blockviz.scenes import causal_vs_bidirectional


class CausalVsBidirectional(causal_vs_bidirectional.CausalVsBidirectional):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
