"""Shared helpers of the tests: building a catalogued scene without writing video, reading back
the text it shows, and the value in the record that a shown number names.

Scenes are built once per (scene, record) for the whole test session (:func:`built`), so the
scene test files share their builds.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import tempfile
from unittest import mock

import numpy as np
from manim import SVGMobject, Text, VMobject, config, tempconfig
from manim.scene.scene_file_writer import SceneFileWriter

from blockviz import BlockConfig
from blockviz.block_record import BlockRecord, record
from blockviz.worked_example import worked_example

TOY = "toy"
"""In :data:`RECORDS`, instead of BlockConfig options: the record of the shipped trained toy model."""
DEFAULT_SENTENCE = "the cat sat"
THIRTEEN_TOKENS = "The chicken didn't cross the road because it was too tired."
SIXTY_FOUR_TOKENS = " ".join(f"w{i}" for i in range(64))
FORTY_FIVE_TOKENS = (
    "When the farmer opened the gate, the tired old chicken, which had waited all morning, "
    "finally crossed the quiet road because it wanted the grain on the other side, "
    "and then it rested in the warm sun by the barn."
)  # 45 tokens

RECORDS = {
    "default": (DEFAULT_SENTENCE, None),
    "13 tokens": (THIRTEEN_TOKENS, None),
    "64 tokens, d_model 16, d_ff 64, relu": (
        SIXTY_FOUR_TOKENS,
        dict(d_model=16, n_heads=4, d_ff=64, activation="relu"),
    ),
    "toy": (THIRTEEN_TOKENS, TOY),
}
"""Records the scene tests build every scene on, by name: ``(sentence, BlockConfig options)``,
or ``(sentence, TOY)`` for the shipped trained toy model's record."""

MORE_RECORDS = {
    "one token": ("cat", None),
    "45 tokens": (FORTY_FIVE_TOKENS, None),
}
"""Records only the framing and type tests build every scene on (on top of :data:`RECORDS`)."""

COPY = "copy"
"""In :data:`STACK_RECORDS`: the record of the shipped two-block copy model (``--model copy``)."""
STACK_RECORDS = {
    "copy": ("cat road because lamp cake river tall dog sat mat wide lamp cake river", COPY),
}
"""The record of several blocks the scene tests build the stack's scenes on where a test builds
every scene on one record (:func:`thirteen_tokens` of ``test_scenes.py``); their own tests are
``test_stack_scenes.py``."""

FRAMED = ("default", "13 tokens", "45 tokens")
"""Records on which every shot fills :data:`FRAME_SHARE` of the frame between title and caption."""
FRAME_SHARE = 0.6
BAND = 0.11
"""The title and caption bands, as shares of the frame's height (as ``shared/measure/frame_share.py``)."""
MIN_PIXELS = 11
"""The smallest text (ascender to baseline) at 854 × 480."""


@functools.cache
def named_record(name: str):
    """The record called ``name`` in :data:`RECORDS`, :data:`MORE_RECORDS` or :data:`STACK_RECORDS` (recorded once per session)."""
    sentence, options = {**RECORDS, **MORE_RECORDS, **STACK_RECORDS}[name]
    if options in (TOY, COPY):
        from blockviz.toy.recording import record_toy

        return record_toy(sentence, options)
    return record(sentence, BlockConfig(**options) if options else None)


def shows(entry, record_name: str) -> bool:
    """Whether the catalogued scene ``entry`` can show the record called ``record_name`` (it has
    what the scene ``NEEDS``): the scene tests build each scene only on those."""
    return entry.needs is None or entry.missing_for(named_record(record_name)) is None


def with_outlier(rec, value: float = 22543.0):
    """``rec`` with ``resid_pre[0, 0]`` set to ``value``: a massive activation as SmolLM2's layer 13 has on its first token."""
    tensors = dict(rec.tensors)
    tensors["resid_pre"] = rec.resid_pre.clone()
    tensors["resid_pre"][0, 0] = value
    return BlockRecord(rec.sentence, rec.tokens, rec.config, tensors, rec.params)


def parse(shown: str) -> float:
    """A shown number back as a float (``"−1.50"`` → -1.5, ``"−∞"`` → -inf)."""
    return float(shown.replace("\u2212", "-").replace("∞", "inf"))


