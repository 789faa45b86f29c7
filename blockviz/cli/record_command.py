"""``blockviz record``: compute the record and print every tensor, labelled with the tokens."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.cli.options import build_record, record_options, reporting_errors
from blockviz.cli.sentence import SentenceCommand


@click.command(cls=SentenceCommand)
@record_options()
@click.option("--decimals", type=click.IntRange(0, 8), default=2, show_default=True, help="Decimals printed per number.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also save the record: PATH.safetensors (exact) or PATH.json (−∞ written as null).")
def record(decimals: int, save: Path | None, **options) -> None:
    """Run SENTENCE through one block and print every intermediate tensor.

    Rows are tokens (queries); in n × n tensors columns are keys. A sentence that begins
    with "-" goes after "--": blockviz record -- "-x marks the spot".
    """
    from blockviz.files import writable_folder
    from blockviz.tensorfile import check_format

    if save is not None:
        with reporting_errors():
            check_format(save)
            writable_folder(save.parent)
    rec = build_record(**options)
    for name, tensor in rec.activations().items():
        rows, columns = _labels(name, rec)
        click.echo(_table(name, tensor, rows, columns, decimals) + "\n")
    if save is not None:
        with reporting_errors():
            rec.save(save)
        click.echo(f"saved {save}")


def _labels(name: str, rec) -> tuple[list[str], list[str]]:
    tokens = rec.tokens
    width = rec.activations()[name].shape[-1]
    if name in ("scores", "scaled_scores", "mask", "masked_scores", "weights"):
        return tokens, tokens
    prefix = {"query": "q", "key": "k", "value": "v", "head_outputs": "z", "ffn_pre": "h", "ffn_post": "h"}.get(name, "d")
    return tokens, [f"{prefix}{index}" for index in range(width)]


def _table(name, tensor, rows, columns, decimals):
    from blockviz.text_table import tensor_table

    return tensor_table(name, tensor, rows, columns, decimals)
