"""``blockviz figures``: every step of the block as a static figure (PNG, SVG, PDF), from the record."""

from __future__ import annotations

import warnings
from pathlib import Path

import click

from blockviz.cli.options import (
    TO_HELP,
    HeadNumberOrAuto,
    block_option,
    build_record,
    chosen_token_and_head,
    focused,
    pop_record_options,
    record_options,
    reporting_errors,
    resolved_head,
)
from blockviz.cli.output_folder import OutputFolder
from blockviz.cli.sentence import SentenceCommand
from blockviz.errors import BlockvizError, did_you_mean
from blockviz.figures.cores import cores_free, snapshot
from blockviz.figures.page import DEFAULT_WIDTH, WIDTH_LIMITS
from blockviz.figures.registry import DEFAULT_DPI, FIGURE_NAMES, FIGURES, FORMATS

THEMES = ("light", "dark")
"""The names of :data:`blockviz.style.THEMES` (restated so that ``--help`` imports no matplotlib; a test keeps them equal)."""


class FormatList(click.ParamType):
    """A comma-separated list of file formats, e.g. ``png,svg``; each one checked."""

    name = "FORMATS"

    def convert(self, value, param, ctx):
        if isinstance(value, (list, tuple)):
            return list(value)
        formats = [part.strip().lower().lstrip(".") for part in str(value).split(",") if part.strip()]
        if not formats:
            self.fail(f"give at least one format: a comma-separated list of {', '.join(FORMATS)}", param, ctx)
        unknown = [fmt for fmt in formats if fmt not in FORMATS]
        if unknown:
            self.fail(
                f"unknown format {unknown[0]!r}: choose from {', '.join(FORMATS)} (comma-separated, e.g. png,svg)",
                param,
                ctx,
            )
        return list(dict.fromkeys(formats))


def _figure_names(ctx, param, value) -> tuple[str, ...]:
    """``--figure a,b --figure c`` → ``("a", "b", "c")``, each one of :data:`FIGURE_NAMES`."""
    names = tuple(name.strip() for given in value for name in given.split(","))
    for name in names:
        if name not in FIGURE_NAMES:
            raise click.BadParameter(
                f"unknown figure {name!r}: {did_you_mean(name, FIGURE_NAMES)}choose from {', '.join(FIGURE_NAMES)} (each described by --list)"
            )
    return names


class Width(click.ParamType):
    """Inches from 2 to 40, or ``auto`` (``None``: each figure at its natural size)."""

    name = "INCHES|auto"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, float) or (isinstance(value, str) and value.strip().lower() == "auto"):
            return None if isinstance(value, str) else value
        low, high = WIDTH_LIMITS
        try:
            inches = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of inches: give one from {low:g} to {high:g}, or auto", param, ctx)
        if not (low <= inches <= high):  # also refuses nan and inf
            self.fail(
                f"{inches:g} inches is outside {low:g} to {high:g}: give a page width such as 6.5 (a text column) or 3.3 (a paper column), or auto",
                param,
                ctx,
            )
        return inches