def record_value(rec, source: tuple) -> float:
    """The value a number label's ``.source`` names (the forms of :func:`blockviz.scenes.text.number`)."""
    name, *index = source
    if name == "remainder":  # a recorded total less the recorded terms shown beside it
        total, *shown = index
        return record_value(rec, total) - sum(record_value(rec, part) for part in shown)
    if name == "constant":
        return float(index[0])
    if name == "block":  # (k, *source): the same in block k's view of a record of several blocks
        k, *inner = index
        return record_value(rec.block(k), tuple(inner))
    if name == "baseline":  # (head, query, key): the head's mean weight on key from the other queries that see it
        head, query, key = index
        others = [q for q in range(rec.n) if q != query and (not rec.config.causal or q >= key)]
        return float(sum(rec.weights[head, q, key].item() for q in others) / len(others))
    if name == "scale_limit":  # a colour bar's end: the record's scale of a field's family, or its negative
        field, *sign = index
        return rec.scale_limit(field) * (sign[0] if sign else 1)
    if name == "learning":  # a training checkpoint's number: learning_of(<the record's model folder>).<field>[index]
        from blockviz.toy.learning import learning_of

        field, *index = index
        value = getattr(learning_of(rec.source.path), field)
        for position in index:
            value = value[position]
        return float(value)
    if name == "worked_example":
        field, *index = index
        return getattr(worked_example(), field)[tuple(index)].item()
    if name == "params":
        parameter, *index = index
        return rec.params[parameter][tuple(index)].item()
    if name in ("decoder", "encoder"):
        return record_value(rec.counterpart(causal=name == "decoder"), tuple(index))
    if name in rec.tensors:
        return rec.tensors[name][tuple(index)].item()
    method = getattr(
        rec, name
    )  # a record method of (head, query), e.g. qk_products, or of (query,): projection_products
    if name == "input_products":  # (role, head, query, row of W, column of W)
        role, head, query, *index = index
        return method(role, head, query)[tuple(index)].item()
    if name == "projection_products":
        query, *index = index
        return method(query)[tuple(index)].item()
    head, query, *index = index
    return method(head, query)[tuple(index)].item()


def shown_decimals(label) -> int:
    """How many decimals a shown number has (its ``.decimals``, else counted in its string)."""
    if getattr(label, "decimals", None) is not None:
        return label.decimals
    shown = label.shown
    return len(shown) - shown.index(".") - 1 if "." in shown else 0


def sum_misses(parts, total) -> float:
    """How far the shown ``parts`` miss the shown ``total``, in units of the total's last digit."""
    return abs(sum(parse(part.shown) for part in parts) - parse(total.shown)) * 10 ** shown_decimals(total)


def text_pixels(label) -> float:
    """How tall ``label`` is drawn (ascender to baseline) in pixels at 854 × 480."""
    from blockviz.scenes.look import ASCENDER
    from blockviz.scenes.text import font_size_of

    return font_size_of(label) * ASCENDER * 480 / config.frame_height


def drawn(member) -> bool:
    return len(member.points) > 0 and (
        member.get_fill_opacity() > 0.01 or member.get_stroke_opacity() > 0.01 and member.get_stroke_width() > 0
    )


def content_share(scene) -> float:
    """The bounding box of everything drawn but the title, the caption and the colour bars, clipped to the band
    between the title and caption bands, as a share of that band (``frame_share.py``'s measure)."""
    furniture = {
        id(member)
        for mobject in (
            scene.title_mobject,
            scene.caption,
            getattr(scene, "colour_bars", None) and scene.colour_bars.group,
        )
        if mobject is not None
        for member in mobject.get_family()
    }
    points = [
        member.points
        for mobject in scene.mobjects
        for member in mobject.get_family()
        if id(member) not in furniture and drawn(member)
    ]
    if not points:
        return 0.0
    points = np.concatenate(points)
    half_width, half_height = config.frame_width / 2, config.frame_height / 2
    top, bottom = half_height * (1 - 2 * BAND), -half_height * (1 - 2 * BAND)
    left, right = max(points[:, 0].min(), -half_width), min(points[:, 0].max(), half_width)
    low, high = max(points[:, 1].min(), bottom), min(points[:, 1].max(), top)
    return max(0.0, right - left) * max(0.0, high - low) / (config.frame_width * (top - bottom))


