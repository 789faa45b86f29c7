"""The render pipeline: from a record and catalogued scene names to video (or PNG) files.

* :mod:`blockviz.render.plan` — what to render and where, and the keys that say whether a file
  is already up to date (no torch, no Manim);
* :mod:`blockviz.render.run` — the Manim run of each job (in parallel processes if asked), and
  the joining of a lecture's rendered parts;
* :mod:`blockviz.render.progress` — the progress bars on the terminal.

Imported by the CLI; imports scenes (and Manim) only inside the functions that render.
"""
