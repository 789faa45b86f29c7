"""Introduction, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/title_card.py TitleCard

The scene lives in :mod:`blockviz.scenes.title_card`;
``blockviz render --scene title`` renders it too.
"""

from blockviz.scenes import title_card


class TitleCard(title_card.TitleCard):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
