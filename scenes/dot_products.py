"""Scene 3 — dot products: each query meets each allowed key; products, their sum, then ÷ √d_k."""

from __future__ import annotations

from manim import DOWN, RIGHT, UP, FadeIn, FadeOut, LaggedStart, Text, TransformFromCopy, VGroup

from blockviz import style
from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import rounding_note
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import fit_width, frame_text_width
from blockviz.scenes.look import CAPTION_SIZE, FRAME_MARGIN, WORK_SIZE
from blockviz.scenes.text import formula, number, numeral, text

DESCRIPTION = "query · key: element-wise products, their sum in the score cell, then ÷ √d_k"
CHAPTER = "Dot products"
CAPTION = "Each query meets each key: their element-wise products add up to one score, and every score is divided by √d_k."

MINUS = "\u2212"


def later_term(value: float, color: str, source: tuple) -> Text:
    """A product after the first in a written sum: a negative one is drawn "− 0.03" (its sign
    stands in for the "+"). ``.shown`` is the signed number (``"−0.03"``) it stands for."""
    label = number(value, WORK_SIZE, color, source=source)
    if not label.shown.startswith(MINUS):
        return label
    written = numeral(f"{MINUS} {label.shown[1:]}", WORK_SIZE, color)
    written.shown, written.value, written.decimals, written.source = label.shown, label.value, label.decimals, label.source
    return written


