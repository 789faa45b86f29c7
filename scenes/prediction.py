"""Prediction, for the ``manim`` command, on the trained toy model's record of "the cat sat" (or
the one saved at ``$BLOCKVIZ_RECORD``, if its block has an unembedding)::

    manim -ql scenes/prediction.py Prediction

The scene lives in :mod:`blockviz.scenes.prediction`;
``blockviz render --model toy --scene prediction`` renders it too.
"""

from blockviz.scenes import prediction


class Prediction(prediction.Prediction):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
