"""A scene's captions and their speech: the caption at the bottom of the frame, logged with its
time for the ``.srt``, and spoken with an offline voice when the scene is narrated (``--narrate``).

Each function takes the :class:`~blockviz.scenes.base.RecordScene`, whose attributes hold the
state: ``caption`` (the caption drawn), ``captions`` (``(scene time, caption)`` as each
appears), ``burned_captions``, ``voice`` (a :class:`blockviz.narration.voice.Voice` or ``None``),
``speech_ends`` and ``unspeakable`` (characters the voice read as "a token").
"""

from __future__ import annotations

from collections.abc import Iterable

from manim import DOWN, UP, config

from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.layout import frame_text_width, wrapped
from blockviz.scenes.light_timing import CAPTION_IN, caption_in, caption_out
from blockviz.scenes.look import CAPTION_SIZE, FRAME_MARGIN

SPEECH_PAUSE = 0.5
"""Seconds of silence after a caption's speech before the next caption (narrated scenes)."""
CAPTION_GAP = 0.25
"""Between a caption's top and the lowest part of the layout above it."""
WORDS_PER_SECOND = 4.0
"""How fast a viewer reads a caption: 240 words a minute, adults' average silent reading (238, Brysbaert
2019); with :data:`READING_START`, a caption of 12 words (~70 characters) stays up 3.6 s, about the
20 characters a second subtitling guides allow adults (Netflix, English). Was 3: scenes of nine
captions ran to 50–55 s."""
READING_START = 0.6
"""Seconds a viewer takes to find a new caption before reading it."""
SHORTEST_HOLD = 1.0
"""The least a step holds still after its play, however short its caption."""


def reading_time(shown: str) -> float:
    """Seconds to read caption ``shown``: :data:`READING_START` plus its words (numbers and
    symbols count as words) at :data:`WORDS_PER_SECOND`."""
    return READING_START + len(shown.split()) / WORDS_PER_SECOND


def reading_hold(shown: str, run_time: float) -> float:
    """The hold after a step of ``run_time`` seconds whose caption is ``shown``: its caption, in
    by :data:`~blockviz.scenes.light_timing.CAPTION_IN` of the play, stays up for its
    :func:`reading_time` — at least :data:`SHORTEST_HOLD` (issue 36: every step held 2.5 s,
    "its mean, μ" as long as a sentence of twenty words)."""
    return max(SHORTEST_HOLD, reading_time(shown) - (1 - CAPTION_IN) * run_time)


def head_caption_band(scene) -> float:
    """The height, from the frame's bottom, of the caption that says why ``--head auto`` chose
    the shown head (:meth:`~blockviz.scenes.shown.Shown.head_sentence`; often two lines) with a
    gap above it, if this scene will say it; else 0 (scene units)."""
    shown = scene.head_sentence(noted=False) if scene.shows_one_head and not scene.head_said else None
    return caption_band(scene, [] if shown is None else [shown])


def caption_band(scene, said: Iterable[str]) -> float:
    """The height, from the frame's bottom, of the tallest of captions ``said`` as :func:`say`
    draws them (one line, or two when one is too long) with a gap above it; 0 for none, or
    without burned captions (scene units)."""
    if not scene.burned_captions:
        return 0.0
    heights = [wrapped(shown, CAPTION_SIZE, scene.look.text, frame_text_width()).height for shown in said]
    return max(heights) + FRAME_MARGIN + CAPTION_GAP if heights else 0.0


def say(scene, shown: str) -> list:
    """Animations replacing the caption at the bottom of the frame with ``shown`` (on two
    lines if one is too long; never shrunk). ``caption.shown`` is the whole sentence. Without
    burned captions, only logged: no animation. With a ``scene.voice``, the caption is spoken
    as it appears (:func:`speak`)."""
    speak(scene, shown)
    if not scene.burned_captions:
        scene.captions.append((scene.renderer.time, shown))
        return []
    new = wrapped(shown, CAPTION_SIZE, scene.look.text, frame_text_width())
    new.to_edge(DOWN, buff=FRAME_MARGIN)
    new.is_caption = True
    old, scene.caption = scene.caption, new
    scene.captions.append((scene.renderer.time, shown))
    if old is None:
        return [FadeIn(new, shift=UP * 0.2, rate_func=caption_in)]
    return [FadeOut(old, shift=UP * 0.2, rate_func=caption_out), FadeIn(new, shift=UP * 0.2, rate_func=caption_in)]


def speak(scene, shown: str) -> None:
    """Speak caption ``shown`` with ``scene.voice`` from now (nothing without a voice, or while
    plays are skipped): first hold the picture until the previous caption's speech and its
    :data:`SPEECH_PAUSE` have ended, so two captions are never spoken at once and each step
    lasts max(its animation and hold, its speech + the pause)."""
    if scene.voice is None or scene.renderer.skip_animations:
        return
    from pydub import AudioSegment

    from blockviz.narration.spoken import spoken, unspeakable

    hold_until(scene, scene.speech_ends)
    scene.unspeakable += [char for char in unspeakable(shown) if char not in scene.unspeakable]
    speech = scene.voice.speak(spoken(shown))
    if len(speech.samples):
        segment = AudioSegment(speech.samples.tobytes(), sample_width=2, frame_rate=speech.rate, channels=1)
        # pydub places a sound at a whole millisecond, truncating: the clock's 13.99999… s
        # would start the speech a millisecond before its step's first frame
        scene.renderer.file_writer.add_audio_segment(segment, round(scene.renderer.time, 3))
    scene.speech_ends = scene.renderer.time + speech.seconds + SPEECH_PAUSE


def finish_speech(scene) -> None:
    """The last caption's speech ends before the scene does, and the sound lasts as long as the picture."""
    if scene.voice is None or scene.renderer.skip_animations:
        return
    from pydub import AudioSegment

    hold_until(scene, scene.speech_ends)
    scene.renderer.file_writer.add_audio_segment(AudioSegment.silent(0), round(scene.renderer.time, 3))


def hold_until(scene, moment: float) -> None:
    """Hold the picture still until ``moment`` (seconds from the scene's start), if it is
    later than now: at least one frame, as Manim would round a shorter wait up to (with a
    warning of six lines)."""
    if scene.renderer.time < moment:
        scene.wait(max(moment - scene.renderer.time, 1 / config.frame_rate))
