"""Options shared by every command that needs a record, and turning them into one."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import click

from blockviz.architecture import POSITIONAL_ENCODINGS
from blockviz.block_config import ACTIVATIONS, DTYPES, MAX_SEED, SIZE_LIMITS, BlockConfig
from blockviz.errors import BlockvizError
from blockviz.toy import is_toy_model, toy_folder


class LayerType(click.ParamType):
    """``--layer``: a layer from 0 (an ``int``), ``all`` or a range ``A-B`` (:func:`blockviz.layer_choice.parse_layers`)."""

    name = "layer"

    def convert(self, value, param, ctx):
        from blockviz.layer_choice import parse_layers

        try:
            return parse_layers(value)
        except BlockvizError as error:
            self.fail(str(error), param, ctx)


def record_options(allow_record_file: bool = False):
    """Add the sentence argument and the options that build a config (and ``--record FILE``).

    Defaults, choices and bounds are :class:`BlockConfig`'s own (stated there only).
    """

    def decorate(command):
        default = BlockConfig.default
        options = [
            click.argument(
                "sentence", required=not allow_record_file, **({"default": None} if allow_record_file else {})
            ),
            click.option(
                "--d-model",
                type=click.IntRange(1, SIZE_LIMITS["d_model"]),
                default=default("d_model"),
                show_default=True,
                help="Seeded block (giving it chooses --model seeded): width of the residual stream, a multiple of --heads.",
            ),
            click.option(
                "--heads",
                "n_heads",
                type=click.IntRange(1, SIZE_LIMITS["n_heads"]),
                default=default("n_heads"),
                show_default=True,
                help="Seeded block: number of attention heads; d_head = d_model / heads.",
            ),
            click.option(
                "--d-ff",
                type=click.IntRange(1, SIZE_LIMITS["d_ff"]),
                default=default("d_ff"),
                show_default=True,
                help="Seeded block: width of the FFN's hidden layer.",
            ),
            click.option(
                "--activation",
                type=click.Choice(ACTIVATIONS),
                default=default("activation"),
                show_default=True,
                help="Seeded block: FFN activation.",
            ),
            click.option(
                "--bidirectional",
                is_flag=True,
                default=not default("causal"),
                help="Seeded block: no causal mask, every token sees every token, as in an encoder.",
            ),
            click.option(
                "--positional",
                type=click.Choice(POSITIONAL_ENCODINGS),
                default=default("positional"),
                show_default=True,
                help="Seeded block: positional encoding.",
            ),
            click.option(
                "--seed",
                type=click.IntRange(0, MAX_SEED),
                default=default("seed"),
                show_default=True,
                help="Seeded block: seeds the token embeddings and the parameters (0 … 2^63 − 1).",
            ),
            click.option(
                "--dtype",
                type=click.Choice(DTYPES),
                default=default("dtype"),
                show_default=True,
                help="Floating-point precision of the computation.",
            ),
            click.option(
                "--params",
                "--weights",
                "params",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                metavar="FILE",
                help="A .safetensors or .json file of parameters (W_Q, …, names as in the record) to use instead of the seeded ones "
                "(with --model toy: instead of the trained ones, e.g. the explorer's downloaded parameters); a saved record works. --weights is its old name.",
            ),
            click.option(
                "--model",
                default=None,
                metavar="NAME|PATH",
                help="The block to record. toy (the default): blockviz's trained one-block model (d_model 8, 2 heads, "
                "69 words and <unk>, up to 25 tokens; other words read as <unk>); copy: its two-block model that copies a "
                "repeated phrase (the same words, up to 24 tokens); or a folder blockviz train wrote. "
                "seeded: blockviz's block with seeded random weights, any words, sized by --d-model, --heads, --d-ff … "
                "(giving any of those, or --params, chooses it). minilm (BERT encoder), smollm2 (Llama decoder), "
                "a Hugging Face model folder (GPT-2, BERT or Llama), or a hub id owner/name (the only case that uses the network): "
                "these need --layer.",
            ),
            click.option(
                "--layer",
                type=LayerType(),
                default=None,
                metavar="L|A-B|all",
                help="The model's layer to record, from 0 (with --model); all, or a range A-B (both included): "
                "those layers as a stack of blocks, the first checked against the model's own output (--block K chooses the one "
                "shown, default the last).",
            ),
            click.option(
                "--trust-pickle",
                is_flag=True,
                default=False,
                help="Allow loading a model whose weights are only in a pickle (pytorch_model.bin), which can run code: only for files you trust.",
            ),
        ]
        if allow_record_file:
            options.append(
                click.option(
                    "--record",
                    "record_file",
                    type=click.Path(dir_okay=False, path_type=Path),
                    default=None,
                    metavar="FILE",
                    help="Read a record saved with `blockviz record --save` instead of computing one.",
                )
            )
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def block_option(command):
    """Add ``--block K``: the block of a record of several blocks the command focuses on (:func:`focused`)."""
    return click.option(
        "--block",
        type=click.IntRange(min=0),
        default=None,
        metavar="K",
        help="The block to show, from 0, of a record of several blocks (a model's --layer all or a range, a toy "
        "model of several blocks). Default: the last block; with --head auto, the block of the head it finds among every "
        "block's. A record of one block has block 0 only.",
    )(command)


def focused(rec, block: int | None, head=None, token=None, to=None):
    """Block ``block``'s view of ``rec`` (:meth:`~blockviz.block_record.BlockRecord.block`); for
    ``None``, ``rec`` itself (its last block) — or, with ``head`` ``auto``, the block whose head
    that rule finds from ``token`` (to ``to``), :func:`blockviz.head_choice.choose_block`. A block
    out of range is a usage error on ``--block`` (one line, exit 2), a token on its option."""
    auto = isinstance(head, str) and head.strip().lower() == "auto"
    if block is None and not (auto and len(rec.blocks) > 1):
        return rec
    if block is not None:
        with usage_error_for("--block"):
            return rec.block(block)
    from blockviz.head_choice import choose_block
    from blockviz.selection import select_token

    with usage_error_for("--token"):
        query = select_token(rec.tokens, token, rec.special)
    with usage_error_for("--to"):
        chosen = choose_block(rec, None, head, query, to)
    return rec if chosen == len(rec.blocks) - 1 else rec.block(chosen)


MODEL_COMMANDS = {"record", "explore", "figures", "render", "heads", "compare", "slides"}
"""The commands that can draw a record of another architecture than blockviz's own block (a
trained model's layer, blockviz's trained toy model, ``--model`` or ``--record FILE``); the others
refuse it in one line. A command joins once its outputs draw post-norm, RMSNorm, rotary and gated
FFN records (``heads`` draws only the attention weights, which every architecture has)."""

TOY_OPTIONS = {
    "d_model": "--d-model",
    "n_heads": "--heads",
    "d_ff": "--d-ff",
    "activation": "--activation",
    "bidirectional": "--bidirectional",
    "positional": "--positional",
    "seed": "--seed",
    "params": "--params",
}
"""The options that build blockviz's own block: a model brings its own, so they do not go with --model."""

