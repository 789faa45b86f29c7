"""``blockviz slides``: the lecture's scenes as step-by-step slides (reveal.js, PowerPoint,
manim-slides), cut from their renders."""

from __future__ import annotations

import click

from blockviz.cli.options import (
    chosen_token_and_head,
    pop_record_options,
    record_options,
    reporting_errors,
    resolved_head,
    usage_error_for,
)
from blockviz.cli.output_folder import OutputFolder
from blockviz.cli.records import command_record, command_record_header
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
from blockviz.ownership import refuse_foreign
from blockviz.processes import cores_available
from blockviz.render.plan import RenderOptions, default_folder, plan
from blockviz.render.progress import Progress

DECK_FOLDER = "slides"
"""The default folder's name inside the sentence's: ``renders/<sentence slug>/slides/``."""


@click.command(cls=SentenceCommand)
@record_options(allow_record_file=True)
@scene_and_quality_options(
    "Scenes to make slides of: names separated by commas, or all (the title card and every scene, as in the lecture). See blockviz render --list.",
    quality="m",
    quality_help="720p by default: a projector's size (-q l for a quick look).",
)
@click.option(
    "-o",
    "--output",
    type=OutputFolder(),
    default=None,
    metavar="DIR",
    help="Folder of the deck and the scenes' renders. [default: renders/<sentence-slug>/slides/]",
)
@frame_options(theme="light", theme_help="Colours of the frames: light (for projectors) or dark.")
@click.option(
    "--burned-captions/--no-burned-captions",
    default=True,
    show_default=True,
    help="Draw each step's caption in the frame; either way it is the slide's notes.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Render N scenes at once. Default: one per CPU core.",
)
@narration_options(
    "Speak each caption with an offline voice (as blockviz render --narrate): each slide's clip carries its step's speech."
)
@click.option("--force", is_flag=True, help="Render the scenes even if unchanged renders exist.")
def slides(
    scenes,
    quality,
    output,
    token,
    head,
    to,
    theme,
    resolution,
    fps,
    pace,
    detail,
    burned_captions,
    jobs,
    narrate,
    voice,
    force,
    **options,
) -> None:
    """Step-by-step slides of SENTENCE's lecture at 720p (-q m, for a projector): one slide per
    step of every scene, its notes the caption, why the scene does it and the record's numbers
    to read out.

    The scenes are rendered as in `blockviz render --lecture` (unchanged renders are reused) and
    each step is cut from them, without a second render, into DIR/slides/files/Lecture/. Written:

    \b
      DIR/slides.html          reveal.js, offline: → or Space to advance, S for the notes
      DIR/slides.pptx          PowerPoint / LibreOffice Impress, a video and notes per slide
      DIR/slides/Lecture.json  manim-slides: `manim-slides present Lecture` in DIR

    slides.html needs reveal.js (npm's reveal.js, which `make setup` installs); without it the
    other two are written and one line says how to get it.

    \b
    Examples:
      blockviz slides "The chicken didn't cross the road because it was too tired." --token it
      blockviz slides "the cat sat" --scene softmax,mask -q l -o deck    # 480p, a quick look
    """
    from blockviz.render.run import lecture_parts, render_jobs
    from blockviz.scenes.catalog import entries, for_record, lookup
    from blockviz.scenes.wording import Wording
    from blockviz.slides.deck import deck_paths, write_deck

    check_narration(narrate, voice, "mp4")
    record_inputs = pop_record_options(options)
    head = resolved_head(head, record_inputs.get("model"), token)
    render_options = RenderOptions(
        quality=quality,
        format="mp4",
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
    )
    with usage_error_for("--scene"):
        chosen = [entry for entry in entries()] if "all" in scenes else lookup(scenes)
    told = command_record_header(record_inputs) if head != "auto" else None  # auto reads the weights
    rec = told if told is not None else command_record(record_inputs)  # the header: no torch, if nothing renders
    chosen_token_and_head(rec, token, head, to)
    if narrate:  # warnings once the record is made: a mistake in the input is its one line alone
        warn_unspeakable(rec.sentence)
    warn_missing_glyphs(rec.tokens)
    with reporting_errors():
        chosen = for_record(chosen, rec, () if "all" in scenes else scenes)
        sentence = output_sentence(record_inputs)
        folder = output if output is not None else default_folder(sentence, record_inputs) / DECK_FOLDER
        planned = plan([entry.name for entry in chosen], record_inputs, render_options, folder)
        refuse_foreign([job.output for job in planned] + deck_paths(folder))
    pending = [job for job in planned if force or not job.is_fresh()]
    if pending:
        if rec is told:
            rec = command_record(record_inputs)
        with reporting_errors():
            render_jobs(
                rec, pending, render_options, processes=jobs or cores_available(), progress=Progress(enabled=True)
            )
    with reporting_errors():
        deck = write_deck(lecture_parts(planned, Wording.of(rec)), folder, theme=theme, title=sentence)
    for path in deck.files():
        click.echo(str(path))
    click.echo(f"{len(deck.clips)} slides from {len(planned)} scenes")
    for note in deck.notes:
        click.echo(note, err=True)
