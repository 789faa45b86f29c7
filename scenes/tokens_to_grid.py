"""Scene 1 — tokens to grid: the sentence splits into tokens; each token's embedding + its
position's encoding is one row of the input grid."""

from __future__ import annotations

from manim import DOWN, RIGHT, UP, FadeIn, FadeOut, RoundedRectangle, TransformFromCopy, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.grids import ELLIPSIS_ACROSS, Highlight, NumberGrid
from blockviz.scenes.layout import row_height, wrapped
from blockviz.scenes.look import CAPTION_SIZE, HEADER_SIZE, TITLE_SIZE, WORK_SIZE
from blockviz.scenes.text import text
from blockviz.tokens import display_token

DESCRIPTION = "tokens become rows: embedding + position = the n × d_model input grid"
CHAPTER = "Tokens to grid"
CAPTION = "Each token becomes one row of numbers: its embedding plus its position's encoding, giving the n × d_model grid that enters the block."

FEATURE_SLOTS = 4
"""Columns drawn of each d_model-wide grid (three grids side by side)."""


class TokensToGrid(RecordScene):
    """The sentence splits into tokens; each token's embedding plus its position's encoding is
    one row of the ``(n, d_model)`` grid that enters the block (``resid_pre``)."""

    def construct(self) -> None:
        rec = self.record
        title = self.show_title("Tokens become rows of numbers")
        sentence, chips, grids = self.build(title)
        embed, plus, pos, equals, resid = grids
        trio = (embed, pos, resid)
        tokens = "token" if rec.n == 1 else "tokens"
        self.step(FadeIn(sentence), FadeIn(VGroup(*(VGroup(grid.cell_group, grid.ellipsis_group, grid.names) for grid in trio), plus, equals)),
                  caption="one sentence, and the grid it will become")
        drawn = f" ({len(embed.shown_rows())} of them drawn)" if len(embed.shown_rows()) < rec.n else ""
        self.step(self.one_after_another(FadeOut(sentence), FadeIn(chips)), caption=f"the sentence splits into {rec.n} {tokens}{drawn}")
        row_headers = {id(member) for header in embed.row_headers.values() for member in header.get_family()}
        others = [header for grid in trio for header in grid.header_group if id(header) not in row_headers and header is not grid.names]
        arrivals = [TransformFromCopy(chips.labels[i], embed.row_headers[i]) for i in embed.shown_rows()]
        self.step(*arrivals, FadeOut(chips), FadeIn(VGroup(*others)), caption="one row per token")
        self.remove(*(mobject for mobject in self.mobjects if mobject is not title and mobject is not self.caption))
        self.add(grids)
        self.play(self.refit(grids, title, grow=1.3), run_time=self.step_time * 0.6)
        self.step(*self.fill_cells(embed), caption=f"each token's embedding: d_model = {rec.config.d_model} numbers")
        self.step(*self.fill_cells(pos), caption="plus the encoding of its position")
        self.add_row(embed, pos, resid, self.focus)
        self.step(*self.fill_cells(resid, [i for i in resid.shown_rows() if i != self.focus]),
                  caption=f"every row alike: the {rec.n} × {rec.config.d_model} grid that enters the block")

    def build(self, title):
        rec, look = self.record, self.look
        slots = self.token_slots()
        columns = axis_labels("d_model", rec.tokens, rec.config.d_model)
        common = dict(look=look, row_slots=slots, max_columns=FEATURE_SLOTS, show_numbers=False, filled=False, cell_height=row_height(len(slots), height=4.2))
        embed = NumberGrid(rec.embed, self.token_names, columns, source=("embed",), color_limit=self.limit("embed"), **common)
        pos = NumberGrid(rec.pos_embed, None, columns, source=("pos_embed",), color_limit=self.limit("pos_embed"), **common)
        resid = NumberGrid(rec.resid_pre, None, columns, source=("resid_pre",), color_limit=self.limit("resid_pre"), **common)
        for grid, name in ((embed, "embedding"), (pos, "position"), (resid, "input x")):
            grid.names = text(name, CAPTION_SIZE - 4, look.muted).next_to(grid.body(), DOWN, buff=0.2)
            grid.header_group.add(grid.names)
        plus, equals = text("+", TITLE_SIZE, look.text), text("=", TITLE_SIZE, look.text)
        grids = VGroup(embed, plus, pos, equals, resid).arrange(RIGHT, buff=0.3)
        for sign in (plus, equals):
            sign.set_y(embed.cell_group.get_y())
        chips = self.chips(slots)
        sentence = wrapped(display_token(rec.sentence), WORK_SIZE, look.text, grids.width, max_lines=4)
        strip = VGroup(sentence, chips.move_to(sentence))  # the sentence, then its tokens, in one place
        layout = VGroup(strip, grids).arrange(DOWN, buff=0.45)
        self.place(layout, title, grow=1.6)
        return sentence, chips, grids

    def chips(self, slots) -> VGroup:
        """The drawn tokens as chips in one line (⋯ where tokens are left out); ``.labels[i]``."""
        look = self.look
        parts, labels = [], {}
        for i in slots:
            if i is None:
                parts.append(text(ELLIPSIS_ACROSS, WORK_SIZE, look.muted))
                continue
            label = text(self.token_names[i], WORK_SIZE, look.text)
            box = RoundedRectangle(corner_radius=0.06, width=label.width + 0.24, height=0.5, stroke_color=look.grid, stroke_width=1.5,
                                   fill_color=look.grid, fill_opacity=0.35)
            parts.append(VGroup(box, label.move_to(box)))
            labels[i] = label
        chips = VGroup(*parts).arrange(RIGHT, buff=0.16)
        chips.labels = labels
        return chips

    def fill_cells(self, grid: NumberGrid, rows: list[int] | None = None) -> list:
        """Animations colouring the cells of ``rows`` (every drawn row by default) and writing their numbers."""
        rows = grid.shown_rows() if rows is None else rows
        keys = [(i, j) for i in rows for j in grid.shown_columns()]
        fills = {key: grid.color_of(grid.values[key[0]][key[1]]) for key in keys}
        labels = {key: grid.number_at(*key, fill=fills[key]) for key in keys}
        return self.recolour(grid, fills) + self.replace_labels(grid, labels)

    def add_row(self, embed: NumberGrid, pos: NumberGrid, resid: NumberGrid, i: int) -> None:
        """Row ``i``: its embedding and position entries slide into the input grid, where their
        sum arrives, entry by entry (each highlighted grid on its own: no box crosses + or =)."""
        lights = [Highlight(self.look, grid.row(i)) for grid in (embed, pos, resid)]
        self.step(*(FadeIn(light) for light in lights), caption=f"row {i}, “{self.token_name(i)}”: its embedding plus its position…")
        travellers = VGroup(*(grid.labels[i, j].copy() for grid in (embed, pos) for j in embed.shown_columns()))
        self.add(travellers)
        targets = [resid.cells[i, j] for grid in (embed, pos) for j in embed.shown_columns()]
        moves = [traveller.animate.move_to(target).set_opacity(0) for traveller, target in zip(travellers, targets)]
        self.play(*moves, run_time=self.step_time)
        self.remove(travellers)
        self.step(*self.fill_cells(resid, [i]), caption="…added entry by entry: its row of the input x")
        self.play(*(FadeOut(light) for light in lights), run_time=0.4)
