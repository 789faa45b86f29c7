"""``blockviz heads``: find the head — every layer × head ranked by the weight from one token to
another (:func:`blockviz.heads.rank`), as a table and a layer × head figure
(:mod:`blockviz.cli.heads_printing`, :mod:`blockviz.figures.heads_grids`)."""

from __future__ import annotations

import click

from blockviz.cli.heads_options import (
    analysed_model,
    check_model_options,
    figure_path,
    heads_record_options,
    sentence_attentions,
    token_options,
)
from blockviz.cli.heads_printing import print_ranking, write_figure
from blockviz.cli.options import pop_record_options, reporting_errors, sentence_named
from blockviz.cli.sentence import SentenceCommand

RANKINGS = ("weight", "contrast", "above-baseline")
"""As :data:`blockviz.models.evidence.RANKINGS` (not imported here: ``--help`` imports no torch)."""
DEFAULT_KEYS = 3
"""Keys listed per head without --to (as :data:`blockviz.heads.DEFAULT_KEYS`: ``--help`` imports no torch)."""


@click.command(cls=SentenceCommand)
@click.option(
    "--from",
    "query",
    required=True,
    metavar="WORD|WORD#K|POSITION",
    help="The query token whose attention is ranked: a word (its first occurrence, ignoring case), WORD#K (its k-th, from 1) or a 0-based position.",
)
@click.option(
    "--to",
    "key",
    default=None,
    metavar="WORD|WORD#K|POSITION",
    help="The key token: rank every head by the weight from --from to it. Without --to, each head's largest keys are listed.",
)
@click.option(
    "--top",
    "top",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help=f"With --to: list only the K highest heads (default: every head). Without --to: K keys per head (default {DEFAULT_KEYS}).",
)
@click.option(
    "-o",
    "--output",
    "--figure",
    "output",
    type=click.Path(path_type=str),
    default=None,
    metavar="FILE|DIR",
    help="Write the layer × head figure to FILE (.png, .svg or .pdf), or into DIR as heads-<model>.png (an existing folder, or a "
    "path ending in /, as the other commands' -o; --figure is its old name).  [default: renders/<sentence-slug>/heads-<model>.png, "
    "heads-toy.png for the toy model, heads.png for the seeded block]",
)
@click.option(
    "--contrast",
    "contrast",
    default=None,
    metavar="S2",
    help="A contrast sentence (one word changed): each head's weight from --from to --to in it too, and the change. Needs --to.",
)
@click.option(
    "--rank",
    "rank_by",
    type=click.Choice(RANKINGS),
    default=None,
    help="Rank heads by their weight, by its change in the contrast sentence, or by how far it stands above the head's "
    "baseline (its mean weight on that key from the other queries).  [default: contrast with --contrast, else above-baseline]",
)
@heads_record_options
def heads(query, key, top, output, contrast, rank_by, **options) -> None:
    """Find the head: rank every layer × head by its attention from one token to another.

    Prints each head's weight from the --from token (query) to the --to token (key) with the
    evidence beside it: the head's baseline (its mean weight on that key from the other queries;
    in a decoder only those that see it), how far the weight stands above it, the query's weight
    on the first token and on special tokens ([CLS], [SEP], BOS) — "parks" when they take half or
    more —, and with --contrast S2 the same weight in S2 and the change. A word the tokenizer
    splits ("suit" + "case") is one key, its pieces' weights added. In a decoder, a query before
    the words that differ sees the same prefix in both sentences: one line says so instead of
    ranking by the contrast. Without --to, each head's largest keys for --from (a decoder's first
    token sees only itself: one line says so, no table, no figure). Writes a figure of the
    layer × head grid of those weights (-o FILE or DIR, by default
    renders/<sentence-slug>/heads-<model>.png) and prints its path. Heads are query heads
    (under grouped-query attention too). Without --model, the trained toy model's one layer is
    ranked (--model seeded: the seeded block's).

    \b
    Examples:
      blockviz heads "The chicken didn't cross the road because it was too tired." --model minilm --from it --to chicken
      blockviz heads "The chicken didn't cross the road because it was too tired." --model smollm2 --from it --top 2
      blockviz heads "The chicken didn't cross the road because it was too tired." --model minilm --from it --to chicken --contrast "The chicken didn't cross the road because it was too wide."
      blockviz heads "the cat sat on the mat" --from the#2 --to cat -o cat-heads.svg
    """
    from blockviz.figures.heads_grids import heads_grid
    from blockviz.files import writable_file
    from blockviz.heads import rank

    record_options = pop_record_options(options)
    check_model_options(record_options)
    path = figure_path(output, "heads", record_options)
    _check_ranking(key, contrast, rank_by, record_options["sentence"])
    with reporting_errors():
        attentions, note = sentence_attentions(record_options)
        with sentence_named("'--contrast'"):
            other = sentence_attentions(record_options, contrast)[0] if contrast is not None else None
        with token_options(query="--from", key="--to"):
            ranking = rank(
                attentions,
                query,
                key,
                model=analysed_model(record_options),
                layer=record_options["layer"],
                contrast=other,
                by=rank_by,
                keys=top or DEFAULT_KEYS,
            )
        if ranking.horizon is None:
            writable_file(path)
        print_ranking(ranking, note, top)
        if ranking.horizon is None:
            write_figure(heads_grid(ranking, note), path, attentions.tokens)


def _check_ranking(key: str | None, contrast: str | None, rank_by: str | None, sentence: str) -> None:
    """--contrast and --rank compare the one weight --to names; the contrast sentence differs."""
    if contrast is not None and key is None:
        raise click.UsageError(
            "--contrast compares one weight: give --to KEY too (blockviz compare S1 S2 --from TOKEN compares whole rows)"
        )
    if contrast is not None and contrast.strip() == sentence.strip():
        raise click.BadParameter(
            "the contrast sentence is the sentence itself: change a word", param_hint="'--contrast'"
        )
    if rank_by == "contrast" and contrast is None:
        raise click.BadParameter("ranking by contrast needs --contrast S2", param_hint="'--rank'")
    if rank_by is not None and key is None:
        raise click.BadParameter("--rank ranks the weight from --from to --to: give --to KEY", param_hint="'--rank'")
