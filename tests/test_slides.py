"""``blockviz slides``: steps from the captions a render logged, clips cut from the scene videos
(the same frames, by copying packets), the PowerPoint deck and manim-slides' JSON read back, the
reveal.js deck in Debian's Chromium from ``file://`` with every other request aborted.

One tiny deck (two scenes at 160 × 90, 5 fps) is made once for the module."""

import json
import os
import re
import shutil
import subprocess
import zipfile

import av
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image
from support_browser import eventually

from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.lecture import LecturePart, probe_video
from blockviz.ownership import remember
from blockviz.scenes.catalog import lookup
from blockviz.slides import reveal
from blockviz.slides.deck import write_deck
from blockviz.slides.pptx_deck import sections
from blockviz.slides.steps import steps_of

SCENES = ["mask", "softmax"]
TINY_ARGS = ["--resolution", "160x90", "--fps", "5", "-j", "1"]
CHROMIUM = os.environ.get("BLOCKVIZ_CHROMIUM", "/usr/bin/chromium")
SLIDE_CONFIG_KEYS = {  # manim-slides' SlideConfig (manim_slides/config.py): BaseSlideConfig's fields, file, rev_file
    "loop",
    "auto_next",
    "playback_rate",
    "reversed_playback_rate",
    "notes",
    "dedent_notes",
    "skip_animations",
    "src",
    "file",
    "rev_file",
}


# -- steps: pure ---------------------------------------------------------------------------------


def test_a_step_runs_from_its_caption_to_the_next_and_the_first_from_zero():
    cues = [(0.4, "first"), (3.0, "second"), (3.0, "same  time"), (7.5, "last"), (9.0, "after the end")]
    steps = steps_of("mask", "The mask", "unused", cues, 9.0)
    assert [(s.start, s.end, s.caption) for s in steps] == [
        (0.0, 3.0, "first"),
        (3.0, 7.5, "second same time"),
        (7.5, 9.0, "last"),
    ]
    assert [s.name for s in steps] == ["mask-01", "mask-02", "mask-03"]


def test_a_scene_without_captions_is_one_step_with_its_catalogue_caption():
    (step,) = steps_of("title", "Introduction", "What this is.", [], 4.2)
    assert (step.start, step.end, step.caption, step.chapter) == (0.0, 4.2, "What this is.", "Introduction")
    with pytest.raises(ValueError):
        steps_of("title", "Introduction", "x", [], 0.0)


# -- the deck, made once -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deck")
    result = CliRunner().invoke(
        main, ["slides", "the cat sat", "--scene", ",".join(SCENES), *TINY_ARGS, "-o", str(folder)]
    )
    assert result.exit_code == 0, result.output
    logged = {name: json.loads((folder / ".cache" / f"{name}.mp4.captions.json").read_text()) for name in SCENES}
    return folder, logged, result.output


