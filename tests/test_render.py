"""The render pipeline and ``blockviz render``: real tiny renders checked with PyAV, skipping
unchanged renders, separate folders per sentence by default and ``-o DIR`` written into directly,
atomic outputs, one-line errors before rendering. Tests that run Manim are marked ``render``."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest
from click.testing import CliRunner
from PIL import Image
from support import BAD_FILES, write_bad_files

from blockviz.block_record import record
from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.ownership import MANIFEST
from blockviz.render.plan import RenderOptions, default_folder, plan, record_file_sentence
from blockviz.render.run import check_request, render_jobs, render_one
from blockviz.scenes.catalog import entries

ATTENTION_SCENES = [
    "tokens",
    "qkv",
    "dot-products",
    "mask",
    "softmax",
    "value-mixing",
    "worked-example",
    "causal-vs-bidirectional",
]

TINY = dict(resolution=(160, 90), fps=5)
TINY_ARGS = ["--resolution", "160x90", "--fps", "5"]
RECORD_INPUTS = {"sentence": "the cat sat", "seed": 0}


def video_facts(path: Path) -> tuple[float, int, int]:
    """Seconds shown (from the first frame's timestamp to the end of the last frame), width,
    height; every packet decodes to a frame. Not a count of frames: a held picture is one frame
    lasting the hold."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        packets = [packet for packet in container.demux(stream) if packet.pts is not None]
        first, end = min(p.pts for p in packets), max(p.pts + p.duration for p in packets)
        facts = float((end - first) * stream.time_base), stream.codec_context.width, stream.codec_context.height
    with av.open(str(path)) as container:
        assert sum(1 for _ in container.decode(video=0)) == len(packets)
    return facts


@pytest.mark.render
def test_every_scene_renders_a_real_tiny_video(tmp_path, cat_record):
    options = RenderOptions(**TINY)
    jobs = plan(ATTENTION_SCENES, RECORD_INPUTS, options, tmp_path)
    render_jobs(cat_record, jobs, options)
    for job in jobs:
        seconds, width, height = video_facts(job.output)
        assert (width, height) == (160, 90), job.scene
        # each scene lasts 10–45 s at normal speed: its captions' reading times set it (docs/writing-a-scene.md,
        # rule 9; 4 words a second), as test_block_scenes holds
        assert 10 <= seconds <= 45, (job.scene, seconds)
        assert seconds == pytest.approx(json.loads(job.captions.read_text())["duration"], abs=1e-3), (
            job.scene
        )  # the time Manim counted
        assert job.is_fresh()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [MANIFEST, ".cache"] + [f"{name}.mp4" for name in ATTENTION_SCENES]
    )
    assert not list((tmp_path / ".cache").glob("media-*")), "temporary media left behind"


@pytest.mark.render
def test_by_default_two_sentences_get_their_own_folders_and_numbers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outputs = []
    for sentence, slug in (("the cat sat", "the-cat-sat--seeded"), ("a dog ran", "a-dog-ran--seeded")):
        result = invoke(sentence, "--model", "seeded", "--scene", "mask", "--format", "png", *TINY_ARGS)
        assert result.exit_code == 0, result.output
        outputs.append(Path("renders") / slug / "mask.png")
        assert result.output.strip() == str(outputs[-1])
        assert default_folder(sentence, {"model": None}) == outputs[-1].parent
    toy = invoke("the cat sat", "--scene", "mask", "--format", "png", *TINY_ARGS)  # the default block: its own folder
    assert toy.exit_code == 0 and toy.output.strip() == str(Path("renders") / "the-cat-sat" / "mask.png")
    first, second, trained = (Image.open(path).convert("RGB") for path in [*outputs, "renders/the-cat-sat/mask.png"])
    assert first.size == (160, 90) and first.tobytes() != second.tobytes() != trained.tobytes()