def visible_texts(scene) -> list[Text]:
    """Every ``Text`` and mathtext formula drawn in the scene now (with glyphs, not faded out);
    each has ``.shown``."""
    texts = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            drawn_text = isinstance(member, Text) or (isinstance(member, SVGMobject) and hasattr(member, "shown"))
            if (
                drawn_text
                and member.get_fill_opacity() > 0.01
                and len(member.get_family()) > 1
                and not getattr(member, "ghost", False)
            ):
                texts.append(member)
    return texts


def quotes_the_model_card(scene, label) -> bool:
    """Whether ``label`` is the title card's quote of a trained toy model's card, word for word:
    its numbers (parameters, sentences, loss) are training's, not the record's."""
    return getattr(label, "quotes_card", False) and label.shown == scene.record.source.describe()


NUMBER = re.compile(r"\u2212?\d+\.\d+")


def quotes_record_numbers(scene, label) -> bool:
    """Whether every decimal ``label`` writes is one the scene quoted from the record
    (:meth:`blockviz.scenes.shown.Shown.quote`; :func:`check_scene` checks their values)."""
    quoted = {shown for shown, _ in getattr(scene, "quoted", [])}
    return all(found in quoted for found in NUMBER.findall(getattr(label, "shown", "")))


def is_number_label(label) -> bool:
    """Whether ``label`` was made by :func:`blockviz.scenes.text.number` (it knows its decimals)."""
    return getattr(label, "decimals", None) is not None


def boundary_points(mobject) -> np.ndarray:
    """``(n, 3)``: the points Manim's ``get_points_defining_boundary`` gives (each curve's start
    and end anchor, of every member of the family), taken as two slices of each member's points
    instead of point by point (Manim's walk was a sixth of a scene's checks in motion)."""
    family = mobject.get_family() if mobject.submobjects else [mobject]
    if not all(isinstance(member, VMobject) for member in family):
        return mobject.get_points_defining_boundary()
    parts = []
    for member in family:
        points, per_curve = member.points, member.n_points_per_cubic_curve
        if len(points) == 1:
            parts.append(points)
            continue
        starts, ends = points[::per_curve], points[per_curve - 1 :: per_curve]
        if len(starts) != len(ends):
            return mobject.get_points_defining_boundary()  # a curve cut short: Manim's own says so
        parts.extend((starts, ends))
    return np.concatenate(parts) if parts else np.zeros((0, 3))


def box(mobject) -> np.ndarray:
    """``(4,)``: left, bottom, right, top of ``mobject`` as Manim's ``get_left()[0]``,
    ``get_bottom()[1]``, ``get_right()[0]``, ``get_top()[1]`` give them (the extremes of its
    boundary points, :func:`boundary_points`; zeros without points), its boundary walked once
    instead of four times."""
    points = boundary_points(mobject)
    if len(points) == 0:
        return np.zeros(4)
    low, high = points.min(axis=0), points.max(axis=0)
    return np.array([low[0], low[1], high[0], high[1]])


def centre(corners: np.ndarray) -> tuple[float, float]:
    """``x, y`` of the middle of a :func:`box`, as Manim's ``get_center()`` gives it."""
    left, bottom, right, top = corners
    return (right + left) / 2, (top + bottom) / 2


def boxes_of(texts: list[Text]) -> np.ndarray:
    """``(len(texts), 4)``: left, bottom, right, top of each text's drawn points."""
    boxes = np.zeros((len(texts), 4))
    for row, label in enumerate(texts):
        points = np.concatenate([member.points for member in label.get_family() if len(member.points)])
        boxes[row] = points[:, 0].min(), points[:, 1].min(), points[:, 0].max(), points[:, 1].max()
    return boxes


def overlapping_pairs(texts: list[Text], tolerance: float = 0.01) -> list[tuple[str, str]]:
    boxes = boxes_of(texts)
    x_overlap = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0])
    y_overlap = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1])
    clash = np.triu((x_overlap > tolerance) & (y_overlap > tolerance), k=1)
    return [(texts[i].shown, texts[j].shown) for i, j in zip(*np.nonzero(clash))]


