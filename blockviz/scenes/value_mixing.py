"""Scene 6 — value mixing: a query's weights scale the value rows, and the scaled rows add up."""

from __future__ import annotations

import numpy as np
from manim import DOWN, RIGHT, UP, AnimationGroup, Line, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, products_hold, remainder, sum_decimals
from blockviz.scenes.choreography import adopt, carry, cascade, gather, one_after_another, recolour, second_half
from blockviz.scenes.fades import FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import frame_text_width, row_height
from blockviz.scenes.look import CAPTION_SIZE, CELL_WIDTH, LINE_GAP, NOTE_SIZE, NUMBER_SIZE, TITLE_SIZE
from blockviz.scenes.text import number, text
from blockviz.scenes.wide import hidden_note, largest_entries, slots_of

NAME = "value-mixing"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 90
DESCRIPTION = "weights scale the value rows; the scaled rows add up to the output row"
CHAPTER = "Value mixing"
CAPTION = (
    "A token's weights scale the value rows, and the scaled rows add up to its output row, as long as one value vector."
)

HEAD_SLOTS = 3
"""Columns drawn of each d_head-wide grid (three side by side)."""


SPREAD_MOST = 0.3
"""The most each gap between the grids of the row grows when the row is narrower than the frame."""


def spread(row: VGroup) -> None:
    """Widen the gaps between the parts of ``row`` (placed, its height bound by the frame: many
    tokens), by at most :data:`SPREAD_MOST` each, towards the frame's text width, about its
    centre: the grids take the width the height left them (a row as wide as the frame stays)."""
    gaps = len(row.submobjects) - 1
    extra = min(max(frame_text_width() - row.width, 0.0) / max(gaps, 1), SPREAD_MOST)
    for k, part in enumerate(row.submobjects):
        part.shift(RIGHT * (k - gaps / 2) * extra)


