"""Scene — the prediction: after the block, a language model's last step for the focus token's
row: the final LayerNorm, the logits (one per vocabulary word) and their softmax, the next
word's probabilities. Only a block with an unembedding (the trained toy model) has it."""

from __future__ import annotations

import os

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, Mobject, Rectangle, Text, VGroup

from blockviz.errors import BlockvizError
from blockviz.prediction import OTHERS, others_phrase, prediction_of
from blockviz.record_fields import axis_labels
from blockviz.record_needs import unembedding_missing
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import sum_decimals
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, is_quoted
from blockviz.scenes.layout import fit_width, frame_text_width
from blockviz.scenes.light_timing import caption_in, caption_out
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, CELL_WIDTH, FRAME_MARGIN, HEADER_SIZE, NUMBER_SIZE
from blockviz.scenes.shown import DEFAULT_SENTENCE, RECORD_ENVIRONMENT_VARIABLE
from blockviz.scenes.text import font_size_of, number, text
from blockviz.scenes.token_axis import token_face
from blockviz.style import format_number

NAME = "prediction"
ORDER = 140
DESCRIPTION = "the prediction: the output row → final LayerNorm → logits → softmax → the next word's probabilities"
CHAPTER = "The prediction"
CAPTION = (
    "A language model's last step: the block's output row goes through a final {norm} and the "
    "unembedding, one logit per word of the vocabulary, and softmax turns the logits into the next "
    "word's probabilities."
)
NEEDS = "unembedding"

CAPTION_WORDS = 3
"""Predicted words the last caption names with their probabilities (the grid shows five): at
most these, the most probable always, the others only where their probability reads above 0."""
DIM = 0.15
"""Opacity of the stand-in of what is still to come (the whole path is in view from the start)."""
ROW_HEIGHT = CELL_HEIGHT * 1.25
BAR_LENGTH = 1.2
"""The length of a probability's bar at probability 1 (scene units, before the picture is fitted)."""


