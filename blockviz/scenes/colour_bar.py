"""Colour bars: the scales a scene's grids are coloured on, with their numbers, in a corner.

Every grid colours its cells on one scale (:class:`~blockviz.scenes.grids.NumberGrid`'s rule):
signed values on the diverging map over ``[-limit, limit]``, attention weights on the fixed 0–1
map by √weight. A signed grid's ``limit`` is chosen from what the scene shows
(:mod:`~blockviz.scenes.shown_scales`): the largest |value| of its drawn cells rounded up to a
value a bar reads at a glance (:func:`~blockviz.scale_limits.shown_limit`), one scale for the
grids of one colour-scale family on screen together, planned by a first, dry build of the scene
(:meth:`~blockviz.scenes.shown_scales.ScalePool.plan`); the record's family scale
(:meth:`~blockviz.block_record.BlockRecord.scale_of`) only says which values are outliers. A
colour is a number only if the viewer can read it back, so a scene that colours a grid shows, for
each scale on screen, a small bar: its name (the family: "residual stream", "q, k, v",
"heads' outputs", "parameters", the norms' "γ, β"… or "activations" for one scale shared by
several families in one equation; a record method's terms are named as their sum's family,
:data:`~blockviz.scenes.shown_scales.DERIVED_TERMS`), the map's colours sampled from matplotlib
(:mod:`blockviz.style`, never a map of our own) and the scale's ends.

* :func:`scales_shown` — the scales of the grids a scene draws after a play.
* :class:`ColourBar` — one scale's bar.
* :class:`ColourBars` — the bars a :class:`~blockviz.scenes.base.RecordScene` keeps in the top
  right corner (one bar: its name above it; more: one line each, one under another), changed
  (faded) with the play that changes the scales on screen.

A bar's end numbers are :func:`~blockviz.scenes.text.number` labels whose ``.source`` is
``("constant", -limit)`` and ``("constant", limit)``: a shown scale's ends are round values
(:data:`~blockviz.scale_limits.NICE_STEPS`), no number of the record; a weights bar's ends are
``("constant", 0)`` and ``("constant", 1)``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from manim import DOWN, LEFT, RIGHT, UP, LaggedStart, Mobject, Rectangle, SVGMobject, Text, VGroup, config

from blockviz import style
from blockviz.record_fields import (
    BY_NAME,
    NORM_PARAMETER_SCALE,
    OWN_BAR_NAMES,
    PARAMETER_SCALE,
    SCALE_FAMILIES,
    bar_name,
    parameter_scale,
)
from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.copies import CopiedFast, copy_of
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import FRAME_MARGIN, MIN_FONT_SIZE, Look, look
from blockviz.scenes.shown_scales import source_family
from blockviz.scenes.text import layout_key, number, text
from blockviz.symbols import bare, symbol

BAR_SIZE = MIN_FONT_SIZE + 1
"""Font size of a bar's name and numbers: the smallest legible (11 px at 480p) and a little more."""
STRIP_WIDTH = 1.3
NARROW_STRIP_WIDTH = 0.8
"""A strip's width when the bars stand in more than one column."""
STRIP_HEIGHT = 0.15
STRIP_CELLS = 40
"""The strip is drawn as this many small rectangles, each the map's colour at its middle."""
ROW_GAP = 0.07
"""Between two bars one under another."""
BARS_PER_COLUMN = 2
"""The most bars one under another (the title's band holds two); more stand in columns."""
COLUMN_GAP = 0.3
"""Between two columns of bars."""
ROW_SPACING = 0.4
"""Between two bars side by side in the row under the title."""
BAND_GAP = 0.07
"""Between the title and the row of bars under it, and between that row and the picture (4.2 px at 480p)."""
TOP_MARGIN = 0.12
"""From the frame's top edge to a bar's name (the title's band: the title is kept clear of the bars)."""
TITLE_GAP = 0.35
"""The least room between the title and the bars."""