def outside_frame(texts: list[Text]) -> list[str]:
    half_width, half_height = config.frame_width / 2, config.frame_height / 2
    boxes = boxes_of(texts)
    outside = (
        (boxes[:, 0] < -half_width)
        | (boxes[:, 2] > half_width)
        | (boxes[:, 1] < -half_height)
        | (boxes[:, 3] > half_height)
    )
    return [texts[i].shown for i in np.nonzero(outside)[0]]


DECIMAL = re.compile(r"\d\.\d")


def highlight_crossings(scene, texts: list[Text], tolerance: float = 0.02, members=None) -> list[str]:
    """Texts a highlight's edge runs through: a box may hold a text or leave it outside, never cut it.
    ``members``: the scene's ``get_mobject_family_members()`` if the caller has them already."""
    from blockviz.scenes.grids import Highlight

    members = scene.get_mobject_family_members() if members is None else members
    lights = [m for m in members if isinstance(m, Highlight) and m.get_stroke_opacity() > 0.01]
    if not lights or not texts:
        return []
    boxes = boxes_of(texts)
    found = []
    for light in lights:
        left, bottom, right, top = box(light)
        for label, (x0, y0, x1, y1) in zip(texts, boxes):
            overlaps = (
                x0 < right - tolerance and left + tolerance < x1 and y0 < top - tolerance and bottom + tolerance < y1
            )
            inside = (
                left - tolerance <= x0
                and x1 <= right + tolerance
                and bottom - tolerance <= y0
                and y1 <= top + tolerance
            )
            if overlaps and not inside:
                found.append(label.shown)
    return found


def low_contrast(scene, texts: list[Text], members=None) -> list[str]:
    """Texts drawn in a colour under 4.5:1 against what is behind their centre: the last opaque
    shape drawn before them there (a cell, a chip), else the page. ``members``: the scene's
    ``get_mobject_family_members()`` if the caller has them already."""
    from blockviz.scenes.look import MIN_CONTRAST, contrast

    members = scene.get_mobject_family_members() if members is None else members
    order = {id(member): k for k, member in enumerate(members)}
    shapes = [
        (k, m)
        for k, m in enumerate(members)
        if type(m).__name__ in ("Rectangle", "RoundedRectangle", "Square")
        and len(m.points)
        and m.get_fill_opacity() > 0.5
        and not getattr(m, "ghost", False)
    ]
    drawn_at = np.array([k for k, _ in shapes], dtype=int)
    left, bottom, right, top = np.array([box(m) for _, m in shapes]).reshape(-1, 4).T
    page = (
        scene.camera.background_color.to_hex()
        if hasattr(scene.camera.background_color, "to_hex")
        else str(scene.camera.background_color)
    )
    found = []
    for label in texts:
        if label.get_fill_opacity() < 0.99:
            continue
        x, y = centre(box(label))
        k = order.get(id(label), len(order))
        behind = np.nonzero((drawn_at < k) & (left < x) & (x < right) & (bottom < y) & (y < top))[0]
        backdrop = shapes[behind[-1]][1].get_fill_color().to_hex() if len(behind) else page  # the last drawn
        ratio = contrast(label.get_fill_color().to_hex(), backdrop)
        if ratio < MIN_CONTRAST - 0.05:
            found.append(f"{label.shown!r} {ratio:.2f}:1 on {backdrop}")
    return found


def plus_minus(texts: list[Text]) -> list[str]:
    """Negative numbers written right after a "+" of their size ("+ −0.02"): a written sum says
    "− 0.02". (A "+" taller than the number is an operator between two grids.)"""
    pluses = [t for t in texts if t.shown == "+"]
    opening = [t for t in texts if t.shown == "("]  # "+ (−0.65) × 0.98": a negative factor of a product term

    def bracketed(plus, number) -> bool:
        return any(plus.get_right()[0] <= bracket.get_x() <= number.get_left()[0] for bracket in opening)

    return [
        f"+ {t.shown}"
        for t in texts
        if t.shown.startswith("\u2212")
        and any(
            0 < t.get_left()[0] - plus.get_right()[0] < 0.4
            and abs(t.get_y() - plus.get_y()) < 0.5 * plus.height
            and plus.height < t.height
            and not bracketed(plus, t)
            for plus in pluses
        )
    ]


