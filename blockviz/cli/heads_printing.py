"""What ``blockviz heads`` and ``blockviz compare`` print: a line saying whose heads, the notes,
and the tables of a :class:`~blockviz.heads.HeadRanking` or a
:class:`~blockviz.heads.HeadComparison` (rich tables, plain text, as wide as their rows); and the
figure written, its path printed."""

from __future__ import annotations

from pathlib import Path

import click

RANK_WORDS = {
    "weight": "largest weight first",
    "above-baseline": "largest weight above the head's baseline first",
    "contrast": "largest change in the contrast sentence first",
}
"""The heading's words for each way of ranking (:data:`blockviz.models.evidence.RANKINGS`)."""


def print_ranking(ranking, note: str | None, top: int | None) -> None:
    """Whose heads (and ``note``), the notes, then the ranked table (the ``top`` highest heads,
    or all) or, without a key, each head's largest keys — for a causal model's first token only
    the line saying it sees only itself."""
    click.echo(f"{ranking.what}; {note}" if note else ranking.what)
    for line in ranking.notes:
        click.echo(line)
    if ranking.horizon is not None:
        click.echo(ranking.horizon)
        return
    if ranking.key is not None:
        _print_evidence(ranking, top)
    else:
        _print_keys(ranking)


def print_comparison(comparison, note: str | None, top: int) -> None:
    """Whose heads (and ``note``), then the line saying the query cannot see the difference, or
    the ``top`` most moved heads and the most moved head's rows side by side."""
    click.echo(f"{comparison.what}; {note}" if note else comparison.what)
    if comparison.seeing:
        click.echo(comparison.seeing)
    else:
        _print_shifts(comparison, top)


def write_figure(grid, path: Path, tokens: list[str], under=None) -> None:
    """Save the figure and print its path; a token no font can draw is one warning line first."""
    import warnings

    from blockviz.figures.glyphs import MissingGlyphWarning, warn_missing_glyphs
    from blockviz.figures.heads_figure import write_heads_figure

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingGlyphWarning)
        warn_missing_glyphs(tokens)
        written = write_heads_figure(grid, path, under=under)
    for warning in caught:
        if issubclass(warning.category, MissingGlyphWarning):
            click.echo(f"warning: {warning.message}", err=True)
    click.echo(str(written))


def write_figure_quietly(grid, path: Path, under=None) -> None:
    """As :func:`write_figure`, the path not printed (stdout is the JSON)."""
    from blockviz.figures.heads_figure import write_heads_figure

    write_heads_figure(grid, path, under=under)


def _console():
    from rich.console import Console

    return Console(highlight=False, width=100_000, color_system=None)


def _number(value: float | None, signed: bool = False) -> str:
    import math

    from blockviz.style import format_number

    if value is None or math.isnan(value):
        return "n/a"
    text = format_number(value, 4, unicode_minus=False)
    return f"+{text}" if signed and not text.startswith("-") else text