QUANTITY_WORDS = {"concat": "concat", "projection_products": "products"}
"""What a bar names a quantity that has no typeset name (:mod:`blockviz.symbols`)."""
NORM_INPUTS = {"ln1": "x", "ln2": "h", "ln_f": "final"}
"""The norms' outputs, whose typeset names have a subscript (LN₁(x)): a bar writes their norm's
name and input instead (“LayerNorm(h)”; the last norm: “final LayerNorm”)."""
PARAMETER_WORDS = {"Q": "query", "K": "key", "V": "value", "O": "output", "U": "unembedding"}
"""A weight's or bias's subscript as a bar words it (“W_K” → “key weights”); others as written (“gate weights”)."""
SUBLAYER_OUTPUTS = {"attn_out": "attn out", "ffn_out": "FFN out"}
"""The sub-layers' outputs, whose typeset names in a pre-norm block hold their norm's subscript
(attn(LN₁(x))): a bar names them in words, as short as the bars beside them."""
HEAD_FIELDS = ("head_outputs", "weighted_values")
"""Quantities of one head: a bar names them by the head (“head 1”)."""
SHARED_WORDS = "activations"
"""The name of one scale that several activation families share in one equation (the FFN's)."""
WEIGHTS_WORDS = f"{SCALE_FAMILIES['weights'].bar} ({style.WEIGHTS_SCALE_NAME})"
OTHER_RECORDS = {"block": 2, "decoder": 1, "encoder": 1}
"""Sources that name another record's number, by how many items come before its field: a block's
view's ``("block", k, field, …)``, a counterpart's ``("decoder", field, …)``."""


@dataclass(frozen=True)
class ShownScale:
    """One colour scale on screen: ``rule`` ``"signed"`` (``[-limit, limit]`` on the diverging
    map) or ``"weights"`` (the fixed 0–1 map, ``limit`` 1); ``families`` the colour-scale families
    of the grids drawn on it, in the order met; ``field`` a field (or ``"parameters"``,
    ``"norm_parameters"``) whose record scale is ``limit``, named by the bar's numbers;
    ``clipped`` when values lie beyond it; ``beta`` whether the record's norms have a shift β
    (RMSNorm's have none: their bar says "γ"); ``fields`` the record fields its grids show, by
    which a weights-map bar of only one of :data:`~blockviz.record_fields.OWN_BAR_NAMES` is named
    (“probability (√ scale)”)."""

    rule: str
    limit: float
    families: tuple[str, ...] = ()
    field: str = ""
    clipped: bool = False
    beta: bool = True
    quantities: tuple[str, ...] = ()
    named_quantities: bool = False
    fields: tuple[str, ...] = ()

    @property
    def family_words(self) -> str:
        """What the bar calls its families (“residual stream”, “activations” for several)."""
        if self.rule == "weights":
            if len(set(self.fields)) == 1 and self.fields[0] in OWN_BAR_NAMES:
                return f"{OWN_BAR_NAMES[self.fields[0]].bar} ({style.WEIGHTS_SCALE_NAME})"
            return WEIGHTS_WORDS
        families = [family for family in self.families if family != PARAMETER_SCALE] or list(self.families)
        if not families:
            return SHARED_WORDS
        return bar_name(families[0], self.beta) if len(families) == 1 else SHARED_WORDS

    @property
    def words(self) -> str:
        """The bar's name: its families, its quantities when another bar on screen is of the same
        family (``named_quantities``), and “(clipped)” when some shown cells lie beyond it."""
        named = self.family_words
        if self.named_quantities:
            named = joined(self.quantities)
        return named + (" (clipped)" if self.clipped else "")


def joined(quantities: tuple[str, ...]) -> str:
    """Quantities as one bar names them: “x, h”; weights (or biases) once for all:
    (“key weights”, “value weights”) → “key, value weights”."""
    for kind in (" weights", " bias"):
        if len(quantities) > 1 and all(quantity.endswith(kind) for quantity in quantities):
            return ", ".join(quantity.removesuffix(kind) for quantity in quantities) + kind
    return ", ".join(quantities)


def family_fields(record) -> dict[str, str]:
    """Each colour-scale family of ``record`` → its first field in data-flow order (and
    ``"parameters"`` → ``"parameters"``, ``"norm_parameters"`` → ``"norm_parameters"``): the name
    :meth:`BlockRecord.scale_limit` takes for it."""
    fields: dict[str, str] = {}
    for spec in record.fields:
        if spec.name in record.tensors:
            fields.setdefault(spec.scale, spec.name)
    fields[PARAMETER_SCALE] = PARAMETER_SCALE
    fields[NORM_PARAMETER_SCALE] = NORM_PARAMETER_SCALE
    return fields