DEFAULT_MODEL = "toy"
"""The block a command records when no option chooses one: blockviz's trained toy model."""
SEEDED = "seeded"
"""``--model seeded``: blockviz's block with seeded random weights, sized by :data:`TOY_OPTIONS`."""


def chosen_model(model: str | None, record_file, context: click.Context | None = None) -> str | None:
    """The model the options ask for, ``None`` for the seeded block: ``--model`` as given
    (``seeded`` is ``None``); without it, the seeded block when a record file is read or any
    seeded block option (:data:`TOY_OPTIONS`) was given on the command line, else
    :data:`DEFAULT_MODEL`.

    >>> chosen_model(None, None), chosen_model("seeded", None), chosen_model("minilm", None)
    ('toy', None, 'minilm')
    """
    if model is not None:
        return None if model.strip().lower() == SEEDED else model
    if record_file is not None:
        return None
    context = context or click.get_current_context(silent=True)
    if context is not None:
        for name in TOY_OPTIONS:
            source = context.get_parameter_source(name)
            if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
                return None
    return DEFAULT_MODEL


def build_record(
    sentence,
    d_model,
    n_heads,
    d_ff,
    activation,
    bidirectional,
    positional,
    seed,
    dtype,
    params,
    record_file=None,
    model=None,
    layer=None,
    trust_pickle=False,
    lens_token=None,
):
    """The record the options ask for; :class:`BlockvizError` becomes a one-line click error.

    With ``model`` (``--model``), layer ``layer`` of that trained model
    (:func:`blockviz.models.record_layer`); the options of the seeded block must then be left
    at their defaults. A command outside :data:`MODEL_COMMANDS` refuses a model's record.
    ``lens_token``: the token (as ``--token`` names it) whose logit lens a record of several
    layers of a model holds (default its default focus token).
    """
    from blockviz.block_record import BlockRecord
    from blockviz.recording import record
    from blockviz.tokens import tokenize

    with reporting_errors():
        if model is not None and model.strip().lower() == SEEDED:
            if layer is not None or trust_pickle:
                raise without_a_model(layer, model)
            model = None
        if model is not None or layer is not None or trust_pickle:
            _check_model_options(model, layer, record_file)
        if record_file is not None:
            if sentence is not None:
                raise click.UsageError("give either a sentence or --record FILE, not both")
            rec = BlockRecord.load(record_file)
            if not rec.architecture.is_toy:
                _check_command_draws_models(f"{str(record_file)!r} holds {_what(rec)}")
            return rec
        if sentence is None:
            raise click.UsageError('give a sentence, e.g. "the cat sat", or --record FILE')
        if model is not None:
            if is_toy_model(model):  # the sentence's mistakes are usage errors, as for the seeded block
                from blockviz.layer_choice import is_several

                if is_several(layer):
                    raise click.BadParameter(
                        f"{layer} goes with a trained model's layers: the toy model's record holds every block already (--block K shows one)",
                        param_hint="--layer",
                    )
                from blockviz.toy.folder import load_toy
                from blockviz.toy.recording import readable_ids, toy_tokens

                loaded = load_toy(toy_folder(model))
                with usage_error_for(SENTENCE_HINT):
                    readable_ids(loaded, toy_tokens(sentence, loaded.config.max_tokens))
            return _record_model(sentence, model, layer, trust_pickle, dtype, params, lens_token)
        with usage_error_for():
            config = BlockConfig(
                d_model=d_model,
                n_heads=n_heads,
                d_ff=d_ff,
                activation=activation,
                causal=not bidirectional,
                positional=positional,
                seed=seed,
                dtype=dtype,
            )
        with usage_error_for(SENTENCE_HINT):
            tokenize(sentence, config.max_tokens)
        return record(sentence, SEEDED, config=config, params=params)


