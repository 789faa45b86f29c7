"""Query, key, value, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/query_key_value.py QueryKeyValue

The scene lives in :mod:`blockviz.scenes.query_key_value`;
``blockviz render --scene qkv`` renders it too.
"""

from blockviz.scenes import query_key_value


class QueryKeyValue(query_key_value.QueryKeyValue):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
