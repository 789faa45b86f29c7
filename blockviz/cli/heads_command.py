"""``blockviz heads``: find the head — every layer × head ranked by the weight from one token to
another, as a table and a layer × head figure (:mod:`blockviz.models.heads`,
:mod:`blockviz.figures.heads_figure`)."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.cli.options import TOY_OPTIONS, pop_record_options, record_options, reporting_errors, usage_error_for
from blockviz.cli.records import command_record
from blockviz.cli.sentence import SentenceCommand
from blockviz.toy import is_toy_model

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
DEFAULT_KEYS = 3
"""Keys listed per head without --to."""
MODEL_HELP = (
    "Whose heads to rank. toy (the default): blockviz's trained one-block model, or a folder blockviz train wrote; "
    "seeded: blockviz's block with seeded random weights (giving --d-model, --heads, … chooses it too); "
    "minilm (BERT encoder), smollm2 (Llama decoder), "
    "a Hugging Face model folder (GPT-2, BERT or Llama), or a hub id owner/name (the only case that uses the network)."
)
LAYER_HELP = "Rank only layer L's heads (from 0, with --model). Default: every layer."


def _heads_options(command):
    """The shared record options (:func:`~blockviz.cli.options.record_options`), their help
    saying what --model and --layer mean here: every layer is ranked unless --layer names one."""
    command = record_options()(command)
    for parameter in command.__click_params__:  # the options click.command() will collect
        if parameter.name == "model":
            parameter.help = MODEL_HELP
        elif parameter.name == "layer":
            parameter.help = LAYER_HELP
    return command


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
@_heads_options
def heads(query, key, top, output, **options) -> None:
    """Find the head: rank every layer × head by its attention from one token to another.

    Prints each head's weight from the --from token (query) to the --to token (key), the
    largest first; without --to, each head's largest keys for --from. Writes a figure of the
    layer × head grid of those weights (-o FILE or DIR, by default
    renders/<sentence-slug>/heads-<model>.png) and prints its path. Heads are query heads
    (under grouped-query attention too). Without --model, the trained toy model's one layer is
    ranked (--model seeded: the seeded block's).

    \b
    Examples:
      blockviz heads "The chicken didn't cross the road because it was too tired." --model minilm --from it --to chicken
      blockviz heads "The chicken didn't cross the road because it was too tired." --model smollm2 --from it --top 2
      blockviz heads "the cat sat on the mat" --from the#2 --to cat -o cat-heads.svg
    """
    from blockviz.files import sentence_slug, writable_file
    from blockviz.selection import select_token

    record_options = pop_record_options(options)
    _check_options(record_options)
    model = record_options["model"]
    name = "heads.png" if model is None else f"heads-{sentence_slug(Path(str(model)).name)}.png"
    figure_path = _figure_path(output, name)
    if figure_path is None:
        figure_path = Path("renders") / sentence_slug(record_options["sentence"]) / name
    if figure_path.suffix.lower() not in FIGURE_SUFFIXES:
        raise click.BadParameter(
            f"{str(figure_path)!r} names no figure format: end it in {', '.join(FIGURE_SUFFIXES)}, or give a folder",
            param_hint="'-o'",
        )
    with reporting_errors():
        attentions, kv_heads, note_line = _attentions(record_options)
        layers = list(range(attentions.weights.shape[0]))
        if record_options["layer"] is not None:
            layers = [_check_layer(record_options["layer"], len(layers), record_options["model"])]
        weights = attentions.weights[layers]
        tokens = attentions.tokens
        with usage_error_for("--from"):
            query_position = select_token(tokens, query, attentions.special)
        with usage_error_for("--to"):
            key_position = select_token(tokens, key, attentions.special) if key is not None else None
        from blockviz.models.heads import check_visible, heads_of, rank_heads

        if key_position is not None:
            check_visible(weights, query_position, key_position, tokens)
        writable_file(figure_path)
        what = _what(attentions, model, weights.shape, kv_heads)
        if note_line:
            click.echo(f"{what}; {note_line}")
        else:
            click.echo(what)
        if key_position is not None:
            ranked = rank_heads(weights, query_position, key_position)
            _print_ranking(ranked, tokens, query_position, key_position, layers, weights.shape[1], kv_heads, top)
            grid = _ranking_grid(
                weights, ranked, tokens, query_position, key_position, layers, what, kv_heads, note_line
            )
        else:
            per_head = heads_of(weights, query_position, top or DEFAULT_KEYS)
            _print_keys(per_head, tokens, query_position, layers, kv_heads, weights.shape[1])
            grid = _keys_grid(weights, per_head, tokens, query_position, layers, what, kv_heads, note_line)
        _write(grid, figure_path, tokens)


def _figure_path(output: str | None, name: str) -> Path | None:
    """Where ``-o OUTPUT`` writes the figure: OUTPUT itself, or OUTPUT/``name`` when OUTPUT is an
    existing folder or ends in a path separator; ``None`` without -o.

    >>> _figure_path("cat.svg", "heads.png"), _figure_path("out/", "heads.png"), _figure_path(None, "heads.png")
    (PosixPath('cat.svg'), PosixPath('out/heads.png'), None)
    """
    import os

    if output is None:
        return None
    separators = ("/", os.sep) + ((os.altsep,) if os.altsep else ())
    if output.endswith(separators) or os.path.isdir(output):
        return Path(output) / name
    return Path(output)


def _write(grid, path: Path, tokens: list[str]) -> None:
    """Save the figure and print its path; a token no font can draw is one warning line first."""
    import warnings

    from blockviz.figures.glyphs import MissingGlyphWarning, warn_missing_glyphs
    from blockviz.figures.heads_figure import write_heads_figure

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingGlyphWarning)
        warn_missing_glyphs(tokens)
        written = write_heads_figure(grid, path)
    for warning in caught:
        if issubclass(warning.category, MissingGlyphWarning):
            click.echo(f"warning: {warning.message}", err=True)
    click.echo(str(written))


def _check_options(options: dict) -> None:
    """--layer and --trust-pickle go with --model; the seeded block's options and --dtype do not."""
    context = click.get_current_context()
    model = options["model"]
    if model is None:
        if options["layer"] is not None or options["trust_pickle"]:
            raise click.UsageError(
                "--layer and --trust-pickle go with --model NAME|PATH (the seeded block has one layer)"
            )
        return
    for name, flag in {**TOY_OPTIONS, "dtype": "--dtype"}.items():
        source = context.get_parameter_source(name)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            raise click.UsageError(
                f"{flag} builds blockviz's own block: a model brings its own sizes and weights (read in float32), drop {flag} with --model"
            )


def _attentions(options: dict):
    """The attentions to rank ``(n_layers, n_heads, n, n)``, the number of key/value heads, and a
    note on the weights (the GGUF quantisation) or ``None``."""
    model = options["model"]
    if model is None or is_toy_model(model):  # one block, recorded: the seeded block or blockviz's trained toy model
        from blockviz.models.recording import block_attentions

        rec = command_record(options)
        return block_attentions(rec), rec.config.kv_heads, None if model is None else rec.source.describe()
    from blockviz.errors import BlockvizError

    try:
        from blockviz.models.loading import first_load_is_slow, load_model
        from blockviz.models.recording import model_attentions
    except ImportError as error:  # torch or transformers broken, not merely missing
        raise BlockvizError(f"cannot load the model support ({error}): pip install 'blockviz[models]'") from None
    if first_load_is_slow(model):
        click.echo(
            f"converting {model}'s GGUF file to float32 once (20–75 s); later runs read the cached copy", err=True
        )
    attentions = model_attentions(options["sentence"], model=model, trust_pickle=options["trust_pickle"])
    loaded = load_model(model, trust_pickle=options["trust_pickle"])  # loaded once per process: this is the same object
    config = loaded.family.config(loaded.model.config, loaded.dtype)
    return attentions, config.kv_heads, loaded.note


def _check_layer(layer: int, n_layers: int, model) -> int:
    from blockviz.errors import BlockvizError

    if layer >= n_layers:
        raise BlockvizError(f"layer {layer} is out of range: {model} has layers 0 to {n_layers - 1}")
    return layer


def _what(attentions, model, shape, kv_heads: int) -> str:
    """``minilm (bert): 6 layers × 12 heads`` (``… 9 query heads, every 3 sharing a key/value head``)."""
    n_layers, n_heads = shape[0], shape[1]
    source = f"{model} ({attentions.family})" if model is not None else f"the seeded block ({attentions.model})"
    layers = f"{n_layers} layer{'s' if n_layers > 1 else ''}"
    if kv_heads < n_heads:
        return f"{source}: {layers} × {n_heads} query heads, every {n_heads // kv_heads} sharing a key/value head"
    return f"{source}: {layers} × {n_heads} head{'s' if n_heads > 1 else ''}"


def _kv(head: int, n_heads: int, kv_heads: int) -> int:
    return head // (n_heads // kv_heads)


def _console():
    from rich.console import Console

    return Console(highlight=False, width=100_000, color_system=None)


def _print_ranking(ranked, tokens, query, key, layers, n_heads, kv_heads, top) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.style import format_number
    from blockviz.tokens import display_token

    shown = ranked if top is None else ranked[:top]
    click.echo(
        f"weight from {display_token(tokens[query])!r} (position {query}) to {display_token(tokens[key])!r} (position {key}), "
        f"largest first{'' if top is None or top >= len(ranked) else f' (the {top} highest of {len(ranked)} heads)'}:"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("rank", "layer", "head") + (("kv head",) if kv_heads < n_heads else ()) + ("weight",):
        table.add_column(Text(name), justify="right")
    for rank, head in enumerate(shown, start=1):
        cells = [str(rank), str(layers[head.layer]), str(head.head)] + (
            [str(_kv(head.head, n_heads, kv_heads))] if kv_heads < n_heads else []
        )
        table.add_row(*cells, format_number(head.weight, 4, unicode_minus=False))
    _console().print(table)


def _print_keys(per_head, tokens, query, layers, kv_heads, n_heads) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.style import format_number
    from blockviz.tokens import display_token

    k = max(len(keys) for keys in per_head)
    click.echo(
        f"each head's largest weights from {display_token(tokens[query])!r} (position {query}), by layer and head:"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("layer", "head") + (("kv head",) if kv_heads < n_heads else ()):
        table.add_column(Text(name), justify="right")
    for index in range(1, k + 1):
        table.add_column(Text(f"key {index}"), max_width=16, overflow="ellipsis", no_wrap=True)
        table.add_column(Text("weight"), justify="right")
    for index, keys in enumerate(per_head):
        layer, head = divmod(index, n_heads)
        cells = [str(layers[layer]), str(head)] + ([str(_kv(head, n_heads, kv_heads))] if kv_heads < n_heads else [])
        for entry in keys:
            cells += [
                Text(f"{display_token(tokens[entry.key])} ({entry.key})"),
                format_number(entry.weight, 4, unicode_minus=False),
            ]
        cells += ["", ""] * (k - len(keys))
        table.add_row(*cells)
    _console().print(table)


def _notes(what: str, note_line: str | None, first: str) -> tuple[str, ...]:
    notes = [first, what + "."]
    if note_line:
        notes.append(note_line[0].upper() + note_line[1:] + ".")
    return tuple(notes)


def _of(what: str) -> str:
    """`` of minilm`` for a model's title (``what`` starts with its name), nothing for the seeded block."""
    return "" if what.startswith("the seeded block") else f" of {what.split(' (')[0]}"


def _ranking_grid(weights, ranked, tokens, query, key, layers, what, kv_heads, note_line):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid
    from blockviz.models.heads import weights_between
    from blockviz.style import format_number
    from blockviz.tokens import display_token

    best = ranked[0]
    values = np.asarray(weights_between(weights, query, key), dtype=float)
    decimals = HeadsGrid(values, "", best=(best.layer, best.head)).decimals  # the grid's one format, the note's too
    q, k = display_token(tokens[query]), display_token(tokens[key])
    first = (
        f"Each cell: the head's weight from query \u201c{q}\u201d (position {query}) on key \u201c{k}\u201d (position {key}). "
        f"Framed: the largest, layer {layers[best.layer]} head {best.head} ({format_number(float(values[best.layer, best.head]), decimals)})."
    )
    return HeadsGrid(
        values,
        f"Attention from \u201c{q}\u201d to \u201c{k}\u201d in every head{_of(what)}",
        best=(best.layer, best.head),
        notes=_notes(what, note_line, first),
        head_label="query head" if kv_heads < weights.shape[1] else "head",
        layers=tuple(layers),
    )


def _keys_grid(weights, per_head, tokens, query, layers, what, kv_heads, note_line):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid
    from blockviz.tokens import display_token

    n_layers, n_heads = weights.shape[:2]
    values = np.array([keys[0].weight for keys in per_head], dtype=float).reshape(n_layers, n_heads)
    names = [[tokens[per_head[layer * n_heads + head][0].key] for head in range(n_heads)] for layer in range(n_layers)]
    q = display_token(tokens[query])
    first = f"Each cell: the key that gets the head's largest weight from query \u201c{q}\u201d (position {query}), and that weight."
    return HeadsGrid(
        values,
        f"Where \u201c{q}\u201d looks in every head{_of(what)}",
        keys=names,
        notes=_notes(what, note_line, first),
        head_label="query head" if kv_heads < n_heads else "head",
        layers=tuple(layers),
    )
