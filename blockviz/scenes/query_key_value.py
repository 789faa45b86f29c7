"""Scene 2 — query, key, value: each row of the LayerNorm'd input is projected three ways for one
head; with rotary positions the query and key are then turned by their position."""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, Create, Line, TransformFromCopy, VGroup, config

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import (
    TIMES,
    exact,
    joined,
    later_term,
    products_hold,
    remainder,
    rest_term,
    sum_decimals,
)
from blockviz.scenes.choreography import (
    adopt,
    carry,
    cascade,
    ghost_of,
    one_after_another,
    products_then_sum,
    recolour,
    second_half,
    send,
    travelling,
)
from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import fit_width, frame_text_width, row_height
from blockviz.scenes.light_timing import after_the_caption, after_the_carry, out_before_the_move
from blockviz.scenes.look import CAPTION_SIZE, CELL_WIDTH, FRAME_MARGIN, WORK_SIZE
from blockviz.scenes.rotary import RotationPanel, angle_note, pair_dial, pairs_shown, worked_pair
from blockviz.scenes.symbols import indexed
from blockviz.scenes.text import formula, number, text, typeset
from blockviz.scenes.token_axis import visible_slots
from blockviz.scenes.wide import hidden_note, largest_entries, slots_of

NAME = "qkv"
TOKEN_AXIS = True
SHOWS_ONE_HEAD = True
ORDER = 40
DESCRIPTION = "each row projected into a query, a key and a value for one head, one query entry worked by hand (rotary: q and k turned by their position)"
CHAPTER = "Query, key, value"
CAPTION = "Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value."
POST_NORM_CAPTION = (
    "Each row of the block's input, not yet normalized (post-norm: the norm comes after the sum), is multiplied "
    "by one head's W_Q, W_K and W_V to give that token's query, key and value."
)
ROTARY_CAPTION = (
    "Each normalized row is multiplied by one head's W_Q, W_K and W_V to give that token's query, key and value; "
    "rotary positions then turn the query and the key by the token's position."
)

SOURCE_SLOTS = 4
"""Columns of the d_model-wide input drawn whole; a wider input draws its first column and the
one with the largest product in the query entry worked by hand, ⋯ between (three grids stand
beside it: no room for more)."""
HEAD_SLOTS = 3
"""Columns of each d_head-wide query, key and value grid drawn whole; a wider head draws its
first and the largest entry of the focus's query, the same columns in all three grids."""
ROLES = ("query", "key", "value")
MINUS = "\u2212"
X_GLYPH = 2
"""The x of "q = x W_Q + b_Q" among the formula's glyphs (q, =, x, …)."""
NAME_SIZE = CAPTION_SIZE - 4
EQUATION_SIZE = 30
"""The size of "q = x W_Q + b_Q" over each grid, and of a matrix's name under it."""
ROTARY_BOTTOM = 1.25
"""Height kept at the bottom for a caption of two lines (the rotary shots, a model's layer)."""
WORK_BAND = 0.95
"""Height kept above the caption for the two lines that work one entry of the query by hand."""


def attention_input(rec) -> tuple[str, str, str]:
    """What attention reads in ``rec``'s block: ``(field, its name under the grid, a caption)``.
    Pre-norm: the normalised input ``ln1`` (LayerNorm or RMSNorm); post-norm: the block's input
    ``resid_pre`` itself (the norm comes after the sum)."""
    if not rec.architecture.pre_norm:
        return (
            "resid_pre",
            "x",
            "each token's row of the block's input: attention reads it as it is (the norm comes after)",
        )
    norm = rec.architecture.norm_name
    return "ln1", f"{norm}(x)", f"{norm} of each token's row: the input to attention"


