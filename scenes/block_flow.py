"""The block's flow, for the ``manim`` command, on the record of "the cat sat" (or the one saved at
``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/block_flow.py BlockFlow

The scene lives in :mod:`blockviz.scenes.block_flow`;
``blockviz render --scene block-flow`` renders it too.
"""

from blockviz.scenes import block_flow


class BlockFlow(block_flow.BlockFlow):
    """Defined here, not imported: ``manim`` renders only the scenes its file defines."""