def grid_family(grid: NumberGrid) -> str | None:
    """The colour-scale family of the quantity ``grid`` draws, read from its labels' source
    (:func:`~blockviz.scenes.shown_scales.source_family`; ``None`` when the source is no field or
    parameter, e.g. a record method's products); a parameter's is
    :func:`~blockviz.record_fields.parameter_scale` of its name; a block's view's as its field's."""
    source = own_source(grid_source(grid))
    if source and (source[0] in (PARAMETER_SCALE, NORM_PARAMETER_SCALE) or tuple(source) == ("params",)):
        return parameter_scale(source[0])
    return source_family(source)


def grid_rule(grid: NumberGrid) -> str | None:
    """``"signed"`` or ``"weights"``: the map ``grid``'s cells are coloured on (a plain grid whose
    cells were given weights' colours counts as weights), else ``None``."""
    if grid.color_rule == "weights" or getattr(grid, "weights_shown", False):
        return "weights"
    if grid.color_rule == "signed":
        return "signed"
    return None


def grids_in(mobjects: Iterable[Mobject], page: str | None = None) -> list[NumberGrid]:
    """The grids whose cells are among ``mobjects`` and their parts (a grid, its cell group, a
    cell, a cell's copy), each once; not ghosts (stand-ins drawn as outlines). With ``page`` (the
    background's ``#rrggbb``), only grids with a cell coloured: filled in another colour than the
    page (an empty grid waiting for its numbers has no scale on screen yet)."""
    found: list[NumberGrid] = []

    def coloured(cell: Mobject) -> bool:
        return cell.get_fill_opacity() > 0.01 and cell.get_fill_color().to_hex().lower() != page.lower()

    def walk(mobject: Mobject) -> None:
        if getattr(mobject, "ghost", False) or isinstance(mobject, (Text, SVGMobject, ColourBar)):
            return
        owner = getattr(mobject, "grid_of", None)  # a cell (or a copy of one) knows its grid
        if owner is not None:
            if owner() is not None and (page is None or coloured(mobject)):
                found.append(owner())
            return
        for member in mobject.submobjects:
            walk(member)

    for mobject in mobjects:
        walk(mobject)
    return list({id(grid): grid for grid in found}.values())


def scales_of(record, grids: Iterable[NumberGrid]) -> list[ShownScale]:
    """The scales ``grids`` are coloured on, one per distinct (rule, limit), in the order met.
    A signed scale is chosen from the grids' shown cells (:func:`~blockviz.scale_limits.shown_limit`),
    so its ends are :data:`~blockviz.scale_limits.NICE_STEPS` values, numbered as constants; when two scales on screen
    are of one family, each bar names its quantities too (“residual stream: x”)."""
    found: dict[tuple[str, float], dict] = {}
    for grid in grids:
        rule = grid_rule(grid)
        if rule is None:
            continue
        key = (rule, 1.0 if rule == "weights" else float(grid.color_limit))
        seen = found.setdefault(key, {"families": [], "quantities": [], "fields": [], "clipped": False})
        family = grid_family(grid)
        if family is not None and family not in seen["families"]:
            seen["families"].append(family)
        quantity = grid_quantity(record, grid)
        if quantity and quantity not in seen["quantities"]:
            seen["quantities"].append(quantity)
        seen["fields"].append(grid_field(grid))
        seen["clipped"] |= getattr(grid, "scale_clipped", False)
    scales = [
        ShownScale(
            rule,
            limit,
            tuple(seen["families"]),
            clipped=seen["clipped"],
            beta="ln1.bias" in record.params,
            quantities=tuple(seen["quantities"]),
            fields=tuple(seen["fields"]),
        )
        for (rule, limit), seen in found.items()
    ]
    named = [scale.family_words for scale in scales]
    return [
        replace(scale, named_quantities=named.count(scale.family_words) > 1 and bool(scale.quantities))
        for scale in scales
    ]


def grid_source(grid: NumberGrid) -> tuple | None:
    """The source of ``grid``'s labels (its first cell's, when each cell has its own)."""
    source = grid.source
    if callable(source):
        first = next(iter(grid.cells), None)
        source = source(*first) if first is not None else None
    return source


def own_source(source: tuple | None) -> tuple | None:
    """A label source without the other record it names (:data:`OTHER_RECORDS`): ``("block", 1,
    "probs", 4, 7)`` → ``("probs", 4, 7)``; any other source as it is.

    >>> own_source(("block", 1, "resid_pre", 0, 2)), own_source(("resid_pre", 0, 2))
    (('resid_pre', 0, 2), ('resid_pre', 0, 2))
    """
    if source and source[0] in OTHER_RECORDS:
        return tuple(source[OTHER_RECORDS[source[0]] :])
    return source


