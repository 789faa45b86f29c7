"""Cell numbers that draw fast: thousands of short one-line texts in one font and size.

matplotlib lays out and rasterises every :class:`~matplotlib.text.Text` from scratch on every
save, glyph by glyph (about 0.5 ms a text; a 13-token figure set has over 4,000 numbers). A
:class:`CellText` is a plain ``Text`` (same properties, same ``get_window_extent``, found in
``ax.texts``) that remembers its layout per string, font, alignment and resolution, and on the
Agg canvas (PNG) rasterises each distinct string once (FreeType draws the whole string, as
matplotlib's Agg backend did up to 3.10) and stamps the pixels wherever it recurs, snapped to
whole pixels. SVG and PDF draw it as any other text (glyph outlines in SVG, TrueType text in PDF).

It overrides ``Text._get_layout``, matplotlib's private layout step that both ``draw`` and
``get_window_extent`` use (matplotlib 3.8 to 3.11); ``tests/test_figures_cell_text.py`` checks
that a CellText still measures and looks like a plain ``Text``.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colors as mcolors
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg, get_hinting_flag
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.font_manager import FontProperties, findfont, get_font
from matplotlib.text import Text

CACHE_LIMIT = 20_000
"""Entries kept per cache before it is emptied (a figure set uses a few thousand)."""

_layouts: dict = {}
_coverages: dict = {}
_stamps: dict = {}


def cell_font(family: str, size_pt: float) -> FontProperties:
    """The font of cell numbers: ``family`` resolved to its file now, so that the text's
    cached layout cannot go stale when the rcParams' font lists change."""
    return FontProperties(fname=findfont(FontProperties(family=[family])), size=size_pt)


def add_cell_text(ax: Axes, x: float, y: float, text: str, font: FontProperties, color) -> CellText:
    """Put ``text`` centred on data point (``x``, ``y``) of ``ax``, unclipped, and return it."""
    artist = CellText(x, y, text, ha="center", va="center", fontproperties=font, color=color, parse_math=False, clip_on=False)
    add_text = getattr(ax, "_add_text", None)  # what Axes.text uses; add_artist would also build a clip path per text
    return add_text(artist) if add_text is not None else ax.add_artist(artist)


def cache_layouts(texts, family: str = "sans-serif") -> None:
    """Turn plain ``texts`` (tick labels) into :class:`CellText` s in the same font file and
    size, so that their layout too is worked out once per string. Texts with characters the
    font lacks stay as they are (matplotlib then draws its missing-glyph boxes)."""
    from blockviz.figures.glyphs import missing_characters

    for text in texts:
        if type(text) is Text and not missing_characters(text.get_text()):
            text.set_fontproperties(cell_font(family, text.get_fontsize()))
            text.__class__ = CellText  # a Text subclass adding no state: only how it lays out and draws


class CellText(Text):
    """A one-line, unrotated, non-math text whose layout is cached and whose pixels are
    rasterised once per string on Agg canvases. Anything else draws as a plain ``Text``."""

    def _get_layout(self, renderer):
        key = self._layout_key(renderer)
        if key is None:
            return super()._get_layout(renderer)
        layout = _layouts.get(key)
        if layout is None:
            if len(_layouts) > CACHE_LIMIT:
                _layouts.clear()
            layout = super()._get_layout(renderer)
            _layouts[_frozen(key)] = layout
        return layout

    def _layout_key(self, renderer):
        if self.get_usetex() or self.get_wrap() or self._fontproperties.get_file() is None:
            return None  # wrapped text depends on the figure's size; a font by family name on the rcParams
        return (*_renderer_kind(renderer), self.get_figure(root=True).dpi, self._text, self._parse_math,
                self._fontproperties, self._horizontalalignment, self._verticalalignment, self.get_rotation(),
                self.get_rotation_mode(), self._linespacing, self._multialignment)

    def draw(self, renderer):
        if not self._stampable(renderer):
            return super().draw(renderer)
        self._renderer = renderer
        _, ((_, _, (dx, dy)),), _ = self._get_layout(renderer)
        posx, posy = self.get_transform().transform(self.get_unitless_position())
        if not (np.isfinite(posx) and np.isfinite(posy)):
            return
        color = mcolors.to_rgba(self.get_color(), self.get_alpha())
        image, left, top = _stamp(self._text, self._fontproperties, renderer.dpi, self._antialiased, color)
        if image is not None:
            gc = renderer.new_gc()
            self._set_gc_clip(gc)
            column = round(posx + dx) + left
            row = round(renderer.height - (posy + dy)) + top
            renderer.draw_image(gc, column, renderer.height - row - image.shape[0], image)
            gc.restore()
        self.stale = False

    def _stampable(self, renderer) -> bool:
        return (isinstance(renderer, RendererAgg) and self.get_visible() and bool(self._text) and "\n" not in self._text
                and not self.get_rotation() and not self.get_usetex() and not self.get_path_effects()
                and self._bbox_patch is None and not self._preprocess_math(self._text)[1] and self.get_url() is None)


