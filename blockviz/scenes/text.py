"""Text for every scene: words, numbers and mathtext formulas, built fast and laid out as Manim would.

* :func:`text` — a ``Text`` shown exactly as typed (no markup), ``.shown`` holds the string;
* :func:`number` — a value of the record as :func:`blockviz.style.format_number` writes it, with
  ``.value``, ``.decimals`` and ``.source`` (where in the record it comes from) for tests;
* :func:`numeral` — a string of digits built from cached glyphs (what :func:`number` draws);
* :func:`formula` — matplotlib mathtext as an ``SVGMobject`` (no LaTeX on this machine);
* :func:`typeset` — a name: ``"$W_O$"`` typeset (its subscripts at least 11 px at 854 × 480),
  words after it as :func:`text`, on its baseline; :func:`script_sizes` measures the sub- and
  superscripts drawn, from each glyph's size in the SVG (:func:`glyph_scales`);
* :func:`slim` — drop what a built SVG mobject only needed while being parsed;
* :func:`shortened` — a text cut with "…" to fit a width (texts of one axis keep one size);
* :func:`font_size_of` — the size a text or formula is drawn at now, after any scaling.

Building a ``Text`` costs ~10–20 ms, so each distinct one is built once and copied. Manim's text
layout depends on more than the string: Pango lays each line out in a canvas as wide as
``config.pixel_width`` (a long line wraps on a small canvas), so the caches are keyed by
:func:`layout_key` — the pixel and frame size and the renderer — and Manim's own SVG files for
text are kept in one folder per layout (its file names leave the canvas out).
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from manim import RIGHT, UP, Mobject, SVGMobject, Text, VGroup, config

from blockviz import style
from blockviz.files import atomic_path
from blockviz.scenes.copies import CopiedFast, copy_of
from blockviz.scenes.look import FONT, HEADER_SIZE, MIN_FONT_SIZE, NUMBER_SIZE
from blockviz.scenes.pango_svg import glyph_points

_DIGITS = "0123456789"


def layout_key() -> tuple:
    """Everything besides the string, size, colour and weight that changes how Manim lays a
    ``Text`` out: the canvas in pixels (Pango wraps lines at its width), the frame and the renderer."""
    return (
        config.pixel_width,
        config.pixel_height,
        float(config.frame_width),
        float(config.frame_height),
        str(config.renderer),
    )


@contextmanager
def text_files_for(layout: tuple):
    """Manim's SVG files for text go to a folder of this layout while a ``Text`` is built
    (Manim names them by string and style only, so a file made on a 160-pixel canvas would
    otherwise be reused, wrapped, on an 854-pixel one)."""
    folder = config.text_dir
    width, height, *_ = layout
    config.text_dir = str(
        Path(folder) / f"{width}x{height}-{hashlib.blake2b(repr(layout).encode(), digest_size=4).hexdigest()}"
    )
    try:
        yield
    finally:
        config.text_dir = folder


@functools.lru_cache(maxsize=4096)
def _text_prototype(shown: str, font_size: float, color: str, weight: str, layout: tuple) -> Text:
    # A copy of the string's outlines (built once in any colour) in ``color``: a copy of a
    # slimmed Text costs ~0.4 ms, building one 20–100 ms.
    built = _outlines(shown, font_size, weight, layout).copy()
    return built.set_color(color)


@functools.lru_cache(maxsize=4096)
def _outlines(shown: str, font_size: float, weight: str, layout: tuple) -> Text:
    # Built once per layout, whatever the colours it is drawn in, and kept on disk (see
    # text_cache_path): Pango's SVG and its parsing cost 20–100 ms a string, reading the
    # outlines back ~1 ms. Ligatures stay on (Manim's default): its glyph-per-character mode
    # rejects combining accents and joined emoji and can drop the glyphs after an emoji the font lacks.
    path = text_cache_path(shown, font_size, weight, layout)
    cached = _read_outlines(path, shown, font_size, weight, layout)
    if cached is not None:
        return cached
    built = _build_text(shown, font_size, weight, layout)
    try:
        with atomic_path(path) as partial, partial.open("wb") as handle:
            glyphs = [glyph.points for glyph in built.submobjects]
            np.savez(
                handle,
                points=np.concatenate(glyphs) if glyphs else np.zeros((0, 3)),
                sizes=np.array([len(g) for g in glyphs], dtype=np.int64),
                meta=np.array([built.initial_height, built.line_spacing, built._font_size]),
                text=np.array(built.text),
                original=np.array(built.original_text),
            )
    except OSError:  # no cache then: the outlines are still built
        pass
    return built


TEXT_RECIPE = 1
"""Bump when what :func:`_outlines` keeps on disk changes."""


def text_cache_path(shown: str, font_size: float, weight: str, layout: tuple) -> Path:
    """Where the outlines of ``shown`` are kept: named by everything that changes them (string,
    size, weight, font, layout, Manim's and ManimPango's versions, the recipe). Plain arrays
    (``.npz`` read without pickles), so a file planted there can at worst be refused."""
    key = repr((shown, float(font_size), weight, FONT, layout, *_text_library_versions(), TEXT_RECIPE))
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return Path(tempfile.gettempdir()) / "blockviz-text" / f"{digest}.npz"


@functools.cache
def _text_library_versions() -> tuple[str, str]:
    """Manim's and ManimPango's versions, read once a process (each read scans the installed packages)."""
    from importlib import metadata

    return metadata.version("manim"), metadata.version("manimpango")


def _build_text(shown: str, font_size: float, weight: str, layout: tuple) -> Text:
    with text_files_for(layout):
        built = PangoText(shown, font=FONT, font_size=font_size, color="#ffffff", weight=weight)
    return slim(built)


class PangoText(CopiedFast, Text):
    """Manim's ``Text``, its Pango SVG read by :func:`~blockviz.scenes.pango_svg.glyph_points`
    (the same points, without svgelements) when it can, else by Manim."""

    def generate_mobject(self):
        placed = glyph_points(self.get_file_path().read_text(encoding="utf-8"))
        if placed is None:
            return super().generate_mobject()
        style = _glyph_style()
        glyphs = []
        for points in placed:
            glyph = style.copy()
            glyph.points = points
            glyphs.append(glyph)
        self.add(*glyphs)
        self.id_to_vgroup_dict = {}
        self.flip(RIGHT)  # as SVGMobject.generate_mobject: SVG's y runs down
        return self


@functools.cache
def _glyph_style():
    """A glyph shape styled as Manim styles each glyph of Pango's SVG (white fill, no stroke),
    made by Manim's own functions from a one-triangle SVG of the same structure."""
    import svgelements
    from manim.mobject.svg.svg_mobject import SVGMobject, VMobjectFromSVGPath

    svg = svgelements.SVG.parse(
        io.StringIO(
            '<svg><g stroke-width="0"><g><g id="surface1"><g style="fill:rgb(100%,100%,100%);fill-opacity:1;">'
            '<path style="stroke:none;" d="M 0 0 L 1 0 L 0 1 Z"/></g></g></g></g></svg>'
        )
    )
    shape = next(element for element in svg.elements() if isinstance(element, svgelements.Path))
    glyph = VMobjectFromSVGPath(shape)
    SVGMobject.apply_style_to_mobject(glyph, shape)
    glyph.path_obj = None
    return glyph


