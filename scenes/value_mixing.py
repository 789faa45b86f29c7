"""Value mixing, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/value_mixing.py ValueMixing

The scene lives in :mod:`blockviz.scenes.value_mixing`;
``blockviz render --scene value-mixing`` renders it too.
"""

from blockviz.scenes import value_mixing


class ValueMixing(value_mixing.ValueMixing):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
