"""Scene 2 — query, key, value: each row of the LayerNorm'd input is projected three ways for one head."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, FadeIn, FadeOut, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import row_height
from blockviz.scenes.look import CAPTION_SIZE
from blockviz.scenes.text import formula, text

DESCRIPTION = "each row projected into a query, a key and a value for one head"
CHAPTER = "Query, key, value"
CAPTION = "Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value."

SOURCE_SLOTS = 4
"""Columns drawn of the d_model-wide input."""
HEAD_SLOTS = 3
"""Columns drawn of each d_head-wide query, key and value grid."""
ROLES = ("query", "key", "value")


def attention_input(rec) -> tuple[str, str, str]:
    """What attention reads in ``rec``'s block: ``(field, its name under the grid, a caption)``.
    Pre-norm: the normalised input ``ln1`` (LayerNorm or RMSNorm); post-norm: the block's input
    ``resid_pre`` itself (the norm comes after the sum)."""
    if "ln1" not in rec.tensors:
        return "resid_pre", "x", "each token's row of the block's input: attention reads it as it is (the norm comes after)"
    norm = "RMSNorm" if rec.config.norm == "rmsnorm" else "LayerNorm"
    return "ln1", f"{norm}(x)", f"{norm} of each token's row: the input to attention"


class QueryKeyValue(RecordScene):
    """Each row x of ``ln1`` ``(n, d_model)`` becomes a query, a key and a value ``(n, d_head)``
    for head h: q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V."""

    def construct(self) -> None:
        rec, h, f = self.record, self.h, self.focus
        title = self.show_title(f"Query, key and value (head {h})")
        source, equations, grids = self.build(title)
        self.add(source)
        self.step(FadeIn(VGroup(*grids.values())), caption=attention_input(rec)[2])
        light = Highlight(self.look, source.row(f))
        says = {"query": f"through W_Q: the query, what “{self.token_name(f)}” is looking for",
                "key": "through W_K: the key, what it offers to be found by",
                "value": "through W_V: the value, what it hands on when attended to"}
        self.step(FadeIn(light), caption=f"the row of “{self.token_name(f)}”")
        for role in ROLES:
            self.project_row(source, equations[role], grids[role], f, says[role])
        self.play(FadeOut(light), run_time=0.3)
        rest = [i for i in source.shown_rows() if i != f]
        if rest:
            self.step(*(animation for role in ROLES for animation in self.fill(grids[role], rest)),
                      caption=f"every row the same way: d_model = {rec.config.d_model} numbers in, d_head = {rec.config.d_head} out, three times")

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        slots = self.token_slots()
        height = row_height(len(slots), height=4.6)
        field, name, _ = attention_input(rec)
        source = NumberGrid(rec.tensors[field], self.token_names, axis_labels("d_model", rec.tokens, rec.config.d_model), look, source=(field,),
                            color_limit=self.limit(field), row_slots=slots, max_columns=SOURCE_SLOTS, cell_height=height)
        source.header_group.add(text(name, CAPTION_SIZE - 4, look.muted).next_to(source.body(), DOWN, buff=0.2))
        columns = axis_labels("d_head", rec.tokens, rec.config.d_head)
        grids = {}
        for role in ROLES:
            color = getattr(look, role)
            grid = NumberGrid(getattr(rec, role)[h], None, columns, look, source=(role, h), color_limit=self.limit(role), row_slots=slots,
                              max_columns=HEAD_SLOTS, column_header_color=color, cell_height=height, show_numbers=False, filled=False)
            grid.header_group.add(text(role, CAPTION_SIZE - 4, color).next_to(grid.body(), DOWN, buff=0.2))
            grids[role] = grid
        projections = VGroup(*grids.values()).arrange(RIGHT, buff=0.4)
        bias = (lambda letter: f" + b_{letter}") if rec.config.bias else (lambda letter: "")  # a model without biases: q = x W_Q
        equations = {role: formula(f"${role[0]} = x\\,W_{role[0].upper()}{bias(role[0].upper())}$", getattr(look, role), 28) for role in ROLES}
        middle = VGroup(*equations.values()).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
        layout = VGroup(source, middle, projections).arrange(RIGHT, buff=0.4)
        middle.set_y(source.cell_group.get_y())
        self.place(layout, title, grow=1.4)
        self.add(middle)
        return source, equations, grids

    def fill(self, grid: NumberGrid, rows: list[int]) -> list:
        keys = [(i, c) for i in rows for c in grid.shown_columns()]
        fills = {key: grid.color_of(grid.values[key[0]][key[1]]) for key in keys}
        return self.recolour(grid, fills) + self.replace_labels(grid, {key: grid.number_at(*key, fill=fills[key]) for key in keys})

    def project_row(self, source: NumberGrid, equation, grid: NumberGrid, i: int, caption: str) -> None:
        """Row ``i``'s numbers slide into the projection's formula, and its new row arrives in ``grid``."""
        travellers = VGroup(*(source.labels[i, j].copy() for j in source.shown_columns()))
        self.add(travellers)
        self.play(*(traveller.animate.move_to(equation).set_opacity(0) for traveller in travellers), run_time=self.step_time * 0.8)
        self.remove(travellers)
        self.step(*self.fill(grid, [i]), caption=caption)
