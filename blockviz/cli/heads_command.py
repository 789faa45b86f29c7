"""``blockviz heads``: find the head — every layer × head ranked by the weight from one token to
another, as a table and a layer × head figure (:mod:`blockviz.models.heads`,
:mod:`blockviz.figures.heads_figure`)."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.cli.options import (
    SEEDED,
    TOY_OPTIONS,
    pop_record_options,
    record_options,
    reporting_errors,
    sentence_named,
    usage_error_for,
    without_a_model,
)
from blockviz.cli.records import command_record
from blockviz.cli.sentence import SentenceCommand
from blockviz.toy import is_toy_model

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
RANKINGS = ("weight", "contrast", "above-baseline")
"""As :data:`blockviz.models.evidence.RANKINGS` (not imported here: ``--help`` imports no torch)."""
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
@_heads_options
def heads(query, key, top, output, contrast, rank_by, **options) -> None:
    """Find the head: rank every layer × head by its attention from one token to another.

    Prints each head's weight from the --from token (query) to the --to token (key) with the
    evidence beside it: the head's baseline (its mean weight on that key from the other queries;
    in a decoder only those that see it), how far the weight stands above it, the query's weight
    on the first token and on special tokens ([CLS], [SEP], BOS) — "parks" when they take half or
    more —, and with --contrast S2 the same weight in S2 and the change. A word the tokenizer
    splits ("suit" + "case") is one key, its pieces' weights added. In a decoder, a query before
    the words that differ sees the same prefix in both sentences: one line says so instead of
    ranking by the contrast. Without --to, each head's largest keys for --from. Writes a figure of the
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
    from blockviz.files import sentence_slug, writable_file

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
    if contrast is not None and key is None:
        raise click.UsageError(
            "--contrast compares one weight: give --to KEY too (blockviz compare S1 S2 --from TOKEN compares whole rows)"
        )
    if contrast is not None and contrast.strip() == record_options["sentence"].strip():
        raise click.BadParameter(
            "the contrast sentence is the sentence itself: change a word", param_hint="'--contrast'"
        )
    if rank_by == "contrast" and contrast is None:
        raise click.BadParameter("ranking by contrast needs --contrast S2", param_hint="'--rank'")
    if rank_by is not None and key is None:
        raise click.BadParameter("--rank ranks the weight from --from to --to: give --to KEY", param_hint="'--rank'")
    with reporting_errors():
        attentions, kv_heads, note_line = sentence_attentions(record_options)
        with sentence_named("'--contrast'"):
            other = sentence_attentions(record_options, contrast)[0] if contrast is not None else None
        layers = list(range(attentions.weights.shape[0]))
        if record_options["layer"] is not None:
            layers = [_check_layer(record_options["layer"], len(layers), record_options["model"])]
        weights = attentions.weights[layers]
        tokens = attentions.tokens
        from blockviz.models.evidence import Words, select_word

        words = Words.of_tokens(tokens, attentions.words)
        with usage_error_for("--from"):
            query_position = select_word(tokens, words, query, attentions.special)
        with usage_error_for("--to"):
            key_position = select_word(tokens, words, key, attentions.special) if key is not None else None
        from blockviz.models.heads import check_visible

        if key_position is not None:
            check_visible(weights, query_position, key_position, tokens)
        contrast_side = None
        if other is not None:
            contrast_side = _contrast_side(attentions, other, query, key, layers)
        writable_file(figure_path)
        what = _what(attentions, model, weights.shape, kv_heads)
        if note_line:
            click.echo(f"{what}; {note_line}")
        else:
            click.echo(what)
        causal = _causal(attentions)
        extra_notes = _piece_notes(words, tokens, query_position, key_position)
        for line in extra_notes:
            click.echo(line)
        if key_position is not None:
            from blockviz.models.evidence import Side, head_evidence

            side = Side(weights, words, attentions.special, query_position, words.of(key_position))
            seeing = None
            if contrast_side is not None:
                seeing = _seeing_note(attentions, other, side.query, contrast_side.query, causal, model)
                if seeing:
                    click.echo(seeing)
                    extra_notes.append(seeing)
            by = rank_by or ("contrast" if contrast_side is not None and not seeing else "above-baseline")
            if by == "contrast" and seeing:
                by = "above-baseline"
            rows = head_evidence(side, causal, contrast_side)
            ranked = _print_evidence(
                rows, by, words, tokens, side, contrast_side, other, layers, weights.shape[1], kv_heads, top, causal
            )
            grid = _ranking_grid(
                weights,
                ranked,
                tokens,
                query_position,
                key_position,
                layers,
                what,
                kv_heads,
                note_line,
                words,
                extra_notes,
                by,
            )
        else:
            from blockviz.models.evidence import sink_share, top_words

            per_head = top_words(weights, query_position, words, top or DEFAULT_KEYS, causal)
            sinks = sink_share(weights, query_position, attentions.special)
            _print_keys(per_head, words, tokens, query_position, layers, kv_heads, weights.shape[1], sinks)
            grid = _keys_grid(
                per_head,
                words,
                tokens,
                query_position,
                layers,
                what,
                kv_heads,
                note_line,
                weights.shape[:2],
                extra_notes,
            )
        _write(grid, figure_path, tokens)


