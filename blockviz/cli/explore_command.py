"""``blockviz explore``: the token-flow explorer, one offline HTML page, from the record."""

from __future__ import annotations

import os
from pathlib import Path

import click

from blockviz.cli.options import (
    TO_HELP,
    HeadNumberOrAuto,
    block_option,
    chosen_token_and_head,
    focused,
    pop_record_options,
    record_options,
    reporting_errors,
    resolved_head,
    sentence_named,
    usage_error_for,
)
from blockviz.cli.records import command_record
from blockviz.cli.sentence import SentenceCommand
from blockviz.render.plan import default_folder


class StepName(click.ParamType):
    """A step of the explorer; a wrong name is refused with the list of names."""

    name = "STEP"

    def convert(self, value, param, ctx):
        from blockviz.errors import BlockvizError
        from blockviz.explorer.steps import ALL_STEP_NAMES, select_step

        try:
            return select_step(value, ALL_STEP_NAMES)  # the record's own steps are checked once it is made
        except BlockvizError as error:
            self.fail(str(error), param, ctx)


PAGE_NAME = "explorer.html"
"""The page's name in a folder: the default one, or a folder given to -o."""


def page_path(output: str) -> Path:
    """Where ``-o OUTPUT`` writes the page: OUTPUT itself, or OUTPUT/explorer.html when OUTPUT is
    an existing folder or ends in a path separator (``out/``), as the other commands' ``-o DIR``.

    >>> page_path("cat.html"), page_path("out/")
    (PosixPath('cat.html'), PosixPath('out/explorer.html'))

    Raises :class:`click.BadParameter` for a name that is neither (``-o pages`` with no folder
    ``pages``): it would be a page without the ``.html`` a browser opens it by.
    """
    separators = ("/", os.sep) + ((os.altsep,) if os.altsep else ())
    if output.endswith(separators) or os.path.isdir(output):  # False, not an error, for a name too long
        return Path(output) / PAGE_NAME
    if Path(output).suffix.lower() not in PAGE_SUFFIXES:
        raise click.BadParameter(
            f"{output!r} is neither a page nor a folder: write {output}.html for the page, or {output}/ for a folder",
            param_hint="-o",
        )
    return Path(output)


PAGE_SUFFIXES = (".html", ".htm")


