"""``blockviz compare S1 S2``: one query token's attention in two sentences, head by head — the
rows side by side, their difference, the heads whose attention moves most first
(:func:`blockviz.heads.compare`; printed by :mod:`blockviz.cli.heads_printing`, the figure
:mod:`blockviz.figures.heads_grids`)."""

from __future__ import annotations

import json

import click

from blockviz.cli.heads_options import (
    analysed_model,
    check_model_options,
    figure_path,
    heads_record_options,
    sentence_attentions,
    token_options,
)
from blockviz.cli.heads_printing import print_comparison, write_figure, write_figure_quietly
from blockviz.cli.options import pop_record_options, reporting_errors, sentence_named
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
@heads_record_options
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
    from blockviz.figures.heads_grids import comparison_grid
    from blockviz.files import writable_file
    from blockviz.heads import compare as compare_heads

    record_options = pop_record_options(options)
    check_model_options(record_options)
    if second.strip() == record_options["sentence"].strip():
        raise click.BadParameter("S2 is the first sentence itself: change a word", param_hint="'S2'")
    path = figure_path(output, "compare", record_options)
    with reporting_errors():
        first, note = sentence_attentions(record_options)
        with sentence_named("'S2'"):
            other = sentence_attentions(record_options, second)[0]
        with token_options(query="--from"):
            comparison = compare_heads(
                first, other, query, model=analysed_model(record_options), layer=record_options["layer"]
            )
        writable_file(path)
        if as_json:
            click.echo(json.dumps(comparison.data(), ensure_ascii=False, indent=1))
        else:
            print_comparison(comparison, note, top)
        grid, panel = comparison_grid(comparison, note)
        if as_json:
            write_figure_quietly(grid, path, under=panel.under)
        else:
            write_figure(grid, path, first.tokens + other.tokens, under=panel.under)