def _causal(attentions) -> bool:
    """Whether the attentions are a causal model's: as the model says, else from the weights."""
    if attentions.causal is not None:
        return attentions.causal
    from blockviz.models.evidence import infer_causal

    return infer_causal(attentions.weights)


def _contrast_side(attentions, other, query: str, key: str, layers: list[int]):
    """The contrast sentence's :class:`~blockviz.models.evidence.Side`: --from and --to matched
    in it by word (or position, :func:`~blockviz.models.evidence.match_query`); a token missing is a usage error."""
    from blockviz.models.evidence import Side, Words, match_query

    words_a = Words.of_tokens(attentions.tokens, attentions.words)
    words_b = Words.of_tokens(other.tokens, other.words)
    a = (attentions.tokens, words_a, attentions.special)
    b = (other.tokens, words_b, other.special)
    with usage_error_for("--from"):
        _, query_b = match_query(a, b, query)
    with usage_error_for("--to"):
        _, key_b = match_query(a, b, key)
    return Side(other.weights[layers], words_b, other.special, query_b, words_b.of(key_b))


def _seeing_note(attentions, other, query_a: int, query_b: int, causal: bool, model) -> str | None:
    """One line when a causal query cannot see where the sentences differ (its weights are the same in both), else ``None``."""
    from blockviz.models.evidence import first_difference, query_sees_difference
    from blockviz.tokens import display_token

    difference = first_difference(attentions.tokens, other.tokens)
    if query_sees_difference(query_a, query_b, difference, causal):
        return None
    q = display_token(attentions.tokens[query_a])
    if difference is None:
        return f"the two sentences have the same tokens: every weight from {q!r} is the same in both"
    a = attentions.tokens[difference] if difference < len(attentions.tokens) else "(end)"
    b = other.tokens[difference] if difference < len(other.tokens) else "(end)"
    name = "the model" if model is None else str(model)
    return (
        f"{q!r} (position {query_a}) cannot see {display_token(a)!r} → {display_token(b)!r} (position {difference}), "
        f"where the sentences differ: {name} is causal, so every weight from {q!r} is the same in both and nothing is ranked by the contrast"
    )


def _piece_notes(words, tokens, query: int, key: int | None) -> list[str]:
    """A line for the query's and the key's word when the tokenizer split it into pieces."""
    from blockviz.tokens import display_token

    lines = []
    for role, position in (("key", key), ("query", query)):
        if position is None:
            continue
        group = words.groups[words.of(position)]
        if len(group) == 1:
            continue
        pieces = " + ".join(repr(display_token(tokens[p])) for p in group)
        name = display_token(words.names[words.of(position)])
        if role == "key":
            lines.append(
                f"{name!r} is {len(group)} tokens ({pieces}, positions {group[0]}–{group[-1]}): one key, its pieces' weights added"
            )
        else:
            lines.append(f"{name!r} is {len(group)} tokens ({pieces}): the query is the token at position {position}")
    return lines


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


def _write(grid, path: Path, tokens: list[str], under=None) -> None:
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


def _check_options(options: dict) -> None:
    """--layer and --trust-pickle go with --model; the seeded block's options and --dtype do not."""
    context = click.get_current_context()
    model = options["model"]
    if options["layer"] is not None or options["trust_pickle"]:
        if model is None or model.strip().lower() == SEEDED:
            raise without_a_model(options["layer"], model)
    if model is None:
        return
    for name, flag in {**TOY_OPTIONS, "dtype": "--dtype"}.items():
        source = context.get_parameter_source(name)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            raise click.UsageError(
                f"{flag} builds blockviz's own block: a model brings its own sizes and weights (read in float32), drop {flag} with --model"
            )