def grid_field(grid: NumberGrid) -> str | None:
    """The record field ``grid`` draws, a block's view's or a counterpart's too (``("block", 1,
    "probs", 4, 7)`` → ``"probs"``); ``None`` when its source names none (a parameter, a product)."""
    source = own_source(grid_source(grid))
    if not source:
        return None
    return source[0] if isinstance(source[0], str) and source[0] in BY_NAME else None


def grid_quantity(record, grid: NumberGrid) -> str:
    """What ``grid`` shows, as a bar names it beside another bar of its family: the plain text of
    its field's or parameter's typeset name (“x”, “h”), in words when that name has a sub- or
    superscript (“output weights”, “LayerNorm(h)”, “attn out”), or "" when it has none."""
    source = grid_source(grid)
    if not source:
        return ""
    name = source[1] if source[0] in ("params", "decoder", "encoder") and len(source) > 1 else source[0]
    if name in HEAD_FIELDS and len(source) > 1:
        return f"head {source[1]}"
    if name in QUANTITY_WORDS:
        return QUANTITY_WORDS[name]
    if name.endswith(("_centred", "_norm")):  # a norm's inner steps: x − μ, then divided by σ
        return "centred" if name.endswith("_centred") else "normalised"
    if name in NORM_INPUTS:
        norm = record.architecture.norm_name
        return f"final {norm}" if name == "ln_f" else f"{norm}({NORM_INPUTS[name]})"
    if name in SUBLAYER_OUTPUTS and record.architecture.pre_norm:
        return SUBLAYER_OUTPUTS[name]
    try:
        typeset = symbol(name, record)
    except KeyError:
        return ""
    if "_" in typeset or "^" in typeset:  # a script: drawn as text it would be a code name or under 11 px
        return parameter_words(name)
    return plain(typeset)


def parameter_words(name: str) -> str:
    """A weight or bias in words, as a bar names it: ``attn.W_K`` → “key weights”, ``ffn.b_in``
    → “in bias”; "" for any other name.

    >>> parameter_words("attn.W_K"), parameter_words("attn.b_O"), parameter_words("ffn.W_gate")
    ('key weights', 'output bias', 'gate weights')
    """
    match = re.fullmatch(r"(?:\w+\.)?([Wb])_(\w+)", name)
    if match is None:
        return ""
    letter, index = match.groups()
    return f"{PARAMETER_WORDS.get(index, index)} {'weights' if letter == 'W' else 'bias'}"


def plain(typeset: str) -> str:
    """A one-formula mathtext name as plain text for a bar: ``$\\mathrm{LN}_1(x)$`` → “LN₁(x)”.

    >>> plain(r"$\\mathrm{attn}(x)$"), plain(r"$W_O$"), plain(r"$\\gamma$")
    ('attn(x)', 'W_O', 'γ')
    """
    shown = re.sub(r"\\mathrm\{(\w+)\}", r"\1", bare(typeset))
    shown = re.sub(
        r"_\{?(\d)\}?",
        lambda match: "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089"[int(match[1])],
        shown,
    )
    for command, letter in (("\\gamma", "\u03b3"), ("\\beta", "\u03b2"), ("\\odot", "\u2299")):
        shown = shown.replace(command, letter)
    return shown.replace("{", "").replace("}", "").replace(" ", "")


def grids_during(scene, animations: Iterable = ()) -> list[NumberGrid]:
    """The grids ``scene`` draws coloured while ``animations`` play: those in the scene and those
    the animations bring (those they take away included: they are on screen until they are gone)."""
    brought = [
        leaf.mobject
        for animation in animations
        for leaf in leaves(animation)
        if getattr(leaf, "mobject", None) is not None
    ]
    return grids_in([*scene.mobjects, *brought], scene.look.background)


def scales_shown(scene, animations: Iterable = ()) -> list[ShownScale]:
    """The scales of the grids ``scene`` draws coloured once ``animations`` (about to play) have
    run: those in the scene and those the animations bring, less those they take away."""
    brought, taken = [], []
    for animation in animations:
        for leaf in leaves(animation):
            mobject = getattr(leaf, "mobject", None)
            if mobject is not None:
                (taken if getattr(leaf, "remover", False) else brought).append(mobject)
    gone = {id(grid) for grid in grids_in(taken)}
    grids = [grid for grid in grids_in([*scene.mobjects, *brought], scene.look.background) if id(grid) not in gone]
    return scales_of(scene.record, grids)


