"""The logit lens, for the ``manim`` command, on the copy model's record of "cat river lamp dog cat
river" (or a record of several blocks saved at ``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/logit_lens.py LogitLens
"""

from blockviz.scenes import logit_lens


class LogitLens(logit_lens.LogitLens):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
