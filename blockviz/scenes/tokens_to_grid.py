"""Scene 1 — tokens to grid: the sentence splits into tokens, and each token becomes one row of
the grid that enters the block — how depends on the block:

* blockviz's own block, and layer 0 of a model with learned positions added (GPT-2): embedding
  + position = input x, entry by entry;
* layer 0 of BERT: x = LayerNorm(embedding + position + token type) — the record holds the
  embedding and position rows and x, not the token-type row nor that LayerNorm's statistics;
* rotary positions at layer 0: x is the embedding; positions enter inside attention, as a
  rotation of the query and key (the qkv scene);
* layer L > 0 of a trained model: x is the output of layer L − 1 (``resid_pre``).
"""

from __future__ import annotations

from dataclasses import dataclass

from manim import DOWN, RIGHT, UP, Arrow, DashedVMobject, RoundedRectangle, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import ROUNDING_NOTE, adds_up_as_written
from blockviz.scenes.choreography import cascade, fly, one_after_another, send
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import ELLIPSIS_ACROSS, Highlight, NumberGrid, cell_width_for
from blockviz.scenes.layout import column_width, fitting, row_height, wrapped
from blockviz.scenes.light_timing import out_before_the_move
from blockviz.scenes.look import CAPTION_SIZE, CELL_WIDTH, NOTE_SIZE, TITLE_SIZE, WORK_SIZE
from blockviz.scenes.text import text
from blockviz.scenes.wide import edges_and_largest, hidden_note, slots_of
from blockviz.tokens import display_token

NAME = "tokens"
TOKEN_AXIS = True
ORDER = 20
DESCRIPTION = "tokens become rows: embedding + position = the n × d_model input grid (a model's layer: its real input)"
CHAPTER = "Tokens to grid"
CAPTION = "Each token becomes one row of numbers: its embedding plus its position's {positions}, giving the grid that enters the block: one row per token, as wide as the residual stream."
LATER_LAYER_CAPTION = (
    "Each token has one row of numbers: layer {layer}'s input is layer {previous_layer}'s output, the "
    "grid the layers before made from the tokens."
)
ROTARY_CAPTION = (
    "Each token becomes one row of numbers: its embedding alone, with no position vector added (rotary positions "
    "turn the query and key inside attention), giving the n × d_model grid that enters the block."
)

FEATURE_SLOTS = 4
"""Columns drawn of each d_model-wide grid when it is no wider; a wider one draws its first, its
last and its largest entries (of the focus row), ⋯ between: :data:`WIDE_SLOTS` of them."""
WIDE_SLOTS = {1: 8, 2: 4, 3: 3}
"""Columns drawn of a wide d_model, by how many grids stand side by side."""
NAME_SIZE = CAPTION_SIZE - 4
ROW_WIDTH = 11.0
"""Width the cells of one or two grids share (wider cells when there are few: the grids fill the frame)."""
WIDENED_FITS = 13.7
"""The widest the row of widened cells may be (the frame's width less its margins)."""
ROW_FITS = 15.6
"""The widest the grids may stand side by side, their cells as wide as their numbers, before
fewer columns are drawn (the frame fits 13.7 at full size: a little shrinking keeps numbers ≥ 11 px)."""


@dataclass(frozen=True)
class InputStory:
    """How the block's input x (``resid_pre``) is made from the tokens, as the scene tells it:
    ``terms`` the recorded fields drawn before x (with their names), ``joiners`` the signs
    between them and before x ("+", "=", or a named step such as "LayerNorm"), ``adds_up``
    whether x is their entry-by-entry sum, ``name`` x's name, ``says`` the caption of x's row."""

    terms: tuple[tuple[str, str], ...]
    joiners: tuple[str, ...]
    adds_up: bool
    name: str
    says: str
    last: str