@click.command(cls=SentenceCommand)
@record_options(allow_record_file=True)
@block_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=str),
    default=None,
    metavar="PAGE|DIR",
    help="The page to write (PAGE.html), or the folder it goes into as DIR/explorer.html: an existing "
    "folder, or a path ending in /, as the other commands' -o.  [default: renders/<sentence-slug>/explorer.html]",
)
@click.option(
    "--token",
    default=None,
    metavar="WORD|WORD#K|POSITION",
    help="Token the page opens on: a word, word#k (its k-th occurrence) or a 0-based position. Default: the last word token (not punctuation).",
)
@click.option(
    "--head",
    type=HeadNumberOrAuto(),
    default=None,
    help="Head the page opens on: N, or auto (the head with the largest weight above its baseline from --token, to --to if given). "
    "[default: auto with a trained --model and --token WORD, else 0]",
)
@click.option("--to", default=None, metavar="WORD|WORD#K|POSITION", help=TO_HELP)
@click.option(
    "--step",
    type=StepName(),
    default=None,
    help="Step the page opens on: overview (every layer and head), input, ln1, qkv, scores, scale, mask, softmax, mix, "
    "concat, project, add1, ln2, widen, activation, narrow, add2, output; the toy model also ln_f, logits, prediction; "
    "a model's layer also rotary, gate, up, gate_up. Default: input.",
)
@click.option(
    "--contrast",
    default=None,
    metavar="SENTENCE2",
    help="A second sentence whose weights rows the overview shows beside SENTENCE's (same model; the query matched by word, else by position).",
)
@click.option(
    "--theme",
    type=click.Choice(("light", "dark")),
    default="light",
    show_default=True,
    help="Colours the page opens with (it has a switch).",
)
def explore(output, token, head, to, step, theme, contrast, block, **options) -> None:
    """Write one self-contained HTML page to explore every calculation of the block on SENTENCE.

    Select a token and a head; each step shows the real numbers of that token, recomputed in
    the page and checked against the record. The page needs no network: open it from disk.
    The view is kept in the link (#token=it&head=1&step=softmax). Its overview step is a
    layer × head grid of the token's weights rows: for a model every layer (the steps are the
    recorded --layer's), with --contrast a second sentence's rows beside them. Page Down /
    Page Up (or n / p) step through the calculation.

    \b
    Examples:
      blockviz explore "The chicken didn't cross the road because it was too tired." --token it
      blockviz explore "the cat sat" --head 1 --step softmax --theme dark -o cat.html
      blockviz explore "the cat sat" -o pages/      # writes pages/explorer.html
      blockviz explore --record cat.safetensors
      blockviz explore "the cat sat on the mat" --step overview --contrast "the cat sat on the rug"
    """
    inputs = pop_record_options(options)
    _check_contrast(inputs, contrast)
    rec = focused(command_record(inputs), block)
    from blockviz.explorer import Explorer

    _, head = chosen_token_and_head(rec, token, resolved_head(head, inputs.get("model"), token), to)
    attentions, theirs = _overview_inputs(inputs, contrast)
    with usage_error_for("--step"):  # token and head are checked: what is left is a step this block has not
        page = Explorer(
            rec,
            token=token,
            head=head,
            step=step,
            theme=theme,
            attentions=attentions,
            contrast=theirs,
            contrast_sentence=contrast,
        )
    with reporting_errors():
        path = page_path(output) if output is not None else default_folder(rec.sentence, inputs) / PAGE_NAME
        page.save(path)
    click.echo(str(path))


def _check_contrast(inputs: dict, contrast: str | None) -> None:
    """A contrast sentence needs a sentence to contrast, and another one (usage errors, before any work)."""
    if contrast is None:
        return
    if inputs.get("record_file") is not None:
        raise click.UsageError("--contrast records its sentence afresh: give SENTENCE and --model, not --record")
    if not contrast.strip():
        raise click.BadParameter("the contrast sentence is empty", param_hint="--contrast")
    if inputs.get("sentence") is not None and contrast.strip() == inputs["sentence"].strip():
        raise click.BadParameter("is SENTENCE itself: give a different sentence to contrast", param_hint="--contrast")


def _overview_inputs(inputs: dict, contrast: str | None):
    """For the overview: every layer's attentions of a model on SENTENCE (``None`` for one block:
    the record is its own overview) and the contrast sentence's (every layer, or its one block),
    the model loaded once (:func:`blockviz.models.loading.load_model` keeps it)."""
    from blockviz.toy import is_toy_model

    model = inputs.get("model")
    multi_layer = model is not None and inputs.get("record_file") is None and not is_toy_model(model)
    if not multi_layer:
        if contrast is None:
            return None, None
        from blockviz.models.recording import block_attentions

        with usage_error_for("--contrast"), sentence_named("--contrast"):
            return None, block_attentions(command_record({**inputs, "sentence": contrast}))
    from blockviz.errors import BlockvizError
    from blockviz.models.recording import NoAttentionWeights, model_attentions

    trust = inputs.get("trust_pickle", False)
    try:
        attentions = model_attentions(inputs["sentence"], model=model, trust_pickle=trust)
    except NoAttentionWeights as error:  # bad input, as for heads and compare: exit 2
        raise click.UsageError(str(error)) from None
    except BlockvizError as error:
        raise click.ClickException(str(error)) from None
    if contrast is None:
        return attentions, None
    with usage_error_for("--contrast"):
        return attentions, model_attentions(contrast, model=model, trust_pickle=trust)
