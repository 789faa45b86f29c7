"""A worked example, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/worked_example.py WorkedExample

The scene lives in :mod:`blockviz.scenes.worked_example`;
``blockviz render --scene worked-example`` renders it too.
"""

from blockviz.scenes import worked_example


class WorkedExample(worked_example.WorkedExample):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
