"""Options shared by the commands that render scenes (``render``, ``slides``): which scenes,
what the frames show and how they look, and narration; with their checks."""

from __future__ import annotations

import re

import click

from blockviz.cli.options import HEAD_HELP, TO_HELP, HeadNumberOrAuto
from blockviz.errors import BlockvizError
from blockviz.render.plan import (
    DETAIL_RANGE,
    FPS_RANGE,
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    PACE_RANGE,
    check_resolution,
    record_file_sentence,
)


def resolution(ctx, param, value):
    """``"320x180"`` → ``(320, 180)``, within the bounds of :func:`~blockviz.render.plan.check_resolution`."""
    if value is None:
        return None
    match = re.fullmatch(r"([0-9]+)x([0-9]+)", value.strip())
    if not match:
        raise click.BadParameter(f"{value!r} is not WIDTHxHEIGHT in pixels, e.g. 1280x720")
    try:
        return check_resolution(int(match[1]), int(match[2]))
    except BlockvizError as error:
        raise click.BadParameter(str(error)) from None


def scene_names(ctx, param, value):
    """``--scene a,b --scene c`` → ``("a", "b", "c")``; names are checked against the catalogue later."""
    names = []
    for given in value:
        for name in given.split(","):
            if not name.strip():
                raise click.BadParameter(
                    f"{given!r} holds an empty scene name: separate names with single commas, e.g. softmax,mask"
                )
            names.append(name.strip())
    return tuple(names)


def scene_and_quality_options(scene_help: str, quality: str = "l", quality_help: str = ""):
    """``--scene NAME[,NAME…]`` (with ``scene_help``; default ``all``) and ``-q/--quality``
    (default ``quality``; ``quality_help`` said after the qualities)."""
    from blockviz.render.plan import QUALITIES

    return _all(
        [
            click.option(
                "--scene",
                "scenes",
                multiple=True,
                default=("all",),
                show_default=True,
                callback=scene_names,
                metavar="NAME[,NAME…]",
                help=scene_help,
            ),
            click.option(
                "-q",
                "--quality",
                type=click.Choice(tuple(QUALITIES)),
                default=quality,
                show_default=True,
                help=f"l = 480p15, m = 720p30, h = 1080p60, k = 2160p60.{quality_help and ' ' + quality_help}",
            ),
        ]
    )


def frame_options(
    theme: str = "dark", theme_help: str = "Colours of the frames: dark background (for video) or light."
):
    """``--token``, ``--head`` (a number or auto), ``--to``, ``--theme`` (default ``theme``), ``--resolution``, ``--fps``,
    ``--pace`` and ``--detail``: what the scenes focus on and how their frames look."""
    options = [
        click.option(
            "--token",
            default=None,
            metavar="WORD|WORD#K|POSITION",
            help="Token the scenes focus on (its row is worked in detail): a word (its first occurrence), its k-th occurrence (the#2, from 1) or a 0-based position. [default: the last word token, not punctuation]",
        ),
        click.option("--head", type=HeadNumberOrAuto(), default=None, help=HEAD_HELP),
        click.option("--to", default=None, metavar="WORD|WORD#K|POSITION", help=TO_HELP),
        click.option(
            "--theme", type=click.Choice(("dark", "light")), default=theme, show_default=True, help=theme_help
        ),
        click.option(
            "--resolution",
            callback=resolution,
            default=None,
            metavar="WxH",
            help=f"Pixel size instead of the quality's, e.g. 320x180: even sizes from {MIN_RESOLUTION[0]}x{MIN_RESOLUTION[1]} to {MAX_RESOLUTION[0]}x{MAX_RESOLUTION[1]}.",
        ),
        click.option(
            "--fps", type=click.IntRange(*FPS_RANGE), default=None, help="Frames per second instead of the quality's."
        ),
        click.option(
            "--pace",
            type=click.FloatRange(*PACE_RANGE),
            default=1.0,
            show_default=True,
            help="Slower (up to 3) or faster (down to 0.5): scales every animation and hold.",
        ),
        click.option(
            "--detail",
            type=click.IntRange(*DETAIL_RANGE),
            default=1,
            show_default=True,
            help="Query rows worked step by step (the focus row first); the others are shown at once.",
        ),
    ]
    return _all(options)


def narration_options(narrate_help: str):
    """``--narrate`` (with ``narrate_help``) and ``--voice PATH.onnx``."""
    return _all(
        [
            click.option("--narrate", is_flag=True, help=narrate_help),
            click.option(
                "--voice",
                type=click.Path(dir_okay=False, path_type=str),
                default=None,
                metavar="PATH.onnx",
                help="Another Piper voice for --narrate (its .onnx.json beside it). Default: the packaged CC0 US-English voice.",
            ),
        ]
    )


def _all(options):
    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def check_narration(narrate: bool, voice: str | None, file_format: str) -> None:
    """--voice goes with --narrate, narration with mp4, and the voice must load: one line each.

    Raises
    ------
    click.UsageError, click.ClickException
        For each of those mistakes (exit 2, or 1 for a voice that does not load).
    """
    from blockviz.cli.options import reporting_errors

    if voice is not None and not narrate:
        raise click.UsageError("--voice goes with --narrate")
    if not narrate:
        return
    if file_format != "mp4":
        raise click.UsageError(f"--narrate speaks in a video: drop --format {file_format} (mp4 has sound)")
    from blockviz.narration.voice import Voice

    with reporting_errors():
        Voice(voice)


def warn_unspeakable(sentence: str) -> None:
    """One warning naming the sentence's characters the voice reads as "a token"."""
    from blockviz.narration.spoken import unspeakable

    found = unspeakable(sentence)
    if found:
        click.echo(f'warning: the voice has no sound for {" ".join(found)}: it reads each as "a token"', err=True)


def warn_missing_glyphs(tokens) -> None:
    """One warning naming the tokens with characters no font on this machine can draw in a scene."""
    from blockviz.scenes.glyphs import missing_glyphs_warning

    warning = missing_glyphs_warning(tokens)
    if warning is not None:
        click.echo(f"warning: {warning}", err=True)


def output_sentence(record_inputs: dict) -> str:
    """The sentence whose folder the files go to by default, found without running the block.

    Raises
    ------
    click.UsageError
        For both a sentence and ``--record FILE``, or neither.
    """
    sentence, record_file = record_inputs.get("sentence"), record_inputs.get("record_file")
    if record_file is not None:
        if sentence is not None:
            raise click.UsageError("give either a sentence or --record FILE, not both")
        return record_file_sentence(record_file)
    if sentence is None:
        raise click.UsageError('give a sentence, e.g. "the cat sat", or --record FILE')
    return sentence