def source_columns(products: list[float]) -> list[int | None]:
    """The column slots of the attention input's grid (:data:`SOURCE_SLOTS`): a wider input draws
    its first column and that of the largest of ``products`` (the terms of the query entry
    worked by hand), so the written terms include the one that counts most."""
    if len(products) <= SOURCE_SLOTS:
        return list(range(len(products)))
    return slots_of(largest_entries(products, 2, first=1), len(products))


def head_columns(row: list[float]) -> list[int | None]:
    """The column slots of a query, key or value grid (:data:`HEAD_SLOTS`); ``row`` the focus's."""
    if len(row) <= HEAD_SLOTS:
        return list(range(len(row)))
    return slots_of(largest_entries(row, 2, first=1), len(row))


def query_entry(row: list[float]) -> int:
    """The entry of the focus's query ``row`` worked by hand: the largest in size of those its
    grid draws (:func:`head_columns`)."""
    return max((c for c in head_columns(row) if c is not None), key=lambda c: (abs(row[c]), -c))


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
    return max(
        pairs,
        key=lambda pair: (
            math.hypot(float(query[pair]), float(query[pair + half])) * abs(float(rec.rope_sin[i, pair])),
            -pair,
        ),
    )


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
    for head h: q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V. One entry of the focus's
    query is worked by hand first: its row times a column of W_Q, plus b_Q (the products from
    :meth:`~blockviz.block_record.BlockRecord.input_products`). With grouped-query attention
    k and v come from the key/value head h shares with other query heads. With rotary positions
    (Su et al. 2021, Eq. 34) the focus's query and its top key are then turned pair by pair
    (``query_rot``, ``key_rot``; :mod:`blockviz.scenes.rotary`)."""

    shows_one_head = SHOWS_ONE_HEAD  # its first caption says why --head auto chose the head

    def construct(self) -> None:
        rec, h, f = self.record, self.h, self.focus
        title = self.show_title(f"Query, key and value (head {h})")
        source, equations, grids = self.build(title)
        self.add(source)
        matrices = self.matrices
        self.step(Reveal(matrices), caption=self.matrices_caption())
        self.step(
            Conceal(matrices, rate_func=after_the_caption),  # its numbers stay while the caption names them
            Reveal(VGroup(*grids.values()), rate_func=second_half),
            caption=attention_input(rec)[2],
            run_time=3 * self.step_time,  # three grids, cell by cell, in the second half: ≤ 5 % a frame
        )
        light = Highlight(self.look, source.row(f))
        says = {
            "query": f"the query: what “{self.token_name(f)}” is looking for",
            "key": "the key: what it offers to be found by",
            "value": "the value: what it hands on when attended to",
        }
        self.step(FadeIn(light), caption=f"the row of “{self.token_name(f)}”")
        self.work_query_entry(source, grids["query"], light, says["query"])
        for role in ROLES[1:]:
            self.project_row(source, equations[role], grids[role], f, says[role], light)
        self.play(FadeOut(light), run_time=0.3)
        if rec.architecture.grouped:
            self.step(caption=f"query heads {heads_text(shared_heads(rec.config, h))} share this key and value")
        rest = [i for i in source.shown_rows() if i != f]
        if rest:
            self.step(
                *(animation for role in ROLES for animation in self.fill(grids[role], rest)),
                caption=f"every row the same way, three times: the width's {rec.config.d_model} numbers in, a head's {rec.config.d_head} out",
            )
        if rec.architecture.rotary:
            self.rotate(title)

    def build(self, title):
        rec, h, f, look = self.record, self.h, self.focus, self.look
        slots = self.token_slots()
        height = row_height(len(slots), height=3.9)  # compact rows: the work lines take a band under the grids
        field, name, _ = attention_input(rec)
        values = rec.tensors[field]
        self.entry = query_entry(rec.query[h, f].tolist())
        columns = source_columns(rec.input_products("query", h, f)[:, self.entry].tolist())
        source = NumberGrid(
            values,
            self.token_names,
            axis_labels("d_model", rec.tokens, rec.config.d_model),
            look,
            source=(field,),
            row_slots=slots,
            column_slots=columns,
            cell_height=height,
        )
        self.name_under(
            source, name, look.muted, hidden_note(len(source.shown_columns()), rec.config.d_model, "columns")
        )
        names = axis_labels("d_head", rec.tokens, rec.config.d_head)
        bias = (
            (lambda letter: f" + b_{letter}") if rec.architecture.bias else (lambda letter: "")
        )  # a model without biases: q = x W_Q
        grids, equations = {}, {}
        head_slots = head_columns(
            rec.query[h, f].tolist()
        )  # one set of columns for the three: they line up under one note
        for role in ROLES:
            color = getattr(look, role)
            head_values = getattr(rec, role)[h]
            grid = NumberGrid(
                head_values,
                None,
                names,
                look,
                source=(role, h),
                row_slots=slots,
                column_slots=head_slots,
                column_header_color=color,
                cell_height=height,
                show_numbers=False,
                filled=False,
            )
            self.name_under(grid, role, color)
            grids[role] = grid
            letter = role[0].upper()
            equations[role] = formula(f"${role[0]} = x\\,W_{letter}{bias(letter)}$", color, EQUATION_SIZE)
        projections = VGroup(
            *(VGroup(equations[role], grids[role]).arrange(DOWN, buff=0.15) for role in ROLES)
        ).arrange(RIGHT, buff=0.4, aligned_edge=UP)
        note = hidden_note(len(grids["query"].shown_columns()), rec.config.d_head, "columns")
        if note:  # one line under the three (each as wide as its cells)
            grids["value"].header_group.add(
                text(f"each: {note}", NAME_SIZE, look.muted).next_to(
                    VGroup(*(grid.header_group[-1] for grid in grids.values())), DOWN, buff=0.1
                )
            )
        layout = VGroup(source, projections).arrange(RIGHT, buff=0.5)
        projections.shift(
            UP * (source.cell_group.get_top()[1] - grids["query"].cell_group.get_top()[1])
        )  # rows level with the input's
        caption_band = ROTARY_BOTTOM if note or rec.source.is_model else 0.9  # a model's captions: two lines
        self.place(layout, title, bottom_space=caption_band + WORK_BAND, grow=1.4)
        self.work_bottom = -config.frame_height / 2 + caption_band + 0.1
        # The working's place: a faint rule under it, there from the start (the lines come and go above it).
        self.work_rule = Line(
            LEFT * frame_text_width() / 2, RIGHT * frame_text_width() / 2, color=look.grid, stroke_width=1.5
        ).set_y(self.work_bottom - 0.09)
        self.add(*equations.values(), self.work_rule)
        self.matrices = self.weight_matrices(source, grids)
        return source, equations, grids

    def weight_matrices(self, source: NumberGrid, grids: dict) -> VGroup:
        """Head h's W_Q, W_K and W_V ``(d_model, d_head)`` from the record's parameters, each
        where its query, key or value grid will be: its rows the input's drawn columns (the
        features they multiply), its columns the grid's, elided alike (⋮, ⋯). Beside few tokens
        it draws fewer rows (at most one more than the grid), so it stays above the work band."""
        rec, look = self.record, self.look
        matrices = VGroup()
        rows = source.column_slots
        if len(rows) > max(2, len(grids["query"].row_slots) + 1):
            rows = visible_slots(rec.config.d_model, 0, max(2, len(grids["query"].row_slots) + 1))
        for role, grid in grids.items():
            letter = role[0].upper()
            parameter = f"attn.W_{letter}"
            head = self.h if role == "query" else rec.config.kv_head_of(self.h)
            matrix = NumberGrid(
                rec.params[parameter][head],
                None,
                axis_labels("d_head", rec.tokens, rec.config.d_head),
                look,
                source=("params", parameter, head),
                row_slots=rows,
                column_slots=grid.column_slots,
                cell_width=grid.cell_width,  # wider if its numbers need it
                cell_height=grid.cell_height,
                column_header_color=getattr(look, role),
            )
            matrix.scale(grid.scale_now)
            matrix.shift(grid.cell_group.get_top() - matrix.cell_group.get_top())  # centred where the grid will be
            name = formula(f"$W_{letter}$", getattr(look, role), EQUATION_SIZE).scale(grid.scale_now)
            matrix.header_group.add(name.next_to(matrix.body(), DOWN, buff=0.2 * grid.scale_now))
            matrices.add(matrix)
        rows, columns = len([i for i in rows if i is not None]), len(grids["query"].shown_columns())
        hidden = [
            note
            for note in (
                hidden_note(rows, rec.config.d_model, "rows"),
                hidden_note(columns, rec.config.d_head, "columns"),
            )
            if note
        ]
        if hidden:  # one line under the three
            note = text(f"each: {', '.join(hidden)}", NAME_SIZE, look.muted).scale(grids["query"].scale_now)
            matrices[-1].header_group.add(
                note.next_to(VGroup(*(matrix.header_group[-1] for matrix in matrices)), DOWN, buff=0.1)
            )
        return matrices

    def matrices_caption(self) -> str:
        rec = self.record
        shape = f"{rec.config.d_model} × {rec.config.d_head} each, width × head width"
        return f"head {self.h}'s learned query, key and value weights: {shape}"

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
        return cascade(self, grid, fills, {key: grid.number_at(*key, fill=fills[key]) for key in keys})

    def work_lines(self, source: NumberGrid, c: int) -> VGroup:
        """``q₂ of “it” = x₀ × W₀₂ + … + b₂`` over ``= p₀ + … + b₂ = q₂``: entry ``c`` of the
        focus's query from its row of the attention input, column c of W_Q and b_Q, with the
        record's products (:meth:`~blockviz.block_record.BlockRecord.input_products`). The
        input's columns drawn in ``source`` are written; the rest are one term. ``.xs`` are the
        written inputs, ``.total`` the query entry."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        field = attention_input(rec)[0]
        columns = source.shown_columns()
        xs = [
            number(rec.tensors[field][f, m].item(), WORK_SIZE, look.text, source=(field, f, m))
            if k == 0
            else later_term(rec.tensors[field][f, m].item(), look.text, (field, f, m))  # "− 0.86" after the first
            for k, m in enumerate(columns)
        ]
        ws = [
            number(
                rec.params["attn.W_Q"][h, m, c].item(), WORK_SIZE, look.query, source=("params", "attn.W_Q", h, m, c)
            )
            for m in columns
        ]
        bias = (rec.params["attn.b_Q"][h, c].item(), ("params", "attn.b_Q", h, c)) if "attn.b_Q" in rec.params else None
        hidden = rec.config.d_model - len(columns)
        terms = self.entry_terms(columns, c, bias)
        total = number(rec.query[h, f, c].item(), WORK_SIZE, look.query, source=("query", h, f, c))
        first = self.factors_line(c, xs, ws, hidden, bias)
        second = self.terms_line(terms, total, hidden and len(xs), products_hold(xs, ws, terms[: len(xs)]))
        lines = VGroup(first, second)
        lines[1].next_to(lines[0], DOWN, buff=0.18).align_to(lines[0][2], LEFT)
        fit_width(lines, frame_text_width())
        lines.move_to([0, self.work_bottom + lines.height / 2, 0])
        self.shown_sum(terms, total)
        lines.xs, lines.total = xs, total
        return lines

    def entry_terms(self, columns: list[int], c: int, bias: tuple | None) -> list:
        """The terms of query entry ``c``: the written products (the record's), the hidden ones
        as one term (the entry less the written terms and the bias), the bias; with one more
        decimal where rounding would break the sum."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        products = rec.input_products("query", h, f)[:, c].tolist()
        value = rec.query[h, f, c].item()
        written = [(products[m], ("input_products", "query", h, f, m, c)) for m in columns]
        biases = [bias] if bias else []
        hidden = len(columns) < rec.config.d_model
        rest = value - sum(term for term, _ in written + biases)
        decimals = sum_decimals(
            [([term for term, _ in written] + ([rest] if hidden else []) + [term for term, _ in biases], value)]
        )
        terms = [
            number(term, WORK_SIZE, look.text, decimals, source=src)
            if index == 0
            else later_term(term, look.text, src, decimals)
            for index, (term, src) in enumerate(written)
        ]
        if hidden:  # the entry split for display: the written products, the rest as one term, the bias
            terms.append(remainder(value, ("query", h, f, c), written + biases, WORK_SIZE, look.muted, decimals))
        terms += [later_term(term, look.query, src, decimals) for term, src in biases]
        return terms

    def factors_line(self, c: int, xs: list, ws: list, hidden: int, bias: tuple | None) -> VGroup:
        """``q₂ of “it” = x × w + x × w (+ … (N more)) + b``."""
        look = self.look
        parts = [
            typeset(f"{indexed('q', c)} of “{self.token_name(self.focus)}”", WORK_SIZE, look.query),
            text("=", WORK_SIZE, look.muted),
        ]
        for index, (x, w) in enumerate(zip(xs, ws)):
            if index:  # "− 0.86 × 2.25" for a negative x after the first, not "+ −0.86 × 2.25"
                parts = joined(parts, x, text("+", WORK_SIZE, look.muted))
            else:
                parts.append(x)
            parts += [text(TIMES, WORK_SIZE, look.muted), w]
        if hidden:
            parts.append(text(f"+ … ({hidden} more)", WORK_SIZE, look.muted))
        if bias:  # "− 0.05" for a negative bias, not "+ −0.05"
            parts = joined(parts, later_term(bias[0], look.query, bias[1]), text("+", WORK_SIZE, look.muted))
        return VGroup(*parts).arrange(RIGHT, buff=0.12)

    def terms_line(self, terms: list, total, rest_at: int, products_as_shown: bool) -> VGroup:
        """``= p + p (+ (the rest) r) + b = total``: "≈" for a sign the shown numbers do not
        bear out; ``rest_at`` the index of the hidden terms' one term (0: none)."""
        look = self.look
        parts = [text("=" if products_as_shown else "≈", WORK_SIZE, look.muted)]
        for index, term in enumerate(terms):
            plus = text("+", WORK_SIZE, look.muted)
            if rest_at and index == rest_at:
                parts += rest_term(term, text("(the rest)", WORK_SIZE - 2, look.muted), plus, look.muted)
                terms[index] = parts[-1]  # the number drawn (its magnitude, if negative) is the sum's term
            else:
                parts = joined(parts, term, plus) if index else parts + [term]
        parts += [text("=" if exact(terms, total) else "≈", WORK_SIZE, look.muted), total]
        return VGroup(*parts).arrange(RIGHT, buff=0.12)

    def work_query_entry(self, source: NumberGrid, grid: NumberGrid, light: Highlight, caption: str) -> None:
        """One entry of the focus's query by hand: its row's numbers come down into the work
        line beside column c of W_Q, the products appear and add up (with b_Q), the sum lands
        in the query's cell; then the rest of the row arrives."""
        f = self.focus
        c = self.entry
        lines = self.work_lines(source, c)
        moved = {id(x) for x in lines.xs}
        rest_of_first = VGroup(*(part for part in lines[0] if id(part) not in moved))
        sources = [source.labels[f, m] for m in source.shown_columns()]
        self.step(
            FadeIn(rest_of_first),
            carry(self, sources, lines.xs),
            FadeOut(light, rate_func=out_before_the_move),
            caption=f"query entry {c}, the largest in size: the row times weight column {c}"
            + (", plus the bias…" if "attn.b_Q" in self.record.params else "…"),
        )  # one line: the work lines sit above the caption
        self.step(products_then_sum(lines[1]), caption="…the products, added up: one number of the query")
        fill = grid.color_of(grid.values[f][c])
        cell_label = grid.number_at(f, c, fill=fill)
        recolouring = recolour(self, grid, {(f, c): fill})
        grid.set_label(f, c, cell_label)
        adopt(self, grid, [cell_label])
        self.step(
            *recolouring,
            carry(self, [lines.total], [cell_label]),
            caption="it lands in the query's cell",
            hold=self.hold * 0.6,
        )
        self.remove(*lines.xs)
        lines[0].add(*lines.xs)
        self.add(lines)
        others = [column for column in grid.shown_columns() if column != c]
        self.step(*self.fill(grid, [f], others), FadeIn(light), caption=caption)
        self.worked_lines = lines  # its W_Q numbers leave after this caption, which names W_Q

    def project_row(
        self, source: NumberGrid, equation, grid: NumberGrid, i: int, caption: str, light: Highlight
    ) -> None:
        """Row ``i``'s numbers slide into the x of the projection's formula, shrinking to its
        size, and its new row arrives in ``grid``; ``light``, framing the row, is out of their
        way while they leave it."""
        sources = [source.labels[i, j] for j in source.shown_columns()]
        worked, self.worked_lines = getattr(self, "worked_lines", None), None
        self.play(
            *([FadeOut(worked, rate_func=after_the_caption)] if worked is not None else []),
            self.absorb(sources, equation[X_GLYPH]),
            FadeOut(light, rate_func=out_before_the_move),
            *self.say(caption),
            run_time=self.step_time * 0.8,
        )
        self.step(*self.fill(grid, [i]), FadeIn(light))

    def absorb(self, sources, target):
        """One animation: copies of ``sources`` on their chips move as one row onto ``target``,
        shrinking to its height, and leave (the row becomes the formula's x)."""
        copies = [travelling(label, self.look) for label in sources]
        self.add(*copies)
        self.after_play.append(lambda: self.remove(*copies))
        row = VGroup(*copies)
        move = row.animate.scale(min(1.0, target.height * 1.6 / row.height)).move_to(target)
        return one_after_another(move, AnimationGroup(*(Conceal(copy) for copy in copies)))

    # -- rotary positions --------------------------------------------------------------------
    def rotate(self, title) -> None:
        """The focus's query turned pair by pair (one pair worked on a dial), then the key it
        attends to most, turned by its own position."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        pairs = pairs_shown(rec.query[h, f])
        j = key_to_turn(self.top_keys_of(f), f)
        width = max(
            CELL_WIDTH,
            cell_width_for(rec.query[h, f][None, :]),
            cell_width_for(rec.key[h, j][None, :]),
            cell_width_for(rec.query_rot[h, f][None, :]),
            cell_width_for(rec.key_rot[h, j][None, :]),
        )  # one column width for both panels
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
        self.step(
            one_after_another(AnimationGroup(*leaving), AnimationGroup(Reveal(top), FadeIn(ghost), FadeIn(work_ghost))),
            caption=f"rotary positions: no position was added to x; instead the query and key are turned by their position ({f} for “{self.token_name(f)}”)",
        )
        half = query.half
        light = Highlight(look, query.pair_cells(worked))
        self.step(
            FadeIn(light),
            FadeIn(dial.first),
            caption=f"features d{worked} and d{worked + half} form one pair: a 2-D arrow (the first half of the head pairs with the second)",
        )
        self.step(
            FadeOut(ghost),
            FadeIn(note),
            Create(dial.arc),
            TransformFromCopy(dial.before_arrow, dial.after_arrow),
            caption=f"the pair turns by the angle position × ω, pair {worked}'s own frequency (each pair has its own); the angle's cos and sin are in the record",
        )
        factors = [
            query.before.labels[0, worked],
            query.angles.labels[0, worked],
            query.before.labels[0, worked + half],
            query.angles.labels[1, worked],
            query.before.labels[0, worked],
            query.angles.labels[1, worked],
            query.before.labels[0, worked + half],
            query.angles.labels[0, worked],
        ]
        signs = VGroup(
            *(part for line in work for part in line[1] if part not in work.results and part not in work.factors)
        )
        self.step(
            FadeIn(VGroup(*work.symbolic)),
            FadeIn(signs),
            carry(self, factors, work.factors),
            FadeOut(light, rate_func=out_before_the_move),
            caption="each entry of q′ mixes the pair's two entries by the angle's cos and sin: a rotation (RoFormer, Eq. 34)",
        )
        self.step(
            FadeOut(work_ghost),
            *(FadeIn(result) for result in work.results),
            caption="the turned pair",
            run_time=self.step_time * 0.5,
        )
        self.carry_results(work.results, query.after, [worked, worked + half], light)
        others = [j for j in query.after.shown_columns() if j not in (worked, worked + half)]
        self.play(FadeOut(light), run_time=0.3)
        if others:  # a head of one pair (d_head = 2) has no other
            self.step(
                *self.fill(query.after, [0], others),
                caption=f"every pair turns by position × its own ω: pair 0 fastest, pair {half - 1} slowest; the lengths stay the same",
            )
        self.key_rotation(title, top, query, VGroup(side, dial.after_arrow, dial.arc), pairs)

    def key_rotation(self, title, top, query: RotationPanel, side, pairs: list[int]) -> None:
        """The key the focus attends to most, before and after its own rotation, under the query."""
        rec, h, f, look = self.record, self.h, self.focus, self.look
        j = key_to_turn(self.top_keys_of(f), f)
        key = RotationPanel(rec, "key", h, j, pairs, look, look.key, self.cell_width, headers=False)
        self.panels = (query, key)
        shared = shared_heads(rec.config, h)
        also = (
            f" (key/value head {rec.config.kv_head_of(h)}, shared by query heads {heads_text(shared)})"
            if len(shared) > 1
            else ""
        )
        key_name = text(f"key of “{self.token_name(j)}”, position {j}{also}", NAME_SIZE, look.key)
        bottom = VGroup(key_name, key).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        bottom.scale(query.before.scale_now)  # the query panel's size now: the same cells
        layout = VGroup(top.copy(), bottom).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
        bottom.shift(
            RIGHT * (layout[0][1].before.cell_group.get_left()[0] - key.before.cell_group.get_left()[0])
        )  # the columns line up
        scale_before = layout[0].width
        self.place(layout, title, bottom_space=ROTARY_BOTTOM, grow=1.0)
        centre_on(layout, VGroup(layout[0][1], key))  # the panels in the middle, not a long key name
        factor = layout[0].width / scale_before
        self.step(
            one_after_another(Conceal(side), top.animate.scale(factor).move_to(layout[0]), Reveal(bottom)),
            caption=f"the key of “{self.token_name(j)}”, one “{self.token_name(f)}” attends to most, turns by its own position, {j}",
        )
        self.step(
            *self.fill(key.after, [0]),
            caption=f"so q′ · k′ depends on how far apart the two are ({f} − {j} = {f - j} position{'' if f - j == 1 else 's'}): the scores use q′ and k′",
        )

    def carry_results(self, results, grid: NumberGrid, columns: list[int], light: Highlight) -> None:
        """The worked results slide into their cells of ``grid``, which take their numbers;
        ``light``, out of their way while they travel, frames the pair again once they land."""
        self.play(
            send(self, list(results), [grid.cells[0, j] for j in columns]),
            FadeIn(light, rate_func=after_the_carry),
            run_time=self.step_time * 0.8,
        )
        self.step(*self.fill(grid, [0], columns), caption="the turned pair: its two entries of q′")