def _what(rec) -> str:
    return (
        f"layer {rec.source.layer} of {rec.source.model}"
        if rec.source.is_model
        else "a block of another architecture than blockviz's own"
    )


def _check_command_draws_models(what: str) -> None:
    context = click.get_current_context(silent=True)
    name = context.info_name if context is not None else None
    if name is not None and name not in MODEL_COMMANDS:
        from blockviz.errors import BlockvizError

        raise BlockvizError(
            f"blockviz {name} cannot draw a trained model's layer yet ({what}): print its numbers with blockviz record --model … --layer …, or save them with --save"
        )


def _model_option(layer) -> str:
    """The model's option the user gave: ``--layer L`` if given, else ``--trust-pickle``."""
    return f"--layer {layer}" if layer is not None else "--trust-pickle"


def without_a_model(layer, model: str | None = None) -> click.UsageError:
    """The usage error for ``--layer`` (or ``--trust-pickle``) given without a trained model
    (``model``: ``None``, or ``seeded`` as given), naming the option given."""
    what = "a trained model's layers" if layer is not None else "a model whose weights are pickled"
    if model is not None:
        return click.UsageError(f"{_model_option(layer)} goes with {what}, not --model {model}: drop it")
    return click.UsageError(
        f"{_model_option(layer)} goes with --model NAME|PATH, {what} (the default toy model is one block)"
    )


