"""A toy model on disk: the folder ``blockviz train -o DIR`` writes and ``--model DIR`` reads.

Files (every one but :data:`TIMING` the same bytes for the same options, on one machine):

- ``model.safetensors`` — the parameters, under the names a record's ``params`` uses: the
  block's (``ln1.weight`` … ``ffn.b_out``), ``W_E`` ``(n_vocab, d_model)``, ``W_pos``
  ``(max_tokens, d_model)``, ``ln_f.weight``, ``ln_f.bias``, ``W_U`` ``(d_model, n_vocab)``;
- ``vocabulary.json`` — the words in id order, the unknown token first;
- ``card.json`` — the model card: what it is in one line (``about``), the config, sizes,
  steps, seed, the corpus recipe and grammar, the final loss, held-out accuracy, lesson figures;
- ``checkpoints.safetensors`` — the attention weights ``(n_heads, n, n)`` of each lesson
  sentence at a few steps of training (``step<S>.<lesson>``), the steps and losses in its metadata;
- ``timing.json`` — seconds of wall-clock and CPU time the training took (differs every run).

The folder is written whole into a temporary folder beside it and renamed into place, so an
interrupted write leaves the old folder (or none), never half a model.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from blockviz.config import BlockConfig
from blockviz.errors import BlockvizError
from blockviz.files import temporary_folder, writable_folder, writing
from blockviz.params import parameter_shapes
from blockviz.toy import CARD, CHECKPOINTS, is_toy_model
from blockviz.toy.model import ToyModel
from blockviz.toy.vocabulary import Vocabulary

FORMAT = "blockviz-toy/1"
WEIGHTS = "model.safetensors"
VOCABULARY = "vocabulary.json"
TIMING = "timing.json"
REPRODUCIBLE_FILES = (WEIGHTS, VOCABULARY, CARD, CHECKPOINTS)
"""The files retraining with the same options writes byte for byte (on one machine)."""
CONFIG_KEYS = ("d_model", "n_heads", "d_ff", "activation", "ln_eps", "seed", "max_tokens", "vocab_size")


@dataclass(frozen=True, eq=False)
class ToyFolder:
    """A loaded toy model: ``model`` (eval mode), ``vocabulary``, the ``card`` and the ``folder``."""

    model: ToyModel
    vocabulary: Vocabulary
    card: dict
    folder: Path

    @property
    def config(self) -> BlockConfig:
        return self.model.config


def _json(path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BlockvizError(
            f"the toy model folder {str(path.parent)!r} has no {path.name}: write the folder again with blockviz train -o DIR"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BlockvizError(
            f"cannot read the {what} {str(path)!r} ({type(error).__name__}): write the folder again with blockviz train -o DIR"
        ) from None


def load_toy(folder: str | os.PathLike) -> ToyFolder:
    """Read and check the toy model in ``folder``; the result is kept per process (keyed by the
    folder and its files' modification times).

    Raises
    ------
    BlockvizError
        If a file is missing or unreadable, the card is not a blockviz toy model's, the
        vocabulary is malformed, or a table is missing, extra, of another shape (naming it,
        expected and got: the vocabulary's size decides ``W_E`` and ``W_U``), not float32, or
        not finite.
    """
    folder = Path(folder)
    stamps = tuple(_stamp(folder / name) for name in (CARD, VOCABULARY, WEIGHTS))
    return _load(folder.resolve(), stamps)


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


@lru_cache(maxsize=4)
def _load(folder: Path, stamps) -> ToyFolder:
    card = _json(folder / CARD, "model card")
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise BlockvizError(
            f"{str(folder / CARD)!r} is not a blockviz toy model card (format {FORMAT}): write the folder again with blockviz train -o DIR"
        )
    words = _json(folder / VOCABULARY, "vocabulary")
    if not isinstance(words, list):
        raise BlockvizError(
            f"the vocabulary {str(folder / VOCABULARY)!r} is not a list of words: write the folder again with blockviz train -o DIR"
        )
    vocabulary = Vocabulary(tuple(words))
    config = _config(card, folder)
    if config.vocab_size != vocabulary.size:
        raise BlockvizError(
            f"the toy model in {str(folder)!r} has {vocabulary.size} words in {VOCABULARY} but its card says {config.vocab_size}: "
            "write the folder again with blockviz train -o DIR"
        )
    tensors = _tensors(folder / WEIGHTS)
    where = f"the toy model {str(folder / WEIGHTS)!r}"
    shapes = parameter_shapes(config)
    extra = sorted(set(tensors) - set(shapes))
    if extra:
        raise BlockvizError(
            f"{where} has an unknown table {extra[0]!r}: write the folder again with blockviz train -o DIR"
        )
    for name, shape in shapes.items():
        tensor = tensors.get(name)
        if tensor is None:
            raise BlockvizError(f"{where} has no table {name!r}: write the folder again with blockviz train -o DIR")
        if tuple(tensor.shape) != shape:
            because = f" for the vocabulary's {vocabulary.size} words" if name in ("W_E", "W_U") else ""
            raise BlockvizError(
                f"table {name!r} in {where} has shape {list(tensor.shape)}, expected {list(shape)}{because}: write the folder again with blockviz train -o DIR"
            )
        if tensor.dtype != torch.float32 or not bool(torch.isfinite(tensor).all()):
            raise BlockvizError(
                f"table {name!r} in {where} is not finite float32 numbers: write the folder again with blockviz train -o DIR"
            )
    model = ToyModel(config, seeded=False)
    model.load_parameters(tensors)
    return ToyFolder(model.eval(), vocabulary, card, folder)


def _config(card: dict, folder: Path) -> BlockConfig:
    data = card.get("config")
    if not isinstance(data, dict) or any(key not in data for key in CONFIG_KEYS):
        raise BlockvizError(
            f"the card {str(folder / CARD)!r} lacks the model's config ({', '.join(CONFIG_KEYS)}): write the folder again with blockviz train -o DIR"
        )
    try:
        return BlockConfig(positional="learned", **{key: data[key] for key in CONFIG_KEYS})
    except (BlockvizError, TypeError) as error:
        raise BlockvizError(f"the card {str(folder / CARD)!r} holds a bad config: {error}") from None


def _tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not path.is_file():
        raise BlockvizError(
            f"the toy model folder {str(path.parent)!r} has no {path.name}: write the folder again with blockviz train -o DIR"
        )
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise BlockvizError(
            f"cannot read the toy model's weights {str(path)!r} ({type(error).__name__}): write the folder again with blockviz train -o DIR"
        ) from None


def check_output_folder(folder: str | os.PathLike) -> Path:
    """``folder`` if a model can be written there: new, empty, or a toy model folder (which is
    replaced). Nothing is created.

    Raises
    ------
    BlockvizError
        If part of the path is a file, the folder holds other files, or its parent is not writable.
    """
    folder = Path(folder)
    blocking = next((part for part in (folder, *folder.parents) if part.exists() and not part.is_dir()), None)
    if blocking is not None:
        raise BlockvizError(f"{str(blocking)!r} is a file, not a folder: choose another output folder")
    if folder.is_dir() and any(folder.iterdir()) and not is_toy_model(folder):
        raise BlockvizError(
            f"{str(folder)!r} holds other files: choose a new or empty folder (a folder blockviz train wrote is replaced)"
        )
    parent = next(part for part in folder.parents if part.exists()) if not folder.exists() else folder.parent
    writable_folder(parent)
    return folder


def write_folder(folder: str | os.PathLike, files: dict[str, bytes]) -> Path:
    """Write ``files`` (name → bytes) as the folder ``folder``, whole or not at all: into a
    temporary folder beside it, then renamed into place (a toy model folder already there is
    replaced).

    Raises :class:`BlockvizError` as :func:`check_output_folder`, or when writing fails.
    """
    folder = check_output_folder(folder)
    parent = folder.parent
    with temporary_folder(parent, f".{folder.name}-") as staging:
        with writing(folder):
            fresh = staging / "model"
            fresh.mkdir()
            for name, data in files.items():
                (fresh / name).write_bytes(data)
                os.chmod(fresh / name, 0o644)
            os.chmod(fresh, 0o755)
            if folder.exists():
                old = staging / "old"
                os.replace(folder, old)
            os.replace(fresh, folder)
    return folder


def read_checkpoints(folder: str | os.PathLike) -> dict:
    """The training checkpoints in ``folder``: ``{"steps": [...], "losses": [...], "lessons":
    {name: sentence}, "weights": {step: {lesson: (n_heads, n, n)}}}``.

    Raises :class:`BlockvizError` if the file is missing or unreadable.
    """
    from safetensors import safe_open

    path = Path(folder) / CHECKPOINTS
    if not path.is_file():
        raise BlockvizError(
            f"the toy model folder {str(path.parent)!r} has no {CHECKPOINTS}: write the folder again with blockviz train -o DIR"
        )
    with safe_open(str(path), framework="pt") as handle:
        meta = json.loads(handle.metadata()["blockviz"])
        weights: dict[int, dict[str, torch.Tensor]] = {}
        for name in handle.keys():
            step, lesson = name.split(".", 1)
            weights.setdefault(int(step.removeprefix("step")), {})[lesson] = handle.get_tensor(name)
    return {**meta, "weights": weights}
