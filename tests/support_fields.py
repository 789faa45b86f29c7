"""Shared helpers of the field tests: a small block of any supported architecture, with the source
that makes it a model's layer, and a short name for it."""

from __future__ import annotations

from blockviz import BlockConfig
from blockviz.architecture import Architecture
from blockviz.source import Source


def config_of(arch: Architecture) -> BlockConfig:
    """A small seeded block of ``arch`` (d_head 2, so rotary pairs fit); blockviz's trained toy
    model's architecture is the config with a vocabulary (``vocab_size``)."""
    return BlockConfig(
        d_model=8,
        n_heads=arch.n_heads,
        n_kv_heads=arch.n_kv_heads if arch.grouped else None,
        d_ff=12,
        causal=arch.causal,
        positional=arch.positions,
        norm=arch.norm,
        norm_placement=arch.norm_placement,
        ffn=arch.ffn,
        bias=arch.bias,
        activation="silu" if arch.gated else "gelu",
        vocab_size=5 if arch.unembedding else None,
    )


def source_of(arch: Architecture) -> Source | None:
    """A model's layer 1 (a layer with a layer before it) for a model layer's architecture, else
    ``None`` (seeded weights)."""
    if not arch.model_layer:
        return None
    return Source("model", model="tiny", family="gpt2", layer=1, n_layers=2, dtype="float32")


def label(arch: Architecture) -> str:
    """A short name: ``pre-layernorm-sinusoidal-plain-mha-bias-causal`` (then ``-model-layer`` or
    ``-unembedding``)."""
    grouped = "gqa" if arch.grouped else "mha"
    bias = "bias" if arch.bias else "nobias"
    name = f"{arch.norm_placement}-{arch.norm}-{arch.positions}-{arch.ffn}-{grouped}-{bias}-{'causal' if arch.causal else 'open'}"
    return name + ("-model-layer" if arch.model_layer else "") + ("-unembedding" if arch.unembedding else "")
