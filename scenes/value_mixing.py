"""Scene 6 — value mixing: a query's weights scale the value rows, and the scaled rows add up."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, LaggedStart, TransformFromCopy, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import rounding_note
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.look import CAPTION_SIZE, NUMBER_SIZE, TITLE_SIZE
from blockviz.scenes.text import number, text

DESCRIPTION = "weights scale the value rows; the scaled rows add up to the output row"
CHAPTER = "Value mixing"
CAPTION = "A token's weights scale the value rows, and the scaled rows add up to its output row, as long as one value vector."


class ValueMixing(RecordScene):
    """Output row i of head h is Σ_j weights[i, j] · value[j] ``(d_head,)``: the mixture has as
    many entries as each value vector (``head_outputs = weights @ value``). The scaled rows are
    the record's ``weighted_values(h, i)``."""

    pause = 1.1

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(f"Mixing the values (head {self.h})")
        values, output, signs = self.build(title)
        self.add(values, output)
        self.play(*self.say("the value rows, one per key, and the output grid to fill"), run_time=self.step_time)
        self.rest(0.4)
        shown = None
        for i in self.detailed_rows():
            shown = self.mix_row(i, values, output, signs, shown)
        self.play(*self.fill_rest(output), *self.say(f"every output row: {rec.config.d_head} numbers, as many as a value vector"), run_time=1.2)
        highlight = Highlight(self.look, output.row(output.shown_rows()[0]))
        self.play(FadeIn(highlight), run_time=0.3)
        self.sweep(highlight, [output.row(i) for i in output.shown_rows()[1:]])
        self.rest(1.5)

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        common = dict(row_focus=self.focus, max_columns=4)
        columns = axis_labels("d_head", rec.tokens, rec.config.d_head)
        values = NumberGrid(rec.value[h], self.token_names, columns, look, source=("value", h), color_limit=self.limit("value"),
                            column_header_color=look.value, **common)
        values.header_group.add(text("value", CAPTION_SIZE - 4, look.value).next_to(values.cell_group, DOWN, buff=0.2))
        output = NumberGrid(rec.head_outputs[h], self.token_names, columns, look, source=("head_outputs", h), color_limit=self.limit("head_outputs"),
                            show_numbers=False, filled=False, column_header_color=look.output, **common)
        output.header_group.add(text("output", CAPTION_SIZE - 4, look.output).next_to(output.cell_group, DOWN, buff=0.2))
        times, equals = text("×", TITLE_SIZE, look.text), text("=", TITLE_SIZE, look.text)
        # Stand-ins fix where each query's weight column and products go.
        weights_slot, products_slot = self.weight_grid(self.focus), self.product_grid(self.focus)
        layout = VGroup(values, times, weights_slot, equals, products_slot, output).arrange(RIGHT, buff=0.35, aligned_edge=UP)
        output.shift(RIGHT * 0.6)
        self.place(layout, title, bottom_space=1.7)
        for sign in (times, equals):
            sign.set_y(values.cell_group.get_y())
        self.slots = (weights_slot, products_slot)
        self.scale_factor = values.cell_group.height / (len(values.row_slots) * values.cell_height)
        return values, output, VGroup(times, equals)

    def weight_grid(self, i: int) -> NumberGrid:
        rec, h = self.record, self.h
        blocked = (rec.mask[i] == float("-inf"))[:, None]
        return NumberGrid(rec.weights[h, i][:, None], None, ["weight"], self.look, colors="weights", blocked=blocked,
                          source=lambda j, _: ("weights", h, i, j), row_focus=self.focus, cell_width=0.9)

    def product_grid(self, i: int) -> NumberGrid:
        """The value rows scaled by query i's weights, on the values' colour scale."""
        rec, h = self.record, self.h
        blocked = (rec.mask[i] == float("-inf"))[:, None].expand(rec.n, rec.config.d_head)  # 0 · value: grey "0", like the weight
        grid = NumberGrid(rec.weighted_values(h, i), None, axis_labels("d_head", rec.tokens, rec.config.d_head), self.look, blocked=blocked,
                          source=lambda j, c: ("weighted_values", h, i, j, c), color_limit=self.limit("value"), row_focus=self.focus, max_columns=4)
        grid.name = text("weight × value", CAPTION_SIZE - 4, self.look.value).next_to(grid.cell_group, DOWN, buff=0.2)
        grid.header_group.add(grid.name)
        return grid

    def placed(self, grid: NumberGrid, like: NumberGrid) -> NumberGrid:
        grid.scale(self.scale_factor)
        return grid.shift(like.cell_group.get_center() - grid.cell_group.get_center())

    def mix_row(self, i, values, output, signs, previous):
        rec, h, look = self.record, self.h, self.look
        weights = self.placed(self.weight_grid(i), self.slots[0])
        products = self.placed(self.product_grid(i), self.slots[1])
        sums = VGroup()
        for c in products.shown_columns():
            total = number(rec.head_outputs[h, i, c].item(), NUMBER_SIZE, look.text, source=("head_outputs", h, i, c))
            total.scale(self.scale_factor).next_to(products.name, DOWN, buff=0.3 * self.scale_factor).set_x(products.cells[products.shown_rows()[0], c].get_x())
            sums.add(total)
            if len(products.shown_rows()) == rec.n:
                self.shown_sum([products.labels[j, c] for j in range(rec.n)], total)
        sum_sign = VGroup(text("Σ", CAPTION_SIZE, look.text).scale(self.scale_factor).next_to(sums, LEFT, buff=0.25))
        if len(products.shown_rows()) < rec.n:
            sum_sign.add(text("(with the ⋮ rows)", CAPTION_SIZE - 6, look.muted).scale(self.scale_factor).next_to(sums, DOWN, buff=0.15))
        else:  # said only when the rounded scaled rows miss a shown sum
            note = rounding_note([([products.labels[j, c] for j in range(rec.n)], total) for c, total in zip(products.shown_columns(), sums)], look)
            if len(note):
                sum_sign.add(note.scale(self.scale_factor).next_to(sums, DOWN, buff=0.15))
        highlight = Highlight(look, VGroup(*(output.cells[i, c] for c in output.shown_columns())))
        if previous is not None:
            self.remove(*previous)
        self.add(weights)
        self.play(*self.say(f"the weights of “{self.token_name(i)}”, one per key"), run_time=self.step_time)
        self.rest(0.4)
        self.add(signs, products)
        self.play(*self.say("each value row times its weight"), run_time=self.step_time)
        self.rest(0.4)
        self.play(FadeIn(VGroup(sum_sign, sums)), *self.say("add the scaled rows down each column"), run_time=self.step_time)
        fills = {(i, c): output.color_of(output.values[i][c]) for c in output.shown_columns()}
        landing = self.recolour(output, fills)
        for c, total in zip(output.shown_columns(), sums):
            label = output.number_at(i, c, fill=fills[i, c])
            output.set_label(i, c, label)
            self.adopt(output, [label])
            landing.append(TransformFromCopy(total, label))
        self.play(*landing, FadeIn(highlight), *self.say(f"= the output row of “{self.token_name(i)}”"), run_time=self.step_time)
        self.rest()
        return VGroup(weights, products, sums, sum_sign, highlight, signs)

    def fill_rest(self, output: NumberGrid) -> list:
        fills = {key: output.color_of(output.values[key[0]][key[1]]) for key in output.cells if key not in output.labels}
        if not fills:
            return []
        labels = {key: output.number_at(*key, fill=fill) for key, fill in fills.items()}
        return self.recolour(output, fills) + [LaggedStart(*self.replace_labels(output, labels), lag_ratio=0.05)]

