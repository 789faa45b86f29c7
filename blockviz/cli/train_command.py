"""``blockviz train``: train the toy model (one block on generated sentences) and write its folder."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.block_config import MAX_SEED
from blockviz.cli.options import reporting_errors
from blockviz.toy.options import TrainOptions

TRAIN_LIMITS = {"d_model": 64, "n_heads": 16, "d_ff": 256, "steps": 100_000}
"""Largest sizes and steps ``train`` accepts: a toy model is small (training takes minutes at these)."""
default = TrainOptions.default


@click.command()
@click.option(
    "--d-model",
    type=click.IntRange(1, TRAIN_LIMITS["d_model"]),
    default=default("d_model"),
    show_default=True,
    help="Width of the residual stream (a multiple of --heads).",
)
@click.option(
    "--heads",
    "n_heads",
    type=click.IntRange(1, TRAIN_LIMITS["n_heads"]),
    default=default("n_heads"),
    show_default=True,
    help="Number of attention heads; d_head = d_model / heads.",
)
@click.option(
    "--d-ff",
    type=click.IntRange(1, TRAIN_LIMITS["d_ff"]),
    default=default("d_ff"),
    show_default=True,
    help="Width of the FFN's hidden layer.",
)
@click.option(
    "--steps",
    type=click.IntRange(1, TRAIN_LIMITS["steps"]),
    default=default("steps"),
    show_default=True,
    help=f"Training steps, each a batch of {default('batch')} generated sentences.",
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
    type=click.Path(path_type=Path),
    required=True,
    metavar="DIR",
    help="The model folder to write: new, empty, or one blockviz train wrote, which is replaced (a folder holding any file blockviz did not write is refused).",
)
def train(d_model, n_heads, d_ff, steps, seed, output: Path) -> None:
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

    \b
    Examples:
      blockviz train -o toy-model
      blockviz train --d-model 4 --heads 2 --d-ff 8 --steps 6000 -o small
      blockviz record "The chicken didn't cross the road because it was too tired." --model toy-model
    """
    from blockviz.block_config import BlockConfig
    from blockviz.cli.options import usage_error_for
    from blockviz.toy.build import build, write
    from blockviz.toy.folder import check_output_folder

    options = TrainOptions(d_model=d_model, n_heads=n_heads, d_ff=d_ff, steps=steps, seed=seed)
    with usage_error_for():
        BlockConfig(d_model=options.d_model, n_heads=options.n_heads, d_ff=options.d_ff)
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
    lessons = built.lessons
    click.echo(built.card["about"])
    click.echo(
        f"lessons: 'it' → 'chicken' {lessons.it_weight:.2f} (head {lessons.it_head}, row {lessons.it_query!r}), "
        f"held-out {lessons.held_out:.0%}; 'tired' → 'chicken' {lessons.tired_weight:.2f}, 'wide' → 'road' {lessons.wide_weight:.2f} "
        f"(head {lessons.contrast_head}); largest |value| {lessons.max_abs:.1f}"
    )
    missed = [name for name, met in lessons.goals.items() if not met]
    click.echo("every lesson goal met" if not missed else f"goals not met: {', '.join(missed)}")
    click.echo(f"trained in {built.wall_seconds:.1f} s ({built.cpu_seconds:.1f} s of CPU)")
    click.echo(str(folder))


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