def _kv_cells(head: int, n_heads: int, kv_heads: int) -> list[str]:
    """The key/value head column's cell under grouped-query attention, else nothing."""
    return [str(head // (n_heads // kv_heads))] if kv_heads < n_heads else []


def _kv_column(n_heads: int, kv_heads: int) -> tuple[str, ...]:
    return ("kv head",) if kv_heads < n_heads else ()


def _print_evidence(ranking, top: int | None) -> None:
    """The ranked table: rank, layer, head, (kv head,) weight, (contrast, change,) baseline,
    above, first, special, parks."""
    from rich.table import Table
    from rich.text import Text

    from blockviz.models.evidence import PARKS_AT
    from blockviz.tokens import display_token

    ranked, side, contrast, words = ranking.rows, ranking.side, ranking.contrast, ranking.words
    n_heads, kv_heads = ranking.n_heads, ranking.kv_heads
    shown = ranked if top is None else ranked[:top]
    q = display_token(ranking.attentions.tokens[side.query])
    k = display_token(words.names[side.key])
    group = words.groups[side.key]
    where = f"position {group[0]}" if len(group) == 1 else f"positions {group[0]}–{group[-1]}"
    also = ""
    if contrast is not None:
        kb = contrast.words.groups[contrast.key]
        also = (
            f"\n  contrast: the same weight in the contrast sentence ({display_token(ranking.other.tokens[contrast.query])!r} "
            f"position {contrast.query} to {display_token(contrast.words.names[contrast.key])!r} position {kb[0]}); "
            "change = contrast − weight"
        )
    click.echo(  # a heading, then one line per column family: a terminal's width, not one 400-character line
        f"weight from {q!r} (position {side.query}) to {k!r} ({where}), {RANK_WORDS[ranking.by]}"
        f"{'' if top is None or top >= len(ranked) else f' (the {top} highest of {len(ranked)} heads)'}{also}\n"
        f"  baseline: the head's mean weight on {k!r} from the other queries{' that see it' if ranking.causal else ''}; above = weight − baseline\n"
        f"  first, special: the weight from {q!r} on the first token and on special tokens; parks: the two take {PARKS_AT} or more"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    names = ("rank", "layer", "head") + _kv_column(n_heads, kv_heads) + ("weight",)
    names += ("contrast", "change") if contrast is not None else ()
    names += ("baseline", "above", "first", "special")
    for name in names:
        table.add_column(Text(name), justify="right")
    table.add_column(Text("parks"))
    for rank, row in enumerate(shown, start=1):
        cells = [str(rank), str(ranking.layers[row.layer]), str(row.head)] + _kv_cells(row.head, n_heads, kv_heads)
        cells.append(_number(row.weight))
        if contrast is not None:
            cells += [_number(row.contrast), _number(row.change, signed=True)]
        cells += [_number(row.baseline), _number(row.above, signed=True), _number(row.first), _number(row.special)]
        cells.append("parks" if row.parks else "")
        table.add_row(*cells)
    _console().print(table)


def _print_keys(ranking) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.models.evidence import PARKS_AT
    from blockviz.style import format_number
    from blockviz.tokens import display_token

    per_head, words, query = ranking.keys, ranking.words, ranking.query
    n_heads, kv_heads = ranking.n_heads, ranking.kv_heads
    k = max(len(keys) for keys in per_head)
    click.echo(
        f"each head's largest weights from {display_token(ranking.attentions.tokens[query])!r} (position {query}), by layer and head "
        f"(a word's pieces added; sink: its weight on the first token and special tokens, parks at {PARKS_AT} or more):"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("layer", "head") + _kv_column(n_heads, kv_heads):
        table.add_column(Text(name), justify="right")
    for index in range(1, k + 1):
        table.add_column(Text(f"key {index}"), max_width=16, overflow="ellipsis", no_wrap=True)
        table.add_column(Text("weight"), justify="right")
    table.add_column(Text("sink"), justify="right")
    table.add_column(Text("parks"))
    for index, keys in enumerate(per_head):
        layer, head = divmod(index, n_heads)
        cells = [str(ranking.layers[layer]), str(head)] + _kv_cells(head, n_heads, kv_heads)
        for word, weight in keys:
            cells += [
                Text(f"{display_token(words.names[word])} ({words.groups[word][0]})"),
                format_number(weight, 4, unicode_minus=False),
            ]
        cells += ["", ""] * (k - len(keys))
        sink = float(ranking.sinks[layer, head])
        cells += [format_number(sink, 4, unicode_minus=False), "parks" if sink >= PARKS_AT else ""]
        table.add_row(*cells)
    _console().print(table)


def _print_shifts(comparison, top: int) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.tokens import display_token

    shifts, labels, layers = comparison.shifts[:top], comparison.labels, comparison.layers
    n_heads, kv_heads = comparison.n_heads, comparison.kv_heads
    query_a, query_b = comparison.query
    click.echo(
        f"attention from {display_token(comparison.query_name)!r} (position {query_a} in the first sentence, {query_b} in the second), "
        f"the heads whose attention moves most first (moved = ½ Σ |change|, the share of its weight that goes elsewhere):"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("rank", "layer", "head") + _kv_column(n_heads, kv_heads) + ("moved",):
        table.add_column(Text(name), justify="right")
    table.add_column(Text("gained"))
    table.add_column(Text("lost"))
    for rank, shift in enumerate(shifts, start=1):
        cells = [str(rank), str(layers[shift.layer]), str(shift.head)] + _kv_cells(shift.head, n_heads, kv_heads)
        cells.append(_number(shift.moved))
        for picked in (shift.gained, shift.lost):
            cells.append(
                Text(
                    ", ".join(f"{display_token(labels[i])} {shift.row_a[i]:.2f}→{shift.row_b[i]:.2f}" for i in picked)
                    or "-"
                )
            )
        table.add_row(*cells)
    _console().print(table)
    best = shifts[0]
    click.echo(f"layer {layers[best.layer]} head {best.head}, its rows side by side:")
    rows = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name, justify in (("key", "left"), ("first", "right"), ("second", "right"), ("change", "right")):
        rows.add_column(Text(name), justify=justify)
    for label, a, b, change in zip(labels, best.row_a, best.row_b, best.change):
        rows.add_row(Text(display_token(label)), _number(a), _number(b), _number(change, signed=True))
    _console().print(rows)
