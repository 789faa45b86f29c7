"""A stack of blocks, for the ``manim`` command, on the copy model's record of "cat river lamp dog
cat river" (or a record of several blocks saved at ``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/stack.py Stack
"""

from blockviz.scenes import stack


class Stack(stack.Stack):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
