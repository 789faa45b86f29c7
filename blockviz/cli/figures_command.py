"""``blockviz figures``: placeholder until the figures are built."""

from __future__ import annotations

import click


@click.command()
def figures() -> None:
    """Not built yet."""
    raise click.ClickException("blockviz figures is not built yet")