class Prediction(RecordScene):
    """The focus row ``f`` from the block's output to the next word, read from the record:
    ``resid_post[f]`` ``(d_model,)``, the final LayerNorm ``ln_f[f]`` (its ``ln_f_mean`` and
    ``ln_f_var`` said on the way), ``logits[f] = ln_f[f] · W_U`` ``(n_vocab,)`` and
    ``probs[f] = softmax(logits[f])``. The :data:`~blockviz.prediction.TOP_WORDS` most probable
    words are drawn by name (:func:`blockviz.prediction.prediction_of`), the others as one
    "+ others" term, so the drawn row adds up to 1 ("≈" where the rounded terms miss it).

    Built without a record (plain ``manim``), it records :data:`DEFAULT_SENTENCE` with the trained
    toy model, the seeded block having no unembedding. Raises
    :class:`~blockviz.errors.BlockvizError` for a record without an unembedding."""

    @property
    def record(self):
        if self._record is None and not _saved_record_named():
            from blockviz.recording import record

            self._record = record(DEFAULT_SENTENCE)  # the trained toy model
        return super().record

    def construct(self) -> None:
        missing = unembedding_missing(self.record)
        if missing is not None:
            raise BlockvizError(f"scene {NAME!r} cannot be drawn: {missing}")
        rec, f = self.record, self.focus
        token = self.token_name(f)
        self.guess = prediction_of(rec, f)
        title = self.show_title(f"The prediction: which word comes after “{token}”?")
        parts = self.build(title)
        self.add(ghost_of(*parts.values(), opacity=DIM))  # the whole path in view from the start, dim
        d, n_vocab = rec.config.d_model, rec.logits.shape[-1]
        self.step(Reveal(parts["output"]), caption=f"the block's output for “{token}”: its row of {d} numbers")
        self.step(
            Reveal(parts["norm"]),
            caption="a final LayerNorm, with its own γ and β, normalises the row",
        )
        self.step(
            Reveal(parts["logits"]),
            caption=f"the unembedding turns it into {n_vocab} logits, one per word: the {len(self.guess.words)} largest",
        )
        self.step(
            Reveal(parts["probs"]),
            caption=f"softmax makes them probabilities that add up to 1, drawn as bars: {others_phrase(self.guess, self.record.source.vocabulary)} as one term",
        )
        light = Highlight(self.look, self.probs.cells[0, 0])
        self.step(FadeIn(light), caption=self.predicted_caption(token))
        self.step(  # from the most probable word's probability to the words the sentence may go on with
            light.over(VGroup(*self.logits.row_headers.values())),
            caption="the sentence goes on with one of these words, and the block runs again, one word longer",
        )

    # -- layout -----------------------------------------------------------------------------------
    def build(self, title) -> dict[str, VGroup]:
        """The path, one part under the other with the step between each two named, placed in the
        frame (not shown): ``output`` (plain numbers), ``norm`` (the LayerNorm step and ``ln_f``),
        ``logits`` (the W_U step, the words one under another and their logits, the one grid on a
        colour scale) and ``probs`` (softmax, each word's probability as a number and a horizontal
        bar of that length, "+ others" and their sum), as Transformer Explainer draws them."""
        rec, look, f, guess = self.record, self.look, self.focus, self.guess
        d, n_vocab = rec.config.d_model, rec.logits.shape[-1]
        vocabulary = rec.source.vocabulary or axis_labels("n_vocab", rec.tokens, n_vocab)
        order = [vocabulary.index(word) for word in guess.words]
        self.decimals = sum_decimals([([*guess.probabilities, guess.others], guess.total)])

        def column(field: str, name: str, values, rows=None) -> NumberGrid:
            return NumberGrid(
                values[:, None],
                rows,
                [name],
                look,
                colors="none",
                source=lambda i, _: (field, f, i),
                row_header_color=look.text,
                cell_width=max(CELL_WIDTH, text(name, HEADER_SIZE).width + 0.1),
            )

        output = column("resid_post", "output", rec.resid_post[f], axis_labels("d_model", rec.tokens, d))
        normed = column("ln_f", "LN(y)", rec.ln_f[f])  # γ and β applied: the LayerNorm's output, not only normalised
        mean = number(rec.ln_f_mean[f].item(), HEADER_SIZE, look.muted, source=("ln_f_mean", f))
        variance = number(rec.ln_f_var[f].item(), HEADER_SIZE, look.muted, source=("ln_f_var", f))
        norm_step = self.step_label(
            [["final LayerNorm"], ["mean", mean], ["variance", variance], [self.affine_words()]]
        )
        unembed_step = self.step_label([["× the unembedding"], [f"{d} × {n_vocab}: a logit"], ["per word; softmax"]])
        table = self.ranked_words(order)
        VGroup(output, norm_step, normed, unembed_step, table).arrange(RIGHT, buff=0.3)
        for part in (normed, table):
            part.shift(
                UP * (output.cell_group.get_top()[1] - self.logits.cell_group.get_top()[1] if part is table else 0)
            )
            if part is normed:
                part.shift(UP * (output.cell_group.get_top()[1] - normed.cell_group.get_top()[1]))
        for step in (norm_step, unembed_step):
            step.set_y(output.cell_group.get_y())
        parts = {
            "output": output,
            "norm": VGroup(norm_step, normed),
            "logits": VGroup(unembed_step, self.logits),
            "probs": VGroup(*(part for part in table if part is not self.logits)),
        }
        self.place(VGroup(*parts.values()), title, bottom_space=1.35, grow=1.6)
        return parts

    def affine_words(self) -> str:
        """The final norm's last step in words: × γ, and + β where the record's norm has a shift."""
        return "then × γ, + β" if "ln_f.bias" in self.record.params else "then × γ"

    def ranked_words(self, order: list[int]) -> VGroup:
        """The most probable words one under another (``order``: their vocabulary indices, most
        probable first): each word, its logit (coloured on the logits' scale), its probability and
        a bar whose length is that probability (:data:`BAR_LENGTH` for 1); then "+ others" (the
        record's other words as one term) and the sum "= 1.00" under the probabilities. Sets
        :attr:`logits` and :attr:`probs`."""
        look, f, guess = self.look, self.focus, self.guess
        words = [token_face(word) for word in guess.words]
        logits = NumberGrid(
            self.record.logits[f][order][:, None],
            words,
            ["logit"],
            look,
            source=lambda i, _: ("logits", f, order[i]),
            row_header_color=look.text,
            row_slots=list(range(len(order))),
            cell_height=ROW_HEIGHT,
        )
        probs = self.probability_column(order)
        heading = text("probability", HEADER_SIZE, look.text)
        probs.next_to(logits.cell_group, RIGHT, buff=0.25).align_to(logits.cell_group, UP)
        probs.shift(UP * (logits.cell_group.get_top()[1] - probs.cell_group.get_top()[1]))
        others_name = text(OTHERS, HEADER_SIZE, look.muted)
        others_name.next_to(logits.cell_group, DOWN, buff=0).set_y(probs.cells[len(order), 0].get_y())
        others_name.align_to(VGroup(*logits.row_headers.values()), RIGHT)
        dots = text("\u22ef", NUMBER_SIZE, look.muted).move_to([logits.cell_group.get_x(), others_name.get_y(), 0])
        heading.next_to(probs.cell_group, UP, buff=0).align_to(probs.cell_group, LEFT)
        heading.set_y(logits.column_headers[0].get_y())
        bars = VGroup()
        for k, value in enumerate([*guess.probabilities, guess.others]):
            cell = probs.cells[k, 0]
            bar = Rectangle(width=max(float(value), 1e-3) * BAR_LENGTH, height=ROW_HEIGHT * 0.6, stroke_width=0)
            bar.set_fill(look.query, opacity=1).next_to(cell, RIGHT, buff=0.15)
            bars.add(bar)
        total = number(1.0, NUMBER_SIZE, look.text, self.decimals, source=("constant", 1.0))
        sign = text(guess.sign(self.decimals), NUMBER_SIZE, look.text)
        written = VGroup(sign, total).arrange(RIGHT, buff=0.14)
        written.next_to(probs.cell_group, DOWN, buff=0.12).align_to(probs.cell_group, RIGHT)
        self.sign = sign
        self.shown_sum([probs.labels[k, 0] for k in range(len(order) + 1)], total)
        self.logits, self.probs = logits, probs
        return VGroup(logits, others_name, dots, heading, probs, bars, written)

    def probability_column(self, order: list[int]) -> NumberGrid:
        """The focus row's probabilities of the drawn words, one under another, and "+ others": the
        record's other words' probabilities as one term (its source: 1 less the drawn ones, as
        softmax makes a row sum to 1), at the decimals at which the drawn terms add up to 1 within a unit."""
        guess, f = self.guess, self.focus
        sources = [("probs", f, index) for index in order]
        values = [*guess.probabilities, guess.others]
        others = ("remainder", ("constant", 1.0), *sources)
        return NumberGrid(
            [[value] for value in values],
            None,
            None,
            self.look,
            colors="none",
            source=lambda i, _: sources[i] if i < len(sources) else others,
            row_slots=list(range(len(values))),
            cell_height=ROW_HEIGHT,
            decimals=self.decimals,
        )

    def step_label(self, lines: list[list]) -> VGroup:
        """An arrow to the right over ``lines`` (each a list of strings and number labels, one
        line of words): the step from the part on the left to the part on the right."""
        look = self.look
        written = VGroup(
            *(
                words_line(
                    [text(piece, HEADER_SIZE, look.muted) if isinstance(piece, str) else piece for piece in line],
                    HEADER_SIZE,
                )
                for line in lines
            )
        ).arrange(DOWN, buff=0.1)
        arrow = Arrow(
            LEFT * 0.4, RIGHT * 0.4, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.3
        )
        return VGroup(arrow, written).arrange(DOWN, buff=0.12)

    # -- the last caption, with the record's numbers ----------------------------------------------
    def predicted_caption(self, token: str) -> str:
        """The caption naming the most probable next words with their probabilities, as the grid
        shows them: each number drawn as the record's (a number label), not as plain text."""
        guess, f, look = self.guess, self.focus, self.look
        vocabulary = list(self.record.source.vocabulary)
        phrases = [text(f"after “{token}”, the block predicts", CAPTION_SIZE, look.text)]
        spoken = phrases[0].shown
        zero = format_number(0.0, self.decimals)
        reads = [format_number(float(value), self.decimals) for value in [*guess.probabilities, guess.others]]
        count = min(CAPTION_WORDS, max(1, sum(1 for shown in reads[: len(guess.words)] if shown != zero)))
        more = any(shown != zero for shown in reads[count:])  # "…" only for words left unnamed that read above 0
        for k, (word, value) in enumerate(zip(guess.words[:count], guess.probabilities)):
            label = number(
                float(value), CAPTION_SIZE, look.text, self.decimals, source=("probs", f, vocabulary.index(word))
            )
            said = [text(quoted(word), CAPTION_SIZE, look.text), label]
            spoken += f" {quoted(word)} {label.shown}"
            if k < count - 1 or more:
                said.append(text(",", CAPTION_SIZE, look.text))
                spoken += ","
            phrases.append(words_line(said, CAPTION_SIZE))
        if more:
            phrases.append(text("\u2026", CAPTION_SIZE, look.text))
            spoken += " \u2026"
        self.numbered_captions[spoken] = phrases
        return spoken

    @property
    def numbered_captions(self) -> dict:
        if not hasattr(self, "_numbered_captions"):
            self._numbered_captions = {}
        return self._numbered_captions

    def say(self, shown: str) -> list:
        """As :meth:`RecordScene.say`; a caption made by :meth:`predicted_caption` is drawn from
        its phrases, so its numbers are the record's labels."""
        phrases = self.numbered_captions.get(shown)
        if phrases is None or not self.burned_captions:
            return super().say(shown)
        new = lines_of(phrases, CAPTION_SIZE, frame_text_width())
        new.shown = shown
        new.set_x(0).to_edge(DOWN, buff=FRAME_MARGIN)
        old, self.caption = self.caption, new
        self.captions.append((self.renderer.time, shown))
        arrive = FadeIn(new, shift=UP * 0.2, rate_func=caption_in)
        return [arrive] if old is None else [FadeOut(old, shift=UP * 0.2, rate_func=caption_out), arrive]


