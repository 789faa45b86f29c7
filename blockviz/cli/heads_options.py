"""The options ``blockviz heads`` and ``blockviz compare`` share, and turning them into what
:func:`blockviz.heads.rank` and :func:`blockviz.heads.compare` take: the record options (every
layer ranked unless --layer names one), the figure's path, a sentence's attentions; the library's
token-choice errors named as the command's options."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from blockviz.cli.options import SEEDED, TOY_OPTIONS, load_model_support, record_options, without_a_model
from blockviz.cli.records import command_record
from blockviz.toy import is_toy_model

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
"""The figure formats ``-o`` may name."""
MODEL_HELP = (
    "Whose heads to rank. toy (the default): blockviz's trained one-block model, or a folder blockviz train wrote; "
    "seeded: blockviz's block with seeded random weights (giving --d-model, --heads, … chooses it too); "
    "minilm (BERT encoder), smollm2 (Llama decoder), "
    "a Hugging Face model folder (GPT-2, BERT or Llama), or a hub id owner/name (the only case that uses the network)."
)
LAYER_HELP = "Rank only layer L's heads (from 0, with --model). Default: every layer."


def heads_record_options(command):
    """The shared record options (:func:`~blockviz.cli.options.record_options`), their help
    saying what --model and --layer mean here: every layer is ranked unless --layer names one."""
    command = record_options()(command)
    for parameter in command.__click_params__:  # the options click.command() will collect
        if parameter.name == "model":
            parameter.help = MODEL_HELP
        elif parameter.name == "layer":
            parameter.help = LAYER_HELP
    return command


def check_model_options(options: dict) -> None:
    """--layer and --trust-pickle go with --model; the seeded block's options and --dtype do not.

    Raises :class:`click.UsageError` naming the option to drop.
    """
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


def analysed_model(options: dict) -> str:
    """The model as :mod:`blockviz.heads` names it: the options' (``None``, the seeded block, is ``seeded``)."""
    return SEEDED if options["model"] is None else options["model"]


def figure_path(output: str | None, kind: str, options: dict) -> Path:
    """Where the figure goes: ``-o OUTPUT`` itself, or ``<kind>-<model>.png`` in OUTPUT when it
    is an existing folder or ends in a path separator; without -o, in
    ``renders/<sentence-slug>/`` (``<kind>.png`` for the seeded block).

    Raises :class:`click.BadParameter` for a file that names no figure format.
    """
    from blockviz.files import sentence_slug

    model = options["model"]
    name = f"{kind}.png" if model is None else f"{kind}-{sentence_slug(Path(str(model)).name)}.png"
    path = output_path(output, name) or Path("renders") / sentence_slug(options["sentence"]) / name
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise click.BadParameter(
            f"{str(path)!r} names no figure format: end it in {', '.join(FIGURE_SUFFIXES)}, or give a folder",
            param_hint="'-o'",
        )
    return path


def output_path(output: str | None, name: str) -> Path | None:
    """Where ``-o OUTPUT`` writes the figure: OUTPUT itself, or OUTPUT/``name`` when OUTPUT is an
    existing folder or ends in a path separator; ``None`` without -o.

    >>> output_path("cat.svg", "heads.png"), output_path("out/", "heads.png"), output_path(None, "heads.png")
    (PosixPath('cat.svg'), PosixPath('out/heads.png'), None)
    """
    import os

    if output is None:
        return None
    separators = ("/", os.sep) + ((os.altsep,) if os.altsep else ())
    if output.endswith(separators) or os.path.isdir(output):
        return Path(output) / name
    return Path(output)


def sentence_attentions(options: dict, sentence: str | None = None):
    """The attentions to rank ``(n_layers, n_heads, n, n)`` of ``sentence`` (default: the
    options' own) and a note on the weights (the GGUF quantisation, the toy model's training)
    or ``None``. A model is loaded once per process, whatever the sentence.
    A model that gives no attention weights is a usage error (exit 2)."""
    model = options["model"]
    if sentence is not None:
        options = {**options, "sentence": sentence}
    if model is None or is_toy_model(model):  # one block, recorded: the seeded block or blockviz's trained toy model
        from blockviz.models.recording import block_attentions

        rec = command_record(options)
        return block_attentions(rec), None if model is None else rec.source.describe()
    load_model_support(model)
    from blockviz.models.loading import load_model
    from blockviz.models.recording import NoAttentionWeights
    from blockviz.recording import attentions as model_attentions

    try:
        attentions = model_attentions(options["sentence"], model, trust_pickle=options["trust_pickle"])
    except NoAttentionWeights as error:
        raise click.BadParameter(str(error), param_hint="'--model'") from None
    return attentions, load_model(model, trust_pickle=options["trust_pickle"]).note  # loaded once per process


@contextlib.contextmanager
def token_options(**options: str):
    """A :class:`~blockviz.heads.TokenChoiceError` raised inside becomes a usage error (exit 2)
    on the option that named the token: ``token_options(query="--from", key="--to")``."""
    from blockviz.heads import TokenChoiceError

    try:
        yield
    except TokenChoiceError as error:
        raise click.BadParameter(str(error), param_hint=options[error.argument]) from None
