"""``blockviz train``: train the toy model (one block on generated sentences) and write its folder."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.block_config import MAX_SEED
from blockviz.cli.options import reporting_errors
from blockviz.cli.output_folder import OutputFolder
from blockviz.toy.options import COPY_DEFAULTS, TASKS, TrainOptions

TRAIN_LIMITS = {"d_model": 64, "n_heads": 16, "d_ff": 256, "steps": 100_000, "blocks": 8}
"""Largest sizes and steps ``train`` accepts: a toy model is small (training takes minutes at these)."""
default = TrainOptions.default


def _defaults(name: str) -> str:
    """An option's defaults as --help shows them: the lessons task's, and the copy task's where it differs."""
    lessons = default(name)
    copy = COPY_DEFAULTS.get(name, lessons)
    return str(lessons) if copy == lessons else f"{lessons}; --task copy: {copy}"


@click.command()
@click.option(
    "--d-model",
    type=click.IntRange(1, TRAIN_LIMITS["d_model"]),
    default=None,
    show_default=_defaults("d_model"),
    help="Width of the residual stream (a multiple of --heads).",
)
@click.option(
    "--heads",
    "n_heads",
    type=click.IntRange(1, TRAIN_LIMITS["n_heads"]),
    default=None,
    show_default=_defaults("n_heads"),
    help="Number of attention heads; d_head = d_model / heads.",
)
@click.option(
    "--d-ff",
    type=click.IntRange(1, TRAIN_LIMITS["d_ff"]),
    default=None,
    show_default=_defaults("d_ff"),
    help="Width of the FFN's hidden layer.",
)
@click.option(
    "--steps",
    type=click.IntRange(1, TRAIN_LIMITS["steps"]),
    default=None,
    show_default=_defaults("steps"),
    help=f"Training steps, each a batch of {default('batch')} generated sentences "
    f"(--task copy: {COPY_DEFAULTS['batch']} sequences).",
)
@click.option(
    "--task",
    type=click.Choice(TASKS),
    default="lessons",
    show_default=True,
    help="What the model learns: lessons, the lesson sentences' grammar (the shipped --model toy); copy, sequences of the toy's "
    "words with a phrase repeated after a random gap, the loss on the repeat (8–11 words in training, measured on 3–5; "
    "the shipped --model copy).",
)
@click.option(
    "--blocks",
    type=click.IntRange(1, TRAIN_LIMITS["blocks"]),
    default=None,
    show_default=_defaults("blocks"),
    help="Number of blocks, one after another on the residual stream (the lessons task: 1 only).",
)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=default("seed"),
    show_default=True,
    help="Seeds the initial weights and the order of the batches (0 … 2^63 − 1); the default is the shipped model's.",
)
@click.option(
    "-o",
    "--output",
    type=OutputFolder(),
    required=True,
    metavar="DIR",
    help="The model folder to write: new, empty, or one blockviz train wrote, which is replaced (a folder holding any file blockviz did not write is refused).",
)
def train(d_model, n_heads, d_ff, steps, task, blocks, seed, output: Path) -> None:
    """Train the toy model and write it to DIR: one pre-norm block (the one blockviz records)
    between learned token and position embeddings and an unembedding, trained by next-token
    cross-entropy on sentences generated from a seeded grammar.

    The sentences are lesson-shaped ("the chicken didn't cross the road because it was too
    tired . the tired chicken ."), with the lesson sentences' noun pairs held out. The defaults
    take about 30 s of CPU on one core. The same options give the same files, byte for byte
    (timing.json aside), on any x86-64 CPU with AVX2: blockviz pins torch's kernels to plain x86-64 ones
    (ATen's default capability, MKL's compatible branch, no oneDNN). Record with it: blockviz
    record "…" --model DIR. The model blockviz
    ships (--model toy) is this command's defaults; its card.json gives the corpus recipe, the
    final loss and the lesson figures.

    With --task copy the model learns to copy: two blocks by default (d_model 16, 2 heads),
    where a head of block 0 looks at the previous word and a head of block 1 at the word after
    the current word's earlier occurrence (an induction head); --blocks 1 trains the one-block
    contrast. The shipped --model copy is this task's defaults; its card.json gives the copy
    measures (docs/models.md).

    \b
    Examples:
      blockviz train -o toy-model
      blockviz train --d-model 4 --heads 2 --d-ff 8 --steps 6000 -o small
      blockviz train --task copy -o copy-model
      blockviz train --task copy --blocks 1 -o one-block-copy
      blockviz record "The chicken didn't cross the road because it was too tired." --model toy-model
    """
    from blockviz.block_config import BlockConfig
    from blockviz.cli.options import usage_error_for
    from blockviz.toy.build import build, write
    from blockviz.toy.folder import check_output_folder
    from blockviz.toy.training import check_options

    options = TrainOptions.for_task(
        task, d_model=d_model, n_heads=n_heads, d_ff=d_ff, steps=steps, blocks=blocks, seed=seed
    )
    with usage_error_for():
        BlockConfig(d_model=options.d_model, n_heads=options.n_heads, d_ff=options.d_ff)
        check_options(options)
    with reporting_errors():
        check_output_folder(output)
    progress = _Progress(options.steps)
    try:
        with progress:
            built = build(options, progress.step)
    except BaseException:
        if progress.done < options.steps:
            click.echo(
                f"training stopped at step {progress.done:,} of {options.steps:,}{progress.loss_text()}: nothing written to {output}",
                err=True,
            )
        raise
    with reporting_errors():
        folder = write(output, built)
    click.echo(built.card["about"])
    if built.lessons is None:
        _echo_copy(built.card["copy"])
    else:
        _echo_lessons(built.lessons)
    click.echo(f"trained in {built.wall_seconds:.1f} s ({built.cpu_seconds:.1f} s of CPU)")
    click.echo(str(folder))