class DotProducts(RecordScene):
    """Scores ``(n, n)`` of head h: cell (i, j) is query i · key j, the sum of element-wise
    products; then every cell is divided by √d_k (Vaswani et al. 2017, Eq. 1)."""

    key_time = 0.6

    def construct(self) -> None:
        rec = self.record
        title = self.show_title(f"Dot products: query · key (head {self.h})")
        query, keys, scores = self.build(title)
        self.add(query, keys, scores)
        self.play(*self.say("score of query i and key j = q_i · k_j"), run_time=self.step_time)
        row_light, key_light = Highlight(self.look, query.row(self.focus)), Highlight(self.look, keys.column(0), color=self.look.key)
        self.add(row_light, key_light)
        work = None
        for i in self.detailed_rows():
            if not query.has_row(i):
                continue
            row_light.place(query.row(i))
            for j in self.allowed_keys(i, scores):
                work = self.show_product(i, j, query, keys, scores, key_light, work)
        self.play(FadeOut(VGroup(work, key_light, row_light)), *self.fill_rest(scores), *self.say(self.rest_caption()), run_time=1.2)
        self.rest()
        self.scale_scores(scores)

    def build(self, title):
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        query = NumberGrid(rec.query[h], self.token_names, None, look, source=("query", h), color_limit=self.limit("query"),
                           row_focus=self.focus, max_columns=4, row_header_color=look.query)
        query.header_group.add(text("query", CAPTION_SIZE - 4, look.query).next_to(query.cell_group, DOWN, buff=0.2))
        keys = NumberGrid(rec.key[h].T, axis_labels("d_head", rec.tokens, d_head), self.token_names, look, source=lambda c, j: ("key", h, j, c),
                          color_limit=self.limit("key"), column_focus=self.focus, max_rows=4, column_header_color=look.key)
        scores = NumberGrid(rec.scores[h], None, None, look, source=("scores", h), color_limit=self.limit("scores"),
                            row_focus=self.focus, column_focus=self.focus, show_numbers=False, filled=False)
        scores.next_to(query.cell_group, RIGHT, buff=0.25, aligned_edge=UP)
        scores.align_to(query.cell_group, UP)
        keys.next_to(scores, UP, buff=0.15)
        keys.shift(RIGHT * (scores.cell_group.get_left()[0] - keys.cell_group.get_left()[0]))
        layout = VGroup(query, keys, scores)
        self.place(layout, title, bottom_space=1.5)
        return query, keys, scores

    def allowed_keys(self, i: int, scores: NumberGrid) -> list[int]:
        blocked = self.record.mask[i]
        return [j for j in scores.shown_columns() if blocked[j] == 0]

    def show_product(self, i, j, query, keys, scores, key_light, previous):
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        shown_dims = list(range(d_head)) if d_head <= 4 else [0, 1, 2]
        q, k, q_times_k = rec.query[h, i].tolist(), rec.key[h, j].tolist(), rec.qk_products(h, i)[j].tolist()
        terms = []
        for c in shown_dims:
            terms += [text("(", WORK_SIZE, look.muted), number(q[c], WORK_SIZE, look.query, source=("query", h, i, c)), text("×", WORK_SIZE, look.muted),
                      number(k[c], WORK_SIZE, look.key, source=("key", h, j, c)), text(")", WORK_SIZE, look.muted), text("+", WORK_SIZE, look.muted)]
        elided = len(shown_dims) < d_head
        terms[-1] = text("+ ⋯ =" if elided else "=", WORK_SIZE, look.muted)
        products = [number(q_times_k[c], WORK_SIZE, look.text, source=("qk_products", h, i, j, c)) if index == 0
                    else later_term(q_times_k[c], look.text, ("qk_products", h, i, j, c)) for index, c in enumerate(shown_dims)]
        sums = []
        for product in products:
            sums += [product] if sums and product.shown.startswith(MINUS) else [text("+", WORK_SIZE, look.muted), product]
        sums = sums[1:] + [text("+ ⋯ =" if elided else "=", WORK_SIZE, look.muted)]
        total = number(rec.scores[h, i, j].item(), WORK_SIZE, look.text, source=("scores", h, i, j))
        # Pieces, not one string: each token's Text is built once and reused for every pair.
        name = [text(f"“{self.token_name(i)}”", WORK_SIZE, look.query), text("·", WORK_SIZE, look.muted),
                text(f"“{self.token_name(j)}”", WORK_SIZE, look.key), text(":", WORK_SIZE, look.muted)]
        line = VGroup(*name, *terms, *sums, total).arrange(RIGHT, buff=0.12)
        if not elided:
            self.shown_sum(products, total)
            note = rounding_note([(products, total)], look, one_line=True)  # shown only when the rounded terms don't add up
            if len(note):
                line = VGroup(line, note.next_to(line, RIGHT, buff=0.35))
        fit_width(line, frame_text_width())
        line.to_edge(DOWN, buff=FRAME_MARGIN + 0.6).set_x(0)
        fill = scores.color_of(rec.scores[h, i, j].item())
        cell_label = scores.number_at(i, j, fill=fill)
        show_line = FadeIn(line) if previous is None else self.one_after_another(FadeOut(previous), FadeIn(line))
        self.play(key_light.over(keys.column(j)), show_line, run_time=self.key_time)
        recolour = self.recolour(scores, {(i, j): fill})
        scores.set_label(i, j, cell_label)
        self.adopt(scores, [cell_label])
        self.play(*recolour, TransformFromCopy(total, cell_label), run_time=self.key_time)
        return line

    def fill_rest(self, scores: NumberGrid):
        rest = [(i, j) for (i, j) in scores.cells if (i, j) not in scores.labels]
        if not rest:
            return []
        fills = {(i, j): scores.color_of(scores.values[i][j]) for i, j in rest}
        labels = {key: scores.number_at(*key, fill=fill) for key, fill in fills.items()}
        return self.recolour(scores, fills) + [LaggedStart(*self.replace_labels(scores, labels), lag_ratio=0.05)]

    def rest_caption(self) -> str:
        if self.record.config.causal:
            return "every query with every key (later keys too: the mask comes next)"
        return "every query with every key"

    def scale_scores(self, scores: NumberGrid) -> None:
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        equation = formula(r"$\frac{q \cdot k}{\sqrt{d_k}}$", look.text, 26)
        note = text(f"d_k = d_head = {d_head}: every score ÷ √{d_head}", WORK_SIZE, look.text)
        work = VGroup(equation, note).arrange(RIGHT, buff=0.4).to_edge(DOWN, buff=FRAME_MARGIN + 0.5)
        # Raw and scaled scores share one colour scale, so the cells pale as their numbers shrink.
        fills = {(i, j): scores.color_of(rec.scaled_scores[h, i, j].item()) for (i, j) in scores.labels}
        scaled = {(i, j): scores.number_at(i, j, value=rec.scaled_scores[h, i, j].item(), source=("scaled_scores", h, i, j), fill=fills[i, j])
                  for (i, j) in scores.labels}
        self.play(FadeIn(work), *self.say("then every score is divided by √d_k, so scores stay moderate as d_k grows"), run_time=self.step_time)
        self.rest()
        self.play(*self.recolour(scores, fills), *self.replace_labels(scores, scaled), run_time=1.2)
        self.rest(1.2)