def under_caption(scene, tolerance: float = 0.01) -> list[str]:
    """What is drawn (texts, cells, rules; not ghosts) where a line of the caption is: a caption
    has the bottom of the frame to itself, on two lines too."""
    caption = scene.caption
    if caption is None or not getattr(scene, "burned_captions", True):
        return []
    lines = [boxes_of([line])[0] for line in caption.get_family() if isinstance(line, Text) and drawn_text(line)]
    if not lines:
        return []
    own = {id(member) for member in caption.get_family()}
    found = []
    for mobject in scene.mobjects:
        for member in mobject.get_family():
            if id(member) in own or getattr(member, "ghost", False) or not drawn(member) or member.submobjects:
                continue
            left, bottom, right, top = box(member)
            for x0, y0, x1, y1 in lines:
                if (
                    left < x1 - tolerance
                    and x0 + tolerance < right
                    and bottom < y1 - tolerance
                    and y0 + tolerance < top
                ):
                    found.append(getattr(member, "shown", None) or owner_name(mobject, member))
                    break
    return list(dict.fromkeys(found))


def drawn_text(label) -> bool:
    """Whether text ``label`` is drawn now (not faded out)."""
    return label.get_fill_opacity() > 0.01 and len(label.get_family()) > 1


def owner_name(mobject, member) -> str:
    """A name for shape ``member`` of ``mobject`` in a problem: its type, and the texts it is drawn with."""
    texts = [t.shown for t in mobject.get_family() if hasattr(t, "shown")][:2]
    return f"a {type(member).__name__} of {type(mobject).__name__} {texts}"


class Inspector:
    """Called after every play: notes overlapping or off-frame text, highlight edges through
    text, text under 4.5:1 against what is behind it, a "+" before a negative number, decimals
    drawn as plain text (a number computed on screen), and keeps every number label shown (``numbers``)."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.numbers: dict[int, Text] = {}
        self.bar_numbers: dict[int, Text] = {}
        self.plays = 0
        self.smallest: tuple[float, str] = (float("inf"), "")
        self.shares: list[float] = []

    def __call__(self, scene) -> None:
        self.plays += 1
        texts = visible_texts(scene)
        self.shares.append(content_share(scene))
        for label in texts:
            pixels = text_pixels(label)
            if pixels < self.smallest[0]:
                self.smallest = (pixels, label.shown)
        for pair in overlapping_pairs(texts):
            self.problems.append(f"play {self.plays}: labels overlap {pair}")
        for shown in under_caption(scene):
            self.problems.append(f"play {self.plays}: the caption is drawn over {shown!r}")
        for shown in outside_frame(texts):
            self.problems.append(f"play {self.plays}: label {shown!r} leaves the frame")
        members = scene.get_mobject_family_members()
        for shown in highlight_crossings(scene, texts, members=members):
            self.problems.append(f"play {self.plays}: a highlight's edge crosses {shown!r}")
        for shown in low_contrast(scene, texts, members):
            self.problems.append(f"play {self.plays}: {shown} (under 4.5:1)")
        for shown in plus_minus(texts):
            self.problems.append(f"play {self.plays}: {shown!r} written where a sum says “− 0.02”")
        for label in texts:
            if getattr(label, "colour_bar", False):  # a colour bar's end: the record's scale, not a value of a field
                self.bar_numbers[id(label)] = label
            elif is_number_label(label):
                self.numbers[id(label)] = label
            elif (
                DECIMAL.search(getattr(label, "shown", ""))
                and not quotes_the_model_card(scene, label)
                and not quotes_record_numbers(scene, label)
            ):
                self.problems.append(
                    f"play {self.plays}: {label.shown!r} shows a decimal that is not a record's number"
                )


def small_texts(inspector) -> str | None:
    """The smallest text seen, if it is under :data:`MIN_PIXELS` at 854 × 480."""
    pixels, shown = inspector.smallest
    return f"{shown!r} is {pixels:.1f} px tall at 854 × 480" if pixels < MIN_PIXELS - 0.05 else None


def check_scene(scene, inspector, rec, framed: bool = True) -> None:
    """The rules every scene keeps after every play (docs/writing-a-scene.md), on a build of it
    (:func:`build`): at least 3 plays; no text overlapping another, leaving the frame, cut by a
    highlight's edge, under 4.5:1 against what is behind it, or showing a decimal that is not a
    record's number (:class:`Inspector`); every number the record's value at its source; every
    shown sum adding up within one unit of its total's last digit; no text under 11 px at
    854 × 480; and, if ``framed``, every shot filling :data:`FRAME_SHARE` of the frame."""
    from blockviz.style import format_number

    assert inspector.plays >= 3
    assert inspector.problems == []
    for label in inspector.numbers.values():
        expected = format_number(record_value(rec, label.source), label.decimals)
        assert label.shown == expected, f"{label.source}: shows {label.shown}, the record has {expected}"
    for shown, source in getattr(scene, "quoted", []):
        assert shown == format_number(record_value(rec, source), 2), f"{source}: a caption says {shown}"
    for parts, total in scene.sums:
        assert sum_misses(parts, total) <= 1 + 1e-6, " + ".join(part.shown for part in parts) + f" = {total.shown}"
    assert small_texts(inspector) is None, small_texts(inspector)
    if framed:
        assert min(inspector.shares) >= FRAME_SHARE, [round(share, 2) for share in inspector.shares]


DRY = {"dry_run": True, "verbosity": "WARNING", "progress_bar": "none"}
"""Manim's settings of a build that writes nothing."""