class ColourBar(CopiedFast, VGroup):
    """The bar of one :class:`ShownScale`: its name, the low end's number, the map's colours in a
    strip (outlined in the cell edge's colour, so its white middle reads as part of it on a white
    page) and the high end's number — the name above the rest, or (``one_line``) before it on
    one line, as bars stacked one under another are drawn. ``.scale_shown`` is the scale,
    ``.name`` its name, ``.numbers`` the two end labels, ``.strip`` the coloured cells (left to right)."""

    def __init__(self, scale: ShownScale, look: Look, one_line: bool = False, strip_width: float = STRIP_WIDTH) -> None:
        super().__init__()
        self.scale_shown = scale
        step = strip_width / STRIP_CELLS
        middles = [(k + 0.5) / STRIP_CELLS for k in range(STRIP_CELLS)]
        if scale.rule == "weights":  # even steps of the √ normalisation: the strip as the cells see it
            colours = [style.weight_color(share**2) for share in middles]
            low = number(0, BAR_SIZE, look.text, decimals=0, source=("constant", 0))
            high = number(1, BAR_SIZE, look.text, decimals=0, source=("constant", 1))
        else:
            colours = [style.signed_color((2 * share - 1) * scale.limit, scale.limit) for share in middles]
            places = end_decimals(scale.limit)
            low = number(-scale.limit, BAR_SIZE, look.text, places, source=("constant", -scale.limit))
            high = number(scale.limit, BAR_SIZE, look.text, places, source=("constant", scale.limit))
        cell = Rectangle(width=step, height=STRIP_HEIGHT, stroke_width=0)  # copied: a copy costs a third of a new one
        self.strip = VGroup(*(copy_of(cell).set_fill(style.hex_color(colour), 1) for colour in colours)).arrange(
            RIGHT, buff=0
        )
        edge = Rectangle(
            width=strip_width, height=STRIP_HEIGHT, stroke_color=look.cell_edge, stroke_width=look.cell_edge_width
        ).move_to(self.strip)
        self.name = text(scale.words, BAR_SIZE, look.muted)
        self.numbers = (low, high)
        for label in self.numbers:
            label.colour_bar = True  # a scale's end, not a value of a field (tests read them apart)
        row = VGroup(low, VGroup(self.strip, edge), high).arrange(RIGHT, buff=0.1)
        self.add(self.name, row)
        if one_line:
            self.arrange(RIGHT, buff=0.15)
        else:
            self.arrange(DOWN, buff=0.08)


def colour_bar(scale: ShownScale, look: Look, one_line: bool = False, strip_width: float = STRIP_WIDTH) -> ColourBar:
    """A new :class:`ColourBar` (the arguments are its own), copied from the first one built
    with them in this process: a scene builds the same bars again and again (to reserve their
    band, at every change of the scales shown), and a copy costs a fraction of a new one."""
    return copy_of(_first_bar(scale, look, one_line, strip_width, layout_key()))


@functools.lru_cache(maxsize=64)
def _first_bar(scale: ShownScale, look: Look, one_line: bool, strip_width: float, layout: tuple) -> ColourBar:
    """The bar copied by :func:`colour_bar` (never drawn itself), its texts laid out for ``layout``
    (:func:`~blockviz.scenes.text.layout_key`)."""
    return ColourBar(scale, look, one_line, strip_width)


def end_decimals(limit: float) -> int:
    """The decimals that write a scale's end exactly (at least 2, at most 6): 0.0025 → 4.

    >>> end_decimals(12.5), end_decimals(0.0025)
    (2, 4)
    """
    places = 2
    while places < 6 and abs(round(limit, places) - limit) > 1e-12:
        places += 1
    return places


def stacked(bars: list[ColourBar]) -> VGroup:
    """One-line bars one under another, their strips in one column (names right-aligned before
    them): two or more bars take less width so. More than :data:`BARS_PER_COLUMN` bars fill
    columns side by side, right to left, so the bars never reach down into the picture."""
    columns = [bars[k : k + BARS_PER_COLUMN] for k in range(0, len(bars), BARS_PER_COLUMN)]
    groups = []
    for column in columns:
        group = VGroup(*column).arrange(DOWN, buff=ROW_GAP)
        strip_left = max(bar.strip.get_left()[0] - bar.get_left()[0] for bar in column)
        for bar in column:
            bar.shift(RIGHT * (strip_left - (bar.strip.get_left()[0] - bar.get_left()[0])))
        groups.append(group)
    if len(groups) > 1:
        VGroup(*reversed(groups)).arrange(RIGHT, buff=COLUMN_GAP, aligned_edge=UP)
    return VGroup(*bars)


