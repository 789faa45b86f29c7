"""The ``blockviz`` command: a group of verb subcommands. Heavy imports happen inside commands:
``blockviz --help`` and ``blockviz <command> --help`` import neither torch nor Manim.

Every run ends the same way on SIGINT (Ctrl-C) or SIGTERM: one line, "interrupted: earlier
outputs kept", exit 130 or 143, no process or temporary file left (:mod:`blockviz.cli.interrupts`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from blockviz import __version__
from blockviz.cli.compare_command import compare
from blockviz.cli.course_command import course
from blockviz.cli.explore_command import explore
from blockviz.cli.figures_command import figures
from blockviz.cli.heads_command import heads
from blockviz.cli.interrupts import run_interruptibly
from blockviz.cli.record_command import record
from blockviz.cli.render_command import render
from blockviz.cli.slides_command import slides
from blockviz.cli.train_command import train


class BlockvizGroup(click.Group):
    """The group whose ``main`` (what the ``blockviz`` program and ``CliRunner`` call) ends
    cleanly on SIGINT and SIGTERM."""

    def main(self, args=None, *rest, **options):
        as_program = args is None  # arguments from sys.argv: the process exits after this
        return run_interruptibly(
            lambda: super(BlockvizGroup, self).main(args, *rest, **options), restore=not as_program
        )

    def make_context(self, *args, **options):
        with one_line_usage_errors():
            return super().make_context(*args, **options)

    def invoke(self, ctx):
        with one_line_usage_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def one_line_usage_errors() -> Iterator[None]:
    """A usage error (a missing or unknown option, a bad choice) printed as one line, exit 2:
    ``Error: <what is wrong> (see blockviz <command> --help)``, not click's usage block."""
    try:
        yield
    except click.UsageError as error:
        if error.ctx is None:
            raise
        message = error.format_message()
        if not message.endswith(f"(see {error.ctx.command_path} --list)"):  # that one already says where to look
            message += f" (see {error.ctx.command_path} --help)"
        # Without a context click prints no usage lines; the message keeps what click said.
        raise click.UsageError(message) from None


@click.group(cls=BlockvizGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="blockviz")
def main() -> None:
    """Show, with real numbers, what happens inside one transformer block.

    A sentence becomes one row of numbers per token and runs through one pre-norm decoder
    block; every intermediate tensor is recorded. `record` prints the numbers, `figures`
    draws them with matplotlib, `render` animates them with Manim (and a lecture video),
    `slides` cuts those scenes into step-by-step slides (reveal.js, PowerPoint, manim-slides),
    `explore` writes one offline HTML page to select a token and inspect every calculation, `heads` ranks every
    head of a trained model (--model) by its attention from one token to another, `compare` shows
    how one token's attention moves between two sentences, head by head, `train` trains
    blockviz's toy model (one block on generated sentences; --model toy, the default block, is the
    one it ships), `course` builds a whole course of lessons from one TOML file, resumably, on
    local processes or a Dask cluster.

    \b
    Examples:
      blockviz record "the cat sat"
      blockviz figures "the cat sat" --format png,svg
      blockviz explore "The chicken didn't cross the road because it was too tired." --token it
      blockviz render "the cat sat" --scene all -q l
      blockviz heads "The chicken didn't cross the road because it was too tired." --model minilm --from it --to chicken
      blockviz slides "the cat sat" --scene softmax,mask
      blockviz course examples/course.toml --dry-run
      blockviz record -- "-a sentence that starts with a dash"
    """


main.add_command(record)
main.add_command(figures)
main.add_command(render)
main.add_command(explore)
main.add_command(heads)
main.add_command(compare)
main.add_command(train)
main.add_command(course)
main.add_command(slides)