@pytest.mark.render
def test_an_interrupted_render_leaves_no_file(tmp_path, cat_record):
    options = RenderOptions(**TINY)
    job = plan(["mask"], RECORD_INPUTS, options, tmp_path)[0]

    def interrupt(scene):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        render_one(cat_record, job, options, on_play=interrupt)
    assert not job.output.exists() and not job.is_fresh()
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]


@pytest.mark.render
def test_parallel_jobs_render_every_scene(tmp_path, cat_record):
    options = RenderOptions(format="png", **TINY)
    jobs = plan(["mask", "worked-example"], RECORD_INPUTS, options, tmp_path)
    done = render_jobs(cat_record, jobs, options, processes=2)
    assert [job.scene for job, _ in done] == ["worked-example", "mask"]  # the lecture's order, whatever finishes first
    assert all(Image.open(job.output).size == (160, 90) for job in jobs)
    one_by_one = plan(["mask", "worked-example"], RECORD_INPUTS, options, tmp_path / "one-by-one")
    render_jobs(cat_record, one_by_one, options, processes=1)
    for parallel, alone in zip(jobs, one_by_one):  # the worker (from the saved record) draws what this process draws
        assert Image.open(parallel.output).tobytes() == Image.open(alone.output).tobytes(), parallel.scene


def test_render_defaults_to_one_process_per_core(tmp_path, monkeypatch):
    import blockviz.cli.render_command as render_command
    import blockviz.render.rendering as rendering

    seen = []
    monkeypatch.setattr(render_command, "cores_available", lambda: 7)
    monkeypatch.setattr(
        rendering, "render_jobs", lambda rec, jobs, options, processes, progress: seen.append(processes)
    )
    for args, processes in ((), 7), (("-j", "1"), 1), (("--jobs", "3"), 3):
        assert (
            invoke("the cat sat", "--scene", "mask,softmax", "--format", "png", "-o", str(tmp_path), *args).exit_code
            == 0
        )
        assert seen.pop() == processes


def invoke(*args):
    return CliRunner().invoke(main, ["render", *args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["the cat sat", "--scene", "attention"], "unknown scene 'attention'"),
        (["the cat sat", "-q", "x"], "'x' is not one of 'l', 'm', 'h', 'k'"),
        (["the cat sat", "--format", "avi"], "'avi' is not one of 'mp4', 'gif', 'png'"),
        (
            ["the cat sat", "--token", "dog"],
            "token 'dog' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat', 2 'sat'",
        ),
        (["the cat sat", "--token", "3"], "token position 3 is outside the sentence of 3 tokens"),
        (["the cat sat", "--token", "cat#0"], "occurrences count from 1"),
        (["the cat saw the dog", "--token", "the#3"], "'the' occurs 2 times, so the#3 does not exist"),
        (["the cat sat", "--head", "2"], "head 2 does not exist: the block has 2 heads, choose heads 0 to 1"),
        (["   "], "the sentence is empty"),
        (["the cat sat", "--resolution", "big"], "is not WIDTHxHEIGHT"),
        (
            ["the cat sat", "--resolution", "16x16"],
            "resolution 16x16 is below the legible minimum of 160x90: choose e.g. 320x180",
        ),
        (["the cat sat", "--resolution", "160x88"], "below the legible minimum of 160x90"),
        (
            ["the cat sat", "--resolution", "7682x4320"],
            "resolution 7682x4320 is above the maximum of 7680x4320: choose e.g. 3840x2160",
        ),
        (
            ["the cat sat", "--resolution", "321x181"],
            "resolution 321x181 has an odd side, and video needs even sizes: choose e.g. 320x180",
        ),
        (["the cat sat", "--fps", "0"], "0 is not in the range 1<=x<=120"),
    ],
)
def test_bad_input_is_a_one_line_error_before_rendering(tmp_path, args, message):
    result = invoke(*args, "-o", str(tmp_path))
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(resolution=(16, 16)), "below the legible minimum of 160x90"),
        (dict(resolution=(7680, 4322)), "above the maximum of 7680x4320"),
        (dict(resolution=(161, 90)), "has an odd side"),
        (dict(resolution=(160.0, 90)), "not whole pixels"),
        (dict(fps=121), "outside 1 … 120"),
        (dict(quality="x"), "unknown quality 'x'"),
        (dict(format="avi"), "unknown format 'avi'"),
    ],
)
def test_options_outside_their_bounds_are_refused_by_the_library(options, message):
    with pytest.raises(BlockvizError, match=message):
        RenderOptions(**options).check()
    assert (
        RenderOptions(resolution=(160, 90), fps=1).check() and RenderOptions(resolution=(7680, 4320), fps=120).check()
    )


