"""Scene 8 — causal vs bidirectional: the same sentence's masks and weights with and without M."""

from __future__ import annotations

import itertools
import math

from manim import DOWN, RIGHT, UP, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import CAPTION_SIZE
from blockviz.scenes.text import text

DESCRIPTION = "decoder vs encoder: masks and weights with and without the causal mask"
CHAPTER = "Causal vs bidirectional"
CAPTION = "The same sentence with and without the causal mask: a decoder's token reads only earlier tokens, an encoder's may use later ones too."


class CausalVsBidirectional(RecordScene):
    """Masks and weights ``(n, n)`` of head h for a decoder (causal mask) beside an encoder
    (no mask): an encoder's token may use later context too. Both records come from
    :meth:`~blockviz.block_record.BlockRecord.counterpart` (same sentence, same parameters).

    The row compared is one where the two differ: the focus token's, or the first token's when
    the focus is the last token (which sees every token either way); the caption says which."""

    def construct(self) -> None:
        title = self.show_title(f"Decoder vs encoder attention (head {self.h})")
        decoder, encoder = self.record.counterpart(causal=True), self.record.counterpart(causal=False)
        grids = self.build(title, decoder, encoder)
        self.add(grids)
        self.step(caption="left, a decoder's causal mask; right, an encoder's: no mask at all")
        self.step(*self.to_weights(grids[0], decoder), *self.to_weights(grids[1], encoder), caption="the weights each mask lets softmax give", run_time=1.4)
        i = self.compared_row()
        lights = [Highlight(self.look, grid.row(i)) for grid in grids]  # one per grid: no box crosses the gap's labels
        self.step(*(FadeIn(light) for light in lights), caption=self.compared_caption(i))
        self.step(*(FadeOut(light) for light in lights), caption="every decoder row stops at the diagonal; an encoder row spans the sentence")

    def compared_row(self) -> int:
        """The row whose decoder and encoder weights differ: the focus, unless it is the last
        token (its causal mask blocks nothing), then the first token."""
        return self.focus if self.focus < self.record.n - 1 else 0

    def compared_caption(self, i: int) -> str:
        n, token = self.record.n, self.token_name(i)
        if n == 1:
            return f"“{token}” is the only token: with or without the mask it sees only itself"
        later = n - 1 - i
        why = f"“{self.token_name(self.focus)}” is the last token and sees every token either way, so row “{token}”: " if i != self.focus else f"“{token}”: "
        earlier = "only itself" if i == 0 else f"itself and {i} earlier token{'s' if i > 1 else ''}"
        return f"{why}a decoder uses {earlier}; an encoder also uses the {later} later one{'s' if later > 1 else ''}"

    def token_slots(self, limit=None):
        """The token positions drawn (``None`` = ⋯): the compared row, its strongest keys with the
        causal mask and without it (in turn, the strongest first, as room allows), the focus's
        strongest keys and the first token; then the focus's neighbours."""
        from blockviz.scenes.grids import visible_slots
        from blockviz.scenes.look import MAX_SLOTS

        i = self.compared_row()
        tops = [self.top_keys_of(i, record=rec) for rec in (self.record.counterpart(causal=True), self.record.counterpart(causal=False))]
        kept = [key for pair in itertools.zip_longest(*tops) for key in pair if key is not None]  # the decoder's first, the encoder's first, …
        return visible_slots(self.record.n, self.focus, limit or MAX_SLOTS, keep=[i, *kept, *self.top_keys_of(self.focus)])

    def build(self, title, decoder, encoder) -> VGroup:
        look = self.look
        slots = self.token_slots()
        grids = []
        for rec, name, row_names in ((decoder, "decoder: causal mask", self.token_names), (encoder, "encoder: no mask", None)):
            weights = rec.weights[self.h]
            blocked = rec.mask == -math.inf
            grid = NumberGrid(rec.mask, row_names, self.token_names, look, colors="none", decimals=0, source=(variant(rec), "mask"),
                              row_slots=slots, column_slots=slots, blocked=blocked, cell_height=row_height(len(slots), height=4.8, most=1.0),
                              cell_width=max(column_width(len(slots), width=5.0), _widest(weights)))
            grid.header_group.add(text(name, CAPTION_SIZE - 2, look.text).next_to(grid.body(), DOWN, buff=0.15))
            grids.append(grid)
        layout = VGroup(*grids).arrange(RIGHT, buff=0.6, aligned_edge=UP)
        self.place(layout, title, grow=1.6)
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


def _widest(weights) -> float:
    from blockviz.scenes.grids import cell_width_for

    return cell_width_for(weights)


def variant(rec) -> str:
    """``"decoder"`` for a causal record, ``"encoder"`` for a bidirectional one: the first word of
    a label's source (:func:`blockviz.scenes.text.number`)."""
    return "decoder" if rec.config.causal else "encoder"
