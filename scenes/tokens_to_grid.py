"""Scene 1 — tokens to grid: each token becomes a row; embedding + position = the input grid."""

from __future__ import annotations

from manim import DOWN, RIGHT, FadeIn, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import fit_width, frame_text_width
from blockviz.scenes.look import CAPTION_SIZE, TITLE_SIZE, WORK_SIZE
from blockviz.scenes.text import text
from blockviz.tokens import display_token

DESCRIPTION = "tokens become rows: embedding + position = the n × d_model input grid"
CHAPTER = "Tokens to grid"
CAPTION = "Each token becomes one row of numbers: its embedding plus its position's encoding, giving the n × d_model grid that enters the block."


class TokensToGrid(RecordScene):
    """The sentence splits into tokens; each token's embedding plus its position's encoding is
    one row of the ``(n, d_model)`` grid that enters the block (``resid_pre``)."""

    pause = 1.4

    def construct(self) -> None:
        rec = self.record
        self.show_title("Tokens become rows of numbers")
        sentence = self.show_sentence()
        grids = self.build_grids()
        self.play(FadeIn(sentence), *self.say(f"the sentence splits into {rec.n} tokens"), run_time=self.step_time)
        self.rest()
        embed, plus, pos, equals, resid = grids
        self.add(embed.header_group, embed.ellipsis_group)
        self.play(*self.say("one row per token"), run_time=self.step_time)
        self.rest()
        self.remove(embed.header_group, embed.ellipsis_group)
        self.add(embed)
        self.play(*self.say(f"each token's embedding: d_model = {rec.config.d_model} numbers"), run_time=self.step_time)
        self.rest()
        self.add(plus, pos)
        self.play(*self.say("plus the encoding of its position"), run_time=self.step_time)
        self.rest()
        self.add(equals, resid)
        self.play(*self.say(f"= the {rec.n} × {rec.config.d_model} grid that enters the block"), run_time=self.step_time)
        self.sweep_rows(embed, pos, resid)

    def show_sentence(self):
        sentence = fit_width(text(display_token(self.record.sentence), WORK_SIZE + 4, self.look.text), frame_text_width())
        self.sentence = sentence.next_to(self.mobjects[0], DOWN, buff=0.3)
        return sentence

    def build_grids(self) -> VGroup:
        rec, focus = self.record, self.focus
        columns = axis_labels("d_model", rec.tokens, rec.config.d_model)
        kwargs = dict(look=self.look, row_focus=focus, max_columns=6)
        embed = NumberGrid(rec.embed, self.token_names, columns, source=("embed",), color_limit=self.limit("embed"), **kwargs)
        pos = NumberGrid(rec.pos_embed, None, columns, source=("pos_embed",), color_limit=self.limit("pos_embed"), **kwargs)
        resid = NumberGrid(rec.resid_pre, None, columns, source=("resid_pre",), color_limit=self.limit("resid_pre"), **kwargs)
        names = VGroup(*(text(name, CAPTION_SIZE - 4, self.look.muted).next_to(grid.cell_group, DOWN, buff=0.2)
                         for grid, name in ((embed, "embedding"), (pos, "position"), (resid, "input x"))))
        for grid, name in zip((embed, pos, resid), names):
            grid.header_group.add(name)
        plus, equals = text("+", TITLE_SIZE, self.look.text), text("=", TITLE_SIZE, self.look.text)
        grids = VGroup(embed, plus, pos, equals, resid).arrange(RIGHT, buff=0.3)
        for sign in (plus, equals):
            sign.set_y(embed.cell_group.get_y())
        self.place(grids, self.sentence)
        return grids

    def sweep_rows(self, *grids: NumberGrid) -> None:
        rows = grids[0].shown_rows()
        highlight = Highlight(self.look, VGroup(*(grid.row(rows[0]) for grid in grids)))
        self.play(FadeIn(highlight), run_time=0.4)
        for i in rows[1:]:
            self.play(highlight.over(VGroup(*(grid.row(i) for grid in grids))), run_time=0.35)
        self.play(highlight.over(VGroup(*(grid.row(self.focus) for grid in grids))), *self.say(f"row {self.focus}: “{self.token_name(self.focus)}”"), run_time=self.step_time)
        self.rest(1.0)