class ColourBars:
    """The colour bars of one scene, in its top right corner: after each play, one bar per scale
    on screen (:func:`scales_shown`). :meth:`follow` gives the animations that bring the bars
    in step with a play; the title moves left (and shrinks if it must) to stay clear of them."""

    def __init__(self) -> None:
        self.shown: list[ShownScale] = []
        self.group: VGroup | None = None

    def follow(self, scene, animations: list) -> list:
        """Animations to play with ``animations`` so that, when they end, the bars show the
        scales of the grids on screen (none if they already do)."""
        scales = in_kept_order(scales_shown(scene, animations), self.shown)
        if [(scale.rule, scale.limit) for scale in scales] == [(scale.rule, scale.limit) for scale in self.shown]:
            if self.group is not None and self.group not in scene.mobjects:  # a scene cleared the frame but the title
                scene.add(self.group)
            return []  # the same scales (perhaps now of fewer families): the bars stay
        leaving = self.group
        self.shown = scales
        self.group = None
        changes = []
        if scales:
            self.group = arranged_bars(scales, scene.look, scene.title_mobject)
            self.group.colour_bars = True
            changes.append(FadeIn(self.group))
            if scene.title_mobject is not None:
                changes += keep_clear(scene.title_mobject, self.group)
        if leaving is not None:  # the old bars go before the new come: no number over a fading strip
            changes[:1] = [LaggedStart(FadeOut(leaving), *changes[:1], lag_ratio=1.0)]
        return changes


def arranged_bars(scales: list[ShownScale], look: Look, title: Mobject | None) -> VGroup:
    """The bars of ``scales`` placed in the top right corner, the title (``title``, at the top
    left) kept at its size: beside the title if they fit there (one bar: its name above it; more:
    :func:`stacked`); else in rows under the title (:func:`rows_under`, as few as hold them, at
    most those :func:`reserve_band` noted), right-aligned, in the band :func:`layout_top` keeps
    clear of the picture, the first bars beside the title when that saves a row (the rows then
    start under those: :func:`band_top`); else beside the title as they are (the title then
    shrinks: :func:`keep_clear`)."""
    if len(scales) == 1:
        group = VGroup(colour_bar(scales[0], look))
    else:
        width = STRIP_WIDTH if len(scales) <= BARS_PER_COLUMN else NARROW_STRIP_WIDTH
        group = stacked([colour_bar(scale, look, True, width) for scale in scales])
    group.to_edge(UP, buff=TOP_MARGIN).to_edge(RIGHT, buff=FRAME_MARGIN)
    if title is None:
        return group
    room_left = title.get_left()[0] + natural_width(title) + TITLE_GAP
    if room_left <= group.get_left()[0] or not getattr(title, "band_under", False):
        return group
    kept = [colour_bar(scale, look, True, NARROW_STRIP_WIDTH) for scale in scales]
    for bars in (kept, narrowest_first(kept)):  # as shown; else as reserve_band counted the rows
        for rows in range(1, band_rows(title) + 1):  # the fewest rows under the title that hold the bars
            for k in range(len(bars)):
                beside, under = stacked(bars[:k]), rows_under(bars[k:])
                if len(under) > rows:
                    continue
                if k:
                    beside.to_edge(UP, buff=TOP_MARGIN).to_edge(RIGHT, buff=FRAME_MARGIN)
                    if beside.get_left()[0] < room_left:
                        continue
                top = band_top(title, beside if k else None)
                for row in under:
                    row.to_edge(RIGHT, buff=FRAME_MARGIN).shift(UP * (top - row.get_top()[1]))
                    top = row.get_bottom()[1] - ROW_GAP
                if not under or under[-1].get_bottom()[1] - BAND_GAP >= layout_top(title) - 1e-9:
                    return VGroup(*bars)
    return group


def band_top(title: Mobject, beside: Mobject | None = None) -> float:
    """The top of the rows of bars under ``title``: :data:`BAND_GAP` under the title at its own
    size, or under the bars ``beside`` it when they reach lower (they stand right-aligned above
    the rows)."""
    bottom = natural_bottom(title)
    if beside is not None:
        bottom = min(bottom, beside.get_bottom()[1])
    return bottom - BAND_GAP


