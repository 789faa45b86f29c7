"""The figures by name, in the order the data flows, each with a one-line description; the
file formats and the default PNG resolution they are saved in.

Listing the figures imports nothing heavy; a figure's drawing function is imported when used.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class FigureSpec:
    """A figure's name (its file name without extension), what it shows, and where its drawing
    function lives (``"module:function"`` inside :mod:`blockviz.figures`)."""

    name: str
    description: str
    function: str

    @property
    def draw(self) -> Callable:
        """The function drawing this figure: ``draw(request: FigureRequest) -> Figure``."""
        module, function = self.function.split(":")
        return getattr(importlib.import_module(f"blockviz.figures.{module}"), function)


FIGURES = (
    FigureSpec("token-grid", "token embedding + position = resid_pre, one row of d_model numbers per token", "vector_figures:token_grid"),
    FigureSpec("layer-norm", "LayerNorm of one row (--token), step by step: mean, subtract, variance, divide by √(var + ε), × γ, + β; ln1 and ln2", "norm_figure:layer_norm"),
    FigureSpec("qkv", "each head's queries, keys and values (n × d_head) side by side", "vector_figures:queries_keys_values"),
    FigureSpec("scores", "query–key dot products per head, then divided by √d_k (rows = queries, columns = keys)", "attention_figures:scores"),
    FigureSpec("mask", "scaled scores + causal mask M = masked scores; blocked cells read −∞", "attention_figures:mask"),
    FigureSpec("weights", "softmax weights per head on a fixed 0–1 scale; blocked cells are 0", "attention_figures:weights"),
    FigureSpec("value-mixing", "one query's weighted sum of value vectors, written out (--token, --head)", "mixing_figures:value_mixing"),
    FigureSpec("multi-head", "every head's weights, then concatenation and the output projection W_O", "attention_figures:multi_head"),
    FigureSpec("block-flow", "the route through the pre-norm block, with this sentence's shapes", "flow_figure:block_flow"),
    FigureSpec("ffn", "the feed-forward network: ffn_pre (n × d_ff), activation, ffn_out", "vector_figures:ffn"),
    FigureSpec("residual-stream", "resid_pre + attention = resid_mid, + FFN = resid_post", "vector_figures:residual_stream"),
    FigureSpec("causal-vs-bidirectional", "the same sentence's weights with and without the causal mask", "attention_figures:causal_vs_bidirectional"),
    FigureSpec("worked-example", "the hand-worked mixture: scores (0, ln 3) → weights (¼, ¾) → (0.5, 3)", "mixing_figures:worked_example"),
)
"""Every figure, in the order the data flows through the block."""

FIGURE_NAMES = tuple(spec.name for spec in FIGURES)

FORMATS = ("png", "svg", "pdf")
"""The file formats a figure is saved in (stated here, where the CLI can read them cheaply)."""
DEFAULT_DPI = 200
"""Pixels per inch of PNG files unless asked otherwise."""


def figure_spec(name: str) -> FigureSpec:
    """The figure called ``name``.

    Raises
    ------
    BlockvizError
        If there is no such figure; the message lists the names.
    """
    for spec in FIGURES:
        if spec.name == name:
            return spec
    raise BlockvizError(f"no figure named {name!r}: choose one of {', '.join(FIGURE_NAMES)}")