def _check_model_options(model, layer, record_file) -> None:
    if model is None:
        raise without_a_model(layer)
    if record_file is not None:
        raise click.UsageError("give either --model or --record FILE, not both")
    from blockviz.errors import BlockvizError
    from blockviz.models.resolve import resolve_model

    try:
        resolve_model(model)  # an unknown name is named as such, not asked for its --layer
    except BlockvizError as error:
        raise click.UsageError(str(error)) from None
    if layer is None and not is_toy_model(model):
        raise click.UsageError(f"--model {model} needs --layer L: the layer to record, from 0")
    context = click.get_current_context(silent=True)
    if context is not None:
        for name, flag in TOY_OPTIONS.items():
            if name == "params" and is_toy_model(model):  # the toy model with other parameters: the explorer's download
                continue
            source = context.get_parameter_source(name)
            if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
                raise click.UsageError(
                    f"{flag} builds blockviz's own block: a model brings its own sizes and weights, drop {flag} with --model"
                )
    _check_command_draws_models(f"--model {model}")


def load_model_support(model) -> None:
    """Import the model support (one line if torch or transformers is broken, not merely missing)
    and say on stderr when ``model``'s GGUF file is converted for the first time (20–75 s).

    Raises :class:`BlockvizError` naming the import error and the fix.
    """
    from blockviz.errors import BlockvizError

    try:
        import blockviz.models.recording  # noqa: F401
        from blockviz.models.loading import first_load_is_slow
    except ImportError as error:
        raise BlockvizError(f"cannot load the model support ({error}): pip install 'blockviz[models]'") from None
    if first_load_is_slow(model):
        click.echo(
            f"converting {model}'s GGUF file to float32 once (20–75 s); later runs read the cached copy", err=True
        )


def _record_model(sentence, model, layer, trust_pickle, dtype, params=None, lens_token=None):
    from blockviz.layer_choice import is_several, parse_layers
    from blockviz.recording import record

    load_model_support(model)
    from blockviz.models.recording import UnknownLensRow
    from blockviz.toy.recording import UnknownWordsWarning

    lens = {}
    if lens_token is not None and layer is not None and is_several(parse_layers(layer)):
        lens["lens_rows"] = [lens_token]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnknownWordsWarning)
        try:
            rec = record(sentence, model, layer, trust_pickle=trust_pickle, dtype=dtype, params=params, **lens)
        except UnknownLensRow as error:  # the token the lens is asked for: a usage error, as everywhere --token is
            raise click.BadParameter(str(error), param_hint="--token") from None
    for warning in caught:
        if issubclass(warning.category, UnknownWordsWarning):  # the toy model's words outside its vocabulary: one line
            click.echo(f"warning: {warning.message}", err=True)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return rec


RECORD_OPTION_NAMES = (
    "sentence",
    "d_model",
    "n_heads",
    "d_ff",
    "activation",
    "bidirectional",
    "positional",
    "seed",
    "dtype",
    "params",
    "record_file",
    "model",
    "layer",
    "trust_pickle",
)