def input_story(rec) -> InputStory:
    """Which :class:`InputStory` ``rec``'s block input has (the module docstring lists them)."""
    source = rec.source
    layer = source.layer if source.is_model else 0
    if source.is_model and layer > 0:
        return InputStory(
            (),
            (),
            False,
            f"x: layer {layer - 1}'s output",
            f"layer {layer}'s input is the output of layer {layer - 1} — the tokens after {layer} layer{'s' if layer > 1 else ''} of attention and FFN, not embedding + position",
            f"every row alike: the {rec.n} × {rec.config.d_model} grid that enters layer {layer}",
        )
    if rec.architecture.rotary:
        return InputStory(
            (("embed", "embedding"),),
            ("=",),
            False,
            "input x",
            "no position is added: x is the embedding itself; positions enter inside attention, as a rotation of the query and key",
            f"every row alike: the {rec.n} × {rec.config.d_model} grid that enters the block",
        )
    if source.is_model and rec.architecture.post_norm:
        return InputStory(
            (("embed", "embedding"), ("pos_embed", "position")),
            ("+", "LayerNorm"),
            False,
            "input x",
            "…plus its token type's row, then a LayerNorm: its row of x (that row and the LayerNorm's statistics are not in the record)",
            f"every row alike: x = LayerNorm(embedding + position + token type), the {rec.n} × {rec.config.d_model} grid that enters layer 0",
        )
    return InputStory(
        (("embed", "embedding"), ("pos_embed", "position")),
        ("+", "="),
        True,
        "input x",
        "…added entry by entry: its row of the input x",
        f"every row alike: the {rec.n} × {rec.config.d_model} grid that enters the block",
    )


def is_special(rec, i: int) -> bool:
    """Whether token ``i`` is a special token a model's tokenizer added ([CLS], [SEP],
    <|endoftext|>…): the record's ``special`` flags (none in a record without them)."""
    flags = getattr(rec, "special", ())
    return bool(flags) and bool(flags[i])


STRIP_GROWTH = 1.8
"""How much the sentence and its token chips may grow over the grids' row (at most its width)."""

LAYOUT_GAP = 0.45
"""The gap between the sentence (or its chips) and the grids' row."""

PLACE_GROWTH = 1.6
"""How much the sentence and row together may grow to fill the frame."""

CHIP_GAP = 0.16
"""The gap between two token chips as they are built (side by side, about the sentence's width)."""
CHIP_HEIGHT = 0.5
"""A token chip's height as built."""
SPLIT_GAP = 0.6
"""The gap between two token chips once the sentence has split into them (the frame's units)."""


