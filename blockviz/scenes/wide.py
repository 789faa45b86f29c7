"""Wide vectors on screen: which entries of a d_head- or d_model-wide row to draw.

A trained model's head is 32–64 entries wide, its residual stream 384–576: a scene draws the
first entry and those of largest magnitude (the ones that decide a sum), with ⋯ between them,
and says how many are hidden ("30 of 32 hidden"). Every sum drawn keeps the hidden entries as
one explicit term (:func:`blockviz.scenes.block_helpers.remainder`).
"""

from __future__ import annotations

from collections.abc import Sequence

from blockviz.scenes.token_axis import slots_between


def largest_entries(values: Sequence[float], count: int, first: int = 1) -> list[int]:
    """The indices to draw of ``values``, in order: the first ``first`` and then those of largest
    magnitude, ``count`` in all (every index when there are no more than ``count``)."""
    values = [float(value) for value in values]
    if len(values) <= count:
        return list(range(len(values)))
    chosen = list(range(min(first, count)))
    ranked = sorted((i for i in range(len(values)) if i not in chosen), key=lambda i: (-abs(values[i]), i))
    return sorted(chosen + ranked[: count - len(chosen)])


def edges_and_largest(rows: Sequence[Sequence[float]], count: int) -> list[int]:
    """The columns to draw of ``rows`` that share their columns (a row and the rows made from it,
    entry by entry): the first, the last and those of largest magnitude in any row, ``count`` in
    all, in order (every column when there are no more than ``count``)."""
    magnitudes = [[abs(float(value)) for value in row] for row in rows]
    n = len(magnitudes[0])
    if n <= count:
        return list(range(n))
    largest = [max(row[i] for row in magnitudes) for i in range(n)]
    edges = {0, n - 1}
    ranked = sorted((i for i in range(n) if i not in edges), key=lambda i: (-largest[i], i))
    return sorted(edges | set(ranked[: max(0, count - 2)]))


def rows_that_matter(contributions: Sequence[float], limit: int) -> list[int | None]:
    """Grid slots for the rows of a matrix product that decide its sums: the ``limit - 1`` rows
    of largest ``contributions`` (each row's Σ|term|), in index order, then one ⋯ for all the
    rest (which a scene adds up as one term); every row when there are no more than ``limit``.
    The row names (``d17``) say which rows they are, so the ⋯ is not repeated between them.

    >>> rows_that_matter([0.0, 5.0, 0.1, 3.0, 0.0, 4.0], 4)
    [1, 3, 5, None]
    >>> rows_that_matter([1.0, 2.0], 4)
    [0, 1]
    """
    n = len(contributions)
    if n <= limit:
        return list(range(n))
    ranked = sorted(range(n), key=lambda i: (-abs(float(contributions[i])), i))
    return [*sorted(ranked[: limit - 1]), None]


def slots_of(indices: Sequence[int], n: int) -> list[int | None]:
    """Grid slots drawing ``indices`` of ``n`` entries: ``None`` (⋯) wherever entries are skipped,
    at the end too."""
    return slots_between(n, set(indices))


def hidden_note(shown: int, total: int, what: str = "entries") -> str:
    """``"30 of 32 entries hidden"`` (empty when nothing is hidden)."""
    return f"{total - shown} of {total} {what} hidden" if shown < total else ""


__all__ = ["largest_entries", "edges_and_largest", "rows_that_matter", "slots_of", "hidden_note"]
