"""A recorded tensor as plain text for a terminal, rows and columns labelled."""

from __future__ import annotations

import torch

from blockviz.style import format_number

LABEL_WIDTH = 10


def tensor_table(name: str, tensor: torch.Tensor, row_labels: list[str], column_labels: list[str], decimals: int = 2) -> str:
    """``name``, its shape, and its values, one table per head for a 3-D tensor.

    ``tensor`` is ``(rows, columns)`` or ``(n_heads, rows, columns)``; −∞ prints as ``-inf``.
    """
    title = f"{name}  {tuple(tensor.shape)}"
    if tensor.dim() == 2:
        return "\n".join([title, _matrix(tensor, row_labels, column_labels, decimals)])
    heads = [f"  head {index}\n{_matrix(matrix, row_labels, column_labels, decimals)}" for index, matrix in enumerate(tensor)]
    return "\n".join([title, *heads])


def _matrix(matrix: torch.Tensor, row_labels: list[str], column_labels: list[str], decimals: int) -> str:
    cells = [[format_number(float(value), decimals, unicode_minus=False) for value in row] for row in matrix.tolist()]
    width = max([len(text) for row in cells for text in row] + [len(_shorten(label, LABEL_WIDTH)) for label in column_labels])
    header = " " * (LABEL_WIDTH + 2) + " ".join(_shorten(label, LABEL_WIDTH).rjust(width) for label in column_labels)
    lines = [header]
    for label, row in zip(row_labels, cells):
        lines.append(f"  {_shorten(label, LABEL_WIDTH).ljust(LABEL_WIDTH)}" + " ".join(text.rjust(width) for text in row))
    return "\n".join(lines)


def _shorten(label: str, width: int) -> str:
    return label if len(label) <= width else label[: width - 1] + "\u2026"
