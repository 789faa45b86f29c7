"""Scene 8 — causal vs bidirectional: the same sentence's masks and weights with and without M."""

from __future__ import annotations

import math

from manim import DOWN, RIGHT, UP, FadeIn, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.look import CAPTION_SIZE
from blockviz.scenes.text import text

DESCRIPTION = "decoder vs encoder: masks and weights with and without the causal mask"
CHAPTER = "Causal vs bidirectional"
CAPTION = "The same sentence with and without the causal mask: a decoder's token reads only earlier tokens, an encoder's may use later ones too."


class CausalVsBidirectional(RecordScene):
    """Masks and weights ``(n, n)`` of head h for a decoder (causal mask) beside an encoder
    (no mask): an encoder's token may use later context too. Both records come from
    :meth:`~blockviz.block_record.BlockRecord.counterpart` (same sentence, same parameters)."""

    step_time = 1.2
    pause = 2.0

    def construct(self) -> None:
        title = self.show_title(f"Decoder vs encoder attention (head {self.h})")
        decoder, encoder = self.record.counterpart(causal=True), self.record.counterpart(causal=False)
        grids = self.build(title, decoder, encoder)
        self.add(grids)
        self.play(*self.say("left, a decoder's causal mask; right, an encoder's: no mask at all"), run_time=self.step_time)
        self.rest(1.2)
        changes = self.to_weights(grids[0], decoder) + self.to_weights(grids[1], encoder)
        self.play(*changes, *self.say("the weights each mask lets softmax give"), run_time=1.2)
        self.rest()
        token = self.token_name(self.focus)
        highlight = Highlight(self.look, VGroup(grids[0].row(self.focus), grids[1].row(self.focus)))
        self.play(FadeIn(highlight), *self.say("row by row: the decoder's weights stop at the diagonal"), run_time=self.step_time)
        self.sweep(highlight, [VGroup(grids[0].row(i), grids[1].row(i)) for i in grids[0].shown_rows()])
        self.play(highlight.over(VGroup(grids[0].row(self.focus), grids[1].row(self.focus))),
                  *self.say(f"“{token}”: a decoder uses only itself and earlier tokens; an encoder may use later context"), run_time=self.step_time)
        self.rest()

    def build(self, title, decoder, encoder) -> VGroup:
        look, h = self.look, self.h
        grids = []
        for rec, name, row_names in ((decoder, "decoder: causal mask", self.token_names), (encoder, "encoder: no mask", None)):
            grid = NumberGrid(rec.mask, row_names, self.token_names, look, colors="none", decimals=0, source=(variant(rec), "mask"),
                              row_focus=self.focus, column_focus=self.focus)
            grid.header_group.add(text(name, CAPTION_SIZE - 2, look.text).next_to(grid.cell_group, DOWN, buff=0.15))
            grids.append(grid)
        layout = VGroup(*grids).arrange(RIGHT, buff=0.6, aligned_edge=UP)
        self.place(layout, title)
        return layout

    def to_weights(self, grid: NumberGrid, rec) -> list:
        h = self.h
        fills, labels = {}, {}
        for i, j in grid.labels:
            value = rec.weights[h, i, j].item()
            blocked = rec.mask[i, j].item() == -math.inf
            fills[i, j] = self.look.blocked if blocked else grid.colors_for_weight(value)
            labels[i, j] = grid.number_at(i, j, value=value, decimals=0 if blocked else 2, fill=fills[i, j], source=(variant(rec), "weights", h, i, j))
        return self.recolour(grid, fills) + self.replace_labels(grid, labels)


def variant(rec) -> str:
    """``"decoder"`` for a causal record, ``"encoder"`` for a bidirectional one: the first word of
    a label's source (:func:`blockviz.scenes.text.number`)."""
    return "decoder" if rec.config.causal else "encoder"
