"""Manim scenes that animate a :class:`~blockviz.block_record.BlockRecord`'s real numbers.

* :mod:`~blockviz.scenes.text` — text, record numbers (with their source) and mathtext formulas;
* :mod:`~blockviz.scenes.grids` — number grids with elision, and the one moving highlight;
* :mod:`~blockviz.scenes.layout` — fitting mobjects into the frame;
* :mod:`~blockviz.scenes.look` — Manim sizes and the theme's colours (from :mod:`blockviz.style`);
* :mod:`~blockviz.scenes.base` — :class:`~blockviz.scenes.base.RecordScene`, the base of every scene;
* :mod:`~blockviz.scenes.catalog` — every renderable scene by name, in teaching order;
* one module per scene (``scenes/softmax.py`` …), each runnable with ``manim -ql scenes/<file>.py <Scene>``
  and stating its own ``DESCRIPTION``, ``CHAPTER`` and ``CAPTION``.

To add a scene: subclass ``RecordScene`` in a new file with those three strings, and add one
line to ``blockviz.scenes.catalog.CATALOG``; ``blockviz render`` then lists and renders it and
the scene tests value-check it. Importing this package does not import Manim (the CLI relies on it).
"""
