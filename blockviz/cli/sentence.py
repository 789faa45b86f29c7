"""A click command that explains how to pass a sentence beginning with "-"."""

from __future__ import annotations

import click


class SentenceCommand(click.Command):
    """A command whose first argument is a sentence.

    An unknown option is most often a sentence that begins with "-": the error says to put
    "--" before it.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            dashed = next((arg for arg in given if arg.startswith("-") and " " in arg), error.option_name)
            raise click.UsageError(
                f"no such option {error.option_name!r}; if {dashed!r} is the sentence, "
                f"put -- before it: blockviz {ctx.info_name} -- {click.utils.make_str(repr(dashed))}",
                ctx,
            ) from None
