"""Scene 3 — dot products: each query meets each allowed key; products, their sum, then ÷ √d_k."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, Line, Rectangle, VGroup
from manim.utils.rate_functions import linear, smooth

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, joined, later_term, products_hold, remainder, rest_term, sum_decimals
from blockviz.scenes.captions import head_caption_band
from blockviz.scenes.choreography import adopt, carry, cascade, one_after_another, products_then_sum, recolour
from blockviz.scenes.fades import FadeIn, FadeOut, within
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import fit_width, frame_text_width, row_height, smallest_font_size
from blockviz.scenes.look import CAPTION_SIZE, CELL_HEIGHT, FRAME_MARGIN, LINE_GAP, MAX_SLOTS, MIN_FONT_SIZE, WORK_SIZE
from blockviz.scenes.text import font_size_of, formula, number, text
from blockviz.scenes.wide import largest_entries, slots_of

NAME = "dot-products"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 50
DESCRIPTION = "query · key: element-wise products, their sum in the score cell, then ÷ √d_k"
CHAPTER = "Dot products"
CAPTION = "Each query meets each key: their element-wise products add up to one score, and every score is divided by the square root of the head's width."

MINUS = "\u2212"
DIMENSION_SLOTS = 4
"""Entries of a query or key drawn (d_head beyond it: the first three, then the rest as one term)."""
WIDE_DIMENSIONS = 2
"""Entries written of a wider head: the first and the largest product (the grids' rows stay as
tall as for d_head ≤ :data:`DIMENSION_SLOTS`, so numbers stay ≥ 11 px)."""
WORKED_KEYS = 2
"""Keys of a worked row shown product by product; the row's other keys then fill at once."""
WORK_SPACE = 1.9
"""Height kept at the bottom of the frame for the caption and the two work lines."""
WORK_BOTTOM = FRAME_MARGIN + 0.75
"""The working's place under the grids: its bottom this far above the frame's (over a one-line caption)."""
COMPACT_HEIGHTS = (0.42, 0.38)
"""Shorter cells the grids take, in turn, before fewer token slots, to keep their text ≥ 11 px."""
LIGHT_LEAVES = 0.15
"""The share of the play in which the light on a summed score leaves it, before the score flies
to its cell in the rest of the play."""
MIN_SLOTS = 5
"""The fewest token slots the grids give way to so their text stays legible (the focus, the
first token and the top keys, with ⋯)."""


