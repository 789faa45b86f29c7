"""``blockviz course``: a whole course from one TOML file, resumable, on local processes or Dask."""

from __future__ import annotations

from pathlib import Path

import click

from blockviz.cli.options import reporting_errors
from blockviz.cli.output_folder import OutputFolder


class CourseFileError(click.ClickException):
    """A course file that cannot be run: one line, exit 2, before anything runs."""

    exit_code = 2


@click.command()
@click.argument("course", metavar="COURSE.toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-j",
    "--jobs",
    "workers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Run N jobs at once: N local processes, or N workers of --cluster local. Default: one per CPU core.",
)
@click.option(
    "--cluster",
    type=click.Choice(("local",)),
    default=None,
    help="Run the jobs on a Dask LocalCluster made for this run (pip install 'blockviz[cluster]').",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run the jobs on the Dask scheduler at ADDRESS, e.g. tcp://head-node:8786; its workers need blockviz "
    "installed and the output folder shared.",
)
@click.option(
    "-o",
    "--output",
    type=OutputFolder(),
    default=None,
    metavar="DIR",
    help="The folder everything goes into, instead of the course file's output.",
)
@click.option("--dry-run", is_flag=True, help="List the jobs and which are up to date; run nothing.")
@click.option("--force", is_flag=True, help="Run every job, even those up to date.")
def course(course, workers, cluster, scheduler, output, dry_run, force) -> None:
    """Build a whole course from COURSE.toml: its lessons' sentences × scenes × qualities ×
    formats, figures, explorer pages, slide decks and contrast comparisons, into one folder with
    an index.html linking every output.

    Each output is stamped with what it was made from (its options, the record's inputs and
    hash, blockviz's code): a rerun does only what changed. A failed job is reported in one line
    and the others go on; the exit status is then 1. A job whose worker process dies is tried once
    more, and named in a "retried:" line.

    \b
    The file's keys (docs/courses.md describes each; examples/course.toml uses most):
      top level:        title, output, [defaults], [[lesson]]
      a lesson only:    name, title, sentences, contrast
      [defaults] or a lesson: model, layer, scenes, qualities, formats, resolution,
                        fps, token, head, theme, figures, figure_formats, explorer,
                        slides, narration, voice

    \b
    Examples:
      blockviz course examples/course.toml
      blockviz course examples/course.toml --dry-run
      blockviz course examples/course.toml -j 2 --cluster local
      blockviz course course.toml --scheduler tcp://head-node:8786
    """
    from blockviz.course import CourseError, load_course, plan_course, run_course
    from blockviz.processes import cores_available

    if cluster and scheduler:
        raise click.UsageError("give either --cluster local or --scheduler ADDRESS, not both")
    try:
        loaded = load_course(course, output)
        if dry_run:
            jobs, known = plan_course(loaded, force)
    except CourseError as error:
        raise CourseFileError(str(error)) from None
    if dry_run:
        _list(jobs, known)
        return
    if (cluster or scheduler) and not _dask_installed():
        raise click.UsageError("Dask is not installed: pip install 'blockviz[cluster]'")
    from blockviz.course.report import CourseProgress
    from blockviz.course.work import DONE, FAILED

    with reporting_errors():
        jobs, known = plan_course(loaded, force)
        progress = CourseProgress(len(jobs) - len(known))

        warned, failed = set(), set()

        def on_result(job, result):
            progress.advance(job)
            if result.status == FAILED and (job.lesson, job.sentence, result.message) not in failed:
                failed.add(
                    (job.lesson, job.sentence, result.message)
                )  # a sentence's record failing fails all its jobs: said once
                click.echo(f"failed: {job.label}: {result.message}", err=True)
            elif result.status == DONE and result.message and result.message not in warned:
                warned.add(result.message)  # once per sentence, not once per job
                click.echo(f"warning: {result.message}", err=True)

        with progress:
            ran = run_course(
                loaded,
                workers=workers or cores_available(),
                dask=cluster == "local",
                scheduler=scheduler,
                force=force,
                on_result=on_result,
            )
    _summarise(ran, loaded)
    if ran.count(FAILED):
        raise click.exceptions.Exit(1)


def _dask_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def _list(jobs, known) -> None:
    from blockviz.course.work import SKIPPED

    for job in jobs:
        result = known.get(job.id)
        status = "to do" if result is None else result.status
        note = f": {result.message}" if result is not None and result.status == SKIPPED else ""
        click.echo(f"{status:<10}  {job.label}{note}")
    click.echo(
        f"{len(jobs)} jobs: {len(jobs) - len(known)} to do, {sum(r.status != SKIPPED for r in known.values())} up to date"
    )


def _summarise(ran, loaded) -> None:
    from rich.console import Console

    from blockviz.course.index import INDEX
    from blockviz.course.report import failures_table, retried, slowest, summary_table
    from blockviz.course.work import FRESH, SKIPPED

    console = Console(highlight=False)
    console.print(summary_table(ran.jobs, ran.results))
    failed = failures_table(ran.jobs, ran.results)
    if failed is not None:
        console.print(failed)
    skipped = {(job.kind, ran.results[job.id].message) for job in ran.jobs if ran.results[job.id].status == SKIPPED}
    for kind, reason in sorted(skipped):
        click.echo(f"skipped {kind}: {reason}")
    for line in retried(ran.jobs, ran.results):
        click.echo(line)
    for job, seconds in slowest(ran.jobs, ran.results):
        click.echo(f"slow: {seconds:.1f} s  {job.label}")
    click.echo(f"{ran.count(FRESH)} of {len(ran.jobs)} jobs were up to date")
    click.echo(str(loaded.output / INDEX))
