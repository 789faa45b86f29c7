"""Scene — the induction head: in the last block, the query of a word seen before meets the key of
the word that followed its first occurrence, because the block before wrote the previous word into
that row; its dot product split by where the key's row came from (the record's
``scores_from_heads`` and ``scores_from_embed``, :mod:`blockviz.key_sources`), and the word
predicted next. Only a toy model's stack (``--model copy``) records the split."""

from __future__ import annotations

import math

from manim import DOWN, RIGHT, UP, VGroup

from blockviz.prediction import prediction_of
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, remainder, sum_decimals
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import HEADER_SIZE, NOTE_SIZE, WORK_SIZE
from blockviz.scenes.stack_story import CopyModelRecord, in_block, induction_head, previous_token_head, repeat_of
from blockviz.scenes.text import number, text
from blockviz.scenes.token_axis import visible_slots

NAME = "induction"
TOKEN_AXIS = True
ORDER = 164
DESCRIPTION = "the induction head: a repeated word's query meets the key of the word after its first occurrence"
CHAPTER = "Block 1 finds what came next last time"
CAPTION = (
    "In the last block, a repeated word's query meets the key of the word that followed it the first "
    "time: that row carries the repeated word, written there by the block before, and the model predicts "
    "what came next."
)
NEEDS = "key-sources"

MOSTLY = 0.5
"""A weight from which the captions say a head looks "mostly" at a key; below it they say "only"."""
DIM = 0.15


