"""``blockviz compare S1 S2``: one query token's attention in two sentences, head by head — the
rows side by side, their difference, the heads whose attention moves most first
(:mod:`blockviz.models.evidence`, the figure :mod:`blockviz.figures.heads_figure`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from blockviz.cli.heads_command import (
    FIGURE_SUFFIXES,
    _check_layer,
    _check_options,
    _figure_path,
    _heads_options,
    _kv,
    _number,
    _seeing_note,
    _what,
    _write,
    sentence_attentions,
)
from blockviz.cli.options import pop_record_options, reporting_errors, sentence_named, usage_error_for
from blockviz.cli.sentence import SentenceCommand

DEFAULT_TOP = 10
"""Heads listed in the text table without --top."""


@click.command(cls=SentenceCommand)
@click.option(
    "--from",
    "query",
    required=True,
    metavar="WORD|WORD#K|POSITION",
    help="The query token: a word found in both sentences (or, when they have as many tokens, the first's word and the "
    "token at its position in the second), WORD#K, or a 0-based position (sentences of the same length only).",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=DEFAULT_TOP,
    show_default=True,
    metavar="K",
    help="Heads listed in the text table, most moved first (--json lists every head).",
)
@click.option("--json", "as_json", is_flag=True, help="Print every head's rows, difference and movement as JSON.")
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(path_type=str),
    default=None,
    metavar="FILE|DIR",
    help="Write the layer × head figure of how far attention moves to FILE (.png, .svg or .pdf), or into DIR as "
    "compare-<model>.png.  [default: renders/<sentence-slug>/compare-<model>.png]",
)
@_heads_options
@click.argument("second", metavar="S2")
def compare(query, top, as_json, output, second, **options) -> None:
    """Compare one token's attention in two sentences, head by head.

    For the --from token (the query) in SENTENCE and in S2, prints each head's weights row in
    both — a word the tokenizer splits is one key, its pieces' weights added; the two sentences'
    words aligned, "tired" beside "wide" — and ranks the heads by how far the attention moves
    (½ Σ |change|: the share of the query's weight that goes elsewhere), with the keys that
    gained and lost. Every layer of a model (--layer L: one). In a decoder, a query before the
    first differing word sees the same prefix in both sentences: one line says so instead of a
    ranking. Writes a layer × head figure of the movement (-o) and prints its path.

    \b
    Examples:
      blockviz compare "The chicken didn't cross the road because it was too tired." "The chicken didn't cross the road because it was too wide." --model minilm --from it
      blockviz compare "The trophy didn't fit in the suitcase because it was too big." "The trophy didn't fit in the suitcase because it was too small." --model minilm --from it --json
    """
    from blockviz.files import sentence_slug, writable_file

    record_options = pop_record_options(options)
    _check_options(record_options)
    if second.strip() == record_options["sentence"].strip():
        raise click.BadParameter("S2 is the first sentence itself: change a word", param_hint="'S2'")
    model = record_options["model"]
    name = "compare.png" if model is None else f"compare-{sentence_slug(Path(str(model)).name)}.png"
    figure_path = _figure_path(output, name) or Path("renders") / sentence_slug(record_options["sentence"]) / name
    if figure_path.suffix.lower() not in FIGURE_SUFFIXES:
        raise click.BadParameter(
            f"{str(figure_path)!r} names no figure format: end it in {', '.join(FIGURE_SUFFIXES)}, or give a folder",
            param_hint="'-o'",
        )
    with reporting_errors():
        first, kv_heads, note_line = sentence_attentions(record_options)
        with sentence_named("'S2'"):
            other = sentence_attentions(record_options, second)[0]
        layers = list(range(first.weights.shape[0]))
        if record_options["layer"] is not None:
            layers = [_check_layer(record_options["layer"], len(layers), model)]
        from blockviz.models.evidence import Side, Words, align_words, head_shifts, match_query, unseen_words

        words_a = Words.of_tokens(first.tokens, first.words)
        words_b = Words.of_tokens(other.tokens, other.words)
        with usage_error_for("--from"):
            query_a, query_b = match_query(
                (first.tokens, words_a, first.special), (other.tokens, words_b, other.special), query
            )
        writable_file(figure_path)
        from blockviz.cli.heads_command import _causal

        causal = _causal(first)
        seeing = _seeing_note(first, other, query_a, query_b, causal, model)
        from blockviz.models.comparison import comparison_json, moved_grid, pair_label, rows_panel
        from blockviz.models.comparison import query_name as name_of_query

        query_name = name_of_query(first.tokens[query_a], other.tokens[query_b])
        pairs = align_words(words_a.names, words_b.names)
        side_a = Side(first.weights[layers], words_a, first.special, query_a, 0)
        side_b = Side(other.weights[layers], words_b, other.special, query_b, 0)
        shifts = head_shifts(side_a, side_b, pairs)
        what = _what(first, model, side_a.weights.shape, kv_heads)
        labels = [pair_label(words_a, words_b, pair) for pair in pairs]
        n_heads = side_a.weights.shape[1]
        if as_json:
            click.echo(
                json.dumps(
                    comparison_json(
                        first.tokens, other.tokens, query_a, query_b, labels, shifts, layers, seeing, model
                    ),
                    ensure_ascii=False,
                    indent=1,
                )
            )
        else:
            click.echo(f"{what}; {note_line}" if note_line else what)
            if seeing:
                click.echo(seeing)
            else:
                _print_shifts(shifts[:top], labels, query_name, query_a, query_b, layers, n_heads, kv_heads)
        from blockviz.cli.heads_command import _notes, _of

        notes = _notes(what, note_line, "", [seeing] if seeing else [])[1:]
        grid = moved_grid(shifts, labels, query_name, layers, n_heads, kv_heads, _of(what), notes, seeing)
        panel = rows_panel(shifts[0], labels, query_name, layers, unseen_words(side_a, side_b, pairs, causal))
        if as_json:
            _write_quietly(grid, figure_path, panel)
        else:
            _write(grid, figure_path, first.tokens + other.tokens, under=panel.under)


def _print_shifts(shifts, labels, query_token, query_a, query_b, layers, n_heads, kv_heads) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.tokens import display_token

    click.echo(
        f"attention from {display_token(query_token)!r} (position {query_a} in the first sentence, {query_b} in the second), "
        f"the heads whose attention moves most first (moved = ½ Σ |change|, the share of its weight that goes elsewhere):"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("rank", "layer", "head") + (("kv head",) if kv_heads < n_heads else ()) + ("moved",):
        table.add_column(Text(name), justify="right")
    table.add_column(Text("gained"))
    table.add_column(Text("lost"))
    for rank, shift in enumerate(shifts, start=1):
        cells = [str(rank), str(layers[shift.layer]), str(shift.head)]
        cells += [str(_kv(shift.head, n_heads, kv_heads))] if kv_heads < n_heads else []
        cells.append(_number(shift.moved))
        for picked in (shift.gained, shift.lost):
            cells.append(
                Text(
                    ", ".join(f"{display_token(labels[i])} {shift.row_a[i]:.2f}→{shift.row_b[i]:.2f}" for i in picked)
                    or "-"
                )
            )
        table.add_row(*cells)
    from blockviz.cli.heads_command import _console

    _console().print(table)
    best = shifts[0]
    click.echo(f"layer {layers[best.layer]} head {best.head}, its rows side by side:")
    rows = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name, justify in (("key", "left"), ("first", "right"), ("second", "right"), ("change", "right")):
        rows.add_column(Text(name), justify=justify)
    for label, a, b, change in zip(labels, best.row_a, best.row_b, best.change):
        rows.add_row(Text(display_token(label)), _number(a), _number(b), _number(change, signed=True))
    _console().print(rows)


def _write_quietly(grid, path: Path, panel) -> None:
    """As :func:`~blockviz.cli.heads_command._write`, the path not printed (stdout is the JSON)."""
    from blockviz.figures.heads_figure import write_heads_figure

    write_heads_figure(grid, path, under=panel.under)
