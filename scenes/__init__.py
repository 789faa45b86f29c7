"""Manim scenes that animate a :class:`~blockviz.block_record.BlockRecord`'s real numbers.

* :mod:`scenes.helpers` — drawing objects (number grids with elision, highlight, mathtext formulas);
* :mod:`scenes.look` — Manim sizes and the theme's colours (from :mod:`blockviz.style`);
* :mod:`scenes.base` — :class:`~blockviz.scenes.base.RecordScene`, the base of every scene;
* :mod:`scenes.catalog` — every renderable scene by name, in teaching order;
* one module per scene (``scenes/softmax.py`` …), each runnable with ``manim -ql scenes/<file>.py <Scene>``.

To add a scene: subclass ``RecordScene`` in a new file and append a ``SceneEntry`` to
``scenes.catalog.CATALOG``; ``blockviz render`` then lists and renders it.
Importing this package does not import Manim (the CLI relies on it).
"""
