"""The lecture's title card: its title, the sentence cut into tokens, and the block's sizes.

Runs on its own on the default sentence (or the record saved at ``$BLOCKVIZ_RECORD``)::

    manim -ql scenes/title_card.py TitleCard

Every size shown is read from the record's config; the tokens are the record's tokens.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from manim import DOWN, RIGHT, UP, LaggedStart, RoundedRectangle, Text, VGroup, config

from blockviz.scenes.base import RecordScene
from blockviz.scenes.fades import FadeIn
from blockviz.scenes.layout import fit_width, frame_text_width, wrapped
from blockviz.scenes.look import FRAME_MARGIN, Look
from blockviz.scenes.text import text
from blockviz.scenes.token_axis import token_face
from blockviz.tokens import display_token

if TYPE_CHECKING:
    from blockviz.block_record import BlockRecord

NAME = "title"
TOKEN_AXIS = True
ORDER = 0
LECTURE_ONLY = True
DESCRIPTION = "the lecture's title card: the sentence, its tokens and the block's sizes"
CHAPTER = "Introduction"
CAPTION = "One sentence is cut into tokens and sent through one transformer block; these are the block's sizes."

TITLE = "Inside one transformer block"

TITLE_FONT_SIZE = 44
SENTENCE_FONT_SIZE = 26
TOKEN_FONT_SIZE = 24
NOTE_FONT_SIZE = 20
SIZE_NAME_FONT_SIZE = 20
SIZE_VALUE_FONT_SIZE = 30

SENTENCE_LINE_CHARACTERS = 64
"""A sentence longer than this wraps onto more lines."""
SENTENCE_MAX_LINES = 2
TOKEN_BAND = 3.0
LONG_TOKEN_BAND = 3.8
"""Height for the tokens when the sentence is too long to be shown above them as well."""
TOKEN_GAP = 0.14
TOKEN_ROW_GAP = 0.18
TOKEN_PADDING = 0.14
BAND_GAP = 0.4
TOKEN_FILL = 0.65
"""The share of the card's width a sentence's tokens fill when they fit on one line at a larger size
(three tokens at the default size were 1.9 % of the frame: issue 36)."""


SIZE_WORDS = {
    "d_model": "width",
    "n_heads": "heads",
    "d_head": "head width",
    "d_ff": "FFN width",
    "activation": "activation",
    "attention": "attention",
}
"""The words the card writes under each of the config's sizes (its code name → what a viewer reads)."""


class TokenChips(VGroup):
    """The sentence's tokens as labelled boxes in rows, wrapped to fit ``width`` × ``height``.

    ``labels[i]`` is the ``Text`` of token ``i`` (in ``.shown``, as drawn by
    :func:`blockviz.tokens.display_token`), ``boxes[i]`` its box.
    Labels sit on one baseline, so "." stays low and "'" high. The group is scaled to the largest
    size, at most ``max_scale`` (or the size at which one line fills :data:`TOKEN_FILL` of
    ``width``, if larger), at which the wrapped rows fit.
    """

    def __init__(self, tokens: list[str], look: Look, width: float, height: float, max_scale: float = 1.5) -> None:
        super().__init__()
        self.labels = [on_baseline(token_face(token), TOKEN_FONT_SIZE, look.text) for token in tokens]
        ascent = max(label.get_top()[1] - baseline_of(label) for label in self.labels)
        descent = max(label.baseline_offset for label in self.labels)
        box_height = ascent + descent + TOKEN_PADDING
        self.boxes = []
        for label in self.labels:
            box = RoundedRectangle(
                corner_radius=0.06,
                width=label.width + 2 * TOKEN_PADDING,
                height=box_height,
                stroke_color=look.grid,
                stroke_width=1.5,
                fill_color=look.grid,
                fill_opacity=0.35,
            )
            label.move_to(box)
            label.shift(UP * (box.get_bottom()[1] + TOKEN_PADDING / 2 + descent - baseline_of(label)))
            self.boxes.append(box)
        self.chips = [VGroup(box, label) for box, label in zip(self.boxes, self.labels)]
        widths = [chip.width for chip in self.chips]
        one_line = sum(widths) + TOKEN_GAP * (len(widths) - 1)
        max_scale = max(max_scale, TOKEN_FILL * width / one_line)  # a short sentence's chips fill their band too
        scale = _fitting_scale(widths, box_height, width, height, max_scale)
        rows = _wrap(widths, width / scale)
        lines = VGroup(*(VGroup(*self.chips[start:stop]).arrange(buff=TOKEN_GAP) for start, stop in rows))
        self.add(*lines.arrange(DOWN, buff=TOKEN_ROW_GAP))
        self.scale(scale)


