"""Scene — the logit lens: the focus row's next-word prediction after each block of a stack,
each block's output through the model's final LayerNorm and unembedding (nostalgebraist 2020).
Only a toy model's stack (``--model copy``) holds each block's prediction whole."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, VGroup

from blockviz.prediction import OTHERS, prediction_of
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import sum_decimals
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, NUMBER_SIZE
from blockviz.scenes.stack_story import CopyModelRecord, block_name, in_block
from blockviz.scenes.text import number, text
from blockviz.scenes.token_axis import token_face

NAME = "logit-lens"
TOKEN_AXIS = True
ORDER = 166
DESCRIPTION = "the logit lens: the focus row's next-word prediction after each block"
CHAPTER = "The prediction after each block"
CAPTION = (
    "Each block's output row can go through the final {norm} and the unembedding: the next word's "
    "probabilities after each block, the last block's being the model's own prediction."
)
NEEDS = "lens-scene"

SURE = 0.5
"""A probability from which the captions call a block's top word its prediction; below it "unsure"."""
DIM = 0.15
ROW_HEIGHT = CELL_HEIGHT * 1.6


class LogitLens(CopyModelRecord, RecordScene):
    """For the focus row f, block k's ``probs[f]`` ``(n_vocab,)`` of each view of a record of
    several blocks with an unembedding (:func:`blockviz.prediction.prediction_of`): the
    :data:`~blockviz.prediction.TOP_WORDS` most probable words by name and the others as one term
    (1 less the shown: softmax makes a row add up to 1), one row per block, each written "= 1"
    ("≈ 1" where its rounded terms miss it)."""

    def construct(self) -> None:
        rec, f = self.record, self.focus
        word = self.token_name(f)
        self.guesses = [prediction_of(view, f) for view in rec.blocks]
        title = self.show_title(f"After each block: which word comes after “{word}”?")
        rows = self.build(title)
        self.add(ghost_of(*rows, opacity=DIM))
        last = len(rec.blocks) - 1
        for k, row in enumerate(rows):
            self.step(Reveal(row), caption=self.block_caption(k, last))
        self.step(*(FadeIn(light) for light in self.top_lights()), caption=self.change_caption(last))

    def top_lights(self) -> list[Highlight]:
        """A highlight over each block's most probable word (its name and its cell): the words
        the closing caption compares."""
        return [Highlight(self.look, VGroup(grid.column_headers[0], grid.cells[0, 0])) for grid in self.grids]

    def build(self, title) -> list[VGroup]:
        """One row per block: its name, the five words' probabilities and the others', "= 1"; placed (not shown)."""
        look, f = self.look, self.focus
        self.decimals = sum_decimals([([*guess.probabilities, guess.others], 1.0) for guess in self.guesses])
        vocabulary = list(self.record.source.vocabulary)
        width = column_width(len(self.guesses[0].words) + 1, width=10.0, most=1.5)
        rows = []
        self.grids = []
        for k, guess in enumerate(self.guesses):
            sources = [in_block(k, "probs", f, vocabulary.index(w)) for w in guess.words]
            others = ("remainder", ("constant", 1.0), *sources)
            grid = NumberGrid(
                [[*guess.probabilities, guess.others]],
                None,
                [token_face(w) for w in guess.words] + [OTHERS],
                look,
                colors="weights",
                source=lambda _, j, sources=sources, others=others: sources[j] if j < len(sources) else others,
                cell_width=width,
                cell_height=ROW_HEIGHT,
                decimals=self.decimals,
            )
            name = text(f"after {block_name(self.record, k)}", HEADER_SIZE, look.text)
            grid.header_group.add(name.next_to(grid.cell_group, LEFT, buff=0.2))  # never cut, as a header would be
            total = number(1.0, NUMBER_SIZE, look.text, self.decimals, source=("constant", 1.0))
            sign = text(guess.sign(self.decimals), NUMBER_SIZE, look.text)
            labels = [grid.labels[0, j] for j in grid.shown_columns()]
            self.shown_sum(labels, total)
            written = VGroup(sign, total).arrange(RIGHT, buff=0.14).next_to(grid.cell_group, RIGHT, buff=0.2)
            rows.append(VGroup(grid, written))
            self.grids.append(grid)
        VGroup(*rows).arrange(DOWN, buff=1.2)
        left = self.grids[0].cell_group.get_left()[0]
        for row, grid in zip(rows, self.grids):
            row.shift(RIGHT * (left - grid.cell_group.get_left()[0]))
        layout = VGroup(*rows)
        layout.align_to(layout, LEFT)
        self.place(layout, title, bottom_space=1.3, grow=2.4)
        return rows

    def said(self, k: int) -> tuple[str, str]:
        """Block k's top word and its probability, as the captions write them (the number noted)."""
        guess, f = self.guesses[k], self.focus
        top = guess.words[0]
        index = list(self.record.source.vocabulary).index(top)
        return top, self.quote(float(guess.probabilities[0]), in_block(k, "probs", f, index), self.decimals)

    def block_caption(self, k: int, last: int) -> str:
        top, probability = self.said(k)
        whose = "the model's own prediction" if k == last else f"block {k}'s output through the final LayerNorm"
        if self.guesses[k].probabilities[0] >= SURE:
            return f"after block {k} ({whose}): “{top}”, {probability}"
        return f"after block {k} ({whose}): unsure, its most probable word “{top}” has only {probability}"

    def change_caption(self, last: int) -> str:
        first, final = self.guesses[0].words[0], self.guesses[last].words[0]
        if first == final:
            return f"every block's most probable next word is “{final}”"
        return f"the most probable next word changes from “{first}” after block 0 to “{final}” after block {last}"
