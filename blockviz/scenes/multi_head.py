"""Scene 9 — multi-head attention: the heads side by side, concatenated, then projected by W_O."""

from __future__ import annotations

import math
from types import SimpleNamespace

from manim import DOWN, LEFT, PI, RIGHT, UP, AnimationGroup, Line, RoundedRectangle, VGroup, linear

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, parameter_grid, remainder, row_grid, shape_text, sum_decimals
from blockviz.scenes.choreography import carry, lagged, one_after_another, recolour, second_half
from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import column_width, fit_width, fitting, smallest_font_size
from blockviz.scenes.light_timing import after_the_caption, out_before_the_move
from blockviz.scenes.look import (
    CAPTION_SIZE,
    HEADER_SIZE,
    MAX_SLOTS,
    MIN_FONT_SIZE,
    NUMBER_SIZE,
    TITLE_SIZE,
)
from blockviz.scenes.symbols import parameter_symbol, symbol
from blockviz.scenes.text import font_size_of, number, shortened, text, typeset
from blockviz.scenes.token_axis import visible_slots
from blockviz.scenes.wide import rows_that_matter
from blockviz.style import text_color_on

NAME = "multi-head"
TOKEN_AXIS = True
ORDER = 100
DESCRIPTION = "heads side by side with their own weights; outputs concatenated, times W_O = attn_out"
CHAPTER = "Multi-head attention"
CAPTION = (
    "Several attention heads read the same rows, each with its own weights; their outputs are concatenated "
    "and multiplied by W_O to give the attention output."
)
GROUPED_CAPTION = (
    "Several attention heads read the same rows, each with its own queries and weights, while each group of heads "
    "shares one key and value head; their outputs are concatenated and multiplied by W_O to give the attention output."
)

HEAD_SLOTS = 4
"""Heads drawn side by side: every head of a block with at most this many."""
PATTERN_CELL = 0.3
"""Side of one cell of a head's weights pattern (drawn without numbers)."""
KEY_LABEL_LENGTH = 1.4
"""The longest a key label over a head's columns may be (turned upright; a kept name is never cut)."""
MIN_ROWS = 4
"""The fewest rows of W_O the projection gives way to so its text stays legible (the rest: one term)."""
PROJECTION_GROW = 1.6
"""The most :meth:`~blockviz.scenes.base.RecordScene.place` grows the projection."""
ROWS_CHOICE = "multi-head W_O rows"
"""The layout choice (:meth:`~blockviz.scenes.base.RecordScene.note_choice`): the rows of W_O
:meth:`MultiHead.legible_projection` keeps."""
ROOM_CHOICE = "multi-head room for more W_O rows"
"""The layout choice: the least room in which a projection of more rows would be legible
(:meth:`MultiHead.room_for_more_rows`)."""
ROOM_MARGIN = 1e-6
"""How far (a share) under that room the real build's must be to take the dry build's choice:
more than the rounding of the sizes it is worked out from."""