def narrowest_first(bars: list[ColourBar]) -> list[ColourBar]:
    """``bars`` narrowest first: the order in which :func:`reserve_band` counts the rows they
    take (the narrowest stand beside the title), whatever order a scene shows them in."""
    return sorted(bars, key=lambda bar: bar.width)


def rows_under(bars: list[ColourBar]) -> list[VGroup]:
    """``bars`` in rows side by side, in order, each row as many as fit the frame's width
    between its margins (a row of one bar however wide)."""
    rows: list[list[ColourBar]] = []
    width = config.frame_width - 2 * FRAME_MARGIN
    for bar in bars:
        if rows and sum(b.width for b in rows[-1]) + len(rows[-1]) * ROW_SPACING + bar.width <= width:
            rows[-1].append(bar)
        else:
            rows.append([bar])
    return [VGroup(*row).arrange(RIGHT, buff=ROW_SPACING) for row in rows]


def band_rows(title: Mobject) -> int:
    """How many rows of bars the band under ``title`` holds (:func:`reserve_band`; 0: none)."""
    if not getattr(title, "band_under", False):
        return 0
    return getattr(title, "band_rows", 1)


def in_kept_order(scales: list[ShownScale], shown: list[ShownScale]) -> list[ShownScale]:
    """``scales``, those already ``shown`` first in the order they are shown, then the new ones
    in their order: a bar never swaps places with another because the grids were re-added."""
    place = {(scale.rule, scale.limit): k for k, scale in enumerate(shown)}
    return sorted(scales, key=lambda scale: place.get((scale.rule, scale.limit), len(place)))


def keep_clear(title: Mobject, bars: Mobject) -> list:
    """Keep ``title`` (at the top left, :meth:`RecordScene.show_title`; or wherever a scene put
    it) left of ``bars`` standing beside it, shrinking it if even flush with the frame's left
    margin it would reach them, and back to its own size (:func:`natural_width`) when they leave
    it room or stand under it; an animation if it changes, else none."""
    natural = natural_width(title)
    beside = [bar for bar in bars.submobjects if bar.get_top()[1] > natural_bottom(title)]
    room_right = min(bar.get_left()[0] for bar in beside) - TITLE_GAP if beside else config.frame_width / 2
    if title.get_right()[0] <= room_right and abs(title.width - natural) < 1e-6:
        return []
    left_edge = -config.frame_width / 2 + FRAME_MARGIN
    target = title.copy().scale_to_fit_width(min(natural, room_right - left_edge))
    target.align_to(title, UP).align_to(title, LEFT)
    if target.get_right()[0] > room_right:
        target.shift(RIGHT * max(room_right - target.get_right()[0], left_edge - target.get_left()[0]))
    return [title.animate.become(target)]


def natural_bottom(title: Mobject) -> float:
    """Where the bottom of ``title`` is at its own size (:func:`natural_width`), its top kept."""
    return title.get_top()[1] - title.height * natural_width(title) / title.width


def natural_width(title: Mobject) -> float:
    """The width ``title`` had when the bars first met it: its own size, which they never take from it
    for good (noted on it as ``natural_width``)."""
    if getattr(title, "natural_width", None) is None:
        title.natural_width = title.width
    return title.natural_width


def layout_top(title: Mobject) -> float:
    """The highest a scene's picture may reach under ``title``: below the row of bars that may
    stand under it, if :func:`reserve_band` noted one (:func:`arranged_bars`), and below the band of two rows of bars in the top
    right however small the bars have made the title."""
    rows = band_rows(title)
    height = getattr(title, "bar_height", bar_row_height())  # a name with "√" or a bracket is taller
    under = 2 * BAND_GAP + rows * height + (rows - 1) * ROW_GAP if rows else 0.25
    return min(natural_bottom(title) - max(0.25, under), config.frame_height / 2 - bars_band(height) - 0.1)