def build(scene_class, rec, listeners=(), **options):
    """Run the scene's ``construct`` with animations skipped and no file written; returns the
    scene and its :class:`Inspector` (called after every play, after ``listeners``). Built at the
    configured frame size (1920 × 1080 in tests, laid out as at -ql: Pango wraps lines only on
    canvases far narrower than 854 pixels)."""
    inspector = Inspector()
    return build_watched(scene_class, rec, *listeners, inspector, **options), inspector


def build_watched(scene_class, rec, *listeners, **options):
    """:func:`build` with each of ``listeners`` (``listener(scene)``) called after every play, in
    order, instead of an :class:`Inspector`; returns the scene."""
    with tempconfig(DRY):
        scene = scene_class(record=rec, skip_animations=True, **options)
        scene.play_listeners.extend(listeners)
        scene.render()
    return scene


def watching(scene_class):
    """A base for a test's subclass of ``scene_class`` that watches its build (samples its plays,
    counts them): it plans its colour scales as the scene it watches does — the dry build of the
    nearest class in its ancestry that has its own ``construct`` — so the watching is not run in
    that planning build (whose plays the build repeats, never drawn), and the plan
    :mod:`blockviz.scenes.kept_plans` keeps for that scene, record and options serves the watched
    build too (a class defined in a test is never kept: each would build dry again)."""
    drawn = next(cls for cls in scene_class.__mro__ if "construct" in vars(cls))

    class Watching(scene_class):
        def _planned_scales(self):
            with tempconfig(DRY):
                return drawn(record=self.record, skip_animations=True, **self.options)._planned_scales()

    return Watching


@functools.cache
def built(scene_name: str, record_name: str, theme: str = "dark"):
    """``(scene, inspector)`` of catalogued scene ``scene_name`` on record ``record_name`` of
    :data:`RECORDS`, in ``theme`` ("dark", the videos' default, or "light"), built once per session."""
    from blockviz.scenes.catalog import lookup

    (entry,) = lookup([scene_name])
    return build(entry.scene_class(), named_record(record_name), theme=theme)


def frame_hashes(scene_class, rec) -> list[tuple[str, int]]:
    """Every frame the scene hands its video writer, as (md5 of its pixels, times repeated),
    rendered at 160 × 90 and 6 fps: what was drawn. Not the mp4's decoded frames: x264 on
    threads does not repeat bit for bit, so two encodings of the same frames may differ."""
    seen = []
    with writing_frames(lambda pixels, repeat: seen.append((hashlib.md5(pixels.tobytes()).hexdigest(), repeat))):
        scene_class(record=rec, token="it").render()
    return seen