def pop_record_options(kwargs: dict) -> dict:
    """Take the record options out of a command's keyword arguments, with ``model`` the one
    they choose (:func:`chosen_model`: ``None`` for the seeded block)."""
    options = {name: kwargs.pop(name) for name in RECORD_OPTION_NAMES if name in kwargs}
    asks_for_a_model = options.get("layer") is not None or options.get("trust_pickle")
    seeded = options.get("model") is None or options["model"].strip().lower() == SEEDED
    if "model" in options and not (seeded and asks_for_a_model):  # else: one line says --layer needs a model
        options["model"] = chosen_model(options["model"], options.get("record_file"))
    return options


@contextlib.contextmanager
def usage_error_for(param_hint: str | None = None):
    """Turn a :class:`BlockvizError` raised inside into a usage error on ``param_hint`` (an
    option such as ``--token``, or ``SENTENCE``; ``None``: the options together): one line,
    exit 2, as click's own checks."""
    try:
        yield
    except BlockvizError as error:
        if param_hint is None:
            raise click.UsageError(str(error)) from None
        raise click.BadParameter(str(error), param_hint=param_hint) from None


SENTENCE_HINT = "SENTENCE"
"""How a usage error names the sentence a record is made of (:func:`build_record`)."""


@contextlib.contextmanager
def sentence_named(param_hint: str):
    """Inside, the sentence recorded is the one given as ``param_hint`` (``--contrast``, ``S2``):
    a usage error :func:`build_record` raises on :data:`SENTENCE_HINT` names it instead."""
    try:
        yield
    except click.BadParameter as error:
        if error.param_hint != SENTENCE_HINT:
            raise
        raise click.BadParameter(error.message, param_hint=param_hint) from None


class HeadNumberOrAuto(click.ParamType):
    """``--head``'s type: a head number from 0, or ``auto`` (:data:`blockviz.selection.AUTO`)."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        from blockviz.selection import AUTO

        if isinstance(value, int) and not isinstance(value, bool):
            return value  # out of range: refused against the record, naming its heads
        shown = str(value).strip().lower()
        if shown == AUTO:
            return AUTO
        if shown.lstrip("-").isdecimal():
            return int(shown)
        self.fail(f"{value!r} is neither a head number (0, 1, …) nor auto", param, ctx)


HEAD_HELP = (
    "Attention head shown: N (0 … heads − 1), or auto: the head with the largest weight above its baseline "
    "(its mean weight on that key from the other tokens) from --token, to --to if given. "
    "[default: auto with a trained --model and --token WORD, else 0]"
)
TO_HELP = (
    "A key token, named as --token names one (WORD, WORD#K or a 0-based position): --head auto picks the head "
    "that stands furthest above its baseline on this key, and the scenes always label it."
)


def resolved_head(head: int | str | None, model: str | None, token: str | int | None) -> int | str:
    """``--head`` as given, else its default (:func:`blockviz.selection.default_head`: ``auto`` for
    a trained ``model`` and a ``token`` that names a word, else 0)."""
    from blockviz.selection import default_head

    return default_head(model, token) if head is None else head


def chosen_token_and_head(
    rec, token: str | int | None, head: int | str | None, to: str | int | None = None
) -> tuple[int, int]:
    """The positions ``--token`` and ``--head`` name in ``rec`` (:func:`blockviz.selection.select_token`,
    :func:`~blockviz.head_choice.choose_head`: ``head`` may be ``auto``, narrowed to the key ``to``
    names); one that does not exist is a usage error, exit 2."""
    from blockviz.head_choice import choose_head
    from blockviz.selection import select_token

    with usage_error_for("--token"):
        position = select_token(rec.tokens, token, rec.special)
    with usage_error_for("--to"):
        key = None if to is None else select_token(rec.tokens, to, rec.special)
    with usage_error_for("--head"):
        return position, choose_head(rec, head, position, key).head


@contextlib.contextmanager
def reporting_errors():
    """Turn a :class:`BlockvizError` raised inside into a one-line ``click.ClickException`` (exit 1)."""
    try:
        yield
    except BlockvizError as error:
        raise click.ClickException(str(error)) from None