def sentence_attentions(options: dict, sentence: str | None = None):
    """The attentions to rank ``(n_layers, n_heads, n, n)`` of ``sentence`` (default: the
    options' own), the number of key/value heads, and a note on the weights (the GGUF
    quantisation) or ``None``. A model is loaded once per process, whatever the sentence.
    A model that gives no attention weights is a usage error (exit 2)."""
    model = options["model"]
    if sentence is not None:
        options = {**options, "sentence": sentence}
    if model is None or is_toy_model(model):  # one block, recorded: the seeded block or blockviz's trained toy model
        from blockviz.models.recording import block_attentions

        rec = command_record(options)
        return block_attentions(rec), rec.config.kv_heads, None if model is None else rec.source.describe()
    from blockviz.errors import BlockvizError

    try:
        from blockviz.models.loading import first_load_is_slow, load_model
        from blockviz.models.recording import NoAttentionWeights
        from blockviz.recording import attentions as model_attentions
    except ImportError as error:  # torch or transformers broken, not merely missing
        raise BlockvizError(f"cannot load the model support ({error}): pip install 'blockviz[models]'") from None
    if first_load_is_slow(model):
        click.echo(
            f"converting {model}'s GGUF file to float32 once (20–75 s); later runs read the cached copy", err=True
        )
    try:
        attentions = model_attentions(options["sentence"], model, trust_pickle=options["trust_pickle"])
    except NoAttentionWeights as error:
        raise click.BadParameter(str(error), param_hint="'--model'") from None
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


RANK_WORDS = {
    "weight": "largest weight first",
    "above-baseline": "largest weight above the head's baseline first",
    "contrast": "largest change in the contrast sentence first",
}


def _number(value: float | None, signed: bool = False) -> str:
    import math

    from blockviz.style import format_number

    if value is None or math.isnan(value):
        return "n/a"
    text = format_number(value, 4, unicode_minus=False)
    return f"+{text}" if signed and not text.startswith("-") else text


