"""The induction head, for the ``manim`` command, on the copy model's record of "cat river lamp dog
cat river" (or a record of several blocks saved at ``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/induction.py Induction
"""

from blockviz.scenes import induction


class Induction(induction.Induction):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
