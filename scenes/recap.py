"""Recap, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/recap.py Recap

The scene lives in :mod:`blockviz.scenes.recap`;
``blockviz render --scene recap`` renders it too.
"""

from blockviz.scenes import recap


class Recap(recap.Recap):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
