"""Dot products, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/dot_products.py DotProducts

The scene lives in :mod:`blockviz.scenes.dot_products`;
``blockviz render --scene dot-products`` renders it too.
"""

from blockviz.scenes import dot_products


class DotProducts(dot_products.DotProducts):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