@pytest.mark.parametrize("token", ["the#2", "3", "Dog", None])
def test_the_token_may_be_a_word_its_kth_occurrence_or_a_position(token):
    check_request(record("the cat saw the dog"), RenderOptions(token=token))  # raises if refused


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory, cat_record):
    """Files that are no record or parameters at all: name → (path, words its message holds)."""
    return write_bad_files(tmp_path_factory.mktemp("bad"), cat_record)


BAD_FILE_KINDS = list(BAD_FILES)


@pytest.mark.parametrize("option", ["--record", "--params"])
@pytest.mark.parametrize("kind", BAD_FILE_KINDS)
def test_a_bad_record_or_parameters_file_is_a_one_line_error(tmp_path, bad_files, option, kind):
    path, message = bad_files[kind]
    given = ["--record", str(path)] if option == "--record" else ["the cat sat", "--params", str(path)]
    result = invoke(*given, "--scene", "mask", "--format", "png", *TINY_ARGS, "-o", str(tmp_path / "out"))
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith("Error: ") and message in line and str(path) in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", BAD_FILE_KINDS)
def test_the_sentence_of_a_bad_record_file_is_a_blockviz_error(bad_files, kind):
    path, message = bad_files[kind]
    with pytest.raises(BlockvizError, match=re.escape(message)):
        record_file_sentence(path)


def test_the_sentence_of_a_record_file_is_read_without_torch(tmp_path, cat_record):
    for name in ("cat.safetensors", "cat.json"):
        cat_record.save(tmp_path / name)
    code = f"import sys; from blockviz.render.plan import record_file_sentence as s; print([s(r'{tmp_path}/cat.safetensors'), s(r'{tmp_path}/cat.json')], 'torch' in sys.modules)"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "['the cat sat', 'the cat sat'] False"


@pytest.mark.render
def test_cli_renders_into_dir_then_skips_an_unchanged_scene(tmp_path):
    args = ["the cat sat", "--scene", "worked-example", "--format", "png", *TINY_ARGS, "-o", str(tmp_path)]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    output = tmp_path / "worked-example.png"
    assert first.output.strip() == str(output) and output.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == [MANIFEST, ".cache", "worked-example.png"]
    started = time.perf_counter()
    again = invoke(*args)
    assert time.perf_counter() - started < 1.0
    assert again.exit_code == 0 and "(unchanged)" in again.output
    other_head = invoke(*args[:-2], "--head", "1", "-o", str(tmp_path))
    assert other_head.exit_code == 0 and "(unchanged)" not in other_head.output


@pytest.mark.render
def test_cli_renders_from_a_saved_record(tmp_path, cat_record):
    saved = tmp_path / "cat.safetensors"
    cat_record.save(saved)
    result = invoke(
        "--record", str(saved), "--scene", "mask", "--format", "png", *TINY_ARGS, "-o", str(tmp_path / "out")
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "mask.png").exists()


def test_list_names_every_scene_quickly():
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "blockviz.cli", "render", "--list"], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:  # no __main__ module: call the console entry point instead
        result = invoke("--list")
        listed = result.output
    else:
        listed = completed.stdout
    for entry in entries():
        assert entry.name in listed and entry.description in listed
    assert "torch" not in sys.modules or elapsed < 5