def quoted(word: str) -> str:
    """A vocabulary word as captions name it: in quotes (punctuation already is: “.”)."""
    face = token_face(word)
    return face if is_quoted(face) else f"\u201c{face}\u201d"


def words_line(pieces: list[Mobject], font_size: float) -> VGroup:
    """``pieces`` (texts, number labels, lines of them) side by side as one line of words at
    ``font_size``: a space between them, none before a comma; on one baseline."""
    space = 1.3 * (text("a a", font_size).width - text("aa", font_size).width)
    line = VGroup(*pieces)
    for previous, piece in zip(pieces, pieces[1:]):
        comma = getattr(piece, "shown", "").startswith(",")
        piece.next_to(previous, RIGHT, buff=0.03 if comma else space)
        piece.shift(UP * (baseline(pieces[0]) - baseline(piece)))
    return line


QUOTATION_MARKS = frozenset("\u201c\u201d\u2018\u2019\"'")
"""Marks drawn high above the baseline: a word's baseline is read from its other glyphs."""


def baseline(piece: Mobject) -> float:
    """The height of ``piece``'s baseline: the median bottom of its glyphs (most sit on it), its
    quotation marks left out (a quoted “on” has as many high marks as letters), or for
    punctuation alone (“,”, “…”), where it sits after an "a"; a line of pieces: its first piece's."""
    if isinstance(piece, Text) and piece.submobjects:
        if any(char.isalnum() for char in piece.shown):
            return float(np.median([glyph.get_bottom()[1] for glyph in letters_of(piece)]))
        beside = text("a" + piece.shown, font_size_of(piece))
        a, mark = beside.submobjects[0], beside.submobjects[1]
        return piece.submobjects[0].get_bottom()[1] - (mark.get_bottom()[1] - a.get_bottom()[1])
    if isinstance(piece, VGroup) and piece.submobjects:
        return baseline(piece.submobjects[0])
    return piece.get_bottom()[1]


