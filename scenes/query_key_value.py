"""Scene 2 — query, key, value: each row of the LayerNorm'd input is projected three ways for one
head; with rotary positions the query and key are then turned by their position."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, Create, TransformFromCopy, VGroup, config

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene, ghost_of
from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import row_height
from blockviz.scenes.light_timing import after_the_carry, out_before_the_move
from blockviz.scenes.look import CAPTION_SIZE, CELL_WIDTH, FRAME_MARGIN
from blockviz.scenes.rotary import RotationPanel, angle_note, pair_dial, pairs_shown, worked_pair
from blockviz.scenes.text import formula, text
from blockviz.scenes.wide import hidden_note, largest_entries, slots_of

DESCRIPTION = "each row projected into a query, a key and a value for one head (rotary: q and k turned by their position)"
CHAPTER = "Query, key, value"
CAPTION = "Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value."

SOURCE_SLOTS = 4
"""Columns of the d_model-wide input drawn whole; a wider input draws its first column and the
largest entry of the focus row, ⋯ between (three grids stand beside it: no room for more)."""
HEAD_SLOTS = 3
"""Columns of each d_head-wide query, key and value grid drawn whole; a wider head draws its
first and the largest entry of the focus row."""
ROLES = ("query", "key", "value")
NAME_SIZE = CAPTION_SIZE - 4
ROTARY_BOTTOM = 1.25
"""Height kept at the bottom for a caption of two lines (the rotary shots, a model's layer)."""


def attention_input(rec) -> tuple[str, str, str]:
    """What attention reads in ``rec``'s block: ``(field, its name under the grid, a caption)``.
    Pre-norm: the normalised input ``ln1`` (LayerNorm or RMSNorm); post-norm: the block's input
    ``resid_pre`` itself (the norm comes after the sum)."""
    if "ln1" not in rec.tensors:
        return "resid_pre", "x", "each token's row of the block's input: attention reads it as it is (the norm comes after)"
    norm = "RMSNorm" if rec.config.norm == "rmsnorm" else "LayerNorm"
    return "ln1", f"{norm}(x)", f"{norm} of each token's row: the input to attention"


def source_columns(row: list[float]) -> list[int | None]:
    """The column slots of the attention input's grid (:data:`SOURCE_SLOTS`); ``row`` the focus's."""
    if len(row) <= SOURCE_SLOTS:
        return list(range(len(row)))
    return slots_of(largest_entries(row, 2, first=1), len(row))


def head_columns(row: list[float]) -> list[int | None]:
    """The column slots of a query, key or value grid (:data:`HEAD_SLOTS`); ``row`` the focus's."""
    if len(row) <= HEAD_SLOTS:
        return list(range(len(row)))
    return slots_of(largest_entries(row, 2, first=1), len(row))


def shared_heads(config, head: int) -> list[int]:
    """The query heads that read the same key/value head as ``head`` (grouped-query attention)."""
    return [other for other in range(config.n_heads) if config.kv_head_of(other) == config.kv_head_of(head)]


def heads_text(heads: list[int]) -> str:
    """``"6, 7 and 8"``."""
    return ", ".join(map(str, heads[:-1])) + f" and {heads[-1]}" if len(heads) > 1 else str(heads[0])


def worked_pair_of(rec, head: int, i: int, pairs: list[int]) -> int:
    """The pair of token ``i``'s query to work on the dial: of ``pairs``, the one whose arrow is
    longest times how far it visibly turns (|sin| of its angle), so the turn can be seen."""
    half = rec.config.d_head // 2
    query = rec.query[head, i]
    return max(pairs, key=lambda pair: (math.hypot(float(query[pair]), float(query[pair + half])) * abs(float(rec.rope_sin[i, pair])), -pair))


def key_to_turn(top_keys: list[int], focus: int) -> int:
    """The key whose rotation the scene shows: the one the focus attends to most, past position 0
    when there is one among ``top_keys`` (position 0 turns by angle 0: its rotation shows nothing)."""
    later = [j for j in top_keys if j > 0]
    return (later or top_keys or [focus])[0]


def centre_on(layout, part, margin: float = FRAME_MARGIN) -> None:
    """Shift ``layout`` sideways towards ``part``'s centre at the frame's middle, as far as
    ``layout`` stays inside the frame's margins (a long name beside the grids stays on screen)."""
    edge = config.frame_width / 2 - margin
    shift = min(max(-part.get_x(), -edge - layout.get_left()[0]), edge - layout.get_right()[0])
    layout.shift(RIGHT * shift)


class QueryKeyValue(RecordScene):
    """Each row x of ``ln1`` ``(n, d_model)`` becomes a query, a key and a value ``(n, d_head)``
    for head h: q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V. With grouped-query attention
    k and v come from the key/value head h shares with other query heads. With rotary positions
    (Su et al. 2021, Eq. 34) the focus's query and its top key are then turned pair by pair
    (``query_rot``, ``key_rot``; :mod:`blockviz.scenes.rotary`)."""

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
            self.project_row(source, equations[role], grids[role], f, says[role], light)
        self.play(FadeOut(light), run_time=0.3)
        if rec.config.kv_heads != rec.config.n_heads:
            self.step(caption=f"query heads {heads_text(shared_heads(rec.config, h))} share this key and value")
        rest = [i for i in source.shown_rows() if i != f]
        if rest:
            self.step(*(animation for role in ROLES for animation in self.fill(grids[role], rest)),
                      caption=f"every row the same way: d_model = {rec.config.d_model} numbers in, d_head = {rec.config.d_head} out, three times")
        if "query_rot" in rec.tensors:
            self.rotate(title)

    def build(self, title):
        rec, h, f, look = self.record, self.h, self.focus, self.look
        slots = self.token_slots()
        height = row_height(len(slots), height=4.6)
        field, name, _ = attention_input(rec)
        values = rec.tensors[field]
        source = NumberGrid(values, self.token_names, axis_labels("d_model", rec.tokens, rec.config.d_model), look, source=(field,),
                            color_limit=self.limit(field), row_slots=slots, column_slots=source_columns(values[f].tolist()), cell_height=height)
        self.name_under(source, name, look.muted, hidden_note(len(source.shown_columns()), rec.config.d_model, "columns"))
        names = axis_labels("d_head", rec.tokens, rec.config.d_head)
        bias = (lambda letter: f" + b_{letter}") if rec.config.bias else (lambda letter: "")  # a model without biases: q = x W_Q
        grids, equations = {}, {}
        for role in ROLES:
            color = getattr(look, role)
            head_values = getattr(rec, role)[h]
            grid = NumberGrid(head_values, None, names, look, source=(role, h), color_limit=self.limit(role), row_slots=slots,
                              column_slots=head_columns(head_values[f].tolist()), column_header_color=color, cell_height=height,
                              show_numbers=False, filled=False)
            self.name_under(grid, role, color)
            grids[role] = grid
            letter = role[0].upper()
            equations[role] = formula(f"${role[0]} = x\\,W_{letter}{bias(letter)}$", color, 30)
        projections = VGroup(*(VGroup(equations[role], grids[role]).arrange(DOWN, buff=0.15) for role in ROLES)).arrange(RIGHT, buff=0.4, aligned_edge=UP)
        note = hidden_note(len(grids["query"].shown_columns()), rec.config.d_head, "columns")
        if note:  # one line under the three (each as wide as its cells)
            grids["value"].header_group.add(text(f"each: {note}", NAME_SIZE, look.muted).next_to(VGroup(*(grid.header_group[-1] for grid in grids.values())), DOWN, buff=0.1))
        layout = VGroup(source, projections).arrange(RIGHT, buff=0.5)
        projections.shift(UP * (source.cell_group.get_top()[1] - grids["query"].cell_group.get_top()[1]))  # rows level with the input's
        self.place(layout, title, bottom_space=ROTARY_BOTTOM if note or rec.source.is_model else 0.9, grow=1.4)  # a model's captions: two lines
        self.add(*equations.values())
        return source, equations, grids

    @staticmethod
    def name_under(grid: NumberGrid, name: str, color: str, note: str = "") -> None:
        """``name`` under the grid (and, for an elided wide axis, how many columns are hidden)."""
        label = text(name, NAME_SIZE, color).next_to(grid.body(), DOWN, buff=0.2)
        grid.header_group.add(label)
        if note:
            grid.header_group.add(text(note, NAME_SIZE, grid.look.muted).next_to(label, DOWN, buff=0.1))

    def fill(self, grid: NumberGrid, rows: list[int], columns: list[int] | None = None) -> list:
        columns = grid.shown_columns() if columns is None else columns
        keys = [(i, c) for i in rows for c in columns]
        fills = {key: grid.color_of(grid.values[key[0]][key[1]]) for key in keys}
        return self.recolour(grid, fills) + self.replace_labels(grid, {key: grid.number_at(*key, fill=fills[key]) for key in keys})

    def project_row(self, source: NumberGrid, equation, grid: NumberGrid, i: int, caption: str, light: Highlight) -> None:
        """Row ``i``'s numbers slide into the projection's formula, and its new row arrives in
        ``grid``; ``light``, framing the row, is out of their way while they leave it."""
        sources = [source.labels[i, j] for j in source.shown_columns()]
        self.play(self.send(sources, [equation] * len(sources)), FadeOut(light, rate_func=out_before_the_move), run_time=self.step_time * 0.8)
        self.step(*self.fill(grid, [i]), FadeIn(light), caption=caption)

    # -- rotary positions --------------------------------------------------------------------
    def rotate(self, title) -> None:
        """The focus's query turned pair by pair (one pair worked on a dial), then the key it
        attends to most, turned by its own position."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        pairs = pairs_shown(rec.query[h, f])
        j = key_to_turn(self.top_keys_of(f), f)
        width = max(CELL_WIDTH, cell_width_for(rec.query[h, f][None, :]), cell_width_for(rec.key[h, j][None, :]),
                    cell_width_for(rec.query_rot[h, f][None, :]), cell_width_for(rec.key_rot[h, j][None, :]))  # one column width for both panels
        self.cell_width = width
        query = RotationPanel(rec, "query", h, f, pairs, look, look.query, width)
        query_name = text(f"query of “{self.token_name(f)}”, position {f}", NAME_SIZE, look.query)
        worked = worked_pair_of(rec, h, f, pairs)
        before = (float(rec.query[h, f, worked]), float(rec.query[h, f, worked + query.half]))
        after = (float(rec.query_rot[h, f, worked]), float(rec.query_rot[h, f, worked + query.half]))
        dial = pair_dial(before, after, look, look.query, radius=0.95)
        work = self.worked = worked_pair(rec, "query", h, f, worked, look, look.query)
        note = angle_note(f, worked, look)
        side = VGroup(note, dial, work).arrange(RIGHT, buff=0.5)
        top = VGroup(query_name, query).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        layout = VGroup(top, side).arrange(DOWN, buff=0.4)
        self.place(layout, title, bottom_space=ROTARY_BOTTOM, grow=1.3)
        # Where the pair will be worked, faint and without its numbers (the shot keeps its size).
        ghost, work_ghost = ghost_of(note, dial[0], opacity=0.15), ghost_of(*work.symbolic, opacity=0.15)
        leaving = [Conceal(m) for m in self.mobjects if m is not title and m is not self.caption]
        self.step(self.one_after_another(AnimationGroup(*leaving), AnimationGroup(Reveal(top), FadeIn(ghost), FadeIn(work_ghost))), caption=f"rotary positions: no position was added to x; instead the query and key are turned by their position ({f} for “{self.token_name(f)}”)")
        half = query.half
        light = Highlight(look, query.pair_cells(worked))
        self.step(FadeIn(light), FadeIn(dial.first), caption=f"features d{worked} and d{worked + half} form one pair: a 2-D arrow (the first half of the head pairs with the second)")
        self.step(FadeOut(ghost), FadeIn(note), Create(dial.arc), TransformFromCopy(dial.before_arrow, dial.after_arrow),
                  caption=f"the pair turns by the angle position × ω{self.subscript(worked)}: each pair has its own frequency ω, the angle's cos and sin are in the record")
        factors = [query.before.labels[0, worked], query.angles.labels[0, worked], query.before.labels[0, worked + half], query.angles.labels[1, worked],
                   query.before.labels[0, worked], query.angles.labels[1, worked], query.before.labels[0, worked + half], query.angles.labels[0, worked]]
        signs = VGroup(*(part for line in work for part in line[1] if part not in work.results and part not in work.factors))
        self.step(FadeIn(VGroup(*work.symbolic)), FadeIn(signs), self.carry(factors, work.factors), FadeOut(light, rate_func=out_before_the_move),
                  caption="each entry of q′ mixes the pair's two entries by the angle's cos and sin: a rotation (RoFormer, Eq. 34)")
        self.step(FadeOut(work_ghost), *(FadeIn(result) for result in work.results), caption="the turned pair", run_time=self.step_time * 0.5)
        self.carry_results(work.results, query.after, [worked, worked + half], light)
        others = [j for j in query.after.shown_columns() if j not in (worked, worked + half)]
        self.play(FadeOut(light), run_time=0.3)
        if others:  # a head of one pair (d_head = 2) has no other
            self.step(*self.fill(query.after, [0], others),
                      caption=f"every pair turns by position × its own ω: pair 0 fastest, pair {half - 1} slowest; the lengths stay the same")
        self.key_rotation(title, top, query, VGroup(side, dial.after_arrow, dial.arc), pairs)

    def key_rotation(self, title, top, query: RotationPanel, side, pairs: list[int]) -> None:
        """The key the focus attends to most, before and after its own rotation, under the query."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        j = key_to_turn(self.top_keys_of(f), f)
        key = RotationPanel(rec, "key", h, j, pairs, look, look.key, self.cell_width, headers=False)
        self.panels = (query, key)
        shared = shared_heads(rec.config, h)
        also = f" (key/value head {rec.config.kv_head_of(h)}, shared by query heads {heads_text(shared)})" if len(shared) > 1 else ""
        key_name = text(f"key of “{self.token_name(j)}”, position {j}{also}", NAME_SIZE, look.key)
        bottom = VGroup(key_name, key).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        bottom.scale(query.before.scale_now)  # the query panel's size now: the same cells
        layout = VGroup(top.copy(), bottom).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
        bottom.shift(RIGHT * (layout[0][1].before.cell_group.get_left()[0] - key.before.cell_group.get_left()[0]))  # the columns line up
        scale_before = layout[0].width
        self.place(layout, title, bottom_space=ROTARY_BOTTOM, grow=1.0)
        centre_on(layout, VGroup(layout[0][1], key))  # the panels in the middle, not a long key name
        factor = layout[0].width / scale_before
        self.step(self.one_after_another(Conceal(side), top.animate.scale(factor).move_to(layout[0]), Reveal(bottom)),
                  caption=f"the key of “{self.token_name(j)}”, one “{self.token_name(f)}” attends to most, turns by its own position, {j}")
        self.step(*self.fill(key.after, [0]), caption=f"so q′ · k′ depends on how far apart the two are ({f} − {j} = {f - j} position{'' if f - j == 1 else 's'}): the scores use q′ and k′")

    def carry_results(self, results, grid: NumberGrid, columns: list[int], light: Highlight) -> None:
        """The worked results slide into their cells of ``grid``, which take their numbers;
        ``light``, out of their way while they travel, frames the pair again once they land."""
        self.play(self.send(list(results), [grid.cells[0, j] for j in columns]), FadeIn(light, rate_func=after_the_carry), run_time=self.step_time * 0.8)
        self.step(*self.fill(grid, [0], columns), caption="the turned pair: its two entries of q′")

    @staticmethod
    def subscript(i: int) -> str:
        return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(i))
