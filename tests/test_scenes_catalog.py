"""The scene catalogue, found in the scene modules themselves (blockviz/scenes/catalog.py), and
the thin scene files of the repository's top-level scenes/ folder: every catalogued scene has
its thin file and every thin file its scene; a scene module that states its facts wrongly is
refused in one line naming the file; a thin file runs under the plain ``manim`` command."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import av
import pytest

from blockviz.errors import BlockvizError
from blockviz.scenes.catalog import BASE, FOLDER, TYPES, discover, entries, lookup, scene_entry
from blockviz.scenes.wording import toy_wording

ROOT = Path(__file__).resolve().parents[1]
THIN = ROOT / "scenes"
ENTRIES = entries()

SCENE_MODULE = '''"""A scene for the catalogue's tests."""

from blockviz.scenes.base import RecordScene

NAME = "{name}"
ORDER = {order}
DESCRIPTION = "one line"
CHAPTER = "A chapter"
CAPTION = ("a caption "
           "on two lines")


class Helper:
    pass


class {class_name}(RecordScene):
    def construct(self) -> None:
        pass
'''


def write_scene(
    folder: Path, stem: str, name: str, order, class_name: str = "Late", replace: tuple[str, str] = ("", "")
) -> Path:
    path = folder / f"{stem}.py"
    path.write_text(
        SCENE_MODULE.format(name=name, order=order, class_name=class_name).replace(*replace), encoding="utf-8"
    )
    return path


# -- the catalogue -----------------------------------------------------------------------------------
def test_the_catalogue_finds_every_scene_module_with_its_prose():
    names = [entry.name for entry in ENTRIES]
    assert len(set(names)) == len(names) and names[0] == "title" and ENTRIES[0].lecture_only
    assert [entry.name for entry in lookup(["all"])] == [entry.name for entry in ENTRIES if not entry.lecture_only]
    for entry in ENTRIES:
        assert entry.module.startswith("blockviz.scenes.") and entry.title and entry.caption and entry.description
        decoder, encoder = toy_wording(causal=True), toy_wording(causal=False)
        assert "\n" not in entry.description and entry.caption_for(decoder) == decoder.fill(entry.caption)
        assert entry.caption_for(encoder) == encoder.fill(entry.encoder_caption or entry.caption)
        scene_class = entry.scene_class()
        assert scene_class.__name__ == entry.class_name and scene_class.__module__ == entry.module
    assert lookup(["mask"])[0].encoder_caption.startswith("Without a causal mask")
    with pytest.raises(BlockvizError, match="unknown scene 'nope': choose from"):
        lookup(["nope"])
    with pytest.raises(BlockvizError, match="unknown scene 'sofmax': did you mean 'softmax'\\? choose from"):
        lookup(["sofmax"])


def test_the_catalogue_reads_the_modules_without_importing_manim_or_torch():
    code = (
        "import sys; from blockviz.scenes.catalog import entries; "
        "[(e.description, e.title, e.caption, e.encoder_caption) for e in entries()]; "
        "assert 'manim' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def fully_parsed(path: Path) -> tuple[dict, list[str]]:
    """The reference reading: the whole module parsed, its module-level literals of the
    catalogue's names and its classes deriving from ``RecordScene``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stated = {
        target.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in TYPES
    }
    classes = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(getattr(base, "id", getattr(base, "attr", None)) == BASE for base in node.bases)
    ]
    return stated, classes


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.py")), ids=lambda path: path.name)
def test_the_quick_reading_of_a_module_is_a_full_parses(path):
    """The catalogue parses only the statements it needs; a full parse of every module of the
    package finds the same scene, or no scene."""
    stated, classes = fully_parsed(path)
    entry = scene_entry(path)
    if "NAME" not in stated:
        assert entry is None
        return
    assert (entry.name, entry.order, entry.description, entry.title, entry.caption) == tuple(
        stated[key] for key in ("NAME", "ORDER", "DESCRIPTION", "CHAPTER", "CAPTION")
    )
    assert (entry.encoder_caption, entry.lecture_only, entry.token_axis, entry.shows_one_head) == (
        stated.get("ENCODER_CAPTION"),
        stated.get("LECTURE_ONLY", False),
        stated.get("TOKEN_AXIS", False),
        stated.get("SHOWS_ONE_HEAD", False),
    )
    assert [entry.class_name] == classes


def test_a_scene_shows_one_head_exactly_when_its_module_states_it():
    """The scene's class reads its module's ``SHOWS_ONE_HEAD``; the catalogue reads the literal
    without importing; the two agree, and every such scene draws a token axis."""
    assert any(entry.shows_one_head for entry in ENTRIES) and any(entry.token_axis for entry in ENTRIES)
    for entry in ENTRIES:
        assert entry.scene_class().shows_one_head is entry.shows_one_head, entry.name
        assert entry.token_axis or not entry.shows_one_head, entry.name


def test_a_new_scene_module_is_found_in_its_place_and_a_helper_module_is_not(tmp_path):
    write_scene(tmp_path, "late", "late-scene", 7.5)
    write_scene(
        tmp_path,
        "early",
        "early-scene",
        1,
        class_name="Early",
        replace=("CAPTION = (", "LECTURE_ONLY = True\nCAPTION = ("),
    )
    (tmp_path / "helpers.py").write_text(
        '"""No scene here."""\n\nORDERED = 3\nclass Mine:\n    pass\n', encoding="utf-8"
    )
    early, late = discover(tmp_path)
    assert (early.name, early.module, early.class_name, early.order, early.lecture_only) == (
        "early-scene",
        "blockviz.scenes.early",
        "Early",
        1,
        True,
    )
    assert (late.name, late.class_name, late.order, late.lecture_only, late.caption) == (
        "late-scene",
        "Late",
        7.5,
        False,
        "a caption on two lines",
    )


BROKEN = {
    "no caption": (
        ('CAPTION = ("a caption "', 'SUMMARY = ("a caption "'),
        "late.py states NAME but not CAPTION: every scene module does",
    ),
    "a chapter that is a number": (('CHAPTER = "A chapter"', "CHAPTER = 3"), "late.py: CHAPTER must be a str literal"),
    "a chapter that is computed": (
        ('CHAPTER = "A chapter"', 'CHAPTER = "A " + NAME'),
        "late.py: CHAPTER must be a str literal",
    ),
    "an order that is a string": (("ORDER = 5", 'ORDER = "5"'), "late.py: ORDER must be a number"),
    "an order that is a bool": (("ORDER = 5", "ORDER = True"), "late.py: ORDER must be a number"),
    "a name with spaces": (
        ('NAME = "late"', 'NAME = "Late scene"'),
        "NAME 'Late scene' must be lowercase words joined by '-'",
    ),
    "the name all": (('NAME = "late"', 'NAME = "all"'), "NAME 'all' must be lowercase words"),
    "no scene class": (
        ("class Late(RecordScene):", "class Late:"),
        "late.py defines 0 classes deriving from RecordScene \\(none\\)",
    ),
    "two scene classes": (
        ("class Helper:", "class Helper(RecordScene):"),
        "late.py defines 2 classes deriving from RecordScene \\(Helper, Late\\)",
    ),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_a_scene_module_that_states_its_facts_wrongly_is_refused_naming_the_file(tmp_path, broken):
    replace, message = BROKEN[broken]
    path = write_scene(tmp_path, "late", "late", 5, replace=replace)
    with pytest.raises(ValueError, match=message):
        scene_entry(path)


@pytest.mark.parametrize(
    ("name", "order", "message"),
    [
        ("late", 6, "scene modules a_late, b_late state the same NAME 'late'"),
        ("later", 5, "scene modules a_late, b_late state the same ORDER 5"),
    ],
)
def test_two_scenes_with_one_name_or_one_order_are_refused(tmp_path, name, order, message):
    write_scene(tmp_path, "a_late", "late", 5)
    write_scene(tmp_path, "b_late", name, order)
    with pytest.raises(ValueError, match=message):
        discover(tmp_path)


# -- the thin files of scenes/ -------------------------------------------------------------------------
def stem(entry) -> str:
    return entry.module.rpartition(".")[2]


def test_every_scene_has_its_thin_file_and_every_thin_file_its_scene():
    assert sorted(path.name for path in THIN.glob("*.py")) == sorted(f"{stem(entry)}.py" for entry in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry.name for entry in ENTRIES])
def test_a_thin_file_subclasses_its_scene_and_says_how_to_run_it(entry):
    path = THIN / f"{stem(entry)}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = [
        (node.module, [alias.name for alias in node.names]) for node in tree.body if isinstance(node, ast.ImportFrom)
    ]
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert imports == [("blockviz.scenes", [stem(entry)])]
    assert [(node.name, [ast.unparse(base) for base in node.bases]) for node in classes] == [
        (entry.class_name, [f"{stem(entry)}.{entry.class_name}"])
    ]
    assert f"manim -ql scenes/{stem(entry)}.py {entry.class_name}" in ast.get_docstring(tree)


def test_manim_finds_each_thin_files_scene_as_it_loads_the_file(monkeypatch):
    """``manim`` renders the scenes a file defines (their ``__module__`` is the file's): each thin
    file gives exactly its catalogued scene, a subclass of the package's."""
    from manim.utils.module_ops import scene_classes_from_file

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))  # manim puts scenes/ first on it
    loaded = set(sys.modules)
    try:
        for entry in ENTRIES:
            found = scene_classes_from_file(Path("scenes", f"{stem(entry)}.py"), full_list=True)
            assert [scene.__name__ for scene in found] == [entry.class_name]
            assert issubclass(found[0], entry.scene_class()) and found[0].__module__ == f"scenes.{stem(entry)}"
    finally:
        for name in set(sys.modules) - loaded:
            if name.startswith("scenes."):
                del sys.modules[name]


@pytest.mark.render
def test_a_thin_file_renders_under_the_plain_manim_command(tmp_path):
    """``manim -ql scenes/title_card.py TitleCard`` from a clone (at 128 × 72, 5 fps): Manim builds
    the scene without arguments, so it records "the cat sat" itself."""
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "manim",
            "render",
            "-ql",
            "-r",
            "128,72",
            "--fps",
            "5",
            "-v",
            "WARNING",
            "--progress_bar",
            "none",
            "--media_dir",
            str(tmp_path),
            "scenes/title_card.py",
            "TitleCard",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    (video,) = tmp_path.glob("videos/title_card/*/TitleCard.mp4")
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.width, stream.codec_context.height) == (128, 72)
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert 15 <= len(frames) <= 60  # the card lasts 5 s: 0.8 + 1.2 + 0.8 + 2.2
    assert (frames[-1].max(axis=2) > 200).sum() > 30  # the title, sentence and tokens drawn on the dark page
