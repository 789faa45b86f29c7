"""The figures by name, in the order the data flows: each one's title, a one-line description,
its drawing function and the record fields it reads; the file formats and the default PNG
resolution they are saved in.

Listing the figures imports nothing heavy; a figure's drawing function is imported when used,
and so is :mod:`blockviz.figures.architecture` when a figure's fields depend on the block.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from blockviz.errors import BlockvizError


@dataclass(frozen=True)
class FigureSpec:
    """One figure: its ``name`` (its file name without extension), its ``title`` (how its heading
    starts: the layer-norm figure of an RMSNorm block says "RMSNorm", the mask figure of a block
    without a mask "No mask"), what it shows, where its drawing function lives
    (``"module:function"`` inside :mod:`blockviz.figures`), and what it reads of the record:
    ``fields`` (``rec.tensors``) and ``parameters`` (``rec.params``) on every block;
    ``architecture_fields``, the name of a function of :mod:`blockviz.figures.architecture`
    giving the fields and parameters that depend on the record's architecture
    (``f(rec) -> (fields, parameters)``); ``optional``, the fields and parameters it draws
    when the record holds them (``pos_embed``, the rotated queries and keys, the biases); and
    ``applies``, what the figure needs beyond a block, named as in
    :data:`blockviz.record_needs.NEEDS` (the prediction needs an unembedding, the training figure
    a model ``blockviz train`` made); ``blockviz
    figures`` without ``--figure`` leaves such figures out without a word."""

    name: str
    title: str
    description: str
    function: str
    fields: tuple[str, ...] = ()
    parameters: tuple[str, ...] = ()
    architecture_fields: str | None = None
    optional: tuple[str, ...] = ()
    applies: str | None = None

    @property
    def draw(self) -> Callable:
        """The function drawing this figure: ``draw(request: FigureRequest) -> Figure``."""
        module, function = self.function.split(":")
        return getattr(importlib.import_module(f"blockviz.figures.{module}"), function)

    def reads(self, rec) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The record fields (``rec.tensors``) and parameters (``rec.params``) this figure reads
        from ``rec``, on its architecture."""
        if self.architecture_fields is None:
            return self.fields, self.parameters
        from blockviz.figures import architecture

        fields, parameters = getattr(architecture, self.architecture_fields)(rec)
        return self.fields + tuple(fields), self.parameters + tuple(parameters)