def _print_evidence(rows, by, words, tokens, side, contrast_side, other, layers, n_heads, kv_heads, top, causal):
    """The ranked table: rank, layer, head, (kv head,) weight, (contrast, change,) baseline,
    above, first, special, parks. Returns the ranked rows."""
    from rich.table import Table
    from rich.text import Text

    from blockviz.models.evidence import PARKS_AT, rank_evidence
    from blockviz.tokens import display_token

    ranked = rank_evidence(rows, by)
    shown = ranked if top is None else ranked[:top]
    q = display_token(tokens[side.query])
    k = display_token(words.names[side.key])
    group = words.groups[side.key]
    where = f"position {group[0]}" if len(group) == 1 else f"positions {group[0]}–{group[-1]}"
    also = ""
    if contrast_side is not None:
        kb = contrast_side.words.groups[contrast_side.key]
        also = (
            f"\n  contrast: the same weight in the contrast sentence ({display_token(other.tokens[contrast_side.query])!r} "
            f"position {contrast_side.query} to {display_token(contrast_side.words.names[contrast_side.key])!r} position {kb[0]}); "
            "change = contrast − weight"
        )
    click.echo(  # a heading, then one line per column family: a terminal's width, not one 400-character line
        f"weight from {q!r} (position {side.query}) to {k!r} ({where}), {RANK_WORDS[by]}"
        f"{'' if top is None or top >= len(ranked) else f' (the {top} highest of {len(ranked)} heads)'}{also}\n"
        f"  baseline: the head's mean weight on {k!r} from the other queries{' that see it' if causal else ''}; above = weight − baseline\n"
        f"  first, special: the weight from {q!r} on the first token and on special tokens; parks: the two take {PARKS_AT} or more"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    names = ("rank", "layer", "head") + (("kv head",) if kv_heads < n_heads else ()) + ("weight",)
    names += ("contrast", "change") if contrast_side is not None else ()
    names += ("baseline", "above", "first", "special")
    for name in names:
        table.add_column(Text(name), justify="right")
    table.add_column(Text("parks"))
    for rank, row in enumerate(shown, start=1):
        cells = [str(rank), str(layers[row.layer]), str(row.head)] + (
            [str(_kv(row.head, n_heads, kv_heads))] if kv_heads < n_heads else []
        )
        cells.append(_number(row.weight))
        if contrast_side is not None:
            cells += [_number(row.contrast), _number(row.change, signed=True)]
        cells += [_number(row.baseline), _number(row.above, signed=True), _number(row.first), _number(row.special)]
        cells.append("parks" if row.parks else "")
        table.add_row(*cells)
    _console().print(table)
    return ranked


def _print_keys(per_head, words, tokens, query, layers, kv_heads, n_heads, sinks) -> None:
    from rich.table import Table
    from rich.text import Text

    from blockviz.models.evidence import PARKS_AT
    from blockviz.style import format_number
    from blockviz.tokens import display_token

    k = max(len(keys) for keys in per_head)
    click.echo(
        f"each head's largest weights from {display_token(tokens[query])!r} (position {query}), by layer and head "
        f"(a word's pieces added; sink: its weight on the first token and special tokens, parks at {PARKS_AT} or more):"
    )
    table = Table(box=None, padding=(0, 0, 0, 2), show_edge=False)
    for name in ("layer", "head") + (("kv head",) if kv_heads < n_heads else ()):
        table.add_column(Text(name), justify="right")
    for index in range(1, k + 1):
        table.add_column(Text(f"key {index}"), max_width=16, overflow="ellipsis", no_wrap=True)
        table.add_column(Text("weight"), justify="right")
    table.add_column(Text("sink"), justify="right")
    table.add_column(Text("parks"))
    for index, keys in enumerate(per_head):
        layer, head = divmod(index, n_heads)
        cells = [str(layers[layer]), str(head)] + ([str(_kv(head, n_heads, kv_heads))] if kv_heads < n_heads else [])
        for word, weight in keys:
            cells += [
                Text(f"{display_token(words.names[word])} ({words.groups[word][0]})"),
                format_number(weight, 4, unicode_minus=False),
            ]
        cells += ["", ""] * (k - len(keys))
        sink = float(sinks[layer, head])
        cells += [format_number(sink, 4, unicode_minus=False), "parks" if sink >= PARKS_AT else ""]
        table.add_row(*cells)
    _console().print(table)


def _notes(what: str, note_line: str | None, first: str, extra: list[str] = ()) -> tuple[str, ...]:
    notes = [first, what + "."]
    if note_line:
        notes.append(note_line[0].upper() + note_line[1:] + ".")
    notes += [line[0].upper() + line[1:] + "." for line in extra]
    return tuple(notes)


def _of(what: str) -> str:
    """`` of minilm`` for a model's title (``what`` starts with its name), nothing for the seeded block."""
    return "" if what.startswith("the seeded block") else f" of {what.split(' (')[0]}"


FRAMED = {
    "weight": "the largest",
    "above-baseline": "the furthest above its baseline",
    "contrast": "the largest change in the contrast sentence",
}


def _ranking_grid(weights, ranked, tokens, query, key, layers, what, kv_heads, note_line, words, extra, by):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid
    from blockviz.models.evidence import word_weights
    from blockviz.style import format_number
    from blockviz.tokens import display_token

    best = ranked[0]
    values = np.asarray(word_weights(weights, words)[:, :, query, words.of(key)], dtype=float)
    decimals = HeadsGrid(values, "", best=(best.layer, best.head)).decimals  # the grid's one format, the note's too
    q, k = display_token(tokens[query]), display_token(words.names[words.of(key)])
    first = (
        f"Each cell: the head's weight from query \u201c{q}\u201d (position {query}) on key \u201c{k}\u201d (position {key}). "
        f"Framed: {FRAMED[by]}, layer {layers[best.layer]} head {best.head} ({format_number(float(values[best.layer, best.head]), decimals)})."
    )
    return HeadsGrid(
        values,
        f"Attention from \u201c{q}\u201d to \u201c{k}\u201d in every head{_of(what)}",
        best=(best.layer, best.head),
        notes=_notes(what, note_line, first, extra),
        head_label="query head" if kv_heads < weights.shape[1] else "head",
        layers=tuple(layers),
    )


def _keys_grid(per_head, words, tokens, query, layers, what, kv_heads, note_line, shape, extra):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid
    from blockviz.tokens import display_token

    n_layers, n_heads = shape
    values = np.array([keys[0][1] for keys in per_head], dtype=float).reshape(n_layers, n_heads)
    names = [
        [words.names[per_head[layer * n_heads + head][0][0]] for head in range(n_heads)] for layer in range(n_layers)
    ]
    q = display_token(tokens[query])
    first = f"Each cell: the key that gets the head's largest weight from query \u201c{q}\u201d (position {query}), and that weight."
    return HeadsGrid(
        values,
        f"Where \u201c{q}\u201d looks in every head{_of(what)}",
        keys=names,
        notes=_notes(what, note_line, first, extra),
        head_label="query head" if kv_heads < n_heads else "head",
        layers=tuple(layers),
    )