def decoded(path, start=0.0, end=float("inf")):
    """``[(seconds, RGB array)]`` of the frames of ``path`` shown from ``start`` until ``end``."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [
            (float(frame.pts * stream.time_base), frame.to_ndarray(format="rgb24"))
            for frame in container.decode(stream)
        ]
    return [
        (at - start, pixels) for at, pixels in sorted(frames, key=lambda f: f[0]) if start - 1e-6 <= at < end - 1e-6
    ]


@pytest.mark.render
def test_one_clip_per_caption_logged_holding_the_scenes_own_frames(deck):
    folder, logged, output = deck
    clips_folder = folder / "slides" / "files" / "Lecture"
    total = 0
    for name in SCENES:
        times = [at for at, _ in logged[name]["captions"]]
        ends = times[1:] + [logged[name]["duration"]]
        clips = sorted(clips_folder.glob(f"{name}-*.mp4"))
        assert len(clips) == len(times) >= 3, name
        for clip, start, end in zip(clips, times, ends):
            assert float(probe_video(clip).duration) == pytest.approx(end - start, abs=1e-3), clip.name
            mine, theirs = decoded(clip), decoded(folder / f"{name}.mp4", start, end)
            assert [round(at, 3) for at, _ in mine] == [round(at, 3) for at, _ in theirs], clip.name
            assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(mine, theirs)), clip.name  # copied, not encoded
            poster = np.asarray(Image.open(clip.with_suffix(".png")).convert("RGB"))
            assert np.array_equal(poster, theirs[-1][1]), clip.name  # the step's last frame
        total += len(times)
    assert f"{total} slides from {len(SCENES)} scenes" in output


@pytest.mark.render
def test_the_powerpoint_deck_has_a_video_and_the_caption_per_step(deck):
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    folder, logged, _ = deck
    captions = [said for name in SCENES for _, said in logged[name]["captions"]]
    slides = list(Presentation(str(folder / "slides.pptx")).slides)
    notes = [slide.notes_slide.notes_text_frame.text.split("\n") for slide in slides]
    assert [said[0] for said in notes] == captions  # the burned caption first, then what the presenter adds
    assert all([shape.shape_type for shape in slide.shapes] == [MSO_SHAPE_TYPE.MEDIA] for slide in slides)
    titles = {entry.name: entry.title for entry in lookup(SCENES)}
    assert sections(folder / "slides.pptx") == [(titles[name], len(logged[name]["captions"])) for name in SCENES]
    with zipfile.ZipFile(folder / "slides.pptx") as package:  # clips and posters stored as they are, XML deflated
        members = package.infolist()
        clips = sorted(path.read_bytes() for path in (folder / "slides" / "files" / "Lecture").glob("*.mp4"))
        assert sorted(package.read(m) for m in members if m.filename.endswith(".mp4")) == clips
    media = [m for m in members if m.filename.startswith("ppt/media/")]
    assert len(media) == 2 * len(captions) and {m.compress_type for m in media} == {zipfile.ZIP_STORED}
    assert {m.compress_type for m in members if m.filename.endswith(".xml")} == {zipfile.ZIP_DEFLATED}


@pytest.mark.render
def test_the_notes_say_why_and_read_out_the_records_weights(deck, tmp_path):
    from pptx import Presentation

    from blockviz.block_record import BlockRecord

    folder, logged, _ = deck
    saved = CliRunner().invoke(main, ["record", "the cat sat", "--save", str(tmp_path / "cat.safetensors")])
    assert saved.exit_code == 0, saved.output
    rec = BlockRecord.load(tmp_path / "cat.safetensors")  # the deck's record; head 0, the focus the last word "sat"
    weights = rec.weights[0, 2].tolist()
    largest = sorted(range(3), key=lambda key: -weights[key])
    read_out = "Read out: head 0: “sat” puts " + ", ".join(
        f"{weights[key]:.2f} on “{rec.tokens[key]}”" for key in largest
    )
    whys = {entry.name: f"Why: {' '.join(entry.caption.split())}" for entry in lookup(SCENES)}
    slides = list(Presentation(str(folder / "slides.pptx")).slides)
    notes = [slide.notes_slide.notes_text_frame.text.split("\n") for slide in slides]
    scenes = [name for name in SCENES for _ in logged[name]["captions"]]
    shows_weights = {"softmax"}  # the mask scene shows no weights: its notes read none out
    assert [said[1:] for said in notes] == [
        [whys[name], read_out] if name in shows_weights else [whys[name]] for name in scenes
    ]
    assert sum(weights) == pytest.approx(1.0) and weights[largest[0]] > weights[largest[-1]]


def test_slides_default_to_720p_for_a_projector(tmp_path):
    result = CliRunner().invoke(main, ["slides", "the cat sat", "--scene", "title", "--fps", "1", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (clip,) = (tmp_path / "slides" / "files" / "Lecture").glob("*.mp4")
    info = probe_video(clip)
    assert (info.width, info.height) == (1280, 720)
    assert Image.open(clip.with_suffix(".png")).size == (1280, 720)
    presentation = json.loads((tmp_path / "slides" / "Lecture.json").read_text(encoding="utf-8"))
    assert presentation["resolution"] == [1280, 720]


@pytest.mark.render
def test_the_manim_slides_json_has_one_slide_per_step_and_its_files(deck):
    folder, logged, _ = deck
    presentation = json.loads((folder / "slides" / "Lecture.json").read_text(encoding="utf-8"))
    captions = [said for name in SCENES for _, said in logged[name]["captions"]]
    assert [slide["notes"].split("\n\n")[0] for slide in presentation["slides"]] == captions
    assert all(set(slide) == SLIDE_CONFIG_KEYS for slide in presentation["slides"])
    assert presentation["resolution"] == [160, 90] and presentation["background_color"] == "#ffffff"  # light
    for slide in presentation["slides"]:  # relative to the JSON's folder's parent, as manim-slides reads them
        assert (folder / slide["file"]).is_file() and (folder / slide["rev_file"]).is_file()


@pytest.mark.render
def test_manim_slides_converts_the_json_where_it_is_installed(deck, tmp_path):
    program = os.environ.get("BLOCKVIZ_MANIM_SLIDES") or shutil.which("manim-slides")
    if program is None:
        pytest.skip("manim-slides is not installed (or set $BLOCKVIZ_MANIM_SLIDES to its program)")
    folder, logged, _ = deck
    converted = subprocess.run(
        [program, "convert", "Lecture", str(tmp_path / "ms.html"), "--to", "html"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert converted.returncode == 0, converted.stderr[-2000:]
    assets = sorted(path.name for path in (tmp_path / "ms_assets").iterdir())
    assert assets == sorted(path.name for path in (folder / "slides" / "files" / "Lecture").glob("*.mp4"))
    assert len(assets) == sum(len(logged[name]["captions"]) for name in SCENES)


@pytest.mark.render
def test_without_reveal_js_the_other_two_are_written_and_a_line_says_how(deck, tmp_path, monkeypatch):
    folder, logged, _ = deck
    parts = [
        LecturePart(name, name, "caption", folder / f"{name}.mp4", tuple(map(tuple, logged[name]["captions"])))
        for name in SCENES
    ]
    (tmp_path / "slides.html").write_text("an old deck")
    remember([tmp_path / "slides.html"])  # blockviz's own: a foreign page is never removed (test_ownership)
    monkeypatch.setattr(reveal, "find_reveal", lambda: None)
    written = write_deck(parts, tmp_path)
    assert written.html is None and not (tmp_path / "slides.html").exists()  # an old page would show old clips
    assert written.pptx.is_file() and written.json.is_file()
    assert written.notes == [reveal.INSTALL_HINT] and "make setup" in reveal.INSTALL_HINT
    assert not list((tmp_path / ".cache").iterdir())  # no temporary folder left


@pytest.mark.render
def test_bad_reveal_folder_and_output_through_a_file_are_one_line_errors(deck, tmp_path, monkeypatch):
    folder, logged, _ = deck
    parts = [LecturePart("mask", "The mask", "c", folder / "mask.mp4", ())]
    monkeypatch.setenv(reveal.REVEAL_ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(BlockvizError, match=r"^\$BLOCKVIZ_REVEAL is .* has no dist/reveal.js: point it at"):
        write_deck(parts, tmp_path / "out")
    monkeypatch.delenv(reveal.REVEAL_ENVIRONMENT_VARIABLE)
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(
        main, ["slides", "the cat sat", "--scene", "mask", *TINY_ARGS, "-o", str(tmp_path / "file" / "deck")]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# -- the reveal.js deck in Chromium ----------------------------------------------------------------


@pytest.mark.render
def test_the_reveal_deck_runs_offline_one_slide_per_step_with_notes_under_the_pages_policy(deck):
    if reveal.find_reveal() is None:
        pytest.skip("reveal.js is not installed (the set-up unpacks npm's reveal.js@5 into .venv/share/reveal.js)")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright import sync_api

    folder, logged, _ = deck
    captions = [said for name in SCENES for _, said in logged[name]["captions"]]
    page_path = folder / "slides.html"
    assert not re.search(r"https?:|//", page_path.read_text(encoding="utf-8"))  # no network reference
    assert (folder / "reveal.js" / "LICENSE").is_file()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page_path.read_text()).group(1)
    assert policy.startswith("default-src 'none'; script-src 'self' 'sha256-") and "unsafe-inline" not in policy
    errors, refused, console = [], [], []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(viewport={"width": 640, "height": 360})
            context.on("console", lambda message: console.append(message.text))  # the speaker view's window too
            page = context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith("file://")
                    else (refused.append(route.request.url), route.abort())
                ),
            )
            page.goto(page_path.resolve().as_uri())
            eventually(page, "window.Reveal && Reveal.isReady()", 10)
            assert page.evaluate("Reveal.getTotalSlides()") == len(captions)
            assert page.evaluate("Reveal.getSlideNotes()").startswith(f"<p>{captions[0]}</p><p>Why: ")
            page.keyboard.press("ArrowRight")
            eventually(page, "Reveal.getSlidePastCount() === 1", 5)
            assert page.evaluate("Reveal.getSlideNotes()").startswith(f"<p>{captions[1]}</p><p>Why: ")
            eventually(  # its clip loads from disk and plays (Chromium decodes it)
                page,
                "(() => { const v = Reveal.getCurrentSlide().querySelector('video'); return v.readyState >= 2 && !v.error; })()",
                5,
            )
            sources = page.evaluate(
                "Array.from(document.querySelectorAll('.slides video'), v => v.getAttribute('src') || v.getAttribute('data-src'))"
            )
            notes = page.evaluate(
                "Array.from(document.querySelectorAll('.slides aside.notes'), n => n.querySelector('p').textContent)"
            )
            with page.expect_popup() as opened:  # S: the speaker view, in a window that keeps the deck's policy
                page.keyboard.press("s")
            speaker = opened.value
            eventually(
                speaker,
                "text => ((document.querySelector('.speaker-controls-notes') || {}).textContent || '').includes(text)",
                10,
                captions[1],
            )
            assert len(speaker.frames) == 3  # the current and the next slide, each the deck in a frame
            speaker.set_viewport_size({"width": 1280, "height": 720})
            (upcoming,) = [frame for frame in speaker.frames if "controls=false" in frame.url]
            eventually(upcoming, "window.Reveal && Reveal.isReady()", 10)
            speaker.wait_for_timeout(500)  # the frame lays its deck out again at the new size
            frame_box = speaker.eval_on_selector("#upcoming-slide iframe", "e => e.getBoundingClientRect().toJSON()")
            picture = upcoming.evaluate(
                "Reveal.getCurrentSlide().querySelector('video').getBoundingClientRect().toJSON()"
            )
            labels = speaker.evaluate(
                "Array.from(document.querySelectorAll('#upcoming-slide .overlay-element, #speaker-layout'),"
                " e => e.getBoundingClientRect().toJSON())"
            )
            violations = [text for text in console if "Content Security Policy" in text]
            with pytest.raises(sync_api.Error):  # a script the policy does not name is refused
                page.add_script_tag(content="window.injected = true")
            assert page.evaluate("window.injected") is None
        finally:
            browser.close()
    assert notes == captions
    assert len(sources) == len(captions) and all((folder / source).is_file() for source in sources)
    assert errors == [] and refused == []
    assert violations == []
    next_slide = {  # the next slide's picture, its title at its top, in the speaker view's coordinates
        "left": frame_box["left"] + picture["left"],
        "right": frame_box["left"] + picture["right"],
        "top": frame_box["top"] + picture["top"],
        "bottom": frame_box["top"] + picture["bottom"],
    }
    assert len(labels) == 2 and picture["width"] > 200  # "Upcoming" and the layout menu; a picture to read
    assert not any(overlap(label, next_slide) for label in labels), (labels, next_slide)


def overlap(a, b) -> bool:
    """Whether boxes ``a`` and ``b`` (``left``, ``right``, ``top``, ``bottom``) share any area."""
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.render
def test_slides_again_with_every_scene_reused_loads_no_torch(deck):
    from test_cli_imports import imported

    folder, _, _ = deck
    args = ["slides", "the cat sat", "--scene", ",".join(SCENES), *TINY_ARGS, "-o", str(folder)]
    imported(*args)  # the program keeps the record (CliRunner's runs do not)
    modules = imported(*args)
    assert {"av", "pptx"} <= modules  # the deck was written again
    assert not {"torch", "manim"} & modules, {
        "torch",
        "manim",
    } & modules  # the record's header and the renders' logs are enough


def test_slides_help_imports_neither_torch_nor_manim_nor_pyav():
    from test_cli_imports import imported

    modules = imported("slides", "--help")
    assert "click" in modules
    assert not {"torch", "manim", "av", "pptx"} & modules


# -- narrated slides -------------------------------------------------------------------------------


class ToneVoice:
    """A stand-in for the Piper voice: every text a 1 s tone at 16 kHz (easy to find in the sound)."""

    def __init__(self, path=None) -> None:
        pass

    def speak(self, text):
        from blockviz.narration.voice import Speech

        t = np.arange(16000) / 16000
        return Speech(text, (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16), 16000)


def voiced_runs(samples, rate, threshold=0.05):
    """``(start, end)`` seconds of each stretch of sound (10 ms windows above ``threshold``)."""
    window = rate // 100
    count = len(samples) // window
    loud = np.abs(samples[: count * window]).reshape(count, window).max(axis=1) > threshold
    runs, start = [], None
    for index, on in enumerate([*loud, False]):
        if on and start is None:
            start = index
        elif not on and start is not None:
            runs.append((start * window / rate, index * window / rate))
            start = None
    return runs


@pytest.mark.render
def test_narrated_slides_carry_each_steps_speech_from_its_start(tmp_path, monkeypatch):
    from blockviz.narration import voice as voice_module
    from blockviz.slides.sound import audio_of

    monkeypatch.setattr(voice_module, "Voice", ToneVoice)
    args = ["slides", "the cat sat", "--scene", "mask", "--narrate", *TINY_ARGS, "-o", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    logged = json.loads((tmp_path / ".cache" / "mask.mp4.captions.json").read_text())
    clips = sorted((tmp_path / "slides" / "files" / "Lecture").glob("mask-*.mp4"))
    assert len(clips) == len(logged["captions"]) >= 3
    for clip in clips:
        samples, rate = audio_of(clip)
        seconds = float(probe_video(clip).duration)
        assert len(samples) / rate == pytest.approx(seconds, abs=0.1)  # as long as the picture
        ((begin, end),) = voiced_runs(samples, rate)  # its own caption's speech, and no other
        assert begin < 0.1 and end - begin == pytest.approx(1.0, abs=0.1) and end < seconds
    if (tmp_path / "slides.html").exists():
        assert " muted" not in (tmp_path / "slides.html").read_text()  # the clips play with their sound


def test_slides_warn_once_of_characters_no_font_can_draw_and_not_before_a_mistake(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from blockviz.render import run
    from blockviz.slides import deck

    monkeypatch.setattr(run, "render_jobs", lambda *args, **kwargs: None)  # what is drawn is tested above
    monkeypatch.setattr(deck, "write_deck", lambda *args, **kwargs: SimpleNamespace(files=list, clips=[], notes=[]))
    unassigned = "\u0378"  # no font has a glyph for a code point Unicode has not assigned
    result = CliRunner().invoke(main, ["slides", f"the {unassigned} sat", "--model", "seeded", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == [
        f"warning: no font on this machine has glyphs for some characters of {unassigned!r}: they show as empty boxes "
        "in the scenes; the numbers are unaffected (install a font with these characters to see them)"
    ]
    mistake = CliRunner().invoke(main, ["slides", f"zebras {unassigned}", "--narrate", "-o", str(tmp_path)])
    assert mistake.exit_code == 2 and mistake.output.splitlines() == [
        f"Error: Invalid value for SENTENCE: no word of the sentence is in the toy model's vocabulary ('zebras', {unassigned!r}): "
        'try "The chicken didn\'t cross the road because it was too tired.", or --model seeded for any words (see main slides --help)'
    ]  # alone: no warning of the voice's or the fonts' before it
