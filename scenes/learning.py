"""Learning, for the ``manim`` command, on the shipped toy model's record of its lesson sentence
(or the one saved at ``$BLOCKVIZ_RECORD``: a record of a model ``blockviz train`` wrote)::

    manim -ql scenes/learning.py Learning

The scene lives in :mod:`blockviz.scenes.learning`;
``blockviz render --scene learning --model toy`` renders it too.
"""

from blockviz.scenes import learning


class Learning(learning.Learning):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
