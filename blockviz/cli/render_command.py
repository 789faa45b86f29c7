"""``blockviz render``: placeholder until the render are built."""

from __future__ import annotations

import click


@click.command()
def render() -> None:
    """Not built yet."""
    raise click.ClickException("blockviz render is not built yet")