@click.command(cls=SentenceCommand)
@record_options(allow_record_file=True)
@block_option
@click.option(
    "-o",
    "--output",
    "folder",
    type=OutputFolder(),
    default=None,
    metavar="DIR",
    help="The folder the files go into: DIR/<figure>.<format>.  [default: renders/<sentence-slug>/figures]",
)
@click.option(
    "--figure",
    "names",
    multiple=True,
    callback=_figure_names,
    metavar="NAME[,NAME…]",
    help="Draw only these figures: names separated by commas or the option repeated (see --list); one that cannot be drawn "
    f"from the record is an error. Default: each of the {len(FIGURES)} that fits the record's kind of block (a stack's "
    "figures only for a record of several blocks), one that fits but cannot be drawn skipped with a note.",
)
@click.option(
    "--format",
    "formats",
    type=FormatList(),
    default="png,svg",
    show_default=True,
    help=f"File formats, comma-separated: {', '.join(FORMATS)}.",
)
@click.option(
    "--width",
    type=Width(),
    default=str(DEFAULT_WIDTH),
    show_default=True,
    help="Page width in inches the figures are laid out for (6.5: a text column, 3.3: one column of a two-column paper; "
    "type is sized for it, at least 6 pt), or auto for each figure's natural size.",
)
@click.option(
    "--dpi", type=click.IntRange(20, 1200), default=DEFAULT_DPI, show_default=True, help="Pixels per inch of PNG files."
)
@click.option(
    "--theme",
    type=click.Choice(THEMES),
    default="light",
    show_default=True,
    help="light for documents, dark to match the videos.",
)
@click.option(
    "--token",
    default=None,
    metavar="WORD|WORD#K|POSITION",
    help="Query written out in value-mixing, and the row of layer-norm, residual-stream and prediction (the next-token probabilities after it, --model toy), and the token whose logit lens a model's --layer all records: a word (its first occurrence), WORD#K (its k-th, from 1) or a 0-based position. Default: the last word token, not punctuation.",
)
@click.option(
    "--head",
    type=HeadNumberOrAuto(),
    default=None,
    help="Show only head N (from 0) in per-head figures, and mix with it in value-mixing; auto: the head with the largest weight "
    "above its baseline from --token (to --to if given). Default: every head of blockviz's blocks (seeded, toy, copy); auto for a trained model's "
    "layer with --token WORD, else its head 0 (--all-heads for every head); value-mixing uses head 0.",
)
@click.option("--to", default=None, metavar="WORD|WORD#K|POSITION", help=TO_HELP)
@click.option(
    "--all-heads",
    is_flag=True,
    default=False,
    help="Every head in per-head figures, also for a trained model's layer (whose default is one head).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Draw N figures at once in separate processes. Default: one per CPU core free (the cores less those other work keeps busy, "
    "at least 1; Linux; elsewhere 1).",
)
@click.option("--list", "list_only", is_flag=True, help="List the figures with a line about each, and exit.")
def figures(
    folder, names, formats, width, dpi, theme, token, head, to, all_heads, jobs, list_only, block, **options
) -> None:
    """Draw every step of the block on SENTENCE as figures, with the record's real numbers.

    Writes DIR/<figure>.<format> for each figure and format (DIR: -o, by default
    renders/<sentence-slug>/figures) and prints each path.
    Colours match the videos; every number shown is one the computation produced.
    A record of several blocks (--model copy, --layer all) adds figures of every block:
    stack-weights, composition, induction, logit-lens (and copy-training for a copy model).

    \b
    Examples:
      blockviz figures "the cat sat"
      blockviz figures "the cat sat" --width 3.3 --format pdf
      blockviz figures "the cat sat" --figure weights,mask --format svg,pdf
      blockviz figures "The chicken didn't cross the road." --token the#2 --head 1
      blockviz figures --record cat.safetensors -o docs/figures
      blockviz figures "The chicken didn't cross the road because it was too tired." --model minilm --layer 3 --head 1 --token it
      blockviz figures "lamp cake river tall dog lamp cake river" --model copy --figure composition,induction,copy-training
      blockviz figures --list
    """
    started = snapshot()  # the machine's busy time from here to the drawing says how many cores are free for it
    if list_only:
        width = max(len(spec.name) for spec in FIGURES)
        for spec in FIGURES:
            click.echo(f"{spec.name:<{width}}  {spec.description}")
        return
    record_options = pop_record_options(options)
    whole = build_record(**record_options, lens_token=token)  # a model's layers: the lens after --token
    from blockviz.figures.request import FigureRequest
    from blockviz.style import theme as theme_named

    with reporting_errors():
        if all_heads and head is not None:
            raise click.UsageError("give either --head N or --all-heads, not both")
        if head is None and not all_heads:
            head = (
                resolved_head(head, record_options.get("model"), token) or None
            )  # auto, else the figures' own default
        rec = focused(whole, block, head, token, to)
        position, chosen = chosen_token_and_head(rec, token, head, to)
        head = chosen if head is not None else None
        request = FigureRequest(
            rec,
            theme_named(theme),
            token=position if token is not None else None,
            head=head,
            width=width,
            all_heads=all_heads,
            stack=whole,
        )
        from blockviz.render.plan import default_folder

        folder = folder if folder is not None else default_folder(rec.sentence, record_options) / "figures"
        _check_folder(folder)
        from blockviz.figures.registry import applies_to, skip_reason

        chosen = []
        for name in list(names) or [
            name for name in FIGURE_NAMES if applies_to(name, rec, whole)
        ]:  # unasked, a figure of another kind of block is left out quietly
            reason = skip_reason(name, rec, whole)
            if reason and names:  # asked for by name: not drawing it is a failure, not a note
                raise BlockvizError(f"figure {name!r} cannot be drawn: {reason}")
            if reason:
                click.echo(f"skipped {name}: {reason}", err=True)
            else:
                chosen.append(name)
        if chosen:
            _write(request, folder, chosen, formats, dpi, jobs or cores_free(since=started))


def _write(request, folder: Path, names: list[str], formats: list[str], dpi: int, jobs: int | None) -> None:
    from blockviz.figures.glyphs import MissingGlyphWarning
    from blockviz.figures.writing import write_figures

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingGlyphWarning)
        for path in write_figures(request, folder, names, formats, dpi, jobs=jobs):
            for warning in _pop(caught, MissingGlyphWarning):
                click.echo(f"warning: {warning.message}", err=True)
            click.echo(str(path))


def _pop(caught: list, category) -> list:
    found = [warning for warning in caught if issubclass(warning.category, category)]
    for warning in found:
        caught.remove(warning)
    return found


def _check_folder(folder: Path) -> None:
    """Create ``folder`` now and try writing in it, so an unusable one fails before any drawing
    (:func:`blockviz.files.writable_folder`: one line naming the folder and the reason)."""
    from blockviz.files import writable_folder

    writable_folder(folder)
