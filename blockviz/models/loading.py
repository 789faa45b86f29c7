"""Loading a model and its tokenizer with ``transformers``: offline unless a hub id is named,
never unpickling unless asked, GGUF files through blockviz's cache.

Optional packages (``pip install 'blockviz[models]'``): ``transformers`` for every model,
``gguf`` and ``accelerate`` for GGUF files. A missing one is a one-line error naming the pip line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import logging
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from blockviz.errors import BlockvizError
from blockviz.models.cache import cached_gguf
from blockviz.models.families import Family, family_of
from blockviz.models.resolve import ModelLocation, resolve_model

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
"""Weight files that are Python pickles (loading one can run any code)."""


@dataclass(frozen=True, eq=False)
class LoadedModel:
    """A loaded base model (no task head) in eval mode, eager attention, and what it is.

    ``model``: the ``transformers`` base model (``GPT2Model``, ``BertModel``, ``LlamaModel``);
    ``tokenizer``: its fast tokenizer; ``family``: :class:`~blockviz.models.families.Family`;
    ``location``: where it came from; ``dtype``: ``"float32"`` or ``"float64"``; ``note``: a line
    on its weights (e.g. GGUF quantisation), or ``None``.
    """

    model: object
    tokenizer: object
    family: Family
    location: ModelLocation
    dtype: str
    note: str | None

    @property
    def n_layers(self) -> int:
        """Number of layers (blocks)."""
        return len(self.family.layers(self.model))

    def check_layer(self, layer) -> int:
        """``layer`` if it is one of this model's (0-based).

        Raises :class:`BlockvizError` naming the range otherwise.
        """
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < self.n_layers:
            raise BlockvizError(
                f"layer {layer!r} is out of range: {self.location.name} has layers 0 to {self.n_layers - 1}"
            )
        return layer


def finite_weights(loaded: LoadedModel) -> bool:
    """``True`` once every weight of ``loaded`` is known finite: read once per loaded model (its
    weights never change), so that each record of its layers need not read them again
    (:meth:`blockviz.read_only.ReadOnlyTensors.sharing`).

    Raises :class:`BlockvizError` naming the first weight that holds NaN or ∞.
    """
    return _finite_weights(loaded)


@lru_cache(maxsize=2)
def _finite_weights(loaded: LoadedModel) -> bool:
    from blockviz.params import is_finite

    for name, parameter in loaded.model.named_parameters():
        if not is_finite(parameter.detach()):
            raise BlockvizError(
                f"{loaded.location.name!r}'s weight {name} holds NaN or ∞: its files are damaged; install or download it again"
            )
    return True


def require(module: str, pip: str) -> None:
    """Raise :class:`BlockvizError` naming ``pip`` unless ``module`` is installed (found without importing it)."""
    if importlib.util.find_spec(module) is None:
        raise BlockvizError(f"recording a trained model needs the {module} package: {pip}")


def load_model(model: str | Path, trust_pickle: bool = False, dtype: str = "float32") -> LoadedModel:
    """Load ``model`` (a packaged name, a folder or a hub id: :func:`~blockviz.models.resolve.resolve_model`)
    for recording, once per process (later calls return the same object).

    ``dtype`` ``"float32"`` or ``"float64"``: the weights are converted to it (a GGUF file's are
    first dequantised to float32).

    Raises
    ------
    BlockvizError
        For an unknown model or a folder that is not one, a family other than GPT-2, BERT,
        Llama, weights only in a pickle (``pytorch_model.bin``) without ``trust_pickle``, a
        missing optional package (naming its pip line), or files ``transformers`` cannot read.
    """
    location = resolve_model(model)
    return _load(location, bool(trust_pickle), dtype)


@lru_cache(maxsize=2)
def _load(location: ModelLocation, trust_pickle: bool, dtype: str) -> LoadedModel:
    if location.toy:
        raise BlockvizError(
            f"{location.name!r} is blockviz's trained toy block, not a transformers model: record it with blockviz record … --model {location.name}"
        )
    require("transformers", "pip install transformers  (or pip install 'blockviz[models]')")
    if dtype not in ("float32", "float64"):
        raise BlockvizError(f"dtype must be float32 or float64, got {dtype!r}")
    note = None
    folder = location.folder
    if location.gguf_file is not None:
        require("gguf", "pip install gguf accelerate")
        require("accelerate", "pip install accelerate")
        folder = cached_gguf(folder / location.gguf_file, lambda target: _convert_gguf(location, target))
        note = f"the weights of the {_quantisation(location.gguf_file)} quantisation ({location.gguf_file}), dequantised to float32"
    reference = str(folder) if folder is not None else location.hub_id
    offline = location.hub_id is None
    with _quiet():
        from transformers import AutoConfig

        try:
            hf_config = AutoConfig.from_pretrained(reference, local_files_only=offline)
        except (OSError, ValueError, KeyError) as error:
            raise BlockvizError(f"cannot read the model config of {location.name!r}: {_first_line(error)}") from None
    family = family_of(getattr(hf_config, "model_type", None))
    use_safetensors = None if trust_pickle else True
    if folder is not None and not trust_pickle:
        _refuse_pickles(folder, location.name)
    with _quiet():
        from transformers import AutoModel, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(reference, local_files_only=offline)
            base = AutoModel.from_pretrained(
                reference,
                local_files_only=offline,
                attn_implementation="eager",
                use_safetensors=use_safetensors,
                dtype=torch.float32,
            )
        except (OSError, ValueError, KeyError, RuntimeError) as error:
            raise BlockvizError(f"cannot load the model {location.name!r}: {_first_line(error)}") from None
    if not getattr(tokenizer, "is_fast", False):
        raise BlockvizError(
            f"the model {location.name!r} has no fast tokenizer (tokenizer.json): blockviz needs one for readable tokens"
        )
    base = base.to(torch.float64 if dtype == "float64" else torch.float32).eval()
    return LoadedModel(base, tokenizer, family, location, dtype, note)


def _refuse_pickles(folder: Path, name: str) -> None:
    safetensors = list(folder.glob("*.safetensors"))
    pickles = [path for path in folder.iterdir() if path.suffix.lower() in PICKLE_SUFFIXES and path.is_file()]
    if pickles and not safetensors:
        raise BlockvizError(
            f"{name!r} holds its weights only in {pickles[0].name}, a pickle that can run any code when loaded: "
            "pass --trust-pickle (trust_pickle=True) if you trust it, or convert it to safetensors"
        )


def _convert_gguf(location: ModelLocation, target: Path) -> None:
    """Dequantise ``location``'s GGUF file once and write a safetensors folder to ``target``."""
    from safetensors.torch import save_file
    from transformers import AutoModel, AutoTokenizer

    with _quiet():
        try:
            kwargs = {"gguf_file": location.gguf_file, "local_files_only": True}
            tokenizer = AutoTokenizer.from_pretrained(str(location.folder), **kwargs)
            model = AutoModel.from_pretrained(
                str(location.folder), attn_implementation="eager", dtype=torch.float32, **kwargs
            )
        except (OSError, ValueError, KeyError, RuntimeError, ImportError) as error:
            raise BlockvizError(f"cannot read the GGUF file {location.gguf_file!r}: {_first_line(error)}") from None
        data = model.config.to_dict()
        data.pop("quantization_config", None)
        config = type(model.config).from_dict(data)
        config.save_pretrained(str(target))
        tokenizer.save_pretrained(str(target))
    tensors = {name: tensor.detach().contiguous() for name, tensor in model.state_dict().items()}
    save_file(tensors, str(target / "model.safetensors"), metadata={"format": "pt"})
    (target / "blockviz-source.json").write_text(
        json.dumps({"gguf_file": location.gguf_file, "dequantised": "float32"}), encoding="utf-8"
    )


def _quantisation(gguf_file: str) -> str:
    """``"4-bit Q4_1"`` for ``"….Q4_1.gguf"``; the GGUF type names say their bits (Q4_1: 4)."""
    for part in reversed(Path(gguf_file).stem.split(".")):
        match = re.fullmatch(r"I?Q(\d+)(_[A-Z0-9_]+)?", part.upper())
        if match:
            return f"{match[1]}-bit {part.upper()}"
    return "GGUF"


def first_load_is_slow(model: str | Path) -> bool:
    """Whether loading ``model`` will dequantise a GGUF file (20–75 s, once: then cached).

    Raises :class:`BlockvizError` as :func:`~blockviz.models.resolve.resolve_model`.
    """
    location = resolve_model(model)
    if location.gguf_file is None:
        return False
    from blockviz.models.cache import COMPLETE, gguf_cache_folder

    return not (gguf_cache_folder(location.folder / location.gguf_file) / COMPLETE).is_file()


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


@contextlib.contextmanager
def _quiet():
    """Silence ``transformers``' progress bars, warnings and log lines while loading (blockviz
    prints one line per result, and errors as one line)."""
    loggers = [logging.getLogger(name) for name in ("transformers", "huggingface_hub", "accelerate")]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:
            pass
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