class TokensToGrid(RecordScene):
    """The sentence splits into tokens; each token becomes one row of the ``(n, d_model)`` grid
    that enters the block (``resid_pre``): embedding + position for blockviz's own block, or the
    record's own story (:func:`input_story`) for a trained model's layer or rotary positions."""

    def construct(self) -> None:
        rec = self.record
        story = input_story(rec)
        title = self.show_title(
            "Tokens become rows of numbers"
            if not story.name.startswith("x:")
            else f"Tokens: layer {rec.source.layer}'s input rows"
        )
        sentence, chips, grids = self.build(title, story)
        first, resid = grids.grids[0], grids.grids[-1]
        tokens = "token" if rec.n == 1 else "tokens"
        self.step(
            FadeIn(sentence),
            FadeIn(
                VGroup(
                    *(VGroup(grid.cell_group, grid.ellipsis_group, grid.names) for grid in grids.grids), *grids.signs
                )
            ),
            caption="one sentence, and the grid it will become",
        )
        drawn = f" ({len(first.shown_rows())} of them drawn)" if len(first.shown_rows()) < rec.n else ""
        special = [i for i in range(rec.n) if is_special(rec, i)]
        extra = (
            f": the model's own, with {len(special)} special token{'s' if len(special) > 1 else ''} its tokenizer adds (dashed)"
            if special
            else ""
        )
        self.step(
            one_after_another(FadeOut(sentence), FadeIn(chips)),
            caption=f"the sentence splits into {rec.n} {tokens}{drawn}{extra}",
        )
        row_headers = {id(member) for header in first.row_headers.values() for member in header.get_family()}
        others = [
            header
            for grid in grids.grids
            for header in grid.header_group
            if id(header) not in row_headers and header is not grid.names
        ]
        arrivals = [fly(self, chips.labels[i], first.row_headers[i]) for i in first.shown_rows()]
        self.step(*arrivals, FadeOut(chips), FadeIn(VGroup(*others)), caption="one row per token")
        self.remove(*(mobject for mobject in self.mobjects if mobject is not title and mobject is not self.caption))
        self.add(grids)
        self.play(self.refit(grids, title, bottom_space=self.bottom_space, grow=1.3), run_time=self.step_time * 0.6)
        says = {
            "embed": f"each token's embedding: the width, {rec.config.d_model} numbers",
            "pos_embed": f"plus its position's {self.wording.positions}",
        }
        if rec.source.is_model:
            says = {
                "embed": f"each token's embedding, its row of the model's table: d_model = {rec.config.d_model} numbers",
                "pos_embed": "plus its position's row of the model's position table",
            }
        for grid, (field, _) in zip(grids.grids, story.terms):
            self.step(*self.fill_cells(grid), caption=says[field])
        if story.terms:
            self.add_row(grids.grids[:-1], resid, self.focus, story)
            rest = [i for i in resid.shown_rows() if i != self.focus]
        else:
            rest = resid.shown_rows()
            self.step(*self.fill_cells(resid, [self.focus]), caption=story.says)
            rest = [i for i in rest if i != self.focus]
        if rest:
            self.step(*self.fill_cells(resid, rest), caption=story.last)

    def build(self, title, story: InputStory):
        rec, look = self.record, self.look
        slots = self.token_slots()
        fields = [field for field, _ in story.terms] + ["resid_pre"]
        names = [name for _, name in story.terms] + [story.name]
        for count in range(WIDE_SLOTS[len(fields)], 1, -1):  # fewer columns while the row would shrink its numbers
            columns = self.columns(fields, count)
            if self.grid_row(fields, names, story, slots, columns, widen=0.0).width <= ROW_FITS:
                break
        for share in (1.0, 0.9, 0.8, 0.7, 0.0):  # cells widened as far as the row still fits at full size
            row = self.grid_row(fields, names, story, slots, columns, widen=share)
            if row.width <= WIDENED_FITS:
                break
        chips = self.chips(slots)
        sentence = wrapped(display_token(rec.sentence), WORK_SIZE, look.text, max(row.width, 6.0), max_lines=4)
        strip = VGroup(sentence, chips.move_to(sentence))  # the sentence, then its tokens, in one place
        strip.scale(self.strip_growth(strip, row, title))  # the scene's first idea, large enough to read
        layout = VGroup(strip, row).arrange(DOWN, buff=LAYOUT_GAP)
        self.place(layout, title, bottom_space=self.bottom_space, grow=PLACE_GROWTH)
        self.spread(chips, row.width)
        return sentence, chips, row

    def strip_growth(self, strip: VGroup, row: VGroup, title) -> float:
        """How much the sentence ``strip`` grows over ``row``: up to :data:`STRIP_GROWTH`, no
        wider than the row, and only into height the row leaves free (the row is drawn as large
        as without the strip grown: its numbers and notes keep their size)."""
        top, bottom = self.band(row, title, self.bottom_space)
        ungrown = VGroup(strip.copy(), row.copy()).arrange(DOWN, buff=LAYOUT_GAP)
        scale, _ = fitting(ungrown, top, bottom, PLACE_GROWTH)
        free = (top - bottom) / scale - LAYOUT_GAP - row.height
        return max(1.0, min(STRIP_GROWTH, row.width / strip.width, free / strip.height))

    @property
    def bottom_space(self) -> float:
        """Height kept for the caption: a trained model's captions say more (two lines)."""
        return 1.35 if self.record.source.is_model else 0.9

    def grid_row(
        self, fields: list[str], names: list[str], story: InputStory, slots, columns, widen: float = 1.0
    ) -> VGroup:
        """The grids of ``fields`` side by side with their signs, drawing ``columns``: ``.grids``,
        ``.signs``. One or two grids get cells widened to share ``widen`` × :data:`ROW_WIDTH`
        (they fill the frame as three do); 0: cells as wide as their numbers."""
        rec, look = self.record, self.look
        d_model = rec.config.d_model
        shown_columns = [j for j in columns if j is not None]
        shown_rows = [i for i in slots if i is not None]
        width = (
            CELL_WIDTH
            if len(fields) == 3 or not widen
            else column_width(len(shown_columns), width=widen * ROW_WIDTH / len(fields))
        )
        widest = max(
            cell_width_for([[rec.tensors[field][i, j].item() for j in shown_columns] for i in shown_rows])
            for field in fields
        )
        common = dict(
            look=look,
            row_slots=slots,
            column_slots=columns,
            show_numbers=False,
            filled=False,
            cell_height=row_height(len(slots), height=4.2),
            cell_width=max(width, widest),
            fit_numbers=False,
        )  # as wide as the numbers drawn (a hidden column's may be far wider)
        labels = axis_labels("d_model", rec.tokens, d_model)
        grids = [
            NumberGrid(
                rec.tensors[field],
                self.token_names if k == 0 else None,
                labels,
                source=(field,),
                **common,
            )
            for k, field in enumerate(fields)
        ]
        for grid, name in zip(grids, names):
            grid.names = text(name, NAME_SIZE, look.muted).next_to(grid.body(), DOWN, buff=0.2)
            grid.header_group.add(grid.names)
        note = hidden_note(len(shown_columns), d_model, "columns")
        if note:
            grids[-1].header_group.add(text(note, NAME_SIZE, look.muted).next_to(grids[-1].names, DOWN, buff=0.1))
        joiners = list(story.joiners)
        rounded = story.adds_up and not self.sums_as_shown(fields, shown_rows, shown_columns)
        if rounded:
            joiners[-1] = "≈"  # x is their sum; rounded on its own, a shown entry may be a unit off
        signs = [self.joiner(shown) for shown in joiners]
        parts = [grids[0]]
        for sign, grid in zip(signs, grids[1:]):
            parts += [sign, grid]
        row = VGroup(*parts).arrange(RIGHT, buff=0.3, aligned_edge=UP)
        for sign in signs:
            sign.set_y(grids[0].cell_group.get_y())
        if rounded:  # under the whole row, centred: it does not widen the row
            grids[-1].header_group.add(text(ROUNDING_NOTE, NOTE_SIZE, look.muted).next_to(row, DOWN, buff=0.12))
        row.grids, row.signs = grids, signs
        return row

    def columns(self, fields: list[str], count: int) -> list[int | None]:
        """The d_model columns drawn, shared by every grid: all of a narrow one; else the first,
        the last and the largest of the focus's rows (:func:`~blockviz.scenes.wide.edges_and_largest`)."""
        rec, f = self.record, self.focus
        d_model = rec.config.d_model
        if d_model <= FEATURE_SLOTS:
            return list(range(d_model))
        if d_model <= 16 and not rec.source.is_model:  # blockviz's own block: the first columns, as always
            return list(range(FEATURE_SLOTS - 1)) + [None]
        return slots_of(edges_and_largest([rec.tensors[field][f].tolist() for field in fields], count), d_model)

    def sums_as_shown(self, fields: list[str], rows: list[int], columns: list[int]) -> bool:
        """Whether every drawn entry of the last of ``fields`` (x) is, as shown, the sum of the
        others' entries as shown: else the grids are joined by "≈"."""
        tensors = self.record.tensors
        return all(
            adds_up_as_written([tensors[field][i, j].item() for field in fields[:-1]], tensors[fields[-1]][i, j].item())
            for i in rows
            for j in columns
        )

    def joiner(self, shown: str):
        """A sign between two grids: "+", "=" or "≈" large; a named step (LayerNorm) as an arrow under its name."""
        look = self.look
        if shown in ("+", "=", "≈"):
            return text(shown, TITLE_SIZE, look.text)
        name = text(shown, NAME_SIZE, look.text)
        arrow = Arrow(
            name.get_left(),
            name.get_right(),
            buff=0,
            color=look.muted,
            stroke_width=3,
            max_tip_length_to_length_ratio=0.15,
        )
        return VGroup(name, arrow.next_to(name, DOWN, buff=0.08))

    def chips(self, slots) -> VGroup:
        """The drawn tokens as chips in one line (⋯ where tokens are left out); ``.labels[i]``.
        A special token (:func:`is_special`) has a dashed outline."""
        look, rec = self.look, self.record
        parts, labels = [], {}
        for i in slots:
            if i is None:
                parts.append(text(ELLIPSIS_ACROSS, WORK_SIZE, look.muted))
                continue
            label = text(self.token_names[i], WORK_SIZE, look.text)
            box = RoundedRectangle(
                corner_radius=0.06,
                width=label.width + 0.24,
                height=CHIP_HEIGHT,
                stroke_color=look.grid,
                stroke_width=1.5,
                fill_color=look.grid,
                fill_opacity=0.35,
            )
            if is_special(rec, i):
                outline = DashedVMobject(
                    box.copy().set_fill(opacity=0).set_stroke(look.highlight, width=2.5), num_dashes=24
                )
                box.set_stroke(opacity=0)
                parts.append(VGroup(box, outline, label.move_to(box)))
            else:
                parts.append(VGroup(box, label.move_to(box)))
            labels[i] = label
        chips = VGroup(*parts).arrange(RIGHT, buff=CHIP_GAP)
        chips.labels = labels
        return chips

    @staticmethod
    def spread(chips: VGroup, width: float) -> None:
        """Set the placed ``chips`` :data:`SPLIT_GAP` apart about their centre, as far as the
        line stays ``width`` wide, and half a chip lower, towards the grids they become: the
        sentence is seen to come apart into them (the sentence and the layout keep the size the
        chips side by side gave them)."""
        height = max(part.height for part in chips)
        centre = chips.get_center() + DOWN * height / 2
        if len(chips) > 1:
            room = (width - sum(part.width for part in chips)) / (len(chips) - 1)
            chips.arrange(RIGHT, buff=max(CHIP_GAP * height / CHIP_HEIGHT, min(SPLIT_GAP, room)))
        chips.move_to(centre)

    def fill_cells(self, grid: NumberGrid, rows: list[int] | None = None) -> list:
        """Animations colouring the cells of ``rows`` (every drawn row by default) and writing their numbers."""
        rows = grid.shown_rows() if rows is None else rows
        keys = [(i, j) for i in rows for j in grid.shown_columns()]
        fills = {key: grid.color_of(grid.values[key[0]][key[1]]) for key in keys}
        labels = {key: grid.number_at(*key, fill=fills[key]) for key in keys}
        return cascade(self, grid, fills, labels)

    def add_row(self, terms: list[NumberGrid], resid: NumberGrid, i: int, story: InputStory) -> None:
        """Row ``i``: its entries of the ``terms`` slide into x's row, where x's entries arrive
        (each highlighted grid on its own: no box crosses a sign)."""
        lights = [Highlight(self.look, grid.row(i)) for grid in (*terms, resid)]
        names = " plus its position" if len(terms) > 1 else ""
        self.step(
            *(FadeIn(light) for light in lights),
            caption=f"“{self.token_name(i)}”, row {i} counting from 0: its embedding{names}…",
        )
        columns = resid.shown_columns()
        sources = [grid.labels[i, j] for grid in terms for j in columns]
        targets = [resid.cells[i, j] for _ in terms for j in columns]
        self.play(
            send(self, sources, targets),
            *(FadeOut(light, rate_func=out_before_the_move) for light in lights),
            run_time=self.step_time,
        )
        self.step(*self.fill_cells(resid, [i]), caption=story.says)
