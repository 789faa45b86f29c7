"""After softmax — causal vs bidirectional: the same sentence's masks and weights with and without M."""

from __future__ import annotations

import itertools
import math

from manim import DOWN, RIGHT, UP, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import plus_before, remainder, sum_decimals
from blockviz.scenes.choreography import cascade_parts, lagged
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height, smallest_font_size
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE, MAX_SLOTS, MIN_FONT_SIZE, NUMBER_SIZE
from blockviz.scenes.text import text
from blockviz.scenes.token_axis import visible_slots

NAME = "causal-vs-bidirectional"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 85
"""After softmax (80): its weights are taught before a decoder's and an encoder's are compared."""
DESCRIPTION = "one block with and without the causal mask: its masks and weights side by side"
CHAPTER = "Causal vs bidirectional"
CAPTION = "The same sentence through the same weights with and without the causal mask: with it a token reads only itself and earlier tokens; without it, later ones too."

MIN_SLOTS = 5
"""The fewest token slots tried before the grids' text would go under 11 px at 480p."""


class CausalVsBidirectional(RecordScene):
    """Masks and weights ``(n, n)`` of head h for a decoder (causal mask) beside an encoder
    (no mask): an encoder's token may use later context too. Both records come from
    :meth:`~blockviz.block_record.BlockRecord.counterpart` (same sentence, same parameters).

    The row compared is one where the two differ: the focus token's, or the first token's when
    the focus is the last token (which sees every token either way); the caption says which.
    Where keys are left out, each row's hidden keys' weight arrives beside it ("+ 0.62" in an
    "8 more" column), so every row shown adds up to 1."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head
    shows_weights = True  # its slides' notes read out the focus row's largest weights

    def construct(self) -> None:
        title = self.show_title(f"Causal vs bidirectional attention (head {self.h})")  # the chapter's name
        decoder, encoder = self.record.counterpart(causal=True), self.record.counterpart(causal=False)
        self.rows_of_one: list[
            list
        ] = []  # each shown weights row's labels, with its hidden keys' share: they add up to 1
        self.shares: dict[tuple[int, int], VGroup] = {}  # (grid, row): "+ 0.62", the hidden keys' share
        grids = self.build(title, decoder, encoder)
        self.step(
            Reveal(grids),  # cell after cell: the caption alone was a still play (issue 36)
            caption=self.panels_caption(),
            run_time=2 * self.step_time,
        )
        (decoder_rows, decoder_shares), (encoder_rows, encoder_shares) = (
            self.to_weights(grids[0], decoder),
            self.to_weights(grids[1], encoder),
        )
        self.step(
            *lagged(decoder_rows + encoder_rows),  # the left grid's rows, then the right's
            *decoder_shares,
            *encoder_shares,
            caption=self.weights_caption(),
            run_time=1.4,
        )
        i = self.compared_row()
        lights = [
            Highlight(self.look, VGroup(grid.row(i), *self.shares.get((k, i), []))) for k, grid in enumerate(grids)
        ]  # one per grid: no box crosses the gap's labels
        self.step(*(FadeIn(light) for light in lights), caption=self.compared_caption(i))
        self.step(
            *(FadeOut(light) for light in lights),
            caption="with the mask every row stops at the diagonal; without it a row spans the sentence",
        )

    def panel_name(self, causal: bool) -> str:
        """A grid's heading: its mask, and whether the block was trained so or is run so with the
        same weights (the counterpart is no other model: a causal block without its mask is no encoder)."""
        mask = "causal mask" if causal else "no mask"
        return f"{mask} ({'as trained' if causal == self.record.config.causal else 'same weights'})"

    def panels_caption(self) -> str:
        """The first caption: which panel has the mask the block was trained with (a causal
        record's left one, a bidirectional record's right one)."""
        if self.record.config.causal:
            return "left, the causal mask this block was trained with; right, the same weights with no mask"
        return "left, the same weights under a causal mask; right, no mask, as this encoder was trained"

    def weights_caption(self) -> str:
        if not self.hidden_columns:
            return "the weights each mask lets softmax give"
        return "the weights each mask lets softmax give; the hidden keys' share beside each row"

    def compared_row(self) -> int:
        """The row whose decoder and encoder weights differ: the focus, unless it is the last
        token (its causal mask blocks nothing), then the first token."""
        return self.focus if self.focus < self.record.n - 1 else 0

    def compared_caption(self, i: int) -> str:
        n, token = self.record.n, self.token_name(i)
        if n == 1:
            return f"“{token}” is the only token: with or without the mask it sees only itself"
        later = n - 1 - i
        why = (
            f"“{self.token_name(self.focus)}” is the last token and sees every token either way, so row “{token}”: "
            if i != self.focus
            else f"“{token}”: "
        )
        earlier = "only itself" if i == 0 else f"itself and {i} earlier token{'s' if i > 1 else ''}"
        return f"{why}with the mask it uses {earlier}; without it also " + (
            f"the {later} later ones" if later > 1 else "the one after it"
        )

    def token_slots(self, limit: int = MAX_SLOTS):
        """The token positions drawn (``None`` = ⋯): the compared row, its strongest keys with the
        causal mask and without it (in turn, the strongest first, as room allows), the focus's
        strongest keys and the first token; then the focus's neighbours."""
        i = self.compared_row()
        tops = [
            self.top_keys_of(i, record=rec)
            for rec in (self.record.counterpart(causal=True), self.record.counterpart(causal=False))
        ]
        kept = [
            key for pair in itertools.zip_longest(*tops) for key in pair if key is not None
        ]  # the decoder's first, the encoder's first, …
        return visible_slots(
            self.record.n, self.focus, limit, keep=[i, *self.kept_keys()[:1], *kept, *self.kept_keys()]
        )

    def weight_decimals(self, slots) -> int:
        """Decimals of the weights: 2, or more where a shown row and its hidden keys' share
        would otherwise miss 1 by more than one unit of the last digit."""
        shown = [slot for slot in slots if slot is not None]
        if len(shown) == self.record.n:
            return 2
        rows = []
        for rec in (self.record.counterpart(causal=True), self.record.counterpart(causal=False)):
            for i in shown:
                weights = [rec.weights[self.h, i, j].item() for j in shown]
                rows.append((weights + [1.0 - sum(weights)], 1.0))
        return sum_decimals(rows)

    def build(self, title, decoder, encoder) -> VGroup:
        """The two grids, placed: with the most token slots at which every text stays ≥ 11 px at
        480p (the hidden keys' column takes room). :attr:`slots` holds the slots drawn."""
        for limit in range(MAX_SLOTS, MIN_SLOTS - 1, -1):
            self.slots = self.token_slots(limit)
            grids, units = self.build_with(title, decoder, encoder, self.slots)
            if smallest_font_size(units) >= MIN_FONT_SIZE * 1.01:
                break
        return grids

    def build_with(self, title, decoder, encoder, slots) -> tuple[VGroup, VGroup]:
        look = self.look
        self.decimals = self.weight_decimals(slots)
        grids, units = [], []
        self.hidden_columns = []
        for rec, name, row_names in (
            (decoder, self.panel_name(causal=True), self.token_names),
            (encoder, self.panel_name(causal=False), None),
        ):
            weights = rec.weights[self.h]
            blocked = rec.mask == -math.inf
            grid = NumberGrid(
                rec.mask,
                row_names,
                self.token_names,
                look,
                colors="none",
                decimals=0,
                source=(variant(rec), "mask"),
                row_slots=slots,
                column_slots=slots,
                blocked=blocked,
                cell_height=row_height(len(slots), height=4.8, most=1.0),
                cell_width=max(column_width(len(slots), width=5.0), _widest(weights, self.decimals)),
            )
            grid.header_group.add(text(name, CAPTION_SIZE - 2, look.text).next_to(grid.body(), DOWN, buff=0.15))
            grids.append(grid)
            units.append(VGroup(grid, *self.hidden_header(grid, slots)))
        units = VGroup(*units).arrange(RIGHT, buff=0.45, aligned_edge=UP)
        self.place(units, title, grow=1.6)
        return VGroup(*grids), units

    def hidden_header(self, grid: NumberGrid, slots) -> list:
        """The "N more" header of the column, right of ``grid``, that holds each row's hidden
        keys' weight (none when every key is shown); kept in :attr:`hidden_columns` until the
        weights arrive."""
        count = self.record.n - sum(slot is not None for slot in slots)
        if count == 0:
            return []
        look = self.look
        header = text(f"{count} more", HEADER_SIZE, look.muted)
        header.next_to(grid.body(), RIGHT, buff=0.15)
        header.align_to(grid.column_headers[grid.shown_columns()[0]], DOWN)
        self.hidden_columns.append(header)
        return [header]

    def to_weights(self, grid: NumberGrid, rec) -> tuple[list[list], list]:
        """Animations turning ``grid``'s mask into ``rec``'s weights of the shown head: each
        row's (:meth:`cascade_parts`, to be lagged), and those of the hidden keys' weight of each
        row beside it (when keys are left out)."""
        h = self.h
        fills, labels = {}, {}
        for i, j in grid.labels:
            value = rec.weights[h, i, j].item()
            blocked = rec.mask[i, j].item() == -math.inf
            fills[i, j] = self.look.blocked if blocked else grid.colors_for_weight(value)
            labels[i, j] = grid.number_at(
                i,
                j,
                value=value,
                decimals=0 if blocked else self.decimals,
                fill=fills[i, j],
                source=(variant(rec), "weights", h, i, j),
            )
        return cascade_parts(self, grid, fills, labels), self.hidden_weights(grid, rec, labels)

    def hidden_weights(self, grid: NumberGrid, rec, labels: dict) -> list:
        """Each shown row's hidden keys' weight (1 less its shown weights, from the record), as
        "+ 0.62" in the "N more" column; the row's labels and it add up to 1."""
        if not self.hidden_columns:
            return []
        header = self.hidden_columns[0 if rec.config.causal else 1]
        shares = VGroup(header)
        for i in grid.shown_rows():
            shown = [
                (rec.weights[self.h, i, j].item(), (variant(rec), "weights", self.h, i, j))
                for j in grid.shown_columns()
            ]
            rest = remainder(1.0, ("constant", 1.0), shown, NUMBER_SIZE, self.look.muted, self.decimals).scale(
                grid.scale_now
            )
            share = plus_before(
                rest.move_to([header.get_x(), grid.cells[i, grid.shown_columns()[0]].get_y(), 0]),
                self.look,
                grid.scale_now,
            )
            shares.add(share.set_x(header.get_x()))  # "+ 0.62" under its header, clear of the row's ⋯
            self.shares[0 if rec.config.causal else 1, i] = share
            self.rows_of_one.append([labels[i, j] for j in grid.shown_columns()] + [rest])
        return [FadeIn(shares)]


def _widest(weights, decimals: int) -> float:
    from blockviz.scenes.grids import cell_width_for

    return cell_width_for(weights, decimals)


def variant(rec) -> str:
    """``"decoder"`` for a causal record, ``"encoder"`` for a bidirectional one: the first word of
    a label's source (:func:`blockviz.scenes.text.number`)."""
    return "decoder" if rec.config.causal else "encoder"