def on_baseline(shown: str, font_size: float, color: str) -> Text:
    """``shown`` as a ``Text`` (see :func:`blockviz.scenes.text.text`) that knows where its baseline is:
    ``baseline_offset`` is the baseline's height above the Text's bottom (its descent).

    Found by typing an "x", which sits on the baseline, before the string and removing it again.
    A string with no visible glyph is shown as its code points (``U+200B``).
    """
    label = text("x" + shown, font_size, color)
    if len(label.submobjects) < 2:
        label = text("x" + " ".join(f"U+{ord(character):04X}" for character in shown), font_size, color)
    marker = label.submobjects[0]
    baseline = marker.get_bottom()[1]
    label.remove(marker)
    label.built_size = (font_size, label.height)  # its size now, whatever glyphs remain: see text.font_size_of
    label.shown = shown
    label.baseline_offset = baseline - label.get_bottom()[1]
    return label


def baseline_of(label: Text) -> float:
    """The height of the baseline of a Text made by :func:`on_baseline`, where it stands now."""
    return label.get_bottom()[1] + label.baseline_offset


def _wrap(widths: list[float], width: float) -> list[tuple[int, int]]:
    """Greedy rows ``(start, stop)`` of items of ``widths`` separated by ``TOKEN_GAP``."""
    rows, start, used = [], 0, 0.0
    for index, item in enumerate(widths):
        needed = item if index == start else used + TOKEN_GAP + item
        if index > start and needed > width:
            rows.append((start, index))
            start, used = index, item
        else:
            used = needed
    rows.append((start, len(widths)))
    return rows


def _fitting_scale(widths: list[float], row_height: float, width: float, height: float, max_scale: float) -> float:
    """The largest scale ≤ ``max_scale`` at which the items, wrapped into rows, fit ``width`` × ``height``."""
    scale = min(max_scale, width / max(widths))
    while scale > 0.05:
        rows = len(_wrap(widths, width / scale))
        if scale * (rows * row_height + (rows - 1) * TOKEN_ROW_GAP) <= height:
            return scale
        scale *= 0.97
    return scale


