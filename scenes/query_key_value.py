"""Scene 2 — query, key, value: each row of the LayerNorm'd input is projected three ways for one head."""

from __future__ import annotations

from manim import DOWN, RIGHT, UP, Arrow, FadeIn, VGroup

from blockviz.scenes.base import RecordScene
from blockviz.scenes.helpers import Highlight, NumberGrid, formula, text
from blockviz.scenes.look import CAPTION_SIZE


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
        self.play(FadeIn(highlight), *self.say(f"the query: what “{rec.tokens[self.focus]}” is looking for"), run_time=self.step_time)
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
        source = NumberGrid(rec.ln1, rec.tokens, [f"d{c}" for c in range(rec.config.d_model)], source=("ln1",), **common)
        source.header_group.add(text("LayerNorm(x)", CAPTION_SIZE - 4, look.muted).next_to(source.cell_group, DOWN, buff=0.2))
        grids = []
        for name, color, letter in (("query", look.query, "q"), ("key", look.key, "k"), ("value", look.value, "v")):
            grid = NumberGrid(getattr(rec, name)[h], None, [f"{letter}{c}" for c in range(rec.config.d_head)], source=(name, h), column_header_color=color, **common)
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