def letters_of(piece: Text) -> list[Mobject]:
    """The glyphs of ``piece`` but its quotation marks (:data:`QUOTATION_MARKS`), when each
    character has a glyph of its own; else every glyph (a ligature joins two characters' glyphs)."""
    characters = [char for char in piece.shown if not char.isspace()]
    if len(characters) != len(piece.submobjects):
        return list(piece.submobjects)
    return [glyph for char, glyph in zip(characters, piece.submobjects) if char not in QUOTATION_MARKS]


def lines_of(phrases: list[Mobject], font_size: float, width: float) -> VGroup:
    """``phrases`` on one line if it fits ``width``, else on two of nearly equal width, centred (as
    :func:`~blockviz.scenes.layout.wrapped` lays out a plain caption)."""
    one = words_line(phrases, font_size)
    if one.width <= width:
        return one
    widths = [phrase.width for phrase in phrases]
    split = min(range(1, len(phrases)), key=lambda k: abs(sum(widths[:k]) - sum(widths[k:])))
    first, second = words_line(phrases[:split], font_size), words_line(phrases[split:], font_size)
    return fit_width(VGroup(first, second).arrange(DOWN, buff=0.1), width)  # shrunk only if two lines do not fit


def _saved_record_named() -> bool:
    return bool(os.environ.get(RECORD_ENVIRONMENT_VARIABLE))