class MultiHead(RecordScene):
    """Every head h attends on the same rows with its own weights ``(n, n)`` and gives its own
    output ``(n, d_head)``; the outputs side by side are ``concat`` ``(n, d_model)``, and
    ``attn_out = concat @ W_O + b_O`` ``(n, d_model)`` (Vaswani et al. 2017, §3.2.2).

    The focus token's row is followed: each head's output row, their concatenation, and its
    projection — the products ``concat[f, i] · W_O[i, j]`` (:meth:`~blockviz.block_record.BlockRecord.projection_products`)
    added down each column with ``b_O[j]`` to give ``attn_out[f, j]``; rows of W_O left out are one
    "+ N more" term (the record's sum less the shown products)."""

    def construct(self) -> None:
        title = self.show_title(self.title_text())
        said = self.heads_said()
        heads = self.build_heads(title, said)
        self.show_heads(heads, said)
        self.name_the_cell(heads, said["named"])
        projection = self.legible_projection(title)
        self.concatenate(heads, projection)
        self.project(projection)

    def heads_shown(self) -> list[int]:
        """The first :data:`HEAD_SLOTS` heads, the shown head (:attr:`h`) always among them."""
        first = list(range(min(self.record.config.n_heads, HEAD_SLOTS)))
        return first if self.h in first else [*first[:-1], self.h]

    def title_text(self) -> str:
        n_heads, shown = self.record.config.n_heads, len(self.heads_shown())
        if n_heads == 1:
            return "Multi-head attention: here, one head"
        if shown < n_heads:
            return f"Multi-head attention: {shown} of {n_heads} heads"  # short: two colour bars share its line
        return f"Multi-head attention: {n_heads} heads side by side"

    # -- the heads ------------------------------------------------------------------------------
    def heads_said(self) -> dict[str, str | None]:
        """The captions said while the heads are drawn: ``"read"`` (the heads read the rows),
        ``"mix"`` (each head mixes the values) and ``"named"`` (the named cell's weight; ``None``
        without one)."""
        rec = self.record
        n_heads = rec.config.n_heads
        return {
            "read": (
                f"{n_heads} heads read the same {rec.n} rows, each through {self.wording.head_keys} to its own attention weights"
                if n_heads > 1
                else f"one head reads the {rec.n} rows through its query and key weights"
            ),
            "mix": f"row “{self.token_name(self.focus)}”: each head mixes {self.wording.head_values} by its weights, each head's width, {rec.config.d_head} numbers",
            "named": self.named_cell_said(),
        }

    def build_heads(self, title, said: dict[str, str | None]) -> dict:
        rec, look, f = self.record, self.look, self.focus
        slots = self.token_slots(heads=self.heads_shown())  # each head's strongest key, not only the shown head's
        blocked = rec.mask == -math.inf
        columns, patterns, outputs, lights = [], {}, {}, {}
        features = axis_labels("d_head", rec.tokens, rec.config.d_head)
        few = len(self.heads_shown()) <= 2
        side = max(
            PATTERN_CELL * (1.7 if few else 1.0), 2.6 / len(slots)
        )  # bigger cells for a short sentence, or two heads
        for k, h in enumerate(self.heads_shown()):
            pattern = NumberGrid(
                rec.weights[h],
                self.token_names if k == 0 else None,
                None,
                look,
                colors="weights",
                blocked=blocked,
                show_numbers=False,
                fit_numbers=False,
                row_slots=slots,
                column_slots=slots,
                cell_width=side,
                cell_height=side,
            )
            keys = self.key_labels(pattern, slots)
            pattern.header_group.add(keys)
            name = text(f"head {h}", CAPTION_SIZE, look.text, bold=True).next_to(
                VGroup(pattern.cell_group, keys), UP, buff=0.15
            )
            pattern.header_group.add(name)
            output = NumberGrid(
                rec.head_outputs[h][f][None, :],
                None,
                features,
                look,
                source=lambda _, c, h=h: ("head_outputs", h, f, c),
                max_columns=3,
                column_header_color=look.output,
            )
            if len(self.heads_shown()) <= 2:  # few heads: each output beside its pattern, at the focus row's height
                output.next_to(pattern.cell_group, RIGHT, buff=0.35)
                output.shift(UP * (pattern.row(f).get_y() - output.cell_group.get_y()))
            else:
                output.next_to(pattern.cell_group, DOWN, buff=0.35)
                output.shift(RIGHT * (pattern.cell_group.get_x() - output.cell_group.get_x()))
            output.header_group.add(
                text("output", HEADER_SIZE, look.output).next_to(output.cell_group, DOWN, buff=0.12)
            )
            output.fills = {key: cell.get_fill_color().to_hex() for key, cell in output.cells.items()}
            for cell in output.cells.values():  # drawn empty until the head's mixture arrives
                cell.set_fill(look.background, opacity=1)
            columns.append(VGroup(pattern, output))
            patterns[h], outputs[h] = pattern, output
        layout = VGroup(*columns).arrange(RIGHT, buff=0.55, aligned_edge=UP)
        self.place(layout, title, grow=2.2, said=[shown for shown in said.values() if shown])
        for h, pattern in patterns.items():
            lights[h] = Highlight(look, pattern.row(f), buff=0.03)
        return {"layout": layout, "patterns": patterns, "outputs": outputs, "lights": lights}

    def key_labels(self, pattern: NumberGrid, slots) -> VGroup:
        """Each drawn key's name upright over its column of ``pattern`` (read bottom to top, so a
        name takes a column's width only as its height): the focus's and its kept keys' names
        whole, the others cut at :data:`KEY_LABEL_LENGTH`."""
        names, labels = self.token_names, VGroup()
        for j in (j for j in slots if j is not None):
            longest = max(KEY_LABEL_LENGTH, text(names[j], HEADER_SIZE).width + 0.01)
            label = shortened(
                names[j], longest if j in self.kept_keys() else KEY_LABEL_LENGTH, HEADER_SIZE, self.look.key
            )
            size = font_size_of(label)
            label.rotate(PI / 2)
            label.built_size = (size, label.height)  # its size from here on follows its height upright (font_size_of)
            column = pattern.column(j)
            label.move_to([column.get_x(), pattern.cell_group.get_top()[1] + 0.1 + label.height / 2, 0])
            labels.add(label)
        return labels

    def named_cell(self) -> tuple[int, int] | None:
        """The cell the caption names, ``(head, key)``: the key the head was chosen for (``--head
        auto``, ``--to``), else the key the focus attends to most in the shown head."""
        key = (
            self.head_choice.key if self.head_choice.key is not None else next(iter(self.top_keys_of(self.focus)), None)
        )
        return None if key is None else (self.h, key)

    def sink_note(self, h: int, key: int) -> str:
        """``", the first token: an attention sink"`` when head ``h``'s largest weight from the
        focus parks on ``key`` (:func:`blockviz.array_evidence.largest_weight_of`), else ``""``."""
        from blockviz.array_evidence import largest_weight_of

        rec = self.record
        largest = largest_weight_of(rec.weights, h, self.focus, rec.special, rec.config.causal)
        if largest.reading != "sink" or largest.key != key:
            return ""
        return f", {'the first token' if key == 0 else 'a special token'}: an attention sink"

    @staticmethod
    def within_row(chip, pattern: NumberGrid, f: int, gap: float = 0.03) -> float:
        """How far to move ``chip`` (centred on a cell of row ``f``) sideways so it stays within the row."""
        row = pattern.row(f)
        if chip.get_left()[0] < row.get_left()[0] + gap:
            return row.get_left()[0] + gap - chip.get_left()[0]
        return min(0.0, row.get_right()[0] - gap - chip.get_right()[0])

    @staticmethod
    def covered_marks(chip, pattern: NumberGrid) -> list:
        """The ⋯ marks of ``pattern`` under ``chip``: they step aside while it is shown."""
        return [
            mark
            for mark in pattern.ellipsis_group
            if mark.get_left()[0] < chip.get_right()[0]
            and chip.get_left()[0] < mark.get_right()[0]
            and mark.get_bottom()[1] < chip.get_top()[1]
            and chip.get_bottom()[1] < mark.get_top()[1]
        ]

    def named_cell_said(self) -> str | None:
        """The caption saying whose weight the named cell (:meth:`named_cell`) is; ``None`` without one."""
        named = self.named_cell()
        if named is None:
            return None
        h, key = named
        f, choice = self.focus, self.head_choice
        weight = self.quote(self.record.weights[h, f, key].item(), ("weights", h, f, key))
        query, name = self.token_name(f), self.token_name(key)
        if choice.auto:
            baseline = self.quote(choice.baseline, ("baseline", h, f, key))
            return (
                f"head {h}, row “{query}”: {weight} on “{name}”, where the other rows{' that see it' if self.record.config.causal else ''} put {baseline} on average: "
                f"the head chosen for “{query}”"
            )
        if choice.key is not None:
            return f"head {h}, row “{query}”: {weight} on “{name}”"
        return f"head {h}, row “{query}”: its largest weight, {weight}, on “{name}”{self.sink_note(h, key)}"

    def name_the_cell(self, heads: dict, said: str | None) -> None:
        """The named cell's number on a chip over the cell (a pattern's cells are too small to
        hold one), and ``said`` (:meth:`named_cell_said`), whose weight it is."""
        named = self.named_cell()
        if named is None:
            return
        h, key = named
        f, look = self.focus, self.look
        pattern = heads["patterns"][h]
        cell = pattern.cells[f, key]
        fill = cell.get_fill_color().to_hex()
        label = number(
            self.record.weights[h, f, key].item(), NUMBER_SIZE, text_color_on(fill), 2, source=("weights", h, f, key)
        ).scale(pattern.scale_now)
        chip = RoundedRectangle(
            corner_radius=0.05,
            width=label.width + 0.14 * pattern.scale_now,
            height=label.height + 0.1 * pattern.scale_now,
            fill_color=fill,
            fill_opacity=1,
            stroke_color=look.text,
            stroke_width=2,
        )
        chip.move_to(cell)
        chip.shift(RIGHT * self.within_row(chip, pattern, f))
        covered = VGroup(*self.covered_marks(chip, pattern))
        label.move_to(chip)
        callout = VGroup(chip, label)
        # the other heads' rows step back while the caption speaks of head h's alone; the ⋯ under
        # the chip leave before it comes and return after it has gone: never a mark on it
        others = [light for other, light in heads["lights"].items() if other != h]
        self.step(
            *(FadeOut(light) for light in others), one_after_another(FadeOut(covered), Reveal(callout)), caption=said
        )
        self.step(
            one_after_another(Conceal(callout), FadeIn(covered)),
            *(FadeIn(light) for light in others),
            run_time=0.6,
            hold=0,
        )

    def show_heads(self, heads: dict, said: dict[str, str | None]) -> None:
        frames = [
            VGroup(output.cell_group, output.header_group, output.ellipsis_group)
            for output in heads["outputs"].values()
        ]
        outputs = list(heads["outputs"].values())
        # row after row, head after head: never every head's colour in one frame
        self.step(
            Reveal(VGroup(*heads["patterns"].values(), *frames), grids=outputs),
            caption=said["read"],
            run_time=1.75 * self.step_time,  # with the caption and the first colour bar: ≤ 5 % of the pixels a frame
        )
        self.remove(*frames)
        for output in outputs:  # the whole grids from now on (their numbers still to come)
            labels = output.label_group
            output.remove(labels)
            self.add(output)
            output.pending = labels
        recolouring = [animation for output in outputs for animation in recolour(self, output, output.fills)]
        self.step(
            *(FadeIn(light) for light in heads["lights"].values()),
            *recolouring,
            *(FadeIn(output.pending, rate_func=second_half) for output in outputs),
            caption=said["mix"],
        )

    # -- concatenation and W_O ------------------------------------------------------------------
    def legible_projection(self, title) -> VGroup:
        """:meth:`build_projection` with the most rows of W_O (8, or 6 of a wider d_model, down to
        :data:`MIN_ROWS`, the hidden rows' term a slot of its own) at which its text stays ≥ 11 px
        at 480p, the products' numbers too (measured on "−1.47", whose flat-topped digits are the shortest).

        The dry build tries each number of rows, most first, and notes the one it keeps and the
        least room in which a layout of more rows could have been legible
        (:meth:`room_for_more_rows`). The real build starts its search at the kept number when its
        own room is less than that (no layout of more rows can be legible in it: :func:`fitting`
        gives a layout no more than the room allows); else it searches as the dry build did."""
        limit = MAX_SLOTS if self.record.config.d_model <= MAX_SLOTS else 6
        kept, room = self.planned_choice(ROWS_CHOICE), self.planned_choice(ROOM_CHOICE)
        top, bottom = self.free_band(title)
        if kept is not None and room is not None and top - bottom < room * (1 - ROOM_MARGIN):
            limit = int(kept)
        tried = []
        while True:
            projection = self.build_projection(title, limit)
            smallest = self.smallest_projection_text(projection)
            if limit <= min(MIN_ROWS + 1, self.record.config.d_model) or smallest >= MIN_FONT_SIZE:
                self.note_choice(ROWS_CHOICE, limit)
                self.note_choice(ROOM_CHOICE, min(map(self.room_for_more_rows, tried), default=math.inf))
                return projection
            tried.append((projection, smallest))
            limit -= 1

    @staticmethod
    def smallest_projection_text(projection: VGroup) -> float:
        """The smallest font size of ``projection``'s text as placed, its products' numbers'
        included (measured on "−1.47", whose flat-topped digits are the shortest)."""
        terms = projection.parts["terms"]
        flattest = font_size_of(number(-1.47, NUMBER_SIZE, source=("probe",))) * terms.scale_now
        return min(smallest_font_size(VGroup(projection, terms)), flattest)

    @staticmethod
    def room_for_more_rows(tried: tuple[VGroup, float]) -> float:
        """The least height of band (scene units) in which the placed ``projection`` of ``tried``
        — ``(projection, its smallest font size)`` — would have text of at least
        :data:`MIN_FONT_SIZE`: infinity if even the frame's width (or the growth :meth:`place`
        allows) keeps it smaller. Its text scales with it (the whole layout scales as one)."""
        projection, smallest = tried
        width, height = projection.natural_size
        per_scale = smallest * height / projection.height  # its smallest font size at its built size
        widest, _ = fitting(SimpleNamespace(width=width, height=height), math.inf, 0.0, PROJECTION_GROW)
        return math.inf if per_scale * widest < MIN_FONT_SIZE else MIN_FONT_SIZE * height / per_scale

    def build_projection(self, title, row_limit: int = MAX_SLOTS) -> VGroup:
        """The focus row's concatenation over W_O's rows (as a column beside them; at most
        ``row_limit`` slots), the products that replace W_O, the hidden rows' term, b_O, and attn_out."""
        rec, look, f = self.record, self.look, self.focus
        d_model, d_head = rec.config.d_model, rec.config.d_head
        features = axis_labels("d_model", rec.tokens, d_model)
        products = rec.projection_products(f)
        columns = visible_slots(d_model, 0, MAX_SLOTS)
        rows = self.projection_rows(products, [j for j in columns if j is not None], row_limit)
        shown_rows = [i for i in rows if i is not None]
        self.hidden = len(shown_rows) < d_model
        self.has_bias = "attn.b_O" in rec.params  # a model without biases (Llama): attn_out = concat @ W_O
        sums = []
        for j in [j for j in columns if j is not None]:
            terms = [products[i, j].item() for i in shown_rows]
            total = rec.attn_out[f, j].item()
            bias = rec.params["attn.b_O"][j].item() if self.has_bias else 0.0
            # The record's attn_out split for display: the hidden rows' term is the total less the shown terms and b_O.
            sums.append(
                (
                    terms + ([total - bias - sum(terms)] if self.hidden else []) + ([bias] if self.has_bias else []),
                    total,
                )
            )
        decimals = sum_decimals(sums)
        width = max(
            column_width(len(columns), width=8.0, most=1.8),
            cell_width_for(products, decimals),
            cell_width_for(rec.params["attn.W_O"]),
        )
        concat = row_grid(
            rec,
            "concat",
            f,
            "concat",
            look,
            header_color=look.output,
            cell_width=width,
            column_focus=self.concat_focus(MAX_SLOTS),
        )
        concat.segments = self.head_segments(concat, d_head)
        concat.add(concat.segments)
        column = NumberGrid(
            rec.concat[f][:, None],
            features,
            None,
            look,
            source=lambda i, _: ("concat", f, i),
            row_slots=rows,
            row_header_color=look.output,
            filled=False,
            show_numbers=False,
        )
        column.fills = {(i, 0): column.color_of(column.values[i][0]) for i in column.shown_rows()}
        for i in column.shown_rows():  # written when the concatenation's entries arrive, in their cells' colours
            label = column.number_at(i, 0, fill=column.fills[i, 0])
            column.set_label(i, 0, label)
            column.label_group.add(label)
        weights = parameter_grid(
            rec,
            "attn.W_O",
            look,
            row_names=None,
            column_names=features,
            row_slots=rows,
            column_slots=columns,
            cell_width=width,
        )
        terms = NumberGrid(
            products,
            None,
            None,
            look,
            source=lambda i, j: ("projection_products", f, i, j),
            row_slots=rows,
            column_slots=columns,
            cell_width=width,
            decimals=decimals,
        )
        weights.next_to(column.cell_group, RIGHT, buff=0.7).align_to(column.cell_group, UP)
        weights.shift(UP * (column.cell_group.get_top()[1] - weights.cell_group.get_top()[1]))
        terms.shift(weights.cell_group.get_center() - terms.cell_group.get_center())
        times = text("×", TITLE_SIZE, look.text).move_to(
            (column.cell_group.get_right() + weights.cell_group.get_left()) / 2
        )
        name = (
            typeset(parameter_symbol("attn.W_O"), HEADER_SIZE, look.muted)
            .next_to(weights.header_group, UP, buff=0.1)
            .align_to(weights.cell_group, LEFT)
        )
        concat.next_to(VGroup(name, weights.header_group), UP, buff=0.45)
        concat.shift(RIGHT * (weights.cell_group.get_left()[0] - concat.cell_group.get_left()[0]))
        bias = (
            parameter_grid(
                rec,
                "attn.b_O",
                look,
                values=rec.params["attn.b_O"][None, :],
                index=lambda _, j: (j,),
                row_names=[f"$+ {parameter_symbol('attn.b_O')[1:]}"],
                column_names=None,
                column_slots=columns,
                cell_width=width,
            )
            if self.has_bias
            else None
        )
        result = NumberGrid(
            rec.attn_out[f][None, :],
            [f"$= {symbol('attn_out', self.record)[1:]}"],
            None,
            look,
            source=lambda _, j: ("attn_out", f, j),
            column_slots=columns,
            cell_width=width,
            row_header_color=look.output,
            filled=False,
            show_numbers=False,
        )
        result.fills = {(0, j): result.color_of(result.values[0][j]) for j in result.shown_columns()}
        for j in result.shown_columns():  # written when the sums land, in the colour of their cells
            label = result.number_at(0, j, fill=result.fills[0, j])
            result.set_label(0, j, label)
            result.label_group.add(label)
        hidden_row = VGroup()
        below = weights.cell_group
        if self.hidden:
            for j in terms.shown_columns():
                shown = [(products[i, j].item(), ("projection_products", f, i, j)) for i in shown_rows]
                if self.has_bias:
                    shown.append((rec.params["attn.b_O"][j].item(), ("params", "attn.b_O", j)))
                rest = remainder(
                    rec.attn_out[f, j].item(), ("attn_out", f, j), shown, NUMBER_SIZE, look.muted, decimals
                )
                rest.move_to(terms.cells[shown_rows[0], j]).set_y(
                    VGroup(weights.cell_group, weights.ellipsis_group).get_bottom()[1] - terms.cell_height / 2
                )
                hidden_row.add(rest)
            hidden_row.add(
                text(f"+ {d_model - len(shown_rows)} more", NUMBER_SIZE, look.muted).next_to(hidden_row, LEFT, buff=0.3)
            )  # W_O's rows under ⋮
            below = hidden_row
        if bias is not None:
            bias.next_to(below, DOWN, buff=0.15)
            bias.shift(RIGHT * (weights.cell_group.get_left()[0] - bias.cell_group.get_left()[0]))
            below = bias.cell_group
        result.next_to(below, DOWN, buff=0.3)
        result.shift(RIGHT * (weights.cell_group.get_left()[0] - result.cell_group.get_left()[0]))
        rule_y = (below.get_bottom()[1] + result.cell_group.get_top()[1]) / 2
        bias = bias if bias is not None else VGroup()  # nothing to draw, in the layout's place
        rule = Line(
            [result.header_group.get_left()[0], rule_y, 0],
            [result.cell_group.get_right()[0], rule_y, 0],
            color=look.muted,
            stroke_width=2,
        )
        layout = VGroup(concat, column, times, weights, name, bias, rule, result, hidden_row)
        natural_size = (layout.width, layout.height)
        self.place(layout, title, grow=PROJECTION_GROW, joining=[terms])  # the products take W_O's place: their bar too
        terms.scale(weights.scale_now / terms.scale_now)
        terms.shift(
            weights.cell_group.get_center() - terms.cell_group.get_center()
        )  # cell over cell where W_O is (its ⋯ column aside)
        projection = VGroup(concat, column, times, weights, name, bias, rule, result, hidden_row)
        projection.natural_size = natural_size  # (width, height) before place: its size at scale 1
        projection.parts = dict(
            concat=concat,
            column=column,
            times=times,
            weights=weights,
            name=name,
            bias=bias,
            rule=rule,
            result=result,
            hidden=hidden_row,
            terms=terms,
            decimals=decimals,
        )
        return projection

    def concat_focus(self, limit: int) -> int:
        """The concatenation's column that ``limit`` slots are centred on: the shown head's
        (:attr:`h`) first columns follow column 0 and a ⋯, so that its output's numbers have
        somewhere to go (head 0's own come first anyway)."""
        return self.h * self.record.config.d_head + max(limit - 3, 0) // 2

    @staticmethod
    def projection_rows(products, columns: list[int], limit: int) -> list[int | None]:
        """W_O's rows drawn in ``limit`` slots: those whose products ``(d_model, d_model)`` add the
        most to the shown ``columns``' sums (Σ_j |concat_i · W_O[i, j]|), the rest one ⋯
        (:func:`~blockviz.scenes.wide.rows_that_matter`)."""
        contributions = [sum(abs(float(products[i, j])) for j in columns) for i in range(len(products))]
        return rows_that_matter(contributions, limit)

    def head_segments(self, concat: NumberGrid, d_head: int) -> VGroup:
        """A bracket and a "head h" label over each head's columns of the concatenation."""
        segments = VGroup()
        by_head: dict[int, list[int]] = {}
        for j in concat.shown_columns():
            by_head.setdefault(j // d_head, []).append(j)
        top = max(header.get_top()[1] for header in concat.column_headers.values()) + 0.08
        for h, shown in by_head.items():
            left = concat.cells[0, shown[0]].get_left()[0] + 0.04
            right = concat.cells[0, shown[-1]].get_right()[0] - 0.04
            bracket = Line([left, top, 0], [right, top, 0], color=self.look.output, stroke_width=3)
            name = (
                fit_width(text(f"head {h}", HEADER_SIZE, self.look.output), max(right - left, 0.1))
                if right - left > 0.5
                else text(f"h{h}", HEADER_SIZE, self.look.output)
            )
            segments.add(VGroup(bracket, name.next_to(bracket, UP, buff=0.08)))
        return segments

    def one_cell_after_another(self, fade, cells: list[VGroup], rate_func) -> AnimationGroup:
        """``fade`` (:class:`Reveal` or :class:`Conceal`) of each of ``cells`` in turn, the whole
        cascade timed by ``rate_func`` within the play."""
        group = AnimationGroup(*lagged([[fade(cell)] for cell in cells]), rate_func=rate_func)
        group.cascade = True  # a grid's cells coming or going, as in a cascade
        return group

    def concatenate(self, heads: dict, projection: VGroup) -> None:
        rec, _f = self.record, self.focus
        d_head = rec.config.d_head
        concat = projection.parts["concat"]
        pairs = [
            (heads["outputs"][h].labels[0, c], concat.labels[0, h * d_head + c])
            for h in heads["outputs"]
            for c in heads["outputs"][h].shown_columns()
            if (0, h * d_head + c) in concat.labels
        ]
        arriving = set(id(target) for _, target in pairs)
        frame = VGroup(
            concat.cell_group,
            concat.header_group,
            concat.ellipsis_group,
            concat.segments,
            *(label for label in concat.labels.values() if id(label) not in arriving),
        )
        weights = projection.parts["weights"]
        parts = projection.parts
        column, result = parts["column"], parts["result"]
        # Everything the projection will use, laid out now: W_O, the column it multiplies, b_O, the row to fill.
        sheet = VGroup(
            weights,
            parts["name"],
            parts["times"],
            parts["bias"],
            parts["rule"],
            VGroup(column.cell_group, column.header_group, column.ellipsis_group),
            VGroup(result.cell_group, result.header_group, result.ellipsis_group),
        )
        self.remove(*heads["outputs"].values(), *(output.pending for output in heads["outputs"].values()))
        moves = carry(
            self, [source for source, _ in pairs], [target for _, target in pairs]
        )  # the same numbers, moving: no digit changes
        # the patterns leave before the sheet arrives in their place (no number on a half-gone cell);
        # W_O's rows are wide: its cells arrive one after another (each with its number)
        cells = cells_of(weights)
        rest = [mobject for mobject in sheet if mobject is not weights]
        arrivals = [
            Reveal(frame, grids=[concat]),
            Reveal(VGroup(*rest, weights.header_group, weights.ellipsis_group), grids=[column, result]),
            self.one_cell_after_another(Reveal, cells, linear),
        ]
        span = moves.run_time  # the arrivals and the patterns' leaving each take as long as the numbers' ride
        for animation in arrivals:
            animation.run_time = span
        self.step(
            one_after_another(
                Conceal(VGroup(*heads["patterns"].values(), *heads["lights"].values()), run_time=span),
                AnimationGroup(moves, *arrivals),
            ),
            caption=f"concatenate: the heads' outputs side by side, the width, {rec.config.d_model} numbers",
            run_time=3 * self.step_time,  # two cascades in turn: ≤ 5 % of the pixels a frame
        )
        self.remove(*cells)
        self.add(weights)
        self.remove(frame, *(target for _, target in pairs))
        self.add(concat)

    def project(self, projection: VGroup) -> None:
        rec, look, f = self.record, self.look, self.focus
        d_model = rec.config.d_model
        parts = projection.parts
        concat, column, weights, terms = parts["concat"], parts["column"], parts["weights"], parts["terms"]
        rows = column.shown_rows()
        seen = [i for i in rows if (0, i) in concat.labels]
        unseen = [column.labels[i, 0] for i in rows if i not in seen]  # under concat's ⋯
        self.step(
            *([carry(self, [concat.labels[0, i] for i in seen], [column.labels[i, 0] for i in seen])] if seen else []),
            *([FadeIn(VGroup(*unseen), rate_func=second_half)] if unseen else []),
            *recolour(self, column, column.fills),
            caption=f"its entries stand beside the rows of the output weights ({shape_text(d_model, d_model)})…",
        )
        self.remove(*column.labels.values(), VGroup(column.cell_group, column.header_group, column.ellipsis_group))
        self.add(column)
        products_name = (
            typeset(
                rf"$\mathrm{{concat}} \times {parameter_symbol('attn.W_O')[1:]}  (entry by entry)",
                HEADER_SIZE,
                look.muted,
            )
            .scale(weights.scale_now)
            .move_to(parts["name"], aligned_edge=LEFT)
        )
        first = rows[0]
        pair = Highlight(look, VGroup(column.cells[first, 0], weights.row(first)))  # one entry and its row
        self.step(
            FadeIn(pair), caption="…and each entry times its row of the output weights"
        )  # W_O's numbers stay while the caption names them
        # the "×" leaves with W_O: the products beside the column are not to be multiplied by it again
        # both grids' rows are wide: they go and come cell after cell (≤ 5 % of the pixels a frame)
        products = cells_of(terms)
        self.step(
            FadeOut(pair, rate_func=out_before_the_move),
            Conceal(VGroup(weights.ellipsis_group, parts["name"], parts["times"]), rate_func=after_the_caption),
            self.one_cell_after_another(Conceal, cells_of(weights), after_the_caption),
            Reveal(VGroup(terms.ellipsis_group, products_name), rate_func=second_half),
            self.one_cell_after_another(Reveal, products, second_half),
            caption="the products, entry by entry",
            run_time=self.step_time * 2,
        )
        self.remove(*products)
        self.remove(weights)
        self.add(VGroup(weights.header_group), terms)
        for j in parts["result"].shown_columns():
            shown = [terms.labels[i, j] for i in rows]
            if len(parts["hidden"]):
                shown.append(parts["hidden"][parts["result"].shown_columns().index(j)])
            if self.has_bias:
                shown.append(parts["bias"].labels[0, j])
            self.shown_sum(shown, parts["result"].labels[0, j])
        light = None
        if len(parts["hidden"]):
            light = Highlight(look, parts["hidden"])  # framing the new terms, then the sum they go into
            self.step(
                FadeIn(parts["hidden"]),
                FadeIn(light, rate_func=second_half),
                caption="the rows of the output weights left out, as one term per column",
            )
        if not all(exact(parts_, total) for parts_, total in self.sums[-len(parts["result"].shown_columns()) :]):
            sign = parts["result"].row_headers[0]
            approx = typeset(f"$\\approx {symbol('attn_out', self.record)[1:]}", HEADER_SIZE, look.output).scale(
                sign.height / typeset(f"$= {symbol('attn_out', self.record)[1:]}", HEADER_SIZE).height
            )
            parts["result"].header_group.remove(sign)
            parts["result"].header_group.add(approx.move_to(sign, aligned_edge=RIGHT))
        result = parts["result"]
        if light is None:
            light = Highlight(look, result.cell_group)
            arrives = FadeIn(light)
        else:
            arrives = light.over(result.cell_group)
        labels = [result.labels[0, j] for j in result.shown_columns()]
        self.step(
            *recolour(self, result, result.fills),
            FadeIn(VGroup(*labels), rate_func=second_half),
            arrives,
            caption=f"added down each column{' with the output bias' if self.has_bias else ''}: attention's output for “{self.token_name(f)}”",
        )
        self.step(
            FadeOut(light),
            caption=f"every row alike: attention's output is {shape_text(rec.n, d_model)}, as wide as the residual stream",
        )


def cells_of(grid: NumberGrid) -> list[VGroup]:
    """Each drawn cell of ``grid`` with its number, row by row: the parts of a cascade that
    brings (or takes) a grid of wide rows one cell at a time."""
    return [
        VGroup(grid.cells[i, j], *([grid.labels[i, j]] if (i, j) in grid.labels else []))
        for i in grid.shown_rows()
        for j in grid.shown_columns()
    ]