class Induction(CopyModelRecord, RecordScene):
    """The last block L's head h (:func:`~blockviz.scenes.stack_story.induction_head`) of a record
    of several blocks, at query q, a token seen before, and key k, the token after its first
    occurrence (:func:`~blockviz.scenes.stack_story.repeat_of`; the focus when it is such a token):
    ``weights[h, q]`` ``(n,)``; block L − 1's weight from k on k − 1 in its previous-token head;
    ``scores[h, q, k]`` written as the sum of ``scores_from_heads[h, g, q, k]`` (each head g of
    block L − 1), ``scores_from_embed[h, q, k]`` and the rest (the score less those: b_O, the FFN,
    LayerNorm's β, the key bias); and ``probs[q]``'s most probable word."""

    def construct(self) -> None:
        rec = self.record
        self.last = len(rec.blocks) - 1
        found = repeat_of(rec.tokens, self.focus)
        if found is None:
            self.no_repeat()
            return
        q, k = found
        h = induction_head(rec, q, k)
        self.q, self.k, self.h_shown = q, k, h
        word, after = self.token_name(q), self.token_name(k)
        title = self.show_title(f"Block {self.last}, head {h}: the second “{word}” looks for what came after it")
        row, split, guess = self.build(title)
        self.add(ghost_of(row, split, guess, opacity=DIM))
        weight = rec.weights[h, q, k].item()
        said = self.quote(weight, in_block(self.last, "weights", h, q, k))
        how = "" if weight > MOSTLY else "only "
        self.step(Reveal(row), caption=f"from the second “{word}”, {how}{said} of the weight goes to “{after}”")
        light = Highlight(self.look, row.cells[0, k])
        self.step(FadeIn(light), caption=self.carried_caption())
        self.step(
            Reveal(split), caption=f"the score of “{word}” with “{after}”, split by where “{after}”'s row came from"
        )
        self.step(light.over(self.largest_part()), caption=self.largest_caption())
        self.step(FadeOut(light), Reveal(guess), caption=self.predicted_caption())

    def no_repeat(self) -> None:
        """A sentence without a repeated word: the last block's head 0's weights, and why there is nothing to copy."""
        rec, slots = self.record, self.token_slots()
        title = self.show_title("Induction needs a word said twice")
        grid = NumberGrid(
            rec.weights[0],
            self.token_names,
            self.token_names,
            self.look,
            colors="weights",
            source=in_block(self.last, "weights", 0),
            blocked=rec.mask == -math.inf,
            row_slots=slots,
            column_slots=slots,
            cell_width=column_width(len(slots), width=9.0, most=2.6),
            cell_height=row_height(len(slots) + 1, height=4.6, most=1.0),
        )
        self.place(grid, title, bottom_space=1.3, grow=2.0)
        self.step(Reveal(grid), caption=f"block {self.last}, head 0: every word's weights")
        self.step(caption="no word of this sentence comes back: there is no earlier occurrence to look after")
        self.step(caption="say a phrase twice and the second time, a head here can find what came next")

    def weights_row(self, q: int, k: int, h: int) -> NumberGrid:
        """Head h's weights from query q on every key, ``(1, n)``, k among the keys drawn."""
        rec = self.record
        slots = visible_slots(rec.n, q, keep=[k, max(k - 1, 0)])
        return NumberGrid(
            rec.weights[h, q][None, :],
            [f"“{self.token_name(q)}”"],
            self.token_names,
            self.look,
            colors="weights",
            source=lambda _, j: in_block(self.last, "weights", h, q, j),
            blocked=(rec.mask[q] == -math.inf)[None, :],
            column_slots=slots,
            row_header_color=self.look.text,
            cell_width=column_width(len(slots), width=9.0, most=1.2),
        )

    def build(self, title) -> tuple[NumberGrid, VGroup, VGroup]:
        """The weights row, the score's split and the prediction, one under another, placed (not shown)."""
        q, k, h = self.q, self.k, self.h_shown
        row = self.weights_row(q, k, h)
        split = self.split_line()
        guess = self.guess_line()
        layout = VGroup(row, split, guess).arrange(DOWN, buff=0.8)
        self.place(layout, title, bottom_space=1.3, grow=1.8)
        return row, split, guess

    def split_line(self) -> VGroup:
        """``score = part from each head of the block before + from the embeddings + the rest``,
        each term over its name: every term the record's (the rest: the score less the others)."""
        rec, look, q, k, h, last = self.record, self.look, self.q, self.k, self.h_shown, self.last
        before = last - 1
        total_source = in_block(last, "scores", h, q, k)
        shown = [
            (rec.scores_from_heads[h, g, q, k].item(), in_block(last, "scores_from_heads", h, g, q, k))
            for g in range(rec.config.n_heads)
        ]
        shown.append((rec.scores_from_embed[h, q, k].item(), in_block(last, "scores_from_embed", h, q, k)))
        names = [f"block {before}, head {g}" for g in range(rec.config.n_heads)] + ["embeddings", "the rest"]
        total = rec.scores[h, q, k].item()
        rest = total - sum(value for value, _ in shown)
        decimals = sum_decimals([([value for value, _ in shown] + [rest], total)])
        terms = [number(value, WORK_SIZE, look.text, decimals, source=source) for value, source in shown]
        terms.append(remainder(total, total_source, shown, WORK_SIZE, look.muted, decimals))
        written = number(total, WORK_SIZE, look.text, decimals, source=total_source)
        self.shown_sum(terms, written)
        self.split_terms = list(zip(names, terms))
        columns = [
            VGroup(term, text(name, NOTE_SIZE, look.muted)).arrange(DOWN, buff=0.1) for name, term in self.split_terms
        ]
        self.split_columns = columns
        pair = f"“{self.token_name(q)}” · “{self.token_name(k)}”"
        pieces = [VGroup(written, text(pair, NOTE_SIZE, look.muted)).arrange(DOWN, buff=0.1)]
        pieces.append(text("=" if exact(terms, written) else "≈", WORK_SIZE, look.text))
        for index, column in enumerate(columns):
            if index:
                pieces.append(text("+", WORK_SIZE, look.muted))
            pieces.append(column)
        line = VGroup(*pieces).arrange(RIGHT, buff=0.2)
        for piece in pieces:
            if len(piece.submobjects) == 2 and piece.submobjects[0] in [*terms, written]:
                piece.shift(UP * (line.get_top()[1] - piece.get_top()[1]))
        for sign in pieces:
            if sign not in columns and sign is not pieces[0]:
                sign.set_y(written.get_y())
        return line

    def guess_line(self) -> VGroup:
        """The most probable next word after query q and its probability."""
        rec, q, look = self.record, self.q, self.look
        self.guess = prediction_of(rec, q, top=1)
        top = self.guess.words[0]
        index = list(rec.source.vocabulary).index(top)
        probability = number(
            float(self.guess.probabilities[0]), WORK_SIZE, look.text, source=in_block(self.last, "probs", q, index)
        )
        self.top_word = top
        return VGroup(
            text(f"predicted after the second “{self.token_name(q)}”: “{top}”", HEADER_SIZE, look.text), probability
        ).arrange(RIGHT, buff=0.2)

    def carried_caption(self) -> str:
        """What the block before wrote into key k's row: its previous-token head's weight on k − 1."""
        before = self.last - 1
        view = self.record.block(before)
        g = previous_token_head(view)
        k = self.k
        weight = self.quote(view.weights[g, k, k - 1].item(), in_block(before, "weights", g, k, k - 1))
        return (
            f"why “{self.token_name(k)}”: in block {before}, head {g} put {weight} of its weight "
            f"on the word before it, “{self.token_name(k - 1)}”"
        )

    def largest_part(self) -> VGroup:
        """The largest shown part of the score, its number over its name: the one
        :meth:`largest_caption` names."""
        terms = [term.value for _, term in self.split_terms]
        return self.split_columns[terms.index(max(terms))]

    def largest_caption(self) -> str:
        """Which shown part of the score is the largest."""
        name, term = max(self.split_terms, key=lambda pair: pair[1].value)
        said = self.quote(term.value, term.source, term.decimals)
        if name == "the rest":
            return f"the largest part, {said}, is the rest: neither a head of the block before nor the embeddings"
        return f"the largest part, {said}, comes from {name}"

    def predicted_caption(self) -> str:
        k_word = self.token_name(self.k)
        top = self.top_word
        if top.lower() == self.record.tokens[self.k].lower():
            return f"and the model predicts “{top}” next: the word that came after it the first time"
        return f"the model predicts “{top}” next, not “{k_word}”, the word that came after it the first time"
