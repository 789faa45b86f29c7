"""Options shared by every command that needs a record, and turning them into one."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from blockviz.config import ACTIVATIONS, DTYPES, MAX_SEED, POSITIONAL_ENCODINGS, SIZE_LIMITS, BlockConfig
from blockviz.errors import BlockvizError


def record_options(allow_record_file: bool = False):
    """Add the sentence argument and the options that build a config (and ``--record FILE``).

    Defaults, choices and bounds are :class:`BlockConfig`'s own (stated there only).
    """

    def decorate(command):
        default = BlockConfig.default
        options = [
            click.argument("sentence", required=not allow_record_file, **({"default": None} if allow_record_file else {})),
            click.option("--d-model", type=click.IntRange(1, SIZE_LIMITS["d_model"]), default=default("d_model"), show_default=True, help="Width of the residual stream (a multiple of --heads)."),
            click.option("--heads", "n_heads", type=click.IntRange(1, SIZE_LIMITS["n_heads"]), default=default("n_heads"), show_default=True, help="Number of attention heads; d_head = d_model / heads."),
            click.option("--d-ff", type=click.IntRange(1, SIZE_LIMITS["d_ff"]), default=default("d_ff"), show_default=True, help="Width of the FFN's hidden layer."),
            click.option("--activation", type=click.Choice(ACTIVATIONS), default=default("activation"), show_default=True, help="FFN activation."),
            click.option("--bidirectional", is_flag=True, default=not default("causal"), help="No causal mask: every token sees every token, as in an encoder."),
            click.option("--positional", type=click.Choice(POSITIONAL_ENCODINGS), default=default("positional"), show_default=True, help="Positional encoding."),
            click.option("--seed", type=click.IntRange(0, MAX_SEED), default=default("seed"), show_default=True, help="Seeds the token embeddings and the parameters (0 … 2^63 − 1)."),
            click.option("--dtype", type=click.Choice(DTYPES), default=default("dtype"), show_default=True, help="Floating-point precision of the computation."),
            click.option("--params", "--weights", "params", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
                         help="A .safetensors or .json file of parameters (W_Q, …, names as in the record) to use instead of the seeded ones; a saved record works. --weights is its old name."),
        ]
        if allow_record_file:
            options.append(
                click.option("--record", "record_file", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE", help="Read a record saved with `blockviz record --save` instead of computing one.")
            )
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def build_record(sentence, d_model, n_heads, d_ff, activation, bidirectional, positional, seed, dtype, params, record_file=None):
    """The record the options ask for; :class:`BlockvizError` becomes a one-line click error."""
    from blockviz.block_record import BlockRecord, record

    with reporting_errors():
        if record_file is not None:
            if sentence is not None:
                raise click.UsageError("give either a sentence or --record FILE, not both")
            return BlockRecord.load(record_file)
        if sentence is None:
            raise click.UsageError('give a sentence, e.g. "the cat sat", or --record FILE')
        config = BlockConfig(d_model=d_model, n_heads=n_heads, d_ff=d_ff, activation=activation, causal=not bidirectional, positional=positional, seed=seed, dtype=dtype)
        return record(sentence, config=config, params=params)


RECORD_OPTION_NAMES = ("sentence", "d_model", "n_heads", "d_ff", "activation", "bidirectional", "positional", "seed", "dtype", "params", "record_file")


def pop_record_options(kwargs: dict) -> dict:
    """Take the record options out of a command's keyword arguments."""
    return {name: kwargs.pop(name) for name in RECORD_OPTION_NAMES if name in kwargs}


@contextlib.contextmanager
def reporting_errors():
    """Turn a :class:`BlockvizError` raised inside into a one-line ``click.ClickException`` (exit 1)."""
    try:
        yield
    except BlockvizError as error:
        raise click.ClickException(str(error)) from None