@contextlib.contextmanager
def writing_frames(on_frame, pixel_width: int = 160, pixel_height: int = 90, frame_rate: int = 6):
    """Inside, Manim renders an mp4 into a throwaway folder at that size and rate, quietly, and
    every frame its video writer is handed goes first to ``on_frame(pixels, repeat)``."""
    write_frame = SceneFileWriter.write_frame

    def recording(writer, pixels, *, repeat=1):
        on_frame(pixels, repeat)
        return write_frame(writer, pixels, repeat=repeat)

    settings = {"pixel_width": pixel_width, "pixel_height": pixel_height, "frame_rate": frame_rate}
    with tempfile.TemporaryDirectory() as media, mock.patch.object(SceneFileWriter, "write_frame", recording):
        with tempconfig(
            {
                **settings,
                "disable_caching": True,
                "progress_bar": "none",
                "verbosity": "ERROR",
                "media_dir": media,
                "write_to_movie": True,
                "format": "mp4",
            }
        ):
            yield


def play_by_play(scene_class, rec, watch, **options):
    """Build the scene (see :func:`build`) calling ``watch(scene)`` after every play; returns the
    scene and the list of what ``watch`` returned. The scene is of ``scene_class`` itself, so a
    plan of its colour scales kept from another build serves it (:mod:`blockviz.scenes.kept_plans`)."""
    seen = []
    scene, inspector = build(scene_class, rec, listeners=[lambda scene: seen.append(watch(scene))], **options)
    assert inspector.problems == []
    return scene, seen


BAD_FILES = {
    "missing": ("missing.safetensors", "no file at"),
    "truncated safetensors": ("truncated.safetensors", "is not a valid .safetensors file"),
    "truncated header": ("header.safetensors", "is not a valid .safetensors file"),
    "invalid header": ("garbage.safetensors", "is not a valid .safetensors file"),
    "invalid JSON": ("invalid.json", "is not valid JSON"),
    "JSON nested 100,000 deep": ("deep.json", "is nested too deeply"),
    "JSON that is not an object": ("list.json", "must hold a JSON object"),
    "a 200 MB JSON file": ("huge.json", "is 200 MB, more than the 64 MB a .json file may hold"),
    "a 200 MB safetensors file of zeros": ("huge.safetensors", "is not a valid .safetensors file"),
}
"""The corpus of files that are no record or parameters at all (issue 13), run through every
command that reads files: kind → (file name, words its one-line error holds). :func:`write_bad_files` makes them."""


def write_bad_files(folder, rec) -> dict:
    """Write :data:`BAD_FILES` into ``folder`` (the truncated ones cut from ``rec`` saved as
    .safetensors); returns kind → (path, words its one-line error holds)."""
    from pathlib import Path

    folder = Path(folder)
    rec.save(folder / "good.safetensors")
    data = (folder / "good.safetensors").read_bytes()
    files = {kind: (folder / name, message) for kind, (name, message) in BAD_FILES.items()}
    contents = {
        "truncated safetensors": data[: len(data) // 2],
        "truncated header": data[:12],
        "invalid header": b"\x10\x00\x00\x00\x00\x00\x00\x00{not JSON at all",
        "invalid JSON": b'{"tensors": {',
        "JSON nested 100,000 deep": b'{"tensors": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        "JSON that is not an object": b"[1, 2, 3]",
    }
    for kind, content in contents.items():
        files[kind][0].write_bytes(content)
    for kind in ("a 200 MB JSON file", "a 200 MB safetensors file of zeros"):
        with open(files[kind][0], "wb") as handle:
            handle.truncate(200 * 2**20)  # sparse: refused by its size, before it is read
    return files


def captions_held_to_read(scene) -> list[str]:
    """The captions of a built scene that are not up as long as they take to read before the
    next one (or the scene's end) replaces them: each is in by ``CAPTION_IN`` of its play, then
    stays :func:`~blockviz.scenes.captions.reading_time` at least (its words at four a second)."""
    from blockviz.scenes.captions import SHORTEST_HOLD, reading_time

    times = [time for time, _ in scene.captions] + [scene.renderer.time]
    return [
        f"{shown!r}: {later - earlier:.2f} s"
        for (earlier, shown), later in zip(scene.captions, times[1:])
        if later - earlier < max(reading_time(shown), SHORTEST_HOLD) - 1e-6
    ]
