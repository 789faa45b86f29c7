"""A toy model on disk: the folder ``blockviz train -o DIR`` writes and ``--model DIR`` reads.

Files (every one but :data:`TIMING` the same bytes for the same options, on every x86-64 CPU
with AVX2 when torch is pinned, :mod:`blockviz.numerics`; else on one machine):

- ``model.safetensors`` — the parameters, under the names a record's ``params`` uses: the
  block's (``ln1.weight`` … ``ffn.b_out``; a model of several blocks, block K's as
  ``blocks.K.ln1.weight`` …), ``W_E`` ``(n_vocab, d_model)``, ``W_pos``
  ``(max_tokens, d_model)``, ``ln_f.weight``, ``ln_f.bias``, ``W_U`` ``(d_model, n_vocab)``;
- ``vocabulary.json`` — the words in id order, the unknown token first;
- ``card.json`` — the model card: what it is in one line (``about``), the config, sizes,
  steps, seed, the corpus recipe and grammar, the final loss, held-out accuracy, lesson figures
  (a copy model's: ``task`` ``"copy"``, ``blocks``, the sequences' recipe and the copy measures,
  :mod:`blockviz.toy.induction`; a card without ``blocks`` is of one block);
- ``checkpoints.safetensors`` — the attention weights ``(n_heads, n, n)`` of each lesson
  sentence at a few steps of training (``step<S>.<lesson>``; a copy model's lessons are the copy
  lesson's weights in each block, ``copy_block<K>``), the steps and losses in its metadata;
- ``timing.json`` — seconds of wall-clock and CPU time the training took (differs every run).

The folder is written whole into a temporary folder beside it and renamed into place, so an
interrupted write leaves the old folder (or none), never half a model.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from blockviz.block_config import BlockConfig
from blockviz.errors import BlockvizError, quoted
from blockviz.files import temporary_folder, writable_folder, writing
from blockviz.ownership import refuse_foreign, remember
from blockviz.source import CHECKPOINTS
from blockviz.toy import CARD
from blockviz.toy.model import ToyModel, file_shapes
from blockviz.toy.vocabulary import Vocabulary

FORMAT = "blockviz-toy/1"
WEIGHTS = "model.safetensors"
VOCABULARY = "vocabulary.json"
TIMING = "timing.json"
REPRODUCIBLE_FILES = (WEIGHTS, VOCABULARY, CARD, CHECKPOINTS)
"""The files retraining with the same options writes byte for byte (on any x86-64 CPU with AVX2, pinned)."""
MAX_BLOCKS = 8
"""Most blocks a toy model folder may have (``blockviz train --blocks``)."""
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

    @property
    def n_blocks(self) -> int:
        return self.model.n_blocks


def _json(path: Path, what: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BlockvizError(
            f"the toy model folder {str(path.parent)!r} has no {path.name}: write the folder again with blockviz train -o DIR"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        reason = "nested too deep" if isinstance(error, RecursionError) else type(error).__name__
        raise BlockvizError(
            f"cannot read the {what} {str(path)!r} ({reason}): write the folder again with blockviz train -o DIR"
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
    n_blocks = _blocks(card, folder)
    tensors = _tensors(folder / WEIGHTS)
    where = f"the toy model {str(folder / WEIGHTS)!r}"
    shapes = file_shapes(config, n_blocks)
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
    model = ToyModel(config, seeded=False, n_blocks=n_blocks)
    model.load_parameters(tensors)
    return ToyFolder(model.eval(), vocabulary, card, folder)


def _blocks(card: dict, folder: Path) -> int:
    """The number of blocks the card gives (``blocks``; a card without it is the one-block toy's)."""
    blocks = card.get("blocks", 1)
    if type(blocks) is not int or not 1 <= blocks <= MAX_BLOCKS:
        raise BlockvizError(
            f"the card {str(folder / CARD)!r} gives {blocks!r} blocks, not a whole number from 1 to {MAX_BLOCKS}: "
            "write the folder again with blockviz train -o DIR"
        )
    return blocks


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
    """``folder`` if a model can be written there: new, empty, or a folder of files blockviz
    wrote (:mod:`blockviz.ownership`; a model folder blockviz train wrote is replaced). Nothing is
    created.

    Raises
    ------
    BlockvizError
        If part of the path is a file, a name in it is too long, the folder holds a file blockviz
        did not write (a ``card.json`` alone does not make a model folder), or its parent is not
        writable.
    """
    folder = Path(folder)
    with writing(folder, "create folder"):  # a name too long fails already here
        blocking = next((part for part in (folder, *folder.parents) if part.exists() and not part.is_dir()), None)
    if blocking is not None:
        raise BlockvizError(f"{str(blocking)!r} is a file, not a folder: choose another output folder")
    refuse_foreign([folder])
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
            remember([fresh])
            os.chmod(fresh, 0o755)
            refuse_foreign([folder])  # a file the user put there while the model trained
            if folder.exists():
                old = staging / "old"
                os.replace(folder, old)
            os.replace(fresh, folder)
    return folder


def read_checkpoints(folder: str | os.PathLike) -> dict:
    """The training checkpoints in ``folder``: ``{"steps": [...], "losses": [...], "lessons":
    {name: sentence}, "weights": {step: {lesson: (n_heads, n, n)}}}``; every step of ``steps``
    has weights, every loss is a finite number or ``None`` (not recorded), every weight a
    number from 0 to 1.

    Raises
    ------
    BlockvizError
        If the file is missing, unreadable or damaged: its metadata not the steps, losses and
        lessons, a table's name not ``step<S>.<lesson>``, a weight not a number from 0 to 1
        (NaN included). One line naming the file, with the fix.
    """
    from safetensors import SafetensorError, safe_open

    path = Path(folder) / CHECKPOINTS
    if not path.is_file():
        raise BlockvizError(
            f"the toy model folder {str(path.parent)!r} has no {CHECKPOINTS}: write the folder again with blockviz train -o DIR"
        )

    def damaged(problem: str) -> BlockvizError:
        return BlockvizError(
            f"the training checkpoints {str(path)!r} {problem}: write the folder again with blockviz train -o DIR"
        )

    try:
        with safe_open(str(path), framework="pt") as handle:
            meta = _checkpoint_meta((handle.metadata() or {}).get("blockviz"), damaged)
            weights: dict[int, dict[str, torch.Tensor]] = {}
            for name in handle.keys():
                match = re.fullmatch(r"step([0-9]+)\.(.+)", name)
                if match is None:
                    raise damaged(f"hold a table {quoted(name)}, not named step<S>.<lesson>")
                weights.setdefault(int(match[1]), {})[match[2]] = _attention_weights(
                    handle.get_tensor(name), name, damaged
                )
    except (SafetensorError, OSError, RuntimeError) as error:
        raise damaged(f"cannot be read ({type(error).__name__})") from None
    missing = [step for step in meta["steps"] if step not in weights]
    if missing:
        raise damaged(f"hold no weights for step {missing[0]}")
    return {**meta, "weights": weights}


def _checkpoint_meta(text, damaged) -> dict:
    """The checkpoints' metadata (the JSON under ``blockviz``), checked: ``steps`` whole numbers,
    ``losses`` one per step, each finite or ``None``, ``lessons`` names to sentences."""
    try:
        meta = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict):
        raise damaged("hold no steps, losses and lessons in their metadata")
    steps, losses, lessons = meta.get("steps"), meta.get("losses"), meta.get("lessons", {})
    if not isinstance(steps, list) or not steps or not all(type(step) is int and step >= 0 for step in steps):
        raise damaged("hold no list of training steps in their metadata")
    if losses is not None and (
        not isinstance(losses, list)
        or len(losses) != len(steps)
        or not all(loss is None or (type(loss) in (int, float) and math.isfinite(loss)) for loss in losses)
    ):
        raise damaged("hold losses that are not one finite number (or null) per step")
    if not isinstance(lessons, dict) or not all(isinstance(value, str) for value in lessons.values()):
        raise damaged("hold lessons that are not names and sentences")
    return meta


def _attention_weights(tensor: torch.Tensor, name: str, damaged) -> torch.Tensor:
    """``tensor`` if it is attention weights ``(n_heads, n, n)``, each a number from 0 to 1."""
    if tensor.ndim != 3 or tensor.shape[1] != tensor.shape[2] or not tensor.is_floating_point():
        raise damaged(f"hold {quoted(name)} of shape {list(tensor.shape)}, not attention weights (n_heads, n, n)")
    if not bool(((tensor >= 0) & (tensor <= 1)).all()):  # NaN fails both
        raise damaged(f"hold {quoted(name)} with weights that are not numbers from 0 to 1 (NaN or out of range)")
    return tensor
