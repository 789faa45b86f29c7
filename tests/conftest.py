"""Shared fixtures: records of the default and the long example sentence; the golden files.

torch's numerics are pinned here, before torch loads, as the ``blockviz`` program pins them
(:mod:`blockviz.numerics`): a command run in this process gives the program's numbers bit for bit."""

import signal

from blockviz.numerics import pin_environment

pin_environment()
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background (`make test &`) inherits Ctrl-C ignored, and so would every
    # program the signal tests start (blockviz keeps an inherited ignore): give them a terminal's.
    signal.signal(signal.SIGINT, signal.default_int_handler)

import difflib  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from blockviz.block_record import record  # noqa: E402

DEFAULT_SENTENCE = "the cat sat"
LONG_SENTENCE = "The chicken didn't cross the road because it was too tired."


@pytest.fixture(scope="session")
def cat_record():
    return record(DEFAULT_SENTENCE)


@pytest.fixture(scope="session")
def chicken_record():
    return record(LONG_SENTENCE)


@pytest.fixture(scope="session", autouse=True)
def blockviz_cache_in_a_temporary_folder(tmp_path_factory):
    """blockviz's cache (kept records, converted GGUF models) under the run's temporary folder,
    never the user's ``~/.cache/blockviz``; shared by the run's workers (a conversion is renamed
    into place whole, so two workers converting at once is safe)."""
    import os

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    previous = os.environ.get("BLOCKVIZ_CACHE_DIR")
    os.environ["BLOCKVIZ_CACHE_DIR"] = str(shared / "blockviz-cache")
    yield
    if previous is None:
        os.environ.pop("BLOCKVIZ_CACHE_DIR", None)
    else:
        os.environ["BLOCKVIZ_CACHE_DIR"] = previous


@pytest.fixture(scope="session", autouse=True)
def manim_media_in_a_temporary_folder(tmp_path_factory):
    """Scenes built by tests write their media under a temporary folder, not ./media."""
    from manim import config

    config.media_dir = str(tmp_path_factory.mktemp("media"))


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="Slow mode of the reliability suite: 1,000 generated sentences instead of 25 (also BLOCKVIZ_SLOW=1).",
    )
    parser.addoption(
        "--store-durations",
        action="store_true",
        default=False,
        help="Write each test file's seconds in this run into tests/durations.json (the files not run keep theirs).",
    )
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite the golden files (tests/golden/) from the code instead of comparing them; review the diff.",
    )


GOLDEN = Path(__file__).with_name("golden")
"""Files the tests generate from the code and compare with (:func:`golden`)."""


