"""Scene 2 — query, key, value: each row of the LayerNorm'd input is projected three ways for one head."""

from __future__ import annotations

from manim import DOWN, RIGHT, UP, Arrow, FadeIn, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.look import CAPTION_SIZE
from blockviz.scenes.text import formula, text

DESCRIPTION = "each row projected into a query, a key and a value for one head"
CHAPTER = "Query, key, value"
CAPTION = "Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value."


class QueryKeyValue(RecordScene):
    """Each row x of ``ln1`` ``(n, d_model)`` becomes a query, a key and a value ``(n, d_head)``
    for head h: q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V."""

    step_time = 1.0
    pause = 1.4

    def construct(self) -> None:
        rec, h = self.record, self.h
        title = self.show_title(f"Query, key and value (head {h})")
        source, arrow, projections = self.build(title)
        query, key, value = projections
        self.add(source)
        self.play(*self.say("LayerNorm of each token's row: the input to attention"), run_time=self.step_time)
        self.rest()
        highlight = Highlight(self.look, source.row(self.focus))
        self.add(arrow, query)
        self.play(FadeIn(highlight), *self.say(f"the query: what “{self.token_name(self.focus)}” is looking for"), run_time=self.step_time)
        self.rest()
        self.add(key)
        self.play(*self.say("the key: what each token offers to be found by"), run_time=self.step_time)
        self.rest()
        self.add(value)
        self.play(*self.say("the value: what each token hands on if it is attended to"), run_time=self.step_time)
        self.rest()
        self.play(highlight.over(VGroup(*(grid.row(self.focus) for grid in (query, key, value)))),
                  *self.say(f"d_model = {rec.config.d_model} numbers in, d_head = {rec.config.d_head} out, three times"), run_time=self.step_time)
        self.rest(1.2)

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        common = dict(look=look, row_focus=self.focus, max_columns=6)
        source = NumberGrid(rec.ln1, self.token_names, axis_labels("d_model", rec.tokens, rec.config.d_model), source=("ln1",),
                            color_limit=self.limit("ln1"), **common)
        source.header_group.add(text("LayerNorm(x)", CAPTION_SIZE - 4, look.muted).next_to(source.cell_group, DOWN, buff=0.2))
        grids = []
        columns = axis_labels("d_head", rec.tokens, rec.config.d_head)
        for name, color in (("query", look.query), ("key", look.key), ("value", look.value)):
            grid = NumberGrid(getattr(rec, name)[h], None, columns, source=(name, h), color_limit=self.limit(name), column_header_color=color, **common)
            grid.header_group.add(text(name, CAPTION_SIZE - 4, color).next_to(grid.cell_group, DOWN, buff=0.2))
            grids.append(grid)
        projections = VGroup(*grids).arrange(RIGHT, buff=0.45, aligned_edge=UP)
        arrow = Arrow(RIGHT * 0, RIGHT * 1.0, color=look.muted, buff=0)
        equations = VGroup(*(formula(f"${letter} = x\\,W_{letter.upper()} + b_{letter.upper()}$", color, 20)
                             for letter, color in (("q", look.query), ("k", look.key), ("v", look.value)))).arrange(DOWN, buff=0.12)
        middle = VGroup(arrow, equations).arrange(DOWN, buff=0.2)
        layout = VGroup(source, middle, projections).arrange(RIGHT, buff=0.45)
        middle.set_y(source.cell_group.get_y())
        self.place(layout, title)
        return source, middle, grids