FIGURES = (
    FigureSpec(
        "token-grid",
        "Token grid",
        "token embedding + position = resid_pre, one row of d_model numbers per token",
        "vectors:token_grid",
        fields=("embed", "resid_pre"),
        optional=("pos_embed",),
    ),
    FigureSpec(
        "layer-norm",
        "LayerNorm",
        "one row (--token) through the block's two norms, step by step: LayerNorm (mean, subtract, variance, divide by √(var + ε), × γ, + β) or RMSNorm",
        "norm:layer_norm",
        architecture_fields="norm_figure_reads",
        optional=("ln1.bias", "ln2.bias"),
    ),
    FigureSpec(
        "qkv",
        "Queries, keys and values",
        "each head's queries, keys and values (n × d_head) side by side",
        "vectors:queries_keys_values",
        fields=("query", "key", "value"),
        optional=("query_rot", "key_rot"),
    ),
    FigureSpec(
        "scores",
        "Scores",
        "query–key dot products per head, then divided by √d_k (rows = queries, columns = keys)",
        "attention:scores",
        fields=(
            "scores",
            "scaled_scores",
            "mask",
        ),  # the scaled scores' colour scale from the cells the mask lets through
    ),
    FigureSpec(
        "mask",
        "Mask",
        "scaled scores + causal mask M = masked scores; blocked cells read −∞",
        "attention:mask",
        fields=("scaled_scores", "mask", "masked_scores"),
    ),
    FigureSpec(
        "weights",
        "Weights",
        "softmax weights per head on a fixed 0–1 scale; blocked cells are 0",
        "attention:weights",
        fields=("weights", "mask"),
    ),
    FigureSpec(
        "value-mixing",
        "Value mixing",
        "one query's weighted sum of value vectors, written out (--token, --head)",
        "mixing:value_mixing",
        fields=("weights", "value", "head_outputs", "mask"),
    ),
    FigureSpec(
        "multi-head",
        "Multi-head attention",
        "every head's weights, then concatenation and the output projection W_O",
        "attention:multi_head",
        fields=("weights", "mask", "head_outputs", "concat", "attn_out"),
        parameters=("attn.W_O",),
        optional=("attn.b_O",),
    ),
    FigureSpec(
        "block-flow",
        "Block flow",
        "the route through the block (pre-norm or post-norm), with this sentence's shapes",
        "flow:block_flow",
    ),
    FigureSpec(
        "ffn",
        "Feed-forward network",
        "the feed-forward network: ffn_pre (n × d_ff), activation, ffn_out",
        "vectors:ffn",
        architecture_fields="ffn_figure_reads",
    ),
    FigureSpec(
        "residual-stream",
        "Residual stream",
        "one row (--token): resid_pre + attention = resid_mid, + FFN = resid_post, each column adding up down the page",
        "vectors:residual_stream",
        fields=("resid_pre", "attn_out", "resid_mid", "ffn_out", "resid_post"),
        architecture_fields="residual_figure_reads",
    ),
    FigureSpec(
        "causal-vs-bidirectional",
        "Causal vs bidirectional",
        "the same sentence's weights with and without the causal mask",
        "attention:causal_vs_bidirectional",
        fields=("weights",),
        optional=("mask",),
    ),  # the mask of whichever of the two is causal
    FigureSpec(
        "worked-example",
        "Worked example",
        "the hand-worked mixture: scores (0, ln 3) → weights (¼, ¾) → (0.5, 3)",
        "mixing:worked_example",
    ),
    FigureSpec(
        "prediction",
        "Prediction",
        'after one token (--token), the next-token probabilities: the top 5 words and one "+ others" term, adding up to 1',
        "prediction:prediction",
        fields=("probs",),
        applies="unembedding",
    ),
    FigureSpec(
        "stack-weights",
        "Every block's heads",
        "the softmax weights of every head (columns) of every block (rows) of a stack of blocks",
        "stack:stack_weights",
        fields=("weights", "mask"),
        applies="stack",
    ),
    FigureSpec(
        "composition",
        "Composition",
        "Q-, K- and V-composition of each head of one block with each head of the next (Elhage et al. 2021), beside random weights'",
        "stack:composition",
        parameters=("attn.W_Q", "attn.W_K", "attn.W_V", "attn.W_O"),
        optional=("ln1.weight",),
        applies="stack",
    ),
    FigureSpec(
        "induction",
        "Induction",
        "each head's induction score (weight from a repeated word to the word after its first occurrence) and previous-token score",
        "stack:induction",
        fields=("weights",),
        applies="repeat",
    ),
    FigureSpec(
        "logit-lens",
        "Logit lens",
        "after one token (--token), the next-token prediction after each block, through the final LayerNorm and unembedding",
        "stack:logit_lens",
        optional=("probs",),  # a toy model's blocks' own; a trained decoder's lens is the record's lens
        applies="lens",
    ),
    FigureSpec(
        "training",
        "Training",
        "the trained model's loss and its best head's 'it' → subject weight at each checkpoint, from the model folder",
        "training:training",
        applies="training",
    ),
    FigureSpec(
        "copy-training",
        "Copy training",
        "one block against two on the copy task: loss and copy accuracy at each checkpoint of training",
        "copy_training:copy_training",
        applies="copy-training",
    ),
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


def figure_title(name: str) -> str:
    """How the heading of figure ``name`` starts ("Token grid")."""
    return figure_spec(name).title


def applies_to(name: str, rec, whole=None) -> bool:
    """Whether figure ``name`` is one of ``rec``'s kind of block (:attr:`FigureSpec.applies`,
    asked of ``whole``, the record of several blocks ``rec`` is one block of, if given);
    one that is may still be skipped for a missing field (:func:`skip_reason`)."""
    spec = figure_spec(name)
    from blockviz.record_needs import missing

    return missing(spec.applies, rec if whole is None else whole) is None


def skip_reason(name: str, rec, whole=None) -> str | None:
    """Why figure ``name`` cannot be drawn from ``rec`` — the record (``whole``, the record of
    several blocks ``rec`` is one block of, if given) lacks what the figure needs
    (:attr:`FigureSpec.applies`), or ``rec`` a field or parameter the figure reads on its
    architecture (:meth:`FigureSpec.reads`), as a record of another block may — or ``None``.

    Raises
    ------
    BlockvizError
        For an unknown figure name.
    """
    spec = figure_spec(name)
    from blockviz.record_needs import missing

    reason = missing(spec.applies, rec if whole is None else whole)
    if reason:
        return reason
    fields, parameters = spec.reads(rec)
    missing_parameters = [parameter for parameter in parameters if parameter not in rec.params]
    if missing_parameters:
        return f"the record has no parameter {', '.join(missing_parameters)}"
    missing = [field for field in fields if field not in rec.tensors]
    if missing:
        from blockviz.figures.architecture import norm_name

        return f"the record holds no {', '.join(missing)} ({norm_name(rec)}, {rec.config.norm_placement}-norm {rec.config.ffn} FFN)"
    return None