@pytest.fixture
def golden(request):
    """``golden(name, text)``: fail unless ``text`` is the file ``tests/golden/<name>``, with the
    differing lines and how to update it; with ``pytest --update-golden``, write ``text`` there."""

    def matches(name: str, text: str) -> None:
        path = GOLDEN / name
        if request.config.getoption("--update-golden"):
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        kept = path.read_text(encoding="utf-8") if path.exists() else ""
        if text != kept:
            lines = difflib.unified_diff(
                kept.splitlines(), text.splitlines(), f"tests/golden/{name}", "the code", lineterm="", n=1
            )
            shown = "\n".join(list(lines)[:60])
            pytest.fail(
                f"tests/golden/{name} is not what the code gives:\n{shown}\n"
                f"If the change is meant: pytest {request.path.relative_to(Path(__file__).parent.parent)} "
                "--update-golden, then review git diff tests/golden/",
                pytrace=False,
            )

    return matches


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    """One torch thread for the whole run: on 2 shared cores more threads oversubscribe them
    (measured 9x slower for a model's forward pass)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
"""Debian's Chromium without a sandbox (the test machines run as root) and without its network chatter."""


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium (``$BLOCKVIZ_CHROMIUM``, else /usr/bin/chromium) driven by Playwright, one
    per test module: a session-wide one would keep Playwright's event loop running under every
    later test of the worker, and ``asyncio.run`` (the Dask course tests) refuses to start then."""
    import os
    import shutil

    from playwright import sync_api  # a test dependency (pip install -e '.[test]')

    chromium = os.environ.get("BLOCKVIZ_CHROMIUM", "/usr/bin/chromium")
    assert shutil.which(chromium), f"no Chromium at {chromium}: `make setup` installs Debian's chromium"
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def model_layers(tmp_path_factory):
    """family → (its tiny random model's folder, layer 1's record of ``models_support.SENTENCE``):
    GPT-2, BERT and Llama (``models_support.tiny_model_records``), made once a session."""
    pytest.importorskip("transformers")
    from models_support import tiny_model_records

    made = tiny_model_records(tmp_path_factory.mktemp("models"), layers=(1,))
    return {family: (folder, records[1]) for family, (folder, records) in made.items()}


@pytest.fixture(scope="session")
def layer_builds(model_layers):
    """``layer_builds(family, scene_name)``: ``(scene, support.Inspector, support_typeset.Reader)``
    of the catalogued scene built on :func:`model_layers`' record of ``family``, once a session:
    ``test_scenes_models.py`` and ``test_typeset_names.py`` read the same builds (one worker
    runs both: :data:`SHARED_BUILDS`)."""
    import functools

    from support import Inspector, build_watched
    from support_typeset import Reader

    from blockviz.scenes.catalog import lookup

    @functools.cache
    def built(family: str, scene_name: str):
        (entry,) = lookup([scene_name])
        inspector, reader = Inspector(), Reader()

        def listener(scene) -> None:
            inspector(scene)
            reader(scene)

        return build_watched(entry.scene_class(), model_layers[family][1], listener), inspector, reader

    return built


SLOW_FIXTURES = {
    "browser": "drives Debian's Chromium",
    "site": "builds this manual with MkDocs",
}
"""Fixtures whose tests start a heavy program: they are marked ``slow`` (``make test-fast`` skips them)."""


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


# -- the two workers (make test: pytest -n 2 --dist loadfile) -------------------------------------
DURATIONS = Path(__file__).with_name("durations.json")
"""Each test file's seconds, or each parameter's of a file split by it (:func:`timed_unit`): setup,
call and teardown of its tests, summed, as ``pytest --store-durations`` writes them after a run
(or its CPU seconds run alone: ``benchmarks/test_files.py --store``). The workers are handed the
longest units first. Only the order matters, so a unit's share of the whole. Now: the 18 heaviest
files' CPU seconds each alone (2026-12-07; a file of a :data:`SHARED_BUILDS` unit alone pays for
builds the unit shares), the others a whole run's worker-seconds at a load of 6 to 16 × 0.197,
the median ratio of the two on 8 files measured both ways."""
SECONDS_PER_TEST = 0.5
"""A file missing from :data:`DURATIONS` is taken to need this per test (the mean of the run that
wrote most of it, 8,154 worker-seconds for 3,370 tests, × 0.197 as its entries)."""
SHARED_BUILDS = {
    "scene builds": {
        "tests/test_scenes.py",
        "tests/test_scenes_motion.py",
        "tests/test_skipped_plays.py",
        "tests/test_block_scenes.py",
        "tests/test_grids_build.py",
        "tests/test_burned_captions.py",
    },
    "model layer builds": {"tests/test_scenes_models.py", "tests/test_typeset_names.py"},
}
"""Files reading the same session builds, by unit: the scene builds (``support.built``,
``support_motion.built_in_motion``) and the tiny models' layer scenes (:func:`layer_builds`).
One worker runs a unit's files, so each build is made once a kind, not once a worker."""
SHARED_UNIT = {path: unit for unit, paths in SHARED_BUILDS.items() for path in paths}
SPLIT_BY_PARAMETER = {"tests/test_toy_reproducible.py", "tests/test_shown_scales.py"}
"""Files whose tests of each parameter (``test_x[avx2]``) are a unit of their own, so the two
workers can each take some: three trainings of a CPU capability each (a module fixture per
parameter), a lecture's play-by-play sweep (no module fixture)."""


def timed_unit(nodeid: str) -> str:
    """The test's file, or for a file of :data:`SPLIT_BY_PARAMETER` its file and parameter
    (``tests/test_toy_reproducible.py[avx2]``): a unit of the scheduler and a key of :data:`DURATIONS`."""
    path = nodeid.split("::")[0]
    if path in SPLIT_BY_PARAMETER and nodeid.endswith("]"):
        return path + "[" + nodeid.rsplit("[", 1)[1]
    return path


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the files of each :data:`SHARED_BUILDS` unit one unit and the
    longest unit handed out first (the longest-processing-time rule: the last file to finish is a short one)."""
    if config.getvalue("dist") != "loadfile":
        return None
    import collections
    import json

    from xdist.scheduler import LoadFileScheduling

    seconds = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.exists() else {}
    unit_seconds = {}

    class LongestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SHARED_UNIT.get(nodeid.split("::")[0]) or timed_unit(nodeid)

        def _seconds(self, unit: str) -> float:
            if unit not in unit_seconds:
                tests = collections.Counter(timed_unit(nodeid) for nodeid in self.workqueue[unit])
                unit_seconds[unit] = sum(seconds.get(key, SECONDS_PER_TEST * count) for key, count in tests.items())
            return unit_seconds[unit]

        def _assign_work_unit(self, node) -> None:
            self.workqueue.move_to_end(max(self.workqueue, key=self._seconds), last=False)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


class DurationStore:
    """With ``--store-durations``: each test file's seconds in this run, written into
    :data:`DURATIONS` when it ends (by the controller, under xdist)."""

    def __init__(self):
        self.seconds = {}

    def pytest_runtest_logreport(self, report):
        unit = timed_unit(report.nodeid)
        self.seconds[unit] = self.seconds.get(unit, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        import json

        if hasattr(session.config, "workerinput"):
            return
        kept = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.exists() else {}
        kept.update({unit: round(seconds, 1) for unit, seconds in self.seconds.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n", encoding="utf-8")


def pytest_configure(config):
    if config.getoption("--store-durations"):
        config.pluginmanager.register(DurationStore(), "blockviz-durations")
