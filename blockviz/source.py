"""Where a record's weights (and input) came from: :class:`Source`, kept in the record's header."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from blockviz.errors import BlockvizError, check_choice, from_fields

SOURCE_KINDS = ("seeded", "file", "given", "model", "trained")
CHECKPOINTS = "checkpoints.safetensors"
"""The file, in the folder of a model ``blockviz train`` made, of the lesson sentences' attention
weights at each checkpoint (what the learning scene and the training figure show)."""


@dataclass(frozen=True)
class Source:
    """Where a record's weights (and input) came from.

    ``kind``: ``"seeded"`` (blockviz's seeded random weights), ``"file"`` (``--params FILE``,
    ``path``), ``"given"`` (tensors passed in Python) or ``"model"`` (a trained model's layer:
    ``model`` is the name or folder given, ``family`` ``gpt2|bert|llama``, ``layer`` 0-based of
    ``n_layers``, ``dtype`` the weights' dtype as loaded, ``note`` e.g. the quantisation) or
    ``"trained"`` (a model ``blockviz train`` made: ``model`` ``toy`` or its folder, ``note`` what
    it is, "trained: one block, …", ``vocabulary`` its words in id order, the columns of the
    record's ``logits`` and ``probs``).

    >>> Source().describe()
    'seeded random weights'
    >>> Source("model", model="minilm", family="bert", layer=3, n_layers=6, dtype="float32").describe()
    'minilm (bert), layer 3 of 0–5, float32'
    """

    kind: str = "seeded"
    path: str | None = None
    model: str | None = None
    family: str | None = None
    layer: int | None = None
    n_layers: int | None = None
    dtype: str | None = None
    note: str | None = None
    vocabulary: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_choice("source kind", self.kind, SOURCE_KINDS)
        if self.vocabulary is not None:
            if not isinstance(self.vocabulary, (list, tuple)) or not all(
                isinstance(word, str) for word in self.vocabulary
            ):
                raise BlockvizError("the source's vocabulary must be a list of words")
            object.__setattr__(self, "vocabulary", tuple(self.vocabulary))
        for name in ("path", "model", "family", "dtype", "note"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise BlockvizError(f"the source's {name} must be a string, got {getattr(self, name)!r}")
        for name in ("layer", "n_layers"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise BlockvizError(f"the source's {name} must be a whole number ≥ 0, got {value!r}")
        if self.kind == "model" and (self.model is None or self.family is None or self.layer is None):
            raise BlockvizError("a model source names its model, family and layer")
        if self.kind == "trained" and self.model is None:
            raise BlockvizError("a trained source names its model (toy or a folder)")

    @property
    def is_model(self) -> bool:
        """Whether the record holds a trained model's layer."""
        return self.kind == "model"

    @property
    def is_trained(self) -> bool:
        """Whether the weights were learned: a trained model's layer or blockviz's trained toy
        model (``blockviz train``, ``--model toy``), not seeded, from a file or given."""
        return self.kind in ("model", "trained")

    @property
    def is_toy(self) -> bool:
        """Whether the record holds a model ``blockviz train`` made (``--model toy`` or its folder
        ``path``): a language model of one block, with its vocabulary.

        >>> Source("trained", model="toy").is_toy, Source().is_toy
        (True, False)
        """
        return self.kind == "trained"

    @property
    def checkpoints(self) -> Path | None:
        """The checkpoints file (:data:`CHECKPOINTS`) in the folder of the toy model the record
        came from, or ``None``: not a toy model's record, or its folder keeps no checkpoints."""
        if not self.is_toy or self.path is None:
            return None
        path = Path(self.path) / CHECKPOINTS
        return path if path.is_file() else None

    def describe(self, first_layer: int | None = None) -> str:
        """One line for titles and terminal output; ``first_layer``: a model's record of several
        layers, ``first_layer`` to ``layer``, names them all.

        >>> Source("model", model="smollm2", family="llama", layer=29, n_layers=30, dtype="float32").describe(0)
        'smollm2 (llama), layers 0–29 of 0–29, float32'
        """
        if self.kind == "seeded":
            return "seeded random weights"
        if self.kind in ("file", "given"):
            return f"parameters from {self.path}" if self.path else "given parameters"
        if self.kind == "trained":
            return self.note or f"trained: {self.model}"
        last = f" of 0–{self.n_layers - 1}" if self.n_layers else ""
        note = f"; {self.note}" if self.note else ""
        layers = f"layer {self.layer}" if first_layer in (None, self.layer) else f"layers {first_layer}–{self.layer}"
        return f"{self.model} ({self.family}), {layers}{last}, {self.dtype}{note}"

    def to_dict(self) -> dict:
        """The non-empty fields as a JSON-ready dict."""
        return {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in asdict(self).items()
            if value is not None
        }

    @classmethod
    def from_dict(cls, data) -> Source:
        """Build from :meth:`to_dict`'s output; anything else raises :class:`BlockvizError`."""
        return from_fields(cls, data, "source")