def _read_outlines(path: Path, shown: str, font_size: float, weight: str, layout: tuple) -> Text | None:
    """The Text kept at ``path``, rebuilt on a copy of a real one; ``None`` if absent or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            points, sizes, meta = stored["points"], stored["sizes"], stored["meta"]
            drawn, original = str(stored["text"]), str(stored["original"])
    except (OSError, ValueError, KeyError, EOFError):
        return None
    if (
        original != shown
        or sizes.sum() != len(points)
        or points.ndim != 2
        or points.shape[1:] != (3,)
        or len(meta) != 3
    ):
        return None
    template = _template_text(weight, layout)
    built = template.copy()
    glyph = template.submobjects[0]
    glyphs, start = [], 0
    for size in sizes.tolist():
        piece = glyph.copy()
        piece.points = points[start : start + size].copy()
        glyphs.append(piece)
        start += size
    built.submobjects = glyphs
    built.chars = VGroup(*glyphs)
    built.text, built.original_text = drawn, original
    built.initial_height, built.line_spacing, built._font_size = float(meta[0]), float(meta[1]), float(meta[2])
    built.weight = weight
    return built


@functools.lru_cache(maxsize=8)
def _template_text(weight: str, layout: tuple) -> Text:
    """A real Text to copy (its class and settings) when outlines are read back from disk."""
    return _build_text("x", 20, weight, layout)


def slim(mobject: Mobject) -> Mobject:
    """Drop what an SVG-based mobject (``Text``, ``SVGMobject``) only needs while being built:
    the parsed SVG paths and the id table. Copies — which every animation makes — get ~20× cheaper."""
    for member in mobject.get_family():
        if hasattr(member, "path_obj"):
            member.path_obj = None
        if hasattr(member, "id_to_vgroup_dict"):
            member.id_to_vgroup_dict = {}
    return mobject


def text(shown: str, font_size: float = HEADER_SIZE, color: str = "#ffffff", bold: bool = False) -> Text:
    """``shown`` as a ``Text``, exactly as typed (quotes, ``<``, ``&``, emoji: no markup).

    The string is kept in ``.shown`` (``Text.text`` drops spaces). Draw a token through
    :func:`blockviz.tokens.display_token` first (control characters have no glyph).
    """
    shown = str(shown)  # a plain string, also for a subclass such as grids.KeptName (Pango takes no other)
    mobject = _text_prototype(shown, font_size, color, "BOLD" if bold else "NORMAL", layout_key()).copy()
    mobject.shown = shown
    return mobject


def shortened(
    shown: str,
    width: float,
    font_size: float = HEADER_SIZE,
    color: str = "#ffffff",
    bold: bool = False,
    fewest: int = 1,
) -> Text:
    """``shown`` as :func:`text` at ``font_size``, its end cut and replaced by "…" until it is at
    most ``width`` wide: headers of one axis keep one size rather than each shrinking to fit.
    At least ``fewest`` characters are kept before the "…" (0: "…" alone, for a header that
    gives way to a kept neighbour's). ``.shown`` is what is drawn, ``.full`` the whole string."""
    shown = str(shown)
    if is_mathtext(shown):  # a typeset name: its formula is never cut
        return typeset(shown, font_size, color, width)
    cut = text(shown, font_size, color, bold)
    characters = list(shown)
    keep = min(
        len(characters), int(len(characters) * width / max(cut.width, 1e-9)) + 1
    )  # a first guess, then one by one
    while cut.width > width and keep > fewest:
        keep -= 1
        cut = text("".join(characters[:keep]).rstrip() + ELLIPSIS, font_size, color, bold)
    cut.full = shown
    return cut


ELLIPSIS = "\u2026"


def font_size_of(mobject) -> float:
    """The font size ``mobject`` (a :func:`text`, :func:`number` or :func:`formula`) is drawn at
    now: the size it was built at times how much it has been scaled since."""
    built = getattr(mobject, "built_size", None)
    if built is None:
        return float(mobject.font_size)
    size, height = built
    return size * mobject.height / height if height > 0 else size


def number(
    value: float, font_size: float = NUMBER_SIZE, color: str = "#ffffff", decimals: int = 2, *, source: tuple
) -> Text:
    """A value of the record as shown everywhere (:func:`blockviz.style.format_number`).

    ``source`` says which recorded value it is, so a test can read it back:

    * ``(field, *index)`` — ``record.tensors[field][index]``, e.g. ``("scores", head, i, j)``;
    * ``(method, head, query, *index)`` — ``record.<method>(head, query)[index]``
      (``"qk_products"``, ``"weighted_values"``); ``("projection_products", query, i, j)``;
    * ``("remainder", total, *parts)`` — the value at source ``total`` less those at ``parts``:
      the hidden terms of a shown sum, as one term (the record's total split for display);
    * ``("constant", value)`` — a number that is so by definition (softmax weights sum to 1);
    * ``("params", name, *index)`` — ``record.params[name][index]``, e.g. ``("params", "attn.W_O", i, j)``;
    * ``("decoder" | "encoder", field, *index)`` — the same in ``record.counterpart(causal=…)``;
    * ``("block", k, *source)`` — the same in block ``k``'s view of a record of several blocks (``record.block(k)``);
    * ``("worked_example", field, *index)`` — a value of :func:`blockviz.worked_example.worked_example`.

    Scenes show no number they compute themselves: every number on screen has a source.
    Kept in ``.value``, ``.decimals`` and ``.source``.
    """
    if not source:
        raise ValueError("a number shown in a scene needs the source of its value in the record")
    mobject = numeral(style.format_number(float(value), decimals), font_size, color)
    mobject.value = float(value)
    mobject.decimals = decimals
    mobject.source = tuple(source)
    return mobject


@functools.lru_cache(maxsize=256)
def _digit_glyphs(
    font_size: float, color: str, layout: tuple
) -> tuple[list, list[tuple[float, float]], list[tuple[float, float]]]:
    # The font's digits share one advance width (tabular figures), so a digit's place in a
    # number is the place of a "0" there, corrected by how the two glyphs sit in their boxes.
    row = _text_prototype(_DIGITS, font_size, color, "NORMAL", layout).submobjects
    pair = _text_prototype("00", font_size, color, "NORMAL", layout).submobjects
    advance = pair[1].get_left()[0] - pair[0].get_left()[0]
    zero_left, zero_bottom = row[0].get_left()[0], row[0].get_bottom()[1]
    offsets = [
        (glyph.get_left()[0] - (zero_left + index * advance), glyph.get_bottom()[1] - zero_bottom)
        for index, glyph in enumerate(row)
    ]
    return row, offsets, [_left_and_bottom(glyph) for glyph in row]


def _left_and_bottom(glyph: Mobject) -> tuple[float, float]:
    """``(glyph.get_left()[0], glyph.get_bottom()[1])``, the same numbers from one walk over its
    outline's anchors instead of two."""
    anchors = glyph.get_points_defining_boundary()
    if len(anchors) == 0:  # as get_critical_point: a shape without points is at the origin
        return 0.0, 0.0
    return glyph.get_extremum_along_dim(anchors, dim=0, key=-1), glyph.get_extremum_along_dim(anchors, dim=1, key=-1)


def numeral(shown: str, font_size: float = NUMBER_SIZE, color: str = "#ffffff") -> Text:
    """``shown`` (digits, sign, point, ∞) as a ``Text`` identical to ``text(shown)``, built in
    ~0.5 ms instead of ~25 ms: the digits of a cached "0…" template are swapped for cached
    digit glyphs. Anything else falls back to :func:`text`."""
    layout = layout_key()
    template = "".join("0" if char in _DIGITS else char for char in shown)
    characters = [char for char in shown if not char.isspace()]
    label = _text_prototype(template, font_size, color, "NORMAL", layout).copy()
    if len(label.submobjects) != len(characters) or template == shown:
        return text(shown, font_size, color)
    glyphs, offsets, corners = _digit_glyphs(font_size, color, layout)
    for glyph, char in zip(label.submobjects, characters):
        if char in _DIGITS and char != "0":
            digit = int(char)
            left, bottom = _left_and_bottom(glyph)
            shift = np.array(
                [
                    left + offsets[digit][0] - corners[digit][0],
                    bottom + offsets[digit][1] - corners[digit][1],
                    0.0,
                ]
            )
            glyph.set_points(glyphs[digit].points + shift)
    label.text = label.original_text = shown
    label.shown = shown
    return label


# -- formulas ------------------------------------------------------------------------------------
MATHTEXT_SETTINGS = {"svg.hashsalt": "blockviz", "svg.fonttype": "path", "mathtext.fontset": "dejavusans"}
MATHTEXT_POINTS = 20
MATHTEXT_RECIPE = 2
"""Bump when :func:`_mathtext_svg` changes what it writes: the cached SVG files are keyed by it."""


def formula_cache_path(mathtext: str, color: str) -> Path:
    """Where the SVG of ``mathtext`` in ``color`` is cached: named by everything that changes it
    (the formula, the colour, matplotlib's version, the settings and the recipe)."""
    import matplotlib

    key = repr(
        (mathtext, color, matplotlib.__version__, sorted(MATHTEXT_SETTINGS.items()), MATHTEXT_POINTS, MATHTEXT_RECIPE)
    )
    digest = hashlib.blake2b(key.encode(), digest_size=12).hexdigest()
    return Path(tempfile.gettempdir()) / "blockviz-mathtext" / f"{digest}.svg"


def formula(mathtext: str, color: str, font_size: float = 20) -> SVGMobject:
    """A formula written in matplotlib mathtext (e.g. ``r"$\\frac{q \\cdot k}{\\sqrt{d_k}}$"``) as an
    ``SVGMobject``, sized like ``Text`` of ``font_size``. No LaTeX is involved.

    The SVG is cached in the temporary folder (see :func:`formula_cache_path`).
    """
    path = formula_cache_path(mathtext, color)
    if not path.exists():
        with atomic_path(path) as partial:
            partial.write_text(_mathtext_svg(mathtext, color), encoding="utf-8")
    parsed, scales, heights = _parsed_formula(str(path))
    svg = copy_of(parsed)
    svg.scale(font_size / MATHTEXT_POINTS * 0.0145)
    svg.set_fill(color, opacity=1)
    svg.shown = mathtext
    if len(scales) == len(svg.submobjects) == len(heights):
        for glyph, scale, height in zip(svg.submobjects, scales, heights):
            glyph.glyph_scale = scale
            glyph.outline_heights = height
    else:  # a formula drawn unlike matplotlib's usual SVG: assume the usual script size
        scales = [0.7 if any(mark in mathtext for mark in ("_", "^", "\\frac")) else 1.0]
    svg.built_size = (font_size * min(scales, default=1.0), svg.height)
    svg.full_size = (font_size, svg.height)
    return svg


@functools.lru_cache(maxsize=512)
def _parsed_formula(path: str) -> tuple[SVGMobject, list[float], list]:
    # The formula's SVG file parsed once (~40 ms; a copy costs ~1 ms) and slimmed (:func:`slim`),
    # with each glyph's size in it, read from the SVG: sub- and superscripts (and a fraction's
    # parts) are drawn at 0.7 of the formula's size, scripts of scripts at 0.49.
    drawn = Path(path).read_text(encoding="utf-8")
    return slim(SVGMobject(path, height=None, stroke_width=0)), glyph_scales(drawn), glyph_heights(drawn)


_DRAWN = re.compile(r"<use\b[^>]*>|<path\b[^>]*>|<rect\b[^>]*>")
_SCALE = re.compile(r"scale\(([-0-9.e]+)")


def glyph_scales(svg: str) -> list[float]:
    """The size of each shape matplotlib's mathtext SVG draws, in its order, as a share of the
    formula's size: a glyph is a ``<use>`` of a font outline, ``scale(0.7)`` for a script; a rule
    (a fraction's bar, √'s roof) a ``<path>`` or ``<rect>`` outside ``<defs>``, 1."""
    body = re.sub(r"<defs>.*?</defs>", "", svg, flags=re.DOTALL)
    body = body[body.find('<g id="text_1">') :] if '<g id="text_1">' in body else body
    scales = []
    for element in _DRAWN.findall(body):
        found = _SCALE.search(element) if element.startswith("<use") else None
        scales.append(float(found.group(1)) if found else 1.0)
    return scales


_OUTLINE = re.compile(r'<path id="([^"]+)" d="([^"]*)"')
_USE = re.compile(r'<use xlink:href="#([^"]+)"')


def glyph_heights(svg: str) -> list[tuple[float, float] | None]:
    """For each shape :func:`glyph_scales` lists, in its order: the lowest and highest point of
    its glyph's outline in font units, the baseline at 0 (``None`` for a rule). From these a
    glyph's baseline is found on its mobject (:func:`baseline`), descender or not."""
    outlines = {}
    for name, path in _OUTLINE.findall(svg):
        numbers = [float(n) for n in re.findall(r"-?[0-9.]+(?:e-?[0-9]+)?", path)]
        ys = numbers[1::2]  # absolute x y pairs (M, L, Q, C): every second number is a y
        outlines[name] = (min(ys), max(ys)) if ys else None
    body = re.sub(r"<defs>.*?</defs>", "", svg, flags=re.DOTALL)
    body = body[body.find('<g id="text_1">') :] if '<g id="text_1">' in body else body
    heights = []
    for element in _DRAWN.findall(body):
        used = _USE.search(element)
        heights.append(outlines.get(used.group(1)) if used else None)
    return heights


_ON_THE_BASELINE = set("acemnorsuvwxzbdhiklt0123456789ABCDEFGHIKLMNOPRSTUVWXYZ")
"""Characters whose glyphs sit on the baseline in DejaVu Sans (no descender, no overshoot of note)."""


def baseline(mobject) -> float | None:
    """The height of the baseline ``mobject`` (a :func:`formula` or :func:`text`) is written on,
    from its glyphs: a formula's first full-size glyph and its outline's place around the
    baseline; a text's glyphs of letters that sit on it. ``None`` if no glyph tells."""
    for glyph in getattr(mobject, "submobjects", []):
        low_high = getattr(glyph, "outline_heights", None)
        if getattr(glyph, "glyph_scale", None) == 1.0 and low_high and low_high[1] > low_high[0]:
            low, high = low_high
            return glyph.get_bottom()[1] + (0 - low) / (high - low) * glyph.height
    shown = getattr(mobject, "shown", None)
    if isinstance(mobject, Text) and shown is not None:
        characters = [char for char in shown if not char.isspace()]
        if len(characters) == len(mobject.submobjects):
            bottoms = [g.get_bottom()[1] for g, c in zip(mobject.submobjects, characters) if c in _ON_THE_BASELINE]
            if bottoms:
                return float(np.median(bottoms))
    return None


def script_sizes(mobject) -> list[float]:
    """The font sizes the sub- and superscripts of a :func:`formula` inside ``mobject`` are drawn
    at now, measured on the mobjects: each script glyph's share of its formula (read from the
    SVG) times the formula's size, times how much the formula has been scaled since it was built."""
    sizes = []
    for member in mobject.get_family():
        full = getattr(member, "full_size", None)
        if full is None:
            continue
        size, height = full
        now = size * member.height / height if height > 0 else size
        sizes += [now * glyph.glyph_scale for glyph in member.submobjects if getattr(glyph, "glyph_scale", 1.0) < 1.0]
    return sizes


SCRIPT_MARGIN = 1.1
"""How much larger than the smallest text a typeset name's subscripts are drawn: room for a
layout to shrink a little (``tests/test_typeset_names.py`` measures them after every play)."""


def is_mathtext(shown: str) -> bool:
    """Whether ``shown`` starts with a mathtext formula (``"$W_O$"``, ``"$q_1$ of “it”"``)."""
    return shown.startswith("$") and shown.count("$") >= 2


def typeset(shown: str, font_size: float = HEADER_SIZE, color: str = "#ffffff", width: float | None = None) -> Mobject:
    """A name on screen: ``"$mathtext$ words"`` as a :func:`formula` and, after it, the words as
    :func:`text` (cut with "…" to fit ``width``, if given, unless they are a quoted token: the row's
    word is never cut); anything else as :func:`text`.

    The formula is drawn large enough that its smallest sub- or superscript is
    :data:`~blockviz.scenes.look.MIN_FONT_SIZE` × :data:`SCRIPT_MARGIN` (≈ 12.1 px at 854 × 480;
    at most ``font_size``): at mathtext's 0.7 a header's subscript would be 9 px.
    ``.shown`` is the whole string."""
    if not is_mathtext(shown):
        return text(shown, font_size, color) if width is None else shortened(shown, width, font_size, color)
    end = shown.index("$", 1) + 1
    mathtext, words = shown[:end], shown[end:].strip()
    probe = formula(mathtext, color, font_size)
    smallest = min(script_sizes(probe), default=font_size)
    wanted = min(font_size, MIN_FONT_SIZE * SCRIPT_MARGIN)
    symbol = formula(mathtext, color, font_size * wanted / smallest) if smallest < wanted else probe
    if not words:
        symbol.full = shown
        return symbol
    room = None if width is None else max(width - symbol.width - 0.12, 0.3)
    quoted = words.startswith("\u201c") and words.endswith("\u201d")  # a token: never cut ("LN₂(h) “…")
    tail = text(words, font_size, color) if room is None or quoted else shortened(words, room, font_size, color)
    named = VGroup(symbol, tail).arrange(RIGHT, buff=0.12)
    lines = baseline(symbol), baseline(tail)
    if None not in lines:  # words and formula on one baseline, not centred on each other
        tail.shift(UP * (lines[0] - lines[1]))
    named.shown = named.full = shown
    return named


def _mathtext_svg(mathtext: str, color: str) -> str:
    from matplotlib import mathtext as matplotlib_mathtext
    from matplotlib import rc_context
    from matplotlib.font_manager import FontProperties

    buffer = io.BytesIO()
    with rc_context(MATHTEXT_SETTINGS):
        matplotlib_mathtext.math_to_image(
            mathtext, buffer, prop=FontProperties(size=MATHTEXT_POINTS), format="svg", color=color
        )
    svg = buffer.getvalue().decode("utf-8")
    # Drop the figure's background rectangle: the formula sits on the scene's background.
    return re.sub(r'<g id="patch_1">.*?</g>', "", svg, count=1, flags=re.DOTALL)


__all__ = [
    "text",
    "number",
    "numeral",
    "formula",
    "slim",
    "layout_key",
    "formula_cache_path",
    "shortened",
    "font_size_of",
    "ELLIPSIS",
    "typeset",
    "is_mathtext",
    "script_sizes",
    "glyph_scales",
    "glyph_heights",
    "baseline",
]
