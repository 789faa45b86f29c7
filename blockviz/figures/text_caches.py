"""Text work done once per process instead of once per save.

Every save makes a new renderer, and each renderer lays out glyphs and parses mathtext with
its own, empty caches: the SVG backend shapes every string again (it repeats in thousands of
cells), and each formula is parsed by pyparsing (~20 ms) in every renderer that draws it.
:func:`share_text_caches` points a renderer at process-wide helpers that remember both. They
compute exactly what matplotlib's own would, so the files are byte-for-byte the same.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.mathtext import MathTextParser
from matplotlib.textpath import TextToPath

CACHE_LIMIT = 20_000
"""Shaped strings kept before the cache is emptied."""


class CachingTextToPath(TextToPath):
    """:class:`~matplotlib.textpath.TextToPath` that shapes each (font, string) once.

    The glyph positions of a string in a font do not depend on the save; which glyph
    outlines are new does (the renderer's ``glyph_map``), so only that is worked out per call.
    """

    def __init__(self) -> None:
        super().__init__()
        self._shaped: dict = {}

    def get_glyphs_with_font(self, font, s, glyph_map=None, return_new_glyphs_only=False, *, features=None, language=None):
        key = (id(font), s, features, language)
        shaped = self._shaped.get(key)
        if shaped is None:
            if len(self._shaped) > CACHE_LIMIT:
                self._shaped.clear()
            glyph_info, outlines, rects = super().get_glyphs_with_font(font, s, features=features, language=language)
            shaped = self._shaped[key] = (font, glyph_info, dict(outlines), rects)  # font kept alive: its id stays its own
        _, glyph_info, outlines, rects = shaped
        if glyph_map is None:
            glyph_map = {}
        new = {name: outline for name, outline in outlines.items() if name not in glyph_map}
        if not return_new_glyphs_only:
            glyph_map.update(new)
            new = glyph_map
        return list(glyph_info), new, list(rects)


TEXT_TO_PATH = CachingTextToPath()
"""Shared by SVG renderers and by :func:`blockviz.figures.labels.text_size_in` (a formula
measured while laying a figure out is not parsed again when the SVG is written); its mathtext
parser is shared by Agg renderers too (a formula drawn at the same dpi is parsed once)."""


def share_text_caches(renderer) -> None:
    """Make ``renderer`` (Agg, SVG, or a mixed-mode renderer around one) use the shared
    helpers above. Renderers without these attributes (PDF, PS) are left as they are."""
    target = getattr(renderer, "_vector_renderer", renderer)  # savefig wraps vector renderers
    if type(getattr(target, "_text2path", None)) is TextToPath:
        target._text2path = TEXT_TO_PATH
    if isinstance(target, RendererAgg) and type(getattr(target, "mathtext_parser", None)) is MathTextParser:
        target.mathtext_parser = TEXT_TO_PATH.mathtext_parser  # Agg's own parser is a MathTextParser("path") too