def _renderer_kind(renderer) -> tuple:
    """What text metrics depend on: the renderer's class and dpi. savefig wraps SVG and PDF
    renderers alike in a MixedModeRenderer, so look inside it."""
    if isinstance(renderer, MixedModeRenderer):
        renderer = renderer._renderer
    return type(renderer), getattr(renderer, "dpi", None)


def _stamp(text: str, font: FontProperties, dpi: float, antialiased: bool, color: tuple):
    """``text`` rasterised in ``color``: an RGBA image cropped to the ink, rows bottom-up as
    ``draw_image`` takes them, and the offset (columns, rows) of its top-left corner from the
    start of the baseline."""
    key = (text, font, dpi, antialiased, color)
    stamp = _stamps.get(key)
    if stamp is None:
        if len(_stamps) > CACHE_LIMIT:
            _stamps.clear()
        coverage, left, top = _coverage(text, font, dpi, antialiased)
        if coverage is None:
            stamp = (None, 0, 0)
        else:
            image = np.empty(coverage.shape + (4,), np.uint8)
            image[..., :3] = np.round(np.array(color[:3]) * 255).astype(np.uint8)
            image[..., 3] = np.round(coverage * color[3]).astype(np.uint8)
            stamp = (np.ascontiguousarray(image[::-1]), left, top)  # Agg's draw_image puts row 0 at the bottom
        _stamps[_frozen(key)] = stamp
    return stamp


def _coverage(text: str, font: FontProperties, dpi: float, antialiased: bool):
    """Ink of ``text`` (0–255 floats, cropped) and its top-left corner's offset from the
    baseline start, rendered by FreeType as matplotlib's Agg backend did up to 3.10."""
    key = (text, font, dpi, antialiased)
    cached = _coverages.get(key)
    if cached is not None:
        return cached
    if len(_coverages) > CACHE_LIMIT:
        _coverages.clear()
    face = get_font(findfont(font))
    face.clear()
    face.set_size(font.get_size_in_points(), dpi)
    face.set_text(text, 0.0, flags=get_hinting_flag())
    face.draw_glyphs_to_bitmap(antialiased=antialiased)
    ink = np.asarray(face.get_image())
    left, below = face.get_bitmap_offset()  # 1/64 px
    rows, cols = np.nonzero(ink)
    if rows.size == 0:
        result = (None, 0, 0)
    else:
        first_row, first_col = rows.min(), cols.min()
        crop = ink[first_row:rows.max() + 1, first_col:cols.max() + 1].astype(float)
        # As Agg's draw_text did: the bitmap's bottom row sits one pixel below baseline + descent.
        bottom = round((below + face.get_descent()) / 64) + 1
        result = (crop, int(first_col) + round(left / 64), int(first_row) + bottom - ink.shape[0])
    _coverages[_frozen(key)] = result
    return result


def _frozen(key: tuple) -> tuple:
    # FontProperties hash by their current state: keep a copy nobody will change.
    return tuple(part.copy() if isinstance(part, FontProperties) else part for part in key)
