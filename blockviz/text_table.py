"""Recorded tensors as tables for a terminal, rows and columns labelled, drawn by :mod:`rich`
(so wide characters — CJK, emoji — keep the columns aligned)."""

from __future__ import annotations

import math

import torch
from rich.console import Console
from rich.table import Table
from rich.text import Text

from blockviz.record_fields import RecordField, axis_labels
from blockviz.style import format_number
from blockviz.tokens import display_token

LABEL_WIDTH = 16
"""Token labels wider than this many terminal cells end in "…"."""


ELIDED = "⋯"
"""The column standing for the columns :func:`field_tables` leaves out."""


def field_tables(
    spec: RecordField,
    tensor: torch.Tensor,
    tokens: list[str],
    decimals: int = 2,
    max_columns: int | None = None,
    heads: list[int] | None = None,
    vocabulary: tuple[str, ...] | None = None,
) -> list[Table | Text]:
    """``spec``'s tensor as renderables: a title line ``name  (sizes)``, then one table per head
    for a per-head field. Rows are tokens; columns are keys (tokens), ``d0…``/``f0…`` features,
    ``h0…`` heads (for ``(n_heads, n)`` fields) or the field itself (for ``(n,)``). −∞ prints as ``-inf``.

    ``max_columns``: feature columns (d…, f…) beyond it are left out — the first ``max_columns - 4``
    and the last 4 are kept, with a ``⋯`` column between and the title saying how many are hidden.
    ``heads``: only these heads of a per-head field, ``(n_heads, n)`` ones too (default: all).
    ``vocabulary``: the words that label an ``n_vocab`` axis (``logits``, ``probs``), in id order.
    """
    title = Text(f"{spec.name}  {tuple(tensor.shape)}")
    shape = spec.shape
    if shape == ("n",):
        return [title, _table(tensor[:, None], tokens, [spec.name], decimals)]
    if shape == ("n_heads", "n"):
        chosen = (
            list(range(tensor.shape[0]))
            if heads is None
            else [head for head in range(tensor.shape[0]) if head in heads]
        )
        labels = axis_labels("n_heads", tokens, tensor.shape[0])
        return [title, _table(tensor.T[:, chosen], tokens, [labels[head] for head in chosen], decimals)]
    columns = axis_labels(shape[-1], tokens, tensor.shape[-1], vocabulary)
    keep = None
    if max_columns is not None and shape[-1] != "n" and len(columns) > max_columns:
        tail = min(4, max_columns // 2)
        keep = list(range(max_columns - tail)) + list(range(len(columns) - tail, len(columns)))
        title = Text(
            f"{spec.name}  {tuple(tensor.shape)}  ({len(columns) - len(keep)} of {len(columns)} columns hidden at {ELIDED})"
        )
        columns = (
            [columns[i] for i in keep[: max_columns - tail]]
            + [ELIDED]
            + [columns[i] for i in keep[max_columns - tail :]]
        )
    if len(shape) == 2:
        return [title, _table(_elide(tensor, keep, max_columns), tokens, columns, decimals)]
    parts: list[Table | Text] = [title]
    for head, per_head in enumerate(tensor):
        if heads is not None and head not in heads:
            continue
        if len(shape) == 4:  # (n_heads, n_heads, n, n): scores_from_heads, head h's part from each head g before
            for before, matrix in enumerate(per_head):
                parts += [
                    Text(f"  head {head}, from head {before} of the block before"),
                    _table(_elide(matrix, keep, max_columns), tokens, columns, decimals),
                ]
            continue
        parts += [Text(f"  head {head}"), _table(_elide(per_head, keep, max_columns), tokens, columns, decimals)]
    return parts


def _elide(matrix: torch.Tensor, keep: list[int] | None, max_columns: int | None) -> torch.Tensor:
    """The kept columns, with a NaN column (printed as ⋯) where the hidden ones were."""
    if keep is None:
        return matrix
    tail = min(4, max_columns // 2)
    gap = torch.full((matrix.shape[0], 1), math.nan, dtype=matrix.dtype)
    return torch.cat((matrix[:, keep[: max_columns - tail]], gap, matrix[:, keep[max_columns - tail :]]), dim=1)


def print_tables(renderables, console: Console | None = None) -> None:
    """Print renderables with a blank line after each field (no colour, no wrapping of wide tables)."""
    console = console or Console(highlight=False, width=100_000, color_system=None)
    for renderable in renderables:
        console.print(renderable)


def _table(matrix: torch.Tensor, row_labels: list[str], column_labels: list[str], decimals: int) -> Table:
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    table.add_column("", max_width=LABEL_WIDTH, overflow="ellipsis", no_wrap=True)
    for label in column_labels:
        table.add_column(
            Text(display_token(label)), justify="right", max_width=LABEL_WIDTH, overflow="ellipsis", no_wrap=True
        )
    for label, values in zip(row_labels, matrix.tolist()):
        table.add_row(
            Text(display_token(label)),
            *(
                ELIDED if math.isnan(value) else format_number(float(value), decimals, unicode_minus=False)
                for value in values
            ),
        )
    return table


def prediction_table(rec, decimals: int = 2) -> list[Table | Text]:
    """The record's next-token prediction as renderables: for every row (token) the
    :data:`~blockviz.prediction.TOP_WORDS` most probable next words with their recorded
    probabilities (``probs``, ``(n, n_vocab)``), then the other words' sum and the row's total —
    "≈" where the rounded terms do not add up to it (:meth:`~blockviz.prediction.Prediction.sign`).

    Raises
    ------
    KeyError
        If the record has no ``probs`` (its block has no unembedding).
    """
    from blockviz.prediction import OTHERS, TOP_WORDS, prediction_of

    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    table.add_column("after", max_width=LABEL_WIDTH, overflow="ellipsis", no_wrap=True)
    for rank in range(1, TOP_WORDS + 1):
        table.add_column(f"#{rank}", no_wrap=True)
    table.add_column(OTHERS, justify="right", no_wrap=True)
    table.add_column("total", justify="right", no_wrap=True)
    for row, token in enumerate(rec.tokens):
        guess = prediction_of(rec, row)
        terms = guess.terms(decimals)
        words = [f"{display_token(word)} {term}" for word, term in zip(guess.words, terms)]
        table.add_row(
            Text(display_token(token)),
            *words,
            terms[-1],
            f"{guess.sign(decimals)} {format_number(guess.total, decimals, unicode_minus=False)}",
        )
    vocabulary = len(rec.source.vocabulary or ()) or rec.probs.shape[-1]
    title = Text(
        f"prediction  (the next word after each token: the {TOP_WORDS} most probable of {vocabulary}, from probs)"
    )
    return [title, table]


def lens_table(rec, row: int, decimals: int = 2) -> list[Table | Text]:
    """The logit lens of token ``row`` as renderables: for every block of ``rec``, its
    prediction of the next token after that row — the :data:`~blockviz.prediction.TOP_WORDS` most
    probable with their recorded probabilities, the others' sum and the total
    (:func:`blockviz.prediction.lens_rows`); the last block's is the model's own prediction.
    A record without one gives its one line (:func:`blockviz.logit_lens.missing_lens`).
    """
    from blockviz.logit_lens import missing_lens
    from blockviz.prediction import OTHERS, TOP_WORDS, lens_rows

    rows = lens_rows(rec, row)
    if rows is None:
        return [Text(missing_lens(rec, row))]
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    table.add_column("after block", no_wrap=True)
    for rank in range(1, TOP_WORDS + 1):
        table.add_column(f"#{rank}", no_wrap=True)
    table.add_column(OTHERS, justify="right", no_wrap=True)
    table.add_column("total", justify="right", no_wrap=True)
    for block, (view, guess) in enumerate(zip(rec.blocks, rows)):
        terms = guess.terms(decimals)
        layer = f" (layer {view.source.layer})" if view.source.layer is not None else ""
        table.add_row(
            f"{block}{layer}",
            *[f"{display_token(word)} {term}" for word, term in zip(guess.words, terms)],
            terms[-1],
            f"{guess.sign(decimals)} {format_number(guess.total, decimals, unicode_minus=False)}",
        )
    title = Text(
        f"logit lens  (the next token after {display_token(rec.tokens[row])!r}, token {row}, after each block: "
        f"its output through the final norm and W_U; the last block's is the model's prediction)"
    )
    return [title, table]
