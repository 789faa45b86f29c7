"""Multi-head attention, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/multi_head.py MultiHead

The scene lives in :mod:`blockviz.scenes.multi_head`;
``blockviz render --scene multi-head`` renders it too.
"""

from blockviz.scenes import multi_head


class MultiHead(multi_head.MultiHead):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
