"""Saved figures: valid PNG/SVG/PDF, repeat saves byte-identical, writes atomic, odd tokens safe."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ElementTree

import matplotlib.image
import numpy as np
import pytest
from matplotlib.figure import Figure

from blockviz import BlockvizError
from blockviz.block_record import record
from blockviz.figures import FigureRequest, MissingGlyphWarning, draw_figure, save_figure, write_figures
from blockviz.figures.context import installed_fallbacks
from blockviz.ownership import MANIFEST
from blockviz.style import DARK
from blockviz.tokens import without_glyph

DPI = 30


@pytest.fixture(scope="module")
def request_3(cat_record):
    return FigureRequest(cat_record)


def test_each_format_is_valid(tmp_path, request_3):
    paths = list(write_figures(request_3, tmp_path, ["weights"], ["png", "svg", "pdf"], dpi=DPI))
    assert [path.name for path in paths] == ["weights.png", "weights.svg", "weights.pdf"]
    image = matplotlib.image.imread(tmp_path / "weights.png")
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    root = ElementTree.parse(tmp_path / "weights.svg").getroot()
    assert root.tag.endswith("svg")
    pdf = (tmp_path / "weights.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and b"/FontFile2" in pdf  # TrueType (Type 42), text stays text
    assert sorted(path.name for path in tmp_path.iterdir()) == [MANIFEST, "weights.pdf", "weights.png", "weights.svg"]


def test_a_failed_save_leaves_no_file(tmp_path, request_3, monkeypatch):
    figure = draw_figure("weights", request_3)

    def fail(self, target, **options):
        with open(target, "wb") as handle:
            handle.write(b"half a fi")
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", fail)
    with pytest.raises(KeyboardInterrupt):
        save_figure(figure, tmp_path / "weights.png", "png")
    assert list(tmp_path.iterdir()) == []


def test_an_os_error_while_saving_is_the_one_line_error_of_blockviz_files(tmp_path, request_3, monkeypatch):
    import errno

    from blockviz.files import output_error

    figure = draw_figure("weights", request_3)

    def full_disk(self, target, **options):
        with open(target, "wb") as handle:
            handle.write(b"half a fi")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full_disk)
    with pytest.raises(BlockvizError) as raised:
        save_figure(figure, tmp_path / "weights.svg", "svg")
    assert (
        str(raised.value)
        == str(output_error(tmp_path / "weights.svg", OSError(errno.ENOSPC, "")))
        == (
            f"cannot write {str(tmp_path / 'weights.svg')!r} (No space left on device): free some space or choose another folder"
        )
    )
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder_and_unknown_format_are_blockviz_errors(tmp_path, request_3):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(BlockvizError, match="is a file, not a folder"):
        list(write_figures(request_3, blocker / "figures", ["worked-example"], ["svg"]))
    with pytest.raises(BlockvizError, match="unknown format 'jpg'"):
        list(write_figures(request_3, tmp_path, ["weights"], ["jpg"]))
    with pytest.raises(BlockvizError, match="no figure named 'heatmap'"):
        list(write_figures(request_3, tmp_path, ["heatmap"], ["svg"]))
    assert [path.name for path in tmp_path.iterdir()] == ["file"]


def test_dark_png_has_the_dark_background(tmp_path, cat_record):
    request = FigureRequest(cat_record, theme=DARK)
    (path,) = write_figures(request, tmp_path, ["weights"], ["png"], dpi=DPI)
    corner = matplotlib.image.imread(path)[0, 0, :3]
    assert corner == pytest.approx(
        np.array([int(DARK.background[i : i + 2], 16) / 255 for i in (1, 3, 5)]), abs=1 / 255
    )


def test_odd_tokens_are_shown_with_one_warning(tmp_path):
    rec = record('He said "hi" <b> & paid $5 $6 — café 猫 🐈')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = list(write_figures(FigureRequest(rec), tmp_path, ["weights", "value-mixing"], ["svg", "png"], dpi=DPI))
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 1 and issubclass(caught[0].category, MissingGlyphWarning), messages
    assert "'猫'" in messages[0] and ("🐈" in messages[0]) == (
        installed_fallbacks() == ()
    )  # the emoji is drawn by Symbola where installed
    assert len(paths) == 4
    figure = draw_figure("weights", FigureRequest(rec))
    labels = [text.get_text() for text in figure.texts if text.get_label() == "weights[0]:col"]
    quoted = tuple(f"\u201c{token}\u201d" if without_glyph(token) else token for token in rec.tokens)
    assert tuple(labels) == quoted and "$" in labels and "\u201c&\u201d" in labels and "café" in labels
    assert '\u201c"\u201d' in labels  # a token with no glyph of its own (punctuation) is drawn quoted, as in the videos
    ElementTree.parse(tmp_path / "weights.svg")


@pytest.mark.skipif(not installed_fallbacks(), reason="fonts-symbola is not installed (the Makefile installs it)")
def test_emoji_in_tokens_are_drawn_by_the_fallback_font(tmp_path):
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    rec = record("the 🐈 sat on ☕")
    figure = draw_figure("weights", FigureRequest(rec))
    (label,) = [text for text in figure.texts if text.get_label() == "weights[0]:row" and text.get_text() == "🐈"]
    chain = [FT2Font(path) for path in font_manager.fontManager._find_fonts_by_props(label.get_fontproperties())]
    assert [font.family_name for font in chain] == ["DejaVu Sans", "Symbola"]
    assert ord("🐈") not in chain[0].get_charmap() and ord("🐈") in chain[1].get_charmap()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = list(write_figures(FigureRequest(rec), tmp_path, ["weights"], ["png", "svg", "pdf"], dpi=DPI))
        figure.savefig(
            tmp_path / "direct.png", dpi=DPI
        )  # outside blockviz's quieting: matplotlib itself finds every glyph
    assert [str(warning.message) for warning in caught] == []
    assert "font-family: 'DejaVu Sans', 'Symbola'" in (tmp_path / "weights.svg").read_text()
    assert b"Symbola" in (tmp_path / "weights.pdf").read_bytes() and len(paths) == 3


def test_plain_ascii_tokens_give_no_warning(tmp_path, request_3):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(write_figures(request_3, tmp_path, ["value-mixing"], ["svg"]))


def test_repeat_saves_serial_and_parallel_are_byte_identical(tmp_path, request_3):
    names, formats = (
        ["mask", "value-mixing", "multi-head", "layer-norm"],
        ["png", "svg"],
    )  # PDF (slow to write): test_a_pdf_is_the_same_whatever_was_saved_before
    serial = list(write_figures(request_3, tmp_path / "serial", names, formats, dpi=DPI, jobs=1))
    parallel = list(write_figures(request_3, tmp_path / "parallel", names, formats, dpi=DPI, jobs=2))
    assert (
        [path.name for path in parallel]
        == [path.name for path in serial]
        == [f"{name}.{fmt}" for name in names for fmt in formats]
    )
    for one, two in zip(serial, parallel):
        assert one.read_bytes() == two.read_bytes(), one.name
        assert b"<dc:date>" not in one.read_bytes()


def test_an_error_in_a_worker_is_a_blockviz_error(tmp_path, request_3):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(BlockvizError, match="is a file, not a folder"):
        list(write_figures(request_3, blocker / "figures", ["weights", "mask"], ["svg"], jobs=2))


def test_a_pdf_is_the_same_whatever_was_saved_before(tmp_path, request_3):
    alone = save_figure(draw_figure("worked-example", request_3), tmp_path / "alone.pdf", "pdf").read_bytes()
    figure = draw_figure("worked-example", request_3)
    save_figure(figure, tmp_path / "first.svg", "svg")
    after_svg = save_figure(figure, tmp_path / "after.pdf", "pdf").read_bytes()
    assert alone == after_svg
    assert b"CreationDate" not in alone


def test_a_forked_worker_lays_out_formulas_with_its_own_fonts():
    """A forked process does not reuse the parent's TextToPath, whose cached formula layouts hold
    the parent's FreeType fonts (unusable across fork(); two workers sharing them failed now and
    then with "too many hints"); the outlines it draws are the parent's all the same."""
    import multiprocessing
    import pickle

    from matplotlib.font_manager import FontProperties

    from blockviz.figures.labels import text_paths

    formula = r"$\mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)$"
    parent = text_paths()
    vertices, _ = parent.get_text_path(FontProperties(family="DejaVu Sans", size=100), formula, ismath=True)
    reader, writer = multiprocessing.Pipe(duplex=False)

    def child():
        own = text_paths()
        child_vertices, _ = own.get_text_path(FontProperties(family="DejaVu Sans", size=100), formula, ismath=True)
        writer.send(pickle.dumps((own is parent, child_vertices)))

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    same, child_vertices = pickle.loads(reader.recv())
    process.join(30)
    assert process.exitcode == 0 and not same
    assert np.array_equal(child_vertices, vertices)