def test_help_and_list_do_not_import_torch_or_manim():
    code = "import sys; from blockviz.cli import main; from click.testing import CliRunner; r = CliRunner().invoke(main, ['render', '--list']); assert r.exit_code == 0; print(sorted(m for m in ('torch', 'manim') if m in sys.modules))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


@pytest.mark.render
def test_scene_file_runs_under_plain_manim(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "manim",
            "render",
            "--dry_run",
            "-v",
            "WARNING",
            "--media_dir",
            str(tmp_path),
            "scenes/mask.py",
            "Mask",
        ],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]


UNASSIGNED = "\u0378"
"""A code point Unicode has not assigned: no font has a glyph for it, on any machine."""


def test_a_character_no_font_has_is_found_and_one_the_fonts_have_is_not():
    from blockviz.scenes.glyphs import missing_characters

    assert missing_characters(f"a é − {UNASSIGNED} b {UNASSIGNED}") == UNASSIGNED  # DejaVu Sans has é and −


@pytest.mark.render
def test_render_warns_once_of_characters_no_font_can_draw(tmp_path):
    result = CliRunner().invoke(
        main,
        ["render", f"the {UNASSIGNED} sat", "--model", "seeded", "--scene", "mask,softmax", "--format", "png"]
        + TINY_ARGS
        + ["-j", "1", "-o", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: no font on this machine has glyphs for some characters of {UNASSIGNED!r}: they show as empty boxes "
        "in the scenes; the numbers are unaffected (install a font with these characters to see them)"
    ]


def test_the_library_makes_no_record_when_every_file_is_up_to_date(tmp_path, monkeypatch):
    """blockviz.render.rendering.render, as a notebook calls it: the first call renders (here a
    stand-in that writes the file and its stamp), the second finds both up to date and makes no record."""
    import blockviz.render.rendering as rendering
    from blockviz.ownership import output_file

    def stand_in(rec, jobs, options, processes, progress):
        for job in jobs:
            with output_file(job.output) as partial:
                partial.write_bytes(b"png")
            job.stamp.parent.mkdir(exist_ok=True)
            job.stamp.write_text(job.key)

    made = []
    monkeypatch.setattr(rendering, "render_jobs", stand_in)
    source = rendering.RecordSource(RECORD_INPUTS, lambda: made.append(1) or record("the cat sat"))
    options = RenderOptions(format="png")
    first = rendering.render(source, ["mask", "softmax"], options, tmp_path)
    assert first.files() == [tmp_path / "mask.png", tmp_path / "softmax.png"] and first.unchanged() == []
    assert made == [1]
    told = []
    again = rendering.render(
        source,
        ["mask", "softmax"],
        options,
        tmp_path,
        on_file=lambda path, unchanged: told.append((path.name, unchanged)),
    )
    assert again.unchanged() == again.files() and again.rendered == []
    assert told == [("mask.png", True), ("softmax.png", True)] and made == [1]


@pytest.mark.render
def test_a_render_is_the_same_bytes_in_fresh_processes(tmp_path):
    """The scenes whose videos differed from run to run (tokens, value-mixing; qkv under another
    PYTHONHASHSEED), rendered by two fresh processes at once with other hash seeds and other
    leftovers in the memory they are given (glibc's ``MALLOC_PERTURB_``): the same mp4 bytes."""
    import os

    scenes = ["tokens", "value-mixing", "qkv"]
    runs = {
        seed: subprocess.Popen(
            [sys.executable, "-m", "blockviz.cli.program", "render", "the cat sat", "--scene", ",".join(scenes)]
            + [*TINY_ARGS, "-j", "1", "-o", str(tmp_path / seed)],
            env={**os.environ, "PYTHONHASHSEED": seed, "MALLOC_PERTURB_": seed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "170")
    }
    for run in runs.values():
        _, errors = run.communicate(timeout=600)
        assert run.returncode == 0, errors
    for scene in scenes:
        assert (tmp_path / "1" / f"{scene}.mp4").read_bytes() == (tmp_path / "170" / f"{scene}.mp4").read_bytes(), scene