class DotProducts(RecordScene):
    """Scores ``(n, n)`` of head h: cell (i, j) is query i · key j, the sum of element-wise
    products; then every cell is divided by √d_k (Vaswani et al. 2017, Eq. 1)."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head

    def construct(self) -> None:
        title = self.show_title(f"Dot products: query · key (head {self.h})")
        query, keys, scores = self.build(title)
        self.add(query, keys, scores)
        general = formula(r"$q \cdot k = \sum_c\, q_c\, k_c$", self.look.text, 36)
        self.settle(
            general.scale(min(1.0, self.work_box.height * 1.3 / general.height, self.work_box.width / general.width))
        )
        # The working's place: a faint rule under it, there from the start (the lines come and go above it).
        base = Line(
            self.work_box.get_corner(DOWN + LEFT) + DOWN * 0.12,
            self.work_box.get_corner(DOWN + RIGHT) + DOWN * 0.12,
            color=self.look.grid,
            stroke_width=1.5,
        )
        self.step(FadeIn(general), FadeIn(base), caption=self.opening_caption())
        row_light, key_light = (
            Highlight(self.look, query.row(self.focus)),
            Highlight(self.look, keys.column(self.focus), color=self.look.key),
        )
        work = general
        for i in self.detailed_rows(query.shown_rows()):
            allowed = self.allowed_keys(i, scores)
            if row_light not in self.mobjects:
                self.add(row_light)
            self.play(row_light.over(query.row(i)), run_time=0.4)
            if key_light not in self.mobjects:
                self.add(key_light)
            for j in allowed[:WORKED_KEYS]:
                work = self.show_product(i, j, query, keys, scores, key_light, work)
            if allowed[WORKED_KEYS:]:
                self.step(
                    FadeOut(key_light),
                    *self.fill(scores, [(i, j) for j in allowed[WORKED_KEYS:]]),
                    caption=f"the same for the other keys “{self.token_name(i)}” may use",
                )
        leftover = [FadeOut(light) for light in (key_light, row_light) if light in self.mobjects]
        self.step(
            *leftover,
            *self.fill(scores, [key for key in scores.cells if key not in scores.labels]),
            caption=self.rest_caption(),
        )
        self.scale_scores(scores, work)

    def build(self, title):
        """The query, key and score grids, placed: with the most token slots (a taller key grid
        leaves room for one row less) at which every number and header stays ≥ 11 px at 480p."""
        most = MAX_SLOTS if self.record.config.d_head <= 2 else MAX_SLOTS - 1
        tries = (
            [(most, CELL_HEIGHT)]
            + [(most, height) for height in COMPACT_HEIGHTS]
            + [(slots, COMPACT_HEIGHTS[-1]) for slots in range(most - 1, MIN_SLOTS - 1, -1)]
        )
        for slots, cell_height in tries:
            grids = self.build_with(title, self.token_slots(slots), cell_height)
            if self.legible(grids):
                break
        return grids

    def legible(self, grids) -> bool:
        """Whether every text of the placed grids and of the widest working is ≥ 11 px at 480p
        (1 % to spare), the score cells' numbers too (they arrive later: measured on "−1.47",
        whose flat-topped digits are the shortest)."""
        flattest = font_size_of(number(-1.47, grids[2].font_size, source=("probe",))) * grids[2].scale_now
        work = font_size_of(number(-1.47, WORK_SIZE, source=("probe",))) * min(
            1.0, self.work_box.width / self.work_width
        )
        return min(smallest_font_size(VGroup(*grids)), flattest, work) >= MIN_FONT_SIZE * 1.01

    def build_with(self, title, slots, cell_height: float = CELL_HEIGHT):
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        height = row_height(
            len(slots), height=3.6 if d_head <= 2 else 3.2, most=1.0, least=cell_height
        )  # a taller key grid: shorter rows, so numbers stay ≥ 11 px
        (q_field, k_field), dims = self.operands(), slots_of(self.dims_shown(), d_head)
        query = NumberGrid(
            rec.tensors[q_field][h],
            self.token_names,
            None,
            look,
            source=(q_field, h),
            row_slots=slots,
            column_slots=dims,
            row_header_color=look.query,
            cell_height=height,
        )
        query.header_group.add(text("query", CAPTION_SIZE - 4, look.query).next_to(query.body(), DOWN, buff=0.2))
        keys = NumberGrid(
            rec.tensors[k_field][h].T,
            axis_labels("d_head", rec.tokens, d_head),
            self.token_names,
            look,
            source=lambda c, j: (k_field, h, j, c),
            column_slots=slots,
            row_slots=dims,
            column_header_color=look.key,
            cell_height=cell_height,
        )
        keys.header_group.add(
            text("key", CAPTION_SIZE - 4, look.key)
            .next_to(VGroup(*keys.row_headers.values()), LEFT, buff=0.2)
            .align_to(keys.cell_group, DOWN)
        )
        scores = NumberGrid(
            rec.scores[h],
            None,
            None,
            look,
            source=("scores", h),
            row_slots=slots,
            column_slots=slots,
            show_numbers=False,
            filled=False,
            cell_height=height,
        )
        scores.next_to(query.body(), RIGHT, buff=0.3)  # clear of a trailing ⋯ of d_head too
        scores.shift(
            UP * (query.cell_group.get_top()[1] - scores.cell_group.get_top()[1])
        )  # row i level with query i, whatever ⋮ rows follow
        keys.next_to(scores, UP, buff=0.2)
        keys.shift(RIGHT * (scores.cell_group.get_left()[0] - keys.cell_group.get_left()[0]))
        grids = self.grids = VGroup(query, keys, scores)
        worked = [
            self.work_lines(i, j, note=False)[0]
            for i in self.detailed_rows(query.shown_rows())
            for j in self.allowed_keys(i, scores)[:WORKED_KEYS]
        ]
        sample = max(worked, key=lambda lines: lines.width)  # the widest working: none is shrunk more than the box
        self.work_box = Rectangle(width=sample.width, height=max(lines.height for lines in worked)).set_opacity(0)
        self.work_width = sample.width
        if grids.width + sample.width + 0.6 < frame_text_width() * 1.15:  # few tokens: the working beside the grids
            self.place(VGroup(grids, self.work_box).arrange(RIGHT, buff=0.6), title, grow=1.6)
        else:
            under = max(WORK_BOTTOM, head_caption_band(self))  # over a two-line caption on why this head
            self.place(grids, title, bottom_space=WORK_SPACE + under - WORK_BOTTOM, grow=1.5)
            fit_width(self.work_box, frame_text_width()).to_edge(DOWN, buff=under).set_x(0)
        return query, keys, scores

    def settle(self, formula_mobject):
        """Centre a formula on the working's place, never lower than its bottom (the rule under it)
        and, when the working stands under the grids, :data:`LINE_GAP` clear of their labels."""
        formula_mobject.move_to(self.work_box)
        if formula_mobject.get_bottom()[1] < self.work_box.get_bottom()[1]:
            formula_mobject.align_to(self.work_box, DOWN)
        ceiling = self.grids.get_bottom()[1] - LINE_GAP
        if self.work_box.get_top()[1] <= self.grids.get_bottom()[1] and formula_mobject.get_top()[1] > ceiling:
            bottom = formula_mobject.get_bottom()[1]
            formula_mobject.scale((ceiling - bottom) / formula_mobject.height, about_edge=DOWN)
        return formula_mobject

    def opening_caption(self) -> str:
        if self.operands()[0] == "query_rot":  # rotary positions: q and k are turned by their positions first
            return "the rotated query and key: multiply entry by entry, then add"
        return "the score of a query and a key: multiply entry by entry, then add"

    def operands(self) -> tuple[str, str]:
        """The fields multiplied: ``query`` and ``key``, or with rotary positions the rotated
        ``query_rot`` and ``key_rot`` (the scores are theirs)."""
        return ("query_rot", "key_rot") if self.record.architecture.rotary else ("query", "key")

    def dims_shown(self) -> list[int]:
        """The entries of d_head drawn and written out: all up to :data:`DIMENSION_SLOTS`, else the
        first and the largest product of the focus query with the key it attends to most
        (:func:`~blockviz.scenes.wide.largest_entries`); the rest are one term."""
        rec, h, f = self.record, self.h, self.focus
        if rec.config.d_head <= DIMENSION_SLOTS:
            return list(range(rec.config.d_head))
        top = (self.top_keys_of(f) or [f])[0]
        return largest_entries(rec.qk_products(h, f)[top].tolist(), WIDE_DIMENSIONS, first=1)

    def allowed_keys(self, i: int, scores: NumberGrid) -> list[int]:
        blocked = self.record.mask[i]
        return [j for j in scores.shown_columns() if blocked[j] == 0]

    def work_lines(self, i: int, j: int, note: bool = True):
        """``“tired” · “The” = q0 × k0 + q1 × k1`` over ``= p0 + p1 = score``: the query's and
        key's entries, their products and the score. Beyond :data:`DIMENSION_SLOTS` entries the
        first three are written and the rest are one term (the score less the written products).
        Returns the two lines and their parts: ``(lines, qs, ks, products, total)``."""
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        dims = self.dims_shown()
        q_field, k_field = self.operands()
        q, k, products = (
            rec.tensors[q_field][h, i].tolist(),
            rec.tensors[k_field][h, j].tolist(),
            rec.qk_products(h, i)[j].tolist(),
        )
        score = rec.scores[h, i, j].item()
        hidden = len(dims) < d_head
        hidden_value = score - sum(products[c] for c in dims)
        decimals = sum_decimals([([products[c] for c in dims] + ([hidden_value] if hidden else []), score)])
        qs = [
            number(q[c], WORK_SIZE, look.query, source=(q_field, h, i, c))
            if index == 0
            else later_term(q[c], look.query, (q_field, h, i, c))  # "− 1.44 × k" after the first, not "+ −1.44 × k"
            for index, c in enumerate(dims)
        ]
        ks = [number(k[c], WORK_SIZE, look.key, source=(k_field, h, j, c)) for c in dims]
        first = [
            text(f"“{self.token_name(i)}”", WORK_SIZE, look.query),
            text("·", WORK_SIZE, look.muted),
            text(f"“{self.token_name(j)}”", WORK_SIZE, look.key),
            text("=", WORK_SIZE, look.muted),
        ]
        for index, (a, b) in enumerate(zip(qs, ks)):
            first = joined(first, a, text("+", WORK_SIZE, look.muted)) if index else first + [a]
            first += [text("×", WORK_SIZE, look.muted), b]  # × binds before +: no brackets, a line that fits 480p
        if hidden:
            first.append(text(f"+ … ({d_head - len(dims)} more)", WORK_SIZE, look.muted))
        terms = [
            number(products[c], WORK_SIZE, look.text, decimals, source=("qk_products", h, i, j, c))
            if index == 0
            else later_term(products[c], look.text, ("qk_products", h, i, j, c), decimals)
            for index, c in enumerate(dims)
        ]
        if hidden:  # the score split for display: the written products and the rest as one term
            rest = remainder(
                score,
                ("scores", h, i, j),
                [(products[c], ("qk_products", h, i, j, c)) for c in dims],
                WORK_SIZE,
                look.muted,
                decimals,
            )
            terms.append(rest)
        total = number(score, WORK_SIZE, look.text, source=("scores", h, i, j))
        second = [
            text("=" if products_hold(qs, ks, terms) else "≈", WORK_SIZE, look.muted)
        ]  # q × k of unrounded entries
        for index, term in enumerate(terms):
            plus = text("+", WORK_SIZE, look.muted)
            if hidden and index == len(terms) - 1:
                second += rest_term(term, text("(the rest)", WORK_SIZE - 2, look.muted), plus, look.muted)
                terms[index] = second[-1]  # the number drawn (its magnitude, if negative) is the sum's term
            else:
                second = joined(second, term, plus) if index else second + [term]
        second += [text("=" if exact(terms, total) else "≈", WORK_SIZE, look.muted), total]
        lines = VGroup(VGroup(*first).arrange(RIGHT, buff=0.12), VGroup(*second).arrange(RIGHT, buff=0.12))
        lines[1].next_to(lines[0], DOWN, buff=0.18).align_to(lines[0][3], LEFT)
        if note:
            self.shown_sum(terms, total)
            lines.scale(
                min(1.0, self.work_box.width / lines.width, self.work_box.height / lines.height)
                if self.work_box.width < lines.width
                else 1.0
            )
            lines.move_to(self.work_box, aligned_edge=LEFT)
        return lines, qs, ks, total

    def show_product(self, i, j, query, keys, scores, key_light, previous):
        """The query row meets the key column: their entries come down into the work line, the
        products appear, and their sum — lit as the one score they make — lands in the score
        cell."""
        rec, h = self.record, self.h
        lines, qs, ks, total = self.work_lines(i, j)
        dims = list(enumerate(self.dims_shown()))  # (place in the work line, entry of d_head)
        pairs = [(query.labels[i, c], qs[k]) for k, c in dims if (i, c) in query.labels] + [
            (keys.labels[c, j], ks[k]) for k, c in dims if (c, j) in keys.labels
        ]
        moved = {id(target) for _, target in pairs}
        rest_of_first = VGroup(*(part for part in lines[0] if id(part) not in moved))
        self.play(key_light.over(keys.column(j)), run_time=0.5)
        arriving = carry(
            self, [source for source, _ in pairs], [target for _, target in pairs]
        )  # on chips: readable on the way
        self.step(
            one_after_another(FadeOut(previous), AnimationGroup(FadeIn(rest_of_first), arriving)),
            caption=f"“{self.token_name(i)}” meets “{self.token_name(j)}”: entry by entry…",
        )
        total_light = Highlight(self.look, total)
        self.step(products_then_sum(lines[1], total_light), caption="…the products, added up: one score")
        fill = scores.color_of(rec.scores[h, i, j].item())
        cell_label = scores.number_at(i, j, fill=fill)
        recolouring = recolour(self, scores, {(i, j): fill})
        scores.set_label(i, j, cell_label)
        adopt(self, scores, [cell_label])
        landing = [*recolouring, carry(self, [total], [cell_label])]
        for animation in landing:
            animation.run_time = 1  # each spans the landing's stretch, as a play's animations span the play
        self.step(  # the light leaves the total before the score flies (its edge would cut the chip)
            FadeOut(total_light, rate_func=within(smooth, 0.0, LIGHT_LEAVES)),
            AnimationGroup(*landing, rate_func=within(linear, LIGHT_LEAVES, 1.0)),
            caption="the score lands in its cell",
            hold=self.hold * 0.6,
        )
        self.remove(*qs, *ks)
        lines[0].add(*qs, *ks)
        self.add(lines)
        return lines

    def fill(self, scores: NumberGrid, keys: list) -> list:
        keys = [key for key in keys if key not in scores.labels]
        if not keys:
            return []
        fills = {key: scores.color_of(scores.values[key[0]][key[1]]) for key in keys}
        labels = {key: scores.number_at(*key, fill=fill) for key, fill in fills.items()}
        return cascade(self, scores, fills, labels)

    def rest_caption(self) -> str:
        if self.record.config.causal:
            return "every query with every key, later keys too: the mask will block those"
        return "every query with every key"

    def scale_scores(self, scores: NumberGrid, work_lines) -> None:
        rec, h, look = self.record, self.h, self.look
        d_head = rec.config.d_head
        work = formula(f"$q \\cdot k \\,/\\, \\sqrt{{d_k}},\\quad d_k = {d_head}$", look.text, 36)
        self.settle(work.scale(min(1.0, self.work_box.height * 1.3 / work.height)))
        self.step(
            one_after_another(FadeOut(work_lines), FadeIn(work)) if work_lines is not None else FadeIn(work),
            caption=f"then every score is divided by √{d_head}, so wide heads' scores stay moderate",
        )
        # the scaled scores' scale (and its bar) comes with them, not while the scores are still shown
        scores.take_values(rec.scaled_scores[h], ("scaled_scores", h))  # a scale the scaled scores fill
        fills = {(i, j): scores.color_of(rec.scaled_scores[h, i, j].item()) for (i, j) in scores.labels}
        scaled = {
            (i, j): scores.number_at(
                i, j, value=rec.scaled_scores[h, i, j].item(), source=("scaled_scores", h, i, j), fill=fills[i, j]
            )
            for (i, j) in scores.labels
        }
        self.step(
            *cascade(self, scores, fills, scaled),
            caption=f"the scaled scores: each one ÷ √{d_head}",
            run_time=1.4,
        )
