"""Scene — the prediction: after the block, a language model's last step for the focus token's
row: the final LayerNorm, the logits (one per vocabulary word) and their softmax, the next
word's probabilities. Only a block with an unembedding (the trained toy model) has it."""

from __future__ import annotations

import os

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, Mobject, Text, VGroup

from blockviz.errors import BlockvizError
from blockviz.prediction import OTHERS, prediction_of
from blockviz.record_fields import axis_labels
from blockviz.record_needs import unembedding_missing
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import sum_decimals
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for, is_quoted
from blockviz.scenes.layout import column_width, fit_width, frame_text_width
from blockviz.scenes.light_timing import caption_in, caption_out
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, FRAME_MARGIN, HEADER_SIZE, NUMBER_SIZE
from blockviz.scenes.shown import DEFAULT_SENTENCE, RECORD_ENVIRONMENT_VARIABLE
from blockviz.scenes.symbols import parameter_symbol, symbol
from blockviz.scenes.text import font_size_of, number, shortened, text, typeset
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
            caption=f"softmax makes them probabilities that add up to 1: the {self.guess.hidden} other words as one term",
        )
        light = Highlight(self.look, self.probs.cells[0, 0])
        self.step(FadeIn(light), caption=self.predicted_caption(token))
        self.step(
            FadeOut(light),
            caption="the sentence goes on with one of these words, and the block runs again, one word longer",
        )

    # -- layout -----------------------------------------------------------------------------------
    def build(self, title) -> dict[str, VGroup]:
        """The four rows, one under the other with the step between each two named, placed in
        the frame (not shown): ``output``, ``norm`` (the LayerNorm step and ``ln_f``),
        ``logits`` (the W_U step, the words and their logits) and ``probs`` (softmax, the
        probabilities and their sum)."""
        rec, look, f, guess = self.record, self.look, self.focus, self.guess
        d, n_vocab = rec.config.d_model, rec.logits.shape[-1]
        vocabulary = rec.source.vocabulary or axis_labels("n_vocab", rec.tokens, n_vocab)
        order = [vocabulary.index(word) for word in guess.words]
        self.decimals = sum_decimals([([*guess.probabilities, guess.others], guess.total)])
        width = max(
            column_width(min(d, 8), width=8.0, most=1.4),
            text(OTHERS, HEADER_SIZE).width / 0.9,
            cell_width_for(rec.resid_post[f][None, :]),
            cell_width_for(rec.ln_f[f][None, :]),
            cell_width_for(rec.logits[f][order][None, :]),
        )

        def row(field: str, name: str, values, index, columns=None) -> NumberGrid:
            return NumberGrid(
                values[None, :],
                [name],
                columns,
                look,
                source=lambda _, j: (field, f, index(j)),
                row_header_color=look.text,
                cell_width=width,
                cell_height=ROW_HEIGHT,
            )

        features = axis_labels("d_model", rec.tokens, d)
        output = row("resid_post", "output", rec.resid_post[f], int, features)
        normed = row("ln_f", symbol("ln_f", rec), rec.ln_f[f], int)
        logits = row("logits", "logits", rec.logits[f][order], order.__getitem__, [token_face(w) for w in guess.words])
        probs = self.probability_row(order, width)
        self.logits, self.probs = logits, probs

        mean = number(rec.ln_f_mean[f].item(), HEADER_SIZE, look.muted, source=("ln_f_mean", f))
        variance = number(rec.ln_f_var[f].item(), HEADER_SIZE, look.muted, source=("ln_f_var", f))
        norm_step = self.step_label(["final LayerNorm: mean", mean, ", variance", variance, ", then × γ + β"])
        unembed_step = self.step_label(
            [
                typeset(f"$\\times\\, {parameter_symbol('unembed.W_U')[1:]}", HEADER_SIZE, look.muted),
                f"({d} × {n_vocab}): one logit per word, the {len(order)} largest shown",
            ]
        )
        softmax_step = self.step_label([f"softmax over all {n_vocab} logits: the next word's probabilities"])

        # The "+ others" column: its name over the logits' ⋯, its sum under it; then "= 1" (Σ).
        others_x = probs.cells[0, len(order)].get_x()
        others_header = shortened(OTHERS, width * 0.96, HEADER_SIZE, look.muted)
        others_header.move_to([others_x, logits.column_headers[0].get_y(), 0])
        dots = text("\u22ef", NUMBER_SIZE, look.muted).move_to([others_x, logits.cells[0, 0].get_y(), 0])
        total = number(1.0, NUMBER_SIZE, look.text, self.decimals, source=("constant", 1.0))
        sign = text(guess.sign(self.decimals), NUMBER_SIZE, look.text)
        written = VGroup(sign, total).arrange(RIGHT, buff=0.14)
        self.sign = sign
        labels = [probs.labels[0, j] for j in probs.shown_columns()]
        self.shown_sum(labels, total)

        stack = [output, norm_step, normed, unembed_step, VGroup(logits, others_header, dots), softmax_step, probs]
        VGroup(*stack).arrange(DOWN, buff=0.2)
        left = output.cell_group.get_left()[0]
        for part in (normed, logits, probs):
            shift = RIGHT * (left - part.cell_group.get_left()[0])
            part.shift(shift)
            if part is logits:
                others_header.shift(shift)
                dots.shift(shift)
        for label in (norm_step, unembed_step, softmax_step):
            label.align_to(output.cell_group, LEFT).shift(RIGHT * 0.15)
        written.next_to(probs.cell_group, RIGHT, buff=0.2)
        parts = {
            "output": output,
            "norm": VGroup(norm_step, normed),
            "logits": VGroup(unembed_step, logits, others_header, dots),
            "probs": VGroup(softmax_step, probs, written),
        }
        self.place(VGroup(*parts.values()), title, bottom_space=1.35, grow=1.6)
        return parts

    def probability_row(self, order: list[int], width: float) -> NumberGrid:
        """The focus row's probabilities of the drawn words, and "+ others": the record's other
        words' probabilities as one term (its source: 1 less the drawn ones, as softmax makes a
        row sum to 1), at the decimals at which the drawn terms add up to 1 within a unit."""
        guess, f = self.guess, self.focus
        sources = [("probs", f, index) for index in order]
        values = [*guess.probabilities, guess.others]
        others = ("remainder", ("constant", 1.0), *sources)
        return NumberGrid(
            [values],
            ["probability"],
            None,
            self.look,
            colors="weights",
            source=lambda _, j: sources[j] if j < len(sources) else others,
            row_header_color=self.look.text,
            cell_width=width,
            cell_height=ROW_HEIGHT,
            decimals=self.decimals,
        )

    def step_label(self, pieces: list) -> VGroup:
        """A short arrow down, then ``pieces`` (strings and number labels) as one line: the step
        from the row above to the row below."""
        look = self.look
        arrow = Arrow(
            UP * 0.18, DOWN * 0.18, buff=0, color=look.muted, stroke_width=3, max_tip_length_to_length_ratio=0.5
        )
        line = words_line(
            [text(piece, HEADER_SIZE, look.muted) if isinstance(piece, str) else piece for piece in pieces], HEADER_SIZE
        )
        return VGroup(arrow, line).arrange(RIGHT, buff=0.15)

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


def baseline(piece: Mobject) -> float:
    """The height of ``piece``'s baseline: the median bottom of its glyphs (most sit on it), or
    for punctuation alone (“,”, “…”), where it sits after an "a"; a line of pieces: its first piece's."""
    if isinstance(piece, Text) and piece.submobjects:
        if any(char.isalnum() for char in piece.shown):
            return float(np.median([glyph.get_bottom()[1] for glyph in piece.submobjects]))
        beside = text("a" + piece.shown, font_size_of(piece))
        a, mark = beside.submobjects[0], beside.submobjects[1]
        return piece.submobjects[0].get_bottom()[1] - (mark.get_bottom()[1] - a.get_bottom()[1])
    if isinstance(piece, VGroup) and piece.submobjects:
        return baseline(piece.submobjects[0])
    return piece.get_bottom()[1]


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
