"""Inside the FFN, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/inside_ffn.py InsideFFN

The scene lives in :mod:`blockviz.scenes.inside_ffn`;
``blockviz render --scene ffn`` renders it too.
"""

from blockviz.scenes import inside_ffn


class InsideFFN(inside_ffn.InsideFFN):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