def _echo_copy(copy: dict) -> None:
    """The copy measures of a card (``copy``), two lines."""
    previous, induction = copy["previous_token"], copy["induction"]
    click.echo(
        f"copy: previous-token {previous['score']:.2f} (block {previous['block']}, head {previous['head']}), "
        f"induction {induction['score']:.2f} (block {induction['block']}, head {induction['head']}), "
        f"accuracy on the repeat {copy['accuracy']:.2f}"
    )
    missed = [name for name, goal in copy["goals"].items() if not goal["met"]]
    click.echo("every copy goal met" if not missed else f"goals not met: {', '.join(missed)}")


def _echo_lessons(lessons) -> None:
    """The lesson figures (:class:`~blockviz.toy.lessons.LessonFigures`), two lines."""
    click.echo(
        f"lessons: 'it' → 'chicken' {lessons.it_weight:.2f} (head {lessons.it_head}, row {lessons.it_query!r}), "
        f"held-out {lessons.held_out:.0%}; 'tired' → 'chicken' {lessons.tired_weight:.2f}, 'wide' → 'road' {lessons.wide_weight:.2f} "
        f"(head {lessons.contrast_head}); largest |value| {lessons.max_abs:.1f}"
    )
    missed = [name for name, met in lessons.goals.items() if not met]
    click.echo("every lesson goal met" if not missed else f"goals not met: {', '.join(missed)}")


class _Progress:
    """The training's progress bar on stderr (rich): step, loss, elapsed; silent off a terminal."""

    def __init__(self, steps: int) -> None:
        self.steps, self.done, self.loss = steps, 0, None
        self._bar = self._task = None

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("training"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("loss {task.fields[loss]}"),
                TimeElapsedColumn(),
                transient=True,
                console=console,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("training", total=self.steps, loss="…")
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)

    def step(self, step: int, loss: float) -> None:
        self.done, self.loss = step, loss
        if self._bar is not None and (step % 20 == 0 or step == self.steps):
            self._bar.update(self._task, completed=step, loss=f"{loss:.3f}")

    def loss_text(self) -> str:
        return f" (loss {self.loss:.3f})" if self.loss is not None else ""