class TitleCardLayout(VGroup):
    """Everything on the title card, placed: ``title``; ``sentence`` (its lines, none if it is too
    long to show above its tokens); ``tokens`` (:class:`TokenChips`); ``grid_note`` (the
    n × d_model grid it becomes); ``sizes`` and ``size_names`` (name → ``Text`` for d_model,
    n_heads, d_head, d_ff, activation, attention); ``mask_note`` (what the mask allows);
    ``weights_note`` (that the weights are seeded random numbers, not a trained model's);
    ``head_note`` (``head_line``: why ``--head auto`` chose the head shown; empty without one)."""

    def __init__(self, record: BlockRecord, look: Look, title: str = TITLE, head_line: str | None = None) -> None:
        super().__init__()
        width = frame_text_width()
        cfg = record.config
        self.title = fit_width(text(title, TITLE_FONT_SIZE, look.text, bold=True), width)
        self.sentence = _sentence_lines(record.sentence, look, width)
        self.tokens = TokenChips(record.tokens, look, width, TOKEN_BAND if len(self.sentence) else LONG_TOKEN_BAND)
        token_word = "token" if record.n == 1 else "tokens"
        self.grid_note = fit_width(
            text(
                f"{record.n} {token_word} → a grid of {record.n} × {cfg.d_model} numbers: one row of {cfg.d_model} numbers (the width) per token",
                NOTE_FONT_SIZE,
                look.muted,
            ),
            width,
        )
        attention = "causal" if cfg.causal else "bidirectional"
        shown_sizes = {
            "d_model": str(cfg.d_model),
            "n_heads": str(cfg.n_heads),
            "d_head": str(cfg.d_head),
            "d_ff": str(cfg.d_ff),
            "activation": cfg.activation_name,
            "attention": attention,
        }
        self.sizes = {name: on_baseline(shown, SIZE_VALUE_FONT_SIZE, look.text) for name, shown in shown_sizes.items()}
        self.size_names = {name: on_baseline(SIZE_WORDS[name], SIZE_NAME_FONT_SIZE, look.muted) for name in shown_sizes}
        self.size_cards = fit_width(_size_cards(list(self.sizes.values()), list(self.size_names.values())), width)
        self.mask_note = fit_width(text(_mask_sentence(cfg.causal), NOTE_FONT_SIZE, look.muted), width)
        self.weights_note = fit_width(_weights_lines(cfg.seed, look, record.source), width)
        self.head_note = wrapped(head_line, NOTE_FONT_SIZE, look.text, 0.8 * width) if head_line else VGroup()
        self.head_lines = (
            [] if not head_line else [self.head_note] if isinstance(self.head_note, Text) else list(self.head_note)
        )
        sentence = [self.sentence] if len(self.sentence) else []
        self.add(self.title, *sentence, self.tokens, self.grid_note, self.size_cards, self.mask_note, self.weights_note)
        if head_line:
            self.add(self.head_note)
        self.arrange(DOWN, buff=BAND_GAP)
        self.title.shift(UP * 0.15)
        self.size_cards.shift(DOWN * 0.1)
        self.mask_note.shift(DOWN * 0.1)
        self.weights_note.next_to(self.mask_note, DOWN, buff=0.25)
        if head_line:
            self.head_note.next_to(self.weights_note, DOWN, buff=0.25)
        self.move_to(0)
        if self.height > config.frame_height - 2 * FRAME_MARGIN:
            self.scale_to_fit_height(config.frame_height - 2 * FRAME_MARGIN)

    def labels(self) -> list[Text]:
        """Every ``Text`` on the card, for reading back and overlap checks."""
        return [
            self.title,
            *self.sentence,
            *self.tokens.labels,
            self.grid_note,
            *self.sizes.values(),
            *self.size_names.values(),
            self.mask_note,
            *self.weights_note,
            *self.head_lines,
        ]


def _size_cards(values: list[Text], names: list[Text], gap: float = 0.6) -> VGroup:
    """Each value over its name; values on one baseline, names on another, cards side by side."""
    value_descent = max(value.baseline_offset for value in values)
    name_ascent = max(name.get_top()[1] - baseline_of(name) for name in names)
    name_baseline = -(value_descent + 0.16 + name_ascent)
    cards, left = VGroup(), 0.0
    for value, name in zip(values, names):
        card_width = max(value.width, name.width)
        for label, baseline in ((value, 0.0), (name, name_baseline)):
            label.shift(RIGHT * (left + card_width / 2 - label.get_center()[0]) + UP * (baseline - baseline_of(label)))
        cards.add(VGroup(value, name))
        left += card_width + gap
    return cards


def _sentence_lines(sentence: str, look: Look, width: float) -> VGroup:
    """The sentence in quotes on at most two lines; empty if it needs more (the tokens below
    show it whole)."""
    lines = textwrap.wrap(f"\u201c{display_token(sentence)}\u201d", SENTENCE_LINE_CHARACTERS)
    if len(lines) > SENTENCE_MAX_LINES:
        return VGroup()
    return fit_width(
        VGroup(*(text(line, SENTENCE_FONT_SIZE, look.text) for line in lines)).arrange(DOWN, buff=0.12), width
    )


def _mask_sentence(causal: bool) -> str:
    if causal:
        return "causal mask: a token uses itself and earlier tokens, never later ones (a decoder)"
    return "no mask: every token uses every token, earlier and later (an encoder)"


