"""The PowerPoint deck (python-pptx): one slide per step, its clip filling the slide, its caption
as the slide's notes. Opens in PowerPoint and LibreOffice Impress; each video shows its poster
(the step's last frame) until it is played."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from blockviz.errors import BlockvizError
from blockviz.slides.clips import Clip

INSTALL_HINT = "python-pptx is not installed, so no slides.pptx: pip install 'blockviz[slides]'"
SLIDE_WIDTH_EMU = 12192000
"""A 16:9 slide 13.333 in wide (PowerPoint's default), in EMU (914,400 per inch)."""


def write_pptx(clips: Sequence[Clip], path: Path, size: tuple[int, int], background: str) -> None:
    """Write ``clips`` as a deck at ``path``: a blank slide per clip, of the videos' aspect
    (``size`` in pixels), filled with ``background`` (``#rrggbb``), the clip placed over the whole
    slide with its poster frame, the step's notes (:attr:`~blockviz.slides.steps.Step.notes`) a paragraph each.

    Raises
    ------
    BlockvizError
        If python-pptx is not installed (:data:`INSTALL_HINT`).
    """
    try:
        from pptx import Presentation
        from pptx.dml.color import RGBColor
        from pptx.util import Emu
    except ImportError:
        raise BlockvizError(INSTALL_HINT) from None
    deck = Presentation()
    width, height = SLIDE_WIDTH_EMU, round(SLIDE_WIDTH_EMU * size[1] / size[0])
    deck.slide_width, deck.slide_height = Emu(width), Emu(height)
    blank = deck.slide_layouts[6]
    for clip in clips:
        slide = deck.slides.add_slide(blank)
        fill = slide.background.fill
        fill.solid()
        fill.fore_color.rgb = RGBColor.from_string(background.lstrip("#").upper())
        movie = slide.shapes.add_movie(
            str(clip.video), 0, 0, Emu(width), Emu(height), poster_frame_image=str(clip.poster), mime_type="video/mp4"
        )
        movie.name = f"{clip.step.chapter}, step {clip.step.number}"
        slide.notes_slide.notes_text_frame.text = "\n".join(clip.step.notes)
    _add_sections(deck, [clip.step.chapter for clip in clips])
    deck.core_properties.title = "blockviz"
    _save(deck, path)


def _save(deck, path: Path) -> None:
    """Save ``deck`` as ``Presentation.save`` does, but with the clips and posters stored as they
    are: python-pptx deflates every part, and deflating H.264 and PNG data again costs a sixth of
    the deck's time for 3 % of its size (the XML parts are still deflated)."""
    import zipfile

    from pptx.opc.serialized import PackageWriter, _ZipPkgWriter

    class MediaStoredZip(_ZipPkgWriter):
        def write(self, pack_uri, blob: bytes) -> None:
            stored = pack_uri.startswith(MEDIA_FOLDER)
            self._zipf.writestr(
                pack_uri.membername, blob, compress_type=zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            )

    class MediaStoredWriter(PackageWriter):
        def _write(self) -> None:
            with MediaStoredZip(self._pkg_file) as zipped:
                self._write_content_types_stream(zipped)
                self._write_pkg_rels(zipped)
                self._write_parts(zipped)

    package = deck.part.package
    MediaStoredWriter.write(str(path), package._rels, tuple(package.iter_parts()))


MEDIA_FOLDER = "/ppt/media/"
"""Where python-pptx puts the clips (``media<N>.mp4``) and their posters (``image<N>.png``)."""
SECTIONS_EXTENSION = "{521415D9-36F7-43E2-AB2F-B90AF26B5E84}"
"""The ``uri`` of PowerPoint 2010's sections extension (``p14:sectionLst``, [MS-PPTX] 2.3.24)."""
P14 = "http://schemas.microsoft.com/office/powerpoint/2010/main"


def _add_sections(deck, chapters: Sequence[str]) -> None:
    """One PowerPoint section per run of slides with the same chapter title (python-pptx has no
    API for sections: they are an extension element of the presentation; Impress ignores it)."""
    import uuid

    from lxml import etree
    from pptx.oxml.ns import qn

    section_list = etree.Element(f"{{{P14}}}sectionLst", nsmap={"p14": P14})
    for number, (slide, chapter) in enumerate(zip(deck.slides, chapters)):
        if number == 0 or chapter != chapters[number - 1]:
            name = chapter
            section = etree.SubElement(
                section_list,
                f"{{{P14}}}section",
                name=name,
                id=f"{{{uuid.uuid5(uuid.NAMESPACE_URL, f'{number}:{name}')}}}".upper(),
            )
            ids = etree.SubElement(section, f"{{{P14}}}sldIdLst")
        etree.SubElement(ids, f"{{{P14}}}sldId", id=str(slide.slide_id))
    presentation = deck.part._element
    extensions = presentation.find(qn("p:extLst"))
    if extensions is None:
        extensions = etree.SubElement(presentation, qn("p:extLst"))
    extension = etree.SubElement(extensions, qn("p:ext"), uri=SECTIONS_EXTENSION)
    extension.append(section_list)


def sections(path: Path) -> list[tuple[str, int]]:
    """``(name, slide count)`` of each section of the deck at ``path`` (as :func:`write_pptx` wrote them)."""
    from pptx import Presentation

    found = Presentation(str(path)).part._element.findall(f".//{{{P14}}}section")
    return [(section.get("name"), len(section.findall(f".//{{{P14}}}sldId"))) for section in found]


def pptx_available() -> bool:
    """Whether python-pptx can be imported."""
    try:
        import pptx  # noqa: F401
    except ImportError:
        return False
    return True