class ValueMixing(RecordScene):
    """Output row i of head h is Σ_j weights[i, j] · value[j] ``(d_head,)``: the mixture has as
    many entries as each value vector (``head_outputs = weights @ value``). The scaled rows are
    the record's ``weighted_values(h, i)``; rows left out are one "+ N more" term under them
    (the record's output less the shown rows), so every column adds up to its output entry. The
    sign between weights and products is "=", or "≈" when a shown weight × shown value does not
    round to the shown product (:func:`~blockviz.scenes.block_helpers.products_hold`)."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head
    shows_weights = True  # its slides' notes read out the focus row's largest weights

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(f"Mixing the values (head {self.h})")
        values, output, signs = self.build(title)
        self.equals = signs[1]
        self.step(
            Reveal(VGroup(values, output)),  # cell after cell: the caption alone was a still play (issue 36)
            FadeIn(signs),
            caption="the value rows, one per key, and the output grid to fill",
            run_time=2 * self.step_time,
        )
        shown = None
        for i in self.detailed_rows(values.shown_rows()):
            shown = self.mix_row(i, values, output, shown)
        rest = [i for i in output.shown_rows() if (i, output.shown_columns()[0]) not in output.labels]
        self.step(
            *self.fill(output, rest),
            caption=f"every output row: {rec.config.d_head} numbers, as many as a value vector",
        )

    # -- layout ---------------------------------------------------------------------------------
    def column_sums(self, i: int) -> list[tuple[list[float], float]]:
        """Each column's shown terms (and the hidden rows' term) and output entry, for query ``i``."""
        rec, h = self.record, self.h
        products = rec.weighted_values(h, i)
        found = []
        for c in range(rec.config.d_head):
            terms = [products[j, c].item() for j in self.rows_shown]
            total = rec.head_outputs[h, i, c].item()
            # The record's output split for display: the hidden rows' term is the total less the shown ones.
            found.append((terms + ([total - sum(terms)] if self.hidden else []), total))
        return found

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        slots = self.token_slots()
        self.rows_shown = [i for i in slots if i is not None]
        self.hidden = len(self.rows_shown) < rec.n
        worked = self.detailed_rows(self.rows_shown)
        self.decimals = {i: sum_decimals(self.column_sums(i)) for i in worked}
        self.product_width = max(
            [CELL_WIDTH] + [cell_width_for(rec.weighted_values(h, i), d) for i, d in self.decimals.items()]
        )
        extra = 2 if self.hidden else 1  # the Σ row, and the hidden rows' row
        height = row_height(len(slots) + extra, height=4.2, most=0.8)
        common = dict(row_slots=slots, column_slots=self.column_slots(), cell_height=height)
        columns = axis_labels("d_head", rec.tokens, rec.config.d_head)
        values = NumberGrid(
            rec.value[h],
            self.token_names,
            columns,
            look,
            source=("value", h),
            column_header_color=look.value,
            **common,
        )
        values.header_group.add(text("value", CAPTION_SIZE - 4, look.value).next_to(values.body(), DOWN, buff=0.2))
        output = NumberGrid(
            rec.head_outputs[h],
            None,
            columns,
            look,
            source=("head_outputs", h),
            show_numbers=False,
            filled=False,
            column_header_color=look.output,
            **common,
        )
        output.header_group.add(text("output", CAPTION_SIZE - 4, look.output).next_to(output.body(), DOWN, buff=0.2))

        hidden = hidden_note(
            len(output.shown_columns()), rec.config.d_head, "columns"
        )  # a wide head: "62 of 64 columns hidden"
        if hidden:
            output.header_group.add(
                text(hidden, NOTE_SIZE, look.muted).next_to(output.header_group[-1], DOWN, buff=0.12)
            )
        times, equals = text("×", TITLE_SIZE, look.text), text("=", TITLE_SIZE, look.text)
        # Stand-ins fix where each query's weight column and products go.
        self.weights_slot, self.products_slot = self.weight_grid(self.focus), self.product_grid(self.focus)
        layout = VGroup(values, times, self.weights_slot, equals, self.products_slot, output).arrange(RIGHT, buff=0.35)
        for grid in (self.weights_slot, self.products_slot, output):
            grid.align_to(values.cell_group, UP).shift(
                UP * (values.cell_group.get_top()[1] - grid.cell_group.get_top()[1])
            )
        output.shift(RIGHT * 0.4)
        sums_stand_in = self.sum_rows(self.focus, self.products_slot)
        self.place(VGroup(layout, sums_stand_in), title, bottom_space=1.1, grow=1.6)  # Σ clear of the caption
        spread(layout)
        for sign in (times, equals):
            sign.set_y(values.cell_group.get_y())
        return values, output, VGroup(times, equals)

    def weight_grid(self, i: int) -> NumberGrid:
        rec, h = self.record, self.h
        blocked = (rec.mask[i] == float("-inf"))[:, None]
        grid = NumberGrid(
            rec.weights[h, i][:, None],
            None,
            ["weight"],
            self.look,
            colors="weights",
            blocked=blocked,
            source=lambda j, _: ("weights", h, i, j),
            row_slots=self.values_slots(),
            cell_width=1.0,
            cell_height=self.cell_height(),
        )
        name = VGroup(
            text("of", CAPTION_SIZE - 4, self.look.muted),
            text(f"“{self.token_name(i)}”", CAPTION_SIZE - 4, self.look.query),
        ).arrange(DOWN, buff=0.08)
        grid.name = name.next_to(grid.body(), DOWN, buff=0.2)
        grid.header_group.add(grid.name)
        return grid

    def column_slots(self) -> list[int | None]:
        """The entries of d_head drawn: all up to :data:`HEAD_SLOTS`, else the first and the
        largest of the focus row's output (:func:`~blockviz.scenes.wide.largest_entries`), ⋯ between."""
        rec, d_head = self.record, self.record.config.d_head
        if d_head <= HEAD_SLOTS:
            return list(range(d_head))
        return slots_of(largest_entries(rec.head_outputs[self.h, self.focus].tolist(), HEAD_SLOTS - 1, first=1), d_head)

    def values_slots(self):
        return self.token_slots()

    def cell_height(self) -> float:
        extra = 2 if self.hidden else 1
        return row_height(len(self.values_slots()) + extra, height=4.2, most=0.8)

    def product_grid(self, i: int) -> NumberGrid:
        """The value rows scaled by query i's weights, on the values' colour scale."""
        rec, h = self.record, self.h
        blocked = np.broadcast_to(
            np.asarray(rec.mask[i] == float("-inf"))[:, None], (rec.n, rec.config.d_head)
        )  # 0 · value: grey "0", like the weight
        grid = NumberGrid(
            rec.weighted_values(h, i),
            None,
            axis_labels("d_head", rec.tokens, rec.config.d_head),
            self.look,
            blocked=blocked,
            source=lambda j, c: ("weighted_values", h, i, j, c),
            row_slots=self.values_slots(),
            column_slots=self.column_slots(),
            decimals=self.decimals.get(i, 2),
            cell_width=self.product_width,
            cell_height=self.cell_height(),
        )
        grid.name = text("weight × value", CAPTION_SIZE - 4, self.look.value).next_to(grid.body(), DOWN, buff=0.2)
        grid.header_group.add(grid.name)
        return grid

    def sum_rows(self, i: int, products: NumberGrid) -> VGroup:
        """Under the products: the hidden rows' term of each column (when rows are left out), a
        rule, and Σ — each column's output entry. ``.totals[c]``, ``.sums`` as shown."""
        rec, h, look = self.record, self.h, self.look
        scale = products.scale_now
        size = NUMBER_SIZE
        pitch = products.cell_height * scale
        top = products.name.get_bottom()[1] - 0.15 * scale
        if self.hidden:  # "+ N more" stands left of the products, under the weights' name: clear of it
            top = min(top, self.weights_slot.name.get_bottom()[1] - LINE_GAP * scale)
        rows, sums, totals = VGroup(), [], {}
        weighted = rec.weighted_values(h, i)
        y_hidden = top - pitch / 2
        y_total = y_hidden - (pitch if self.hidden else 0) - 0.12 * scale
        for c in products.shown_columns():
            x = products.cells[products.shown_rows()[0], c].get_x()
            terms = [products.labels[j, c] for j in self.rows_shown]
            if self.hidden:
                shown = [(weighted[j, c].item(), ("weighted_values", h, i, j, c)) for j in self.rows_shown]
                rest = remainder(
                    rec.head_outputs[h, i, c].item(),
                    ("head_outputs", h, i, c),
                    shown,
                    size,
                    look.muted,
                    products.decimals,
                )
                rows.add(rest.scale(scale).move_to([x, y_hidden, 0]))
                terms.append(rest)
            total = (
                number(rec.head_outputs[h, i, c].item(), size, look.text, source=("head_outputs", h, i, c))
                .scale(scale)
                .move_to([x, y_total, 0])
            )
            totals[c] = total
            rows.add(total)
            sums.append((terms, total))
        left = products.cell_group.get_left()[0]
        names = VGroup()
        if self.hidden:
            hidden = text(f"+ {rec.n - len(self.rows_shown)} more", size, look.muted).scale(
                scale
            )  # the rows under ⋮, as one term a column
            names.add(hidden.move_to([left - 0.12 * scale - hidden.width / 2, y_hidden, 0]))
        signs = "=" if all(exact(terms, total) for terms, total in sums) else "≈"
        names.add(text(f"Σ {signs}", size, look.text).scale(scale).move_to([left - 0.45 * scale, y_total, 0]))
        rule_y = y_total + pitch / 2
        rule = Line(
            [left, rule_y, 0], [products.cell_group.get_right()[0], rule_y, 0], color=look.muted, stroke_width=2
        )
        group = VGroup(rows, names, rule)
        group.totals, group.sums = totals, sums
        return group

    def placed(self, grid: NumberGrid, like: NumberGrid) -> NumberGrid:
        grid.scale(like.scale_now)
        return grid.shift(like.cell_group.get_center() - grid.cell_group.get_center())

    # -- steps ----------------------------------------------------------------------------------
    def mix_row(self, i, values, output, previous):
        _rec, _h, look = self.record, self.h, self.look
        weights = self.placed(self.weight_grid(i), self.weights_slot)
        products = self.placed(self.product_grid(i), self.products_slot)
        products.name.next_to(products.body(), DOWN, buff=0.2 * products.scale_now)
        sums = self.sum_rows(i, products)
        for terms, total in sums.sums:
            self.shown_sum(terms, total)
        if previous is not None:
            self.play(FadeOut(previous), run_time=0.4)
        self.step(Reveal(weights), caption=f"the weights of “{self.token_name(i)}”, one per key")
        frame = VGroup(products.cell_group, products.header_group, products.ellipsis_group)
        sources = [values.labels[j, c] for j in self.rows_shown for c in products.shown_columns()]
        targets = [products.labels[j, c] for j in self.rows_shown for c in products.shown_columns()]
        factors = [weights.labels[j, 0] for j in self.rows_shown for _ in products.shown_columns()]
        self.step(
            FadeIn(frame),
            carry(self, sources, targets),
            *self.equals_sign("=" if products_hold(factors, sources, targets) else "≈"),
            caption="each value row times its weight",
        )
        self.remove(frame, *targets)
        self.add(products)
        light = Highlight(look, output.row(i))
        fills = {(i, c): output.color_of(output.values[i][c]) for c in output.shown_columns()}
        labels = {(i, c): output.number_at(i, c, fill=fills[i, c]) for c in output.shown_columns()}
        landing = recolour(self, output, fills)
        for (row, c), label in labels.items():
            output.set_label(row, c, label)
        adopt(self, output, list(labels.values()))
        adding = "add the scaled rows down each column" + (" (the hidden rows as one term)" if self.hidden else "")
        self.step(
            one_after_another(
                AnimationGroup(FadeIn(VGroup(*self.under_the_sum(sums))), *self.slide_into_sums(products, sums)),
                AnimationGroup(
                    *landing,
                    carry(self, [sums.totals[c] for c in output.shown_columns()], list(labels.values())),
                    FadeIn(light, rate_func=second_half),  # after the sums fly in
                ),
            ),
            caption=f"{adding}: the output row of “{self.token_name(i)}”",
            run_time=3 * self.step_time,
        )
        return VGroup(weights, products, sums, light)

    def slide_into_sums(self, products: NumberGrid, sums: VGroup) -> list:
        """Each column's scaled rows sliding down together into its Σ (as vectors are added:
        the terms travel to where their sum appears), then the sum arriving."""
        return [gather(self, parts, sums.totals[c]) for c, (parts, _) in zip(products.shown_columns(), sums.sums)]

    def under_the_sum(self, sums: VGroup) -> list:
        """The parts of :meth:`sum_rows` other than the totals: the hidden rows' terms, the
        names ("+ N more", "Σ =") and the rule."""
        rows, names, rule = sums
        totals = {id(total) for total in sums.totals.values()}
        return [member for member in rows if id(member) not in totals] + [names, rule]

    def equals_sign(self, sign: str) -> list:
        """Animations putting ``sign`` ("=", or "≈" when a shown weight × value is not its shown
        product) between the weights and the products, in the place and size of the one there."""
        old = self.equals
        if old.shown == sign:
            return []
        new = text(sign, TITLE_SIZE, self.look.text)
        new.scale(old.width / text(old.shown, TITLE_SIZE, self.look.text).width).move_to(old)  # the layout's scale
        self.equals = new
        self.after_play.append(lambda: self.remove(old))
        return [one_after_another(FadeOut(old), FadeIn(new))]

    def fill(self, output: NumberGrid, rows: list[int]) -> list:
        keys = [(i, c) for i in rows for c in output.shown_columns()]
        if not keys:
            return []
        fills = {key: output.color_of(output.values[key[0]][key[1]]) for key in keys}
        labels = {key: output.number_at(*key, fill=fill) for key, fill in fills.items()}
        return cascade(self, output, fills, labels)