def weights_sentence(seed: int, source=None) -> tuple[str, str]:
    """What the weights are, in two lines, from ``source`` (the record's
    :class:`~blockviz.source.Source`): a trained model's layer says whose weights; weights from
    a file or given in Python say so; blockviz's trained toy model says so and what it is (its
    card's line, "trained: one block, N parameters, on M generated sentences, loss X"); the
    seeded block (or no source) says they are random.

    >>> from blockviz.source import Source
    >>> weights_sentence(0, Source("trained", model="toy", note="trained: one block, 1,234 parameters"))
    ("trained weights: blockviz's toy model", 'trained: one block, 1,234 parameters')
    """
    if source is not None and source.kind == "trained":
        return "trained weights: blockviz's toy model", source.describe()
    if source is not None and source.is_model:
        last = f" of 0–{source.n_layers - 1}" if source.n_layers else ""
        note = (
            re.sub(r" \([^)]*\)", "", source.note)
            if source.note
            else "the patterns show what this trained layer attends to"
        )
        return f"trained weights: {source.model} ({source.family}), layer {source.layer}{last}", note
    if source is not None and source.kind in ("file", "given"):
        whence = f"from {Path(source.path).name}" if source.kind == "file" and source.path else "given, not seeded"
        return f"the weights are {whence}:", "the patterns show what these weights do with this sentence"
    return (
        f"the weights are random (seed {seed}), not trained:",
        "the patterns show the arithmetic of attention, not what words mean",
    )


def _weights_lines(seed: int, look: Look, source=None) -> VGroup:
    """:func:`weights_sentence` as two centred lines; ``.shown`` is the whole sentence."""
    first, second = weights_sentence(seed, source)
    card_line = text(second, NOTE_FONT_SIZE, look.muted)
    if source is not None and source.kind == "trained":
        card_line.quotes_card = True  # the model card's line: its numbers are training's, not the record's
    lines = VGroup(text(first, NOTE_FONT_SIZE, look.text), card_line).arrange(DOWN, buff=0.1)
    lines.shown = f"{first} {second}"
    return lines


class TitleCard(RecordScene):
    """The lecture's opening card (~5 s): title, sentence and tokens, the block's sizes.

    The record shown is, first found: the ``record`` argument (as ``blockviz render`` passes
    it), the class attribute ``record`` (a :class:`~blockviz.block_record.BlockRecord`, for a
    two-line subclass), else :class:`~blockviz.scenes.base.RecordScene`'s default (``$BLOCKVIZ_RECORD``
    or ``blockviz.record("the cat sat")``). ``token``, ``head`` and ``to`` are used only to say
    why ``head="auto"`` chose the head the lecture shows (:meth:`~blockviz.scenes.shown.Shown.head_sentence`).
    Pacing in seconds: ``intro_time``, ``tokens_time``, ``sizes_time``, ``hold_time``.
    """

    record: BlockRecord | None = None  # replaces RecordScene's property: see shown_record()
    title = TITLE
    intro_time = 0.8
    tokens_time = 1.2
    sizes_time = 0.8
    hold_time = 2.2

    def __init__(
        self, record: BlockRecord | None = None, token: str | None = None, head: int = 0, theme: str = "dark", **kwargs
    ) -> None:
        super().__init__(record=record, token=token, head=head, theme=theme, **kwargs)
        if record is not None:
            self.record = record

    def setup(self) -> None:
        self.record = self.shown_record()  # before the colour scales are planned for it
        super().setup()

    def construct(self) -> None:
        card = self.layout()
        self.reveal_title(card)
        self.reveal_tokens(card)
        self.reveal_sizes(card)
        self.rest(self.hold_time)

    def shown_record(self) -> BlockRecord:
        """The record this card shows (see the class docstring)."""
        return self.record if self.record is not None else RecordScene.record.fget(self)

    def layout(self) -> TitleCardLayout:
        """The card for this scene's record, placed but not yet shown."""
        self.record = self.shown_record()
        return TitleCardLayout(self.record, self.look, self.title, self.head_sentence())

    def reveal_title(self, card: TitleCardLayout) -> None:
        self.play(FadeIn(card.title, shift=DOWN * 0.2), FadeIn(card.sentence), run_time=self.intro_time)

    def reveal_tokens(self, card: TitleCardLayout) -> None:
        chips = [FadeIn(chip, shift=UP * 0.1) for chip in card.tokens.chips]
        self.play(LaggedStart(*chips, lag_ratio=min(0.3, 3.0 / len(chips))), run_time=self.tokens_time)

    def reveal_sizes(self, card: TitleCardLayout) -> None:
        self.play(
            FadeIn(card.grid_note),
            FadeIn(card.size_cards),
            FadeIn(card.mask_note),
            FadeIn(card.weights_note),
            FadeIn(card.head_note),
            run_time=self.sizes_time,
        )


__all__ = ["TitleCard", "TitleCardLayout", "TokenChips", "TITLE", "weights_sentence"]