def reserve_band(title: Mobject, scales: list[ShownScale], look: Look) -> None:
    """Note on ``title`` (``band_under``) that the picture keeps clear of rows of bars under it
    (:func:`layout_top`) when the bars of ``scales`` — every scale the picture may show at once —
    would not fit beside the title at its size: as many rows (``band_rows``) as they take side by
    side in the frame's width; once noted, kept, and grown (never shrunk) when a later picture's
    bars take more rows (a refit keeps the same room; a later picture's five bars never stand
    beside the title, shrinking it, for want of a second row). Notes too the height of the
    tallest of these bars on one line (``bar_height``, the most met so far): a name with "√" or a
    letter under the line ("query") takes more room than "residual stream"."""
    if not scales:
        return
    note_bar_height(title, scales)
    room = config.frame_width / 2 - FRAME_MARGIN - (title.get_left()[0] + natural_width(title) + TITLE_GAP)
    rows = rows_of_bars(tuple(scales), look, room, natural_bottom(title), layout_key())
    if rows == 0:
        return
    title.band_rows = max(rows, band_rows(title))
    title.band_under = True


@functools.lru_cache(maxsize=256)
def rows_of_bars(scales: tuple[ShownScale, ...], look: Look, room: float, title_bottom: float, layout: tuple) -> int:
    """The rows under the title the bars of ``scales`` take (:func:`rows_needed`), 0 when they fit
    the ``room`` (scene units) beside it, for a title whose bottom at its own size is
    ``title_bottom``, in the frame and with the texts of ``layout``
    (:func:`~blockviz.scenes.text.layout_key`). Kept: a scene reserves the band of the same bars
    again and again (for each layout it tries, in its dry build too, :mod:`~blockviz.scenes.shown_scales`)."""
    bars = [colour_bar(scale, look, True, NARROW_STRIP_WIDTH) for scale in scales]
    group = stacked(bars) if len(bars) > 1 else VGroup(colour_bar(scales[0], look))
    if group.width <= room:
        return 0
    return rows_needed(bars, config.frame_width / 2 - FRAME_MARGIN - room, title_bottom)


def note_bar_height(title: Mobject, scales: Iterable[ShownScale]) -> None:
    """Note on ``title`` (``bar_height``, the most met so far) the height of the tallest bar of
    ``scales`` on one line, for :func:`layout_top`; a scene whose later grids bring bars the
    picture's grids do not (the q/k/v scene's weights) notes them before it places the picture."""
    title.bar_height = max([getattr(title, "bar_height", bar_row_height())] + [one_line_height(s) for s in scales])


def rows_needed(bars: list[ColourBar], room_left: float, title_bottom: float | None = None) -> int:
    """The fewest rows under the title that hold ``bars`` (:func:`rows_under`), narrowest first
    (:func:`narrowest_first`), the first of them :func:`stacked` beside the title when they stand
    right of ``room_left`` and, the title's bottom at its own size being ``title_bottom``, end no
    lower than it (else the rows under would start lower than the band the picture keeps clear:
    :func:`band_top`)."""
    bars = narrowest_first(bars)
    fewest = len(rows_under(bars))
    for k in range(1, len(bars)):
        beside = stacked(bars[:k]).to_edge(UP, buff=TOP_MARGIN).to_edge(RIGHT, buff=FRAME_MARGIN)
        if beside.get_left()[0] >= room_left and (title_bottom is None or beside.get_bottom()[1] >= title_bottom):
            fewest = min(fewest, len(rows_under(bars[k:])))
    return fewest


@functools.cache
def bar_row_height() -> float:
    """The height of one bar drawn on one line, its name without letters that reach under the line."""
    return one_line_height(ShownScale("signed", 1.0, ("residual",)))


@functools.cache
def one_line_height(scale: ShownScale) -> float:
    """The height of ``scale``'s bar drawn on one line (its name's glyphs decide it, not its
    strip's width: measured on the narrow bar :func:`reserve_band` builds anyway)."""
    return _first_bar(scale, look("dark"), True, NARROW_STRIP_WIDTH, layout_key()).height


def bars_band(height: float | None = None) -> float:
    """The height from the frame's top that :data:`BARS_PER_COLUMN` rows of bars ``height`` tall
    (by default :func:`bar_row_height`) take."""
    height = bar_row_height() if height is None else height
    return TOP_MARGIN + BARS_PER_COLUMN * height + (BARS_PER_COLUMN - 1) * ROW_GAP


def bars_of(scene) -> list[ColourBar]:
    """The colour bars ``scene`` draws now."""
    return [member for mobject in scene.mobjects for member in mobject.get_family() if isinstance(member, ColourBar)]


__all__ = [
    "ColourBar",
    "ColourBars",
    "ShownScale",
    "scales_shown",
    "scales_of",
    "bars_of",
    "grids_in",
    "reserve_band",
]
