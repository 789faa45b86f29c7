"""Manim scenes that animate a :class:`~blockviz.block_record.BlockRecord`'s real numbers.

* :mod:`~blockviz.scenes.text` — text, record numbers (with their source) and mathtext formulas;
* :mod:`~blockviz.scenes.grids` — number grids with elision, and the one moving highlight;
* :mod:`~blockviz.scenes.layout` — fitting mobjects into the frame;
* :mod:`~blockviz.scenes.look` — Manim sizes and the theme's colours (from :mod:`blockviz.style`);
* :mod:`~blockviz.scenes.base` — :class:`~blockviz.scenes.base.RecordScene`, the base of every scene;
* :mod:`~blockviz.scenes.shown` — what a scene shows of its record (focus, head, token names,
  colour scales), plain data without Manim; :mod:`~blockviz.scenes.token_axis` — the token
  axis's names and slots;
* :mod:`~blockviz.scenes.choreography` — functions returning the animations scenes are made of;
* :mod:`~blockviz.scenes.captions` — captions, their ``.srt`` log and their speech;
* :mod:`~blockviz.scenes.engine` — the overrides of Manim's engine that make renders fast;
* :mod:`~blockviz.scenes.catalog` — every renderable scene by name, in teaching order, found in
  the scene modules;
* one module per scene (``softmax.py`` …), stating its ``NAME``, ``ORDER``, ``DESCRIPTION``,
  ``CHAPTER`` and ``CAPTION``; the repository's top-level ``scenes/`` holds a thin file for each,
  runnable with ``manim -ql scenes/softmax.py Softmax``.

To add a scene: write its module here (a ``RecordScene`` subclass and those strings) and its thin
file ``scenes/<module>.py``; ``blockviz render`` then lists and renders it and the scene tests
build and check it (``docs/writing-a-scene.md``). Importing this package does not import Manim
(the CLI relies on it).
"""
