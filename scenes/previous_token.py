"""Block 0's previous-token head, for the ``manim`` command, on the copy model's record of "cat
river lamp dog cat river" (or a record of several blocks saved at ``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/previous_token.py PreviousToken
"""

from blockviz.scenes import previous_token


class PreviousToken(previous_token.PreviousToken):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
