"""Step-by-step slides from rendered scenes: one slide per step, its caption, why and numbers to read out as the notes.

* :mod:`~blockviz.slides.steps` — a scene's steps, from the captions its render logged;
* :mod:`~blockviz.slides.clips` — each step's clip, cut from the scene's video by copying packets;
* :mod:`~blockviz.slides.reveal` — the reveal.js deck (``slides.html``, offline);
* :mod:`~blockviz.slides.pptx_deck` — the PowerPoint deck (``slides.pptx``, python-pptx);
* :mod:`~blockviz.slides.manim_slides_json` — manim-slides' presentation file (``slides/Lecture.json``);
* :mod:`~blockviz.slides.deck` — all of them into one folder (:func:`~blockviz.slides.deck.write_deck`).

``blockviz slides`` renders the scenes (or reuses their renders) and calls ``write_deck``.
"""
