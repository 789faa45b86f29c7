"""``blockviz record``: compute the record and print every tensor, labelled with the tokens."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.cli.options import (
    block_option,
    chosen_token_and_head,
    focused,
    pop_record_options,
    record_options,
    reporting_errors,
    usage_error_for,
)
from blockviz.cli.records import command_record
from blockviz.cli.sentence import SentenceCommand

MODEL_COLUMNS = 16
"""Feature columns printed per tensor of a model's layer unless --all-columns (d_model 384–576 rows do not fit a terminal)."""


@click.command(cls=SentenceCommand)
@record_options()
@block_option
@click.option(
    "--decimals", type=click.IntRange(0, 8), default=2, show_default=True, help="Decimals printed per number."
)
@click.option(
    "--columns",
    "max_columns",
    type=click.IntRange(min=8),
    default=None,
    metavar="N",
    help="Print at most N feature columns of each tensor (the first and last ones, ⋯ between). Default: all for blockviz's block, 16 for a model's layer.",
)
@click.option(
    "--head",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Print only head N of the per-head tensors (from 0). Default: every head.",
)
@click.option(
    "--token",
    default=None,
    metavar="WORD|WORD#K|POSITION",
    help="The token whose logit lens is printed (a model's --layer all or range records it for this token only): a word (its first occurrence), WORD#K (its k-th, from 1) or a 0-based position. Default: the last word token, not punctuation.",
)
@click.option(
    "--all-columns",
    is_flag=True,
    help="Print every column, even of a model's wide tensors (slow: d_model 384 prints megabytes).",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also save the record: PATH.safetensors (exact) or PATH.json (−∞ written as null).",
)
def record(
    decimals: int,
    max_columns: int | None,
    head: int | None,
    all_columns: bool,
    save: Path | None,
    block: int | None,
    token: str | None,
    **options,
) -> None:
    """Run SENTENCE through one block and print every intermediate tensor.

    With --model NAME|PATH --layer L the block is layer L of a trained model (minilm,
    smollm2, or a Hugging Face GPT-2, BERT or Llama folder), on the model's own tokens. With
    --model toy it is blockviz's trained one-block model, whose record adds the prediction
    (ln_f, logits, probs: one column per word of its vocabulary).

    With --layer all (or a range A-B) every chosen layer is recorded in one pass, a stack of
    blocks: the tables show block --block K (default the last), --save keeps every block, and
    the logit lens follows — the next-token prediction after each block of the last word (or
    --token), through the model's final norm and W_U (an encoder has none, and says so). A packaged model's
    layers are saved without their parameters: the file names the package and its version,
    and loading it takes them from there again.

    Rows are tokens (queries); in n × n tensors columns are keys; feature columns are
    d0, d1, … (d_model or d_head) and f0, f1, … (d_ff). A sentence that begins with "-" goes
    after "--": blockviz record -- "-x marks the spot".

    \b
    Examples:
      blockviz record "the cat sat"
      blockviz record "the cat sat" --d-model 8 --heads 2 --d-ff 32 --decimals 3
      blockviz record "the cat sat" --bidirectional --head 0
      blockviz record "the cat sat" --save rec.safetensors   # then: render, figures, explore --record rec.safetensors
      blockviz record "The chicken didn't cross the road because it was too tired." --model minilm --layer 3 --head 1
      blockviz record "The chicken didn't cross the road because it was too tired." --model smollm2 --layer all --block 13
    """
    from blockviz.files import writable_file
    from blockviz.ownership import refuse_foreign, remember
    from blockviz.selection import select_token
    from blockviz.tensorfile import check_format
    from blockviz.text_table import field_tables, lens_table, prediction_table, print_tables

    if save is not None:
        with reporting_errors():
            check_format(save)
            writable_file(save)
            refuse_foreign([save])
    inputs = pop_record_options(options)
    whole = command_record(inputs if token is None else {**inputs, "lens_token": token})
    rec = focused(whole, block)
    with usage_error_for("--token"):  # before --save: a token the sentence lacks writes nothing
        lens_row = select_token(list(whole.tokens), token, whole.special)
    if head is not None:
        chosen_token_and_head(rec, None, head)
    if save is not None:  # before the tables: a reader that leaves the pipe early still gets the file
        with reporting_errors():
            refuse_foreign([save])
            whole.save(save)  # every block, whichever one is shown
            remember([save])
    if rec.source.is_trained:
        click.echo(f"{rec.source.describe()}: {_architecture_line(rec)}\n")
    if len(whole.blocks) > 1:
        shown = len(whole.blocks) - 1 if block is None else block
        click.echo(
            f"block {shown} of a stack of {len(whole.blocks)} (0–{len(whole.blocks) - 1}; --block K shows another)\n"
        )
    if all_columns:
        max_columns = None
    elif max_columns is None and rec.source.is_trained:
        max_columns = MODEL_COLUMNS
    for spec in rec.fields:
        print_tables(
            [
                *field_tables(
                    spec,
                    rec.tensors[spec.name],
                    rec.tokens,
                    decimals,
                    max_columns=max_columns,
                    heads=None if head is None else [head],
                    vocabulary=rec.source.vocabulary,
                ),
                "",
            ]
        )
    if rec.architecture.unembedding:
        print_tables([*prediction_table(rec, decimals), ""])
    if len(whole.blocks) > 1 or whole.lens is not None or whole.source.is_model:
        print_tables([*lens_table(whole, lens_row, decimals), ""])
    if save is not None:
        click.echo(f"saved {save}")


def _architecture_line(rec) -> str:
    """One line on a model record's block, e.g. ``post-norm LayerNorm, learned positions, plain FFN (GELU), 12 heads``."""
    arch, config = rec.architecture, rec.config
    norm = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}[arch.norm]
    positions = "rotary positions" if arch.positions == "rotary" else "added positions"
    heads = f"{config.n_heads} heads" + (
        f" sharing {arch.n_kv_heads} key/value heads" if arch.n_kv_heads != config.n_heads else ""
    )
    mask = "causal mask" if config.causal else "no mask (bidirectional)"
    return f"{arch.norm_placement}-norm {norm}, {positions}, {arch.ffn} FFN ({config.activation_name}), d_model {config.d_model}, {heads}, d_ff {config.d_ff}, {mask}"
