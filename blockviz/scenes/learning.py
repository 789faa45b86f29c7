"""Scene — learning: one head forming in training, its weights row from "it" checkpoint by checkpoint.

The numbers are not the record's block at work on its sentence but the training checkpoints of
the model folder the record came from (``rec.source.path``, :func:`blockviz.toy.learning.learning_of`):
the lesson sentence's attention, kept by ``blockviz train`` at each checkpoint. A number label's
source is ``("learning", field, *index)``: ``learning_of(rec.source.path).<field>[index]``.
"""

from __future__ import annotations

import os

from manim import DOWN, LEFT, RIGHT, UP, Arrow, Create, Dot, Line, VGroup

from blockviz.errors import BlockvizError
from blockviz.record_needs import training_missing
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import exact, remainder, rounding_note, sum_decimals
from blockviz.scenes.choreography import ghost_of, lagged
from blockviz.scenes.fades import FadeIn, Reveal
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width, row_height
from blockviz.scenes.look import HEADER_SIZE, NUMBER_SIZE, WORK_SIZE
from blockviz.scenes.shown import RECORD_ENVIRONMENT_VARIABLE
from blockviz.scenes.text import number, shortened, text
from blockviz.scenes.token_axis import token_face, visible_slots
from blockviz.style import format_number, role_color
from blockviz.toy import learning as checkpoints

NAME = "learning"
ORDER = 150
DESCRIPTION = "learning: a trained toy model's head forming, its weights row from “it” checkpoint by checkpoint (needs a model blockviz train wrote)"
CHAPTER = "Learning"
CAPTION = (
    "One head's weights row from “it” at each training checkpoint, with the step and the loss: "
    "how a head's attention forms in training."
)
NEEDS = "training"

MAX_KEYS = 10
"""The most keys drawn of the lesson row (⋯ and one "+ rest" term for the others)."""
DIM = 0.25
"""Opacity of the empty cells standing in for the checkpoints still to come."""
CURVE_WIDTH = 0.7
"""The width of the loss curve beside the loss column (scene units, before the layout is fitted)."""
AXIS_END_GAP = 0.25
"""The least room between the loss axis's two end numbers (before the fit; 13 px at 480p): the
curve is widened for it, so "0.52" and "0.94" read as the axis's two ends, not one run of text."""
CURVE_GAP = 0.25
"""Between the loss column and the curve."""
COLUMN_GAP = 0.3
"""Between the Σ column and the loss column."""


class Learning(RecordScene):
    """The weights row ``(n,)`` of query "it" in the head that links it most to "chicken" at the
    last step, at every training checkpoint (rows = checkpoints, columns = keys of the lesson
    sentence), each row adding up to 1 (softmax), with the step and the training loss there.
    Keys after "it" are masked (weight exactly 0) and left out. Every number is read from the
    checkpoints file of the record's model folder."""

    def construct(self) -> None:
        learning = self.learning
        head, word = learning.head, self.word
        forming = "A head forming in training" if learning.formed else "A head in training"
        title = self.show_title(f"{forming}: head {head}, “{word(learning.query)}” → “{word(learning.key)}”")
        grid, rows, result = self.build(title)
        self.grid = grid  # tests read its rows' step headers
        self.add(ghost_of(grid.cell_group, opacity=DIM).set_fill(opacity=0))
        self.add(grid.header_group, grid.ellipsis_group, self.note, self.side_headers, self.loss_axis)
        self.step(
            *self.arrival(rows[0], 0),
            *([Reveal(self.rounding)] if len(self.rounding) else []),
            caption=self.first_caption(),
        )
        highlight = Highlight(self.look, grid.row(0))
        self.play(FadeIn(highlight), run_time=0.4)
        for k in range(1, len(learning.steps)):
            self.step(*self.arrival(rows[k], k), highlight.over(grid.row(k)), caption=self.checkpoint_caption(k))
        self.step(highlight.over(grid.column(self.key_column)), Reveal(result), caption=self.last_caption())

    def arrival(self, row: list[VGroup], k: int) -> list:
        """Checkpoint ``k``'s row arriving cell after cell (each cell with its number), then its
        sum and loss, then the loss curve drawn on to its point: a cascade, so no frame brings the
        whole row's colour at once."""
        segment, dot = self.curve_pieces[k]
        drawing = ([Create(segment)] if segment is not None else []) + ([FadeIn(dot)] if dot is not None else [])
        return lagged([[Reveal(part)] for part in row] + ([drawing] if drawing else []))

    # -- the numbers ----------------------------------------------------------------------------
    @property
    def record(self):
        """The record shown: given, or saved at ``$BLOCKVIZ_RECORD``, else the shipped toy model's
        record of its lesson sentence (the seeded block of the other scenes was never trained)."""
        if self._record is None and not os.environ.get(RECORD_ENVIRONMENT_VARIABLE):
            from blockviz.toy import PACKAGED
            from blockviz.toy.recording import record_toy

            self._record = record_toy(checkpoints.learning_of(PACKAGED).sentence)
        return super().record

    @property
    def learning(self) -> checkpoints.Learning:
        """The checkpoints' numbers (:func:`~blockviz.toy.learning.learning_of`), read once.

        Raises
        ------
        BlockvizError
            For a record whose block ``blockviz train`` did not write (one line, with the fix).
        """
        if not hasattr(self, "_learning"):
            missing = training_missing(self.record)
            if missing is not None:
                raise BlockvizError(f"the learning scene cannot be drawn: {missing}")
            self._learning = checkpoints.learning_of(self.record.source.path)
        return self._learning

    def word(self, j: int) -> str:
        """Word ``j`` of the lesson sentence as a caption writes it (inside its own quotes)."""
        shown = token_face(self.learning.words[j])
        return shown[1:-1] if shown.startswith("\u201c") and shown.endswith("\u201d") else shown

    @property
    def keys_seen(self) -> int:
        """How many keys "it" may attend to: the first ones up to the last any checkpoint gives
        weight (after "it" a causal mask leaves exactly 0)."""
        rows = self.learning.rows
        return 1 + max(j for j in range(len(rows[0])) if any(row[j] > 0 for row in rows))

    # -- layout ---------------------------------------------------------------------------------
    def build(self, title) -> tuple[NumberGrid, list[list[VGroup]], VGroup]:
        """The checkpoints' grid (not shown), its Σ and loss columns, the note over it and the
        result line under it, placed; returns the grid, each checkpoint's row (each cell with
        its number, then the sum and loss) and the result line."""
        learning, look = self.learning, self.look
        seen = self.keys_seen
        slots = visible_slots(seen, learning.query, MAX_KEYS, keep=[learning.key])
        self.hidden = len([j for j in slots if j is not None]) < seen
        self.decimals = sum_decimals([(row[:seen], 1.0) for row in learning.rows], most=3)
        names = [token_face(word) for word in learning.words[:seen]]
        self.loss_ends = self.axis_ends()
        grid = NumberGrid(
            [row[:seen] for row in learning.rows],
            [str(step) for step in learning.steps],  # under a "step" header
            names,
            look,
            colors="weights",
            source=lambda k, j: ("learning", "rows", k, j),
            column_slots=slots,
            row_slots=list(range(len(learning.steps))),
            cell_width=max(
                column_width(len(slots), width=8.4, most=1.3),
                max(text(names[j], HEADER_SIZE, bold=j == learning.key).width for j in slots if j is not None) / 0.94,
            ),  # every word whole over its column
            cell_height=row_height(len(learning.steps) + 1, height=4.2, most=0.7),
            decimals=self.decimals,
        )
        self.key_column = learning.key
        self.emphasise_key(grid)
        side_headers, sides = self.side_columns(grid)
        rows = [
            [VGroup(grid.cells[k, j], grid.labels[k, j]) for j in grid.shown_columns()] + [sides[k]]
            for k in range(len(learning.steps))
        ]
        curve = self.loss_curve(grid, VGroup(side_headers, *sides))
        self.loss_axis = self.axis_of_curve(grid)  # shown from the start, with the columns' headers
        self.note = self.lesson_note().next_to(VGroup(grid, side_headers), UP, buff=0.3)
        self.note.align_to(grid.cell_group, LEFT)
        self.rounding = rounding_note(self.sums, look)  # "≈: each number is rounded on its own", if a row needs it
        below = VGroup(grid, *sides, self.loss_axis)  # the rounding note under the curve's axis too
        if len(self.rounding):
            self.rounding.next_to(below, DOWN, buff=0.25).align_to(side_headers, RIGHT)
            below = VGroup(below, self.rounding)
        result = self.result_line().next_to(below, DOWN, buff=0.3).align_to(grid.cell_group, LEFT)
        self.side_headers = side_headers
        self.place(
            VGroup(self.note, grid, side_headers, *sides, curve, self.loss_axis, self.rounding, result),
            title,
            bottom_space=1.25,
            grow=1.6,
        )  # room for a caption on two lines
        return grid, rows, result

    def emphasise_key(self, grid: NumberGrid) -> None:
        """The key "chicken"'s header drawn bold in the keys' colour."""
        old = grid.column_headers[self.learning.key]
        new = shortened(old.shown, grid.cell_width * 0.96, HEADER_SIZE, role_color("key", self.look.theme), bold=True)
        new.move_to(old)
        grid.header_group.remove(old)
        grid.header_group.add(new)
        grid.column_headers[self.learning.key] = new

    def side_columns(self, grid: NumberGrid) -> tuple[VGroup, list[VGroup]]:
        """Right of each checkpoint's row: "= 1" (its weights add up to 1, "≈" where rounding
        misses; the keys left out one "+ rest" term) and the training loss at that step."""
        learning, look = self.learning, self.look
        keys = grid.shown_columns()
        right = grid.body().get_right()[0]
        header_y = grid.column_headers[keys[0]].get_y()
        first = grid.row_headers[0]
        step = text("step", HEADER_SIZE, look.muted)
        headers = VGroup(step.move_to([first.get_right()[0] - step.width / 2, header_y, 0]))
        x = right + 0.1
        if self.hidden:
            rest_x = x + 0.3 + grid.cell_width / 2
            headers.add(text("+ rest", HEADER_SIZE, look.muted).move_to([rest_x, header_y, 0]))
            x = rest_x + grid.cell_width / 2
        number_width = number(1.0, NUMBER_SIZE, decimals=self.decimals, source=("width",)).width
        mark_width = text("≈", NUMBER_SIZE).width + 0.14
        sum_x = x + 0.25 + mark_width + number_width / 2
        loss_x = sum_x + number_width / 2 + COLUMN_GAP + number_width / 2
        headers.add(text("Σ", HEADER_SIZE + 2, look.text).move_to([sum_x, header_y, 0]))
        headers.add(text("loss", HEADER_SIZE, look.muted).move_to([loss_x, header_y, 0]))
        sides = []
        for k, loss in enumerate(learning.losses):
            y = grid.cells[k, keys[0]].get_y()
            terms = [grid.labels[k, j] for j in keys]
            side = VGroup()
            if self.hidden:
                shown = [(learning.rows[k][j], ("learning", "rows", k, j)) for j in keys]
                rest = remainder(1.0, ("constant", 1.0), shown, NUMBER_SIZE, look.muted, self.decimals)
                side.add(rest.move_to([rest_x, y, 0]))
                terms.append(rest)
            total = number(1.0, NUMBER_SIZE, look.text, self.decimals, source=("constant", 1.0)).move_to([sum_x, y, 0])
            self.shown_sum(terms, total)
            mark = text("=" if exact(terms, total) else "≈", NUMBER_SIZE, look.muted)
            side.add(mark.next_to(total, LEFT, buff=0.14), total)
            if loss is None:
                shown_loss = text("–", NUMBER_SIZE, look.muted)
            else:
                shown_loss = number(loss, NUMBER_SIZE, look.text, source=("learning", "losses", k))
            side.add(shown_loss.move_to([loss_x, y, 0]))
            sides.append(side)
        return headers, sides

    def loss_curve(self, grid: NumberGrid, columns: VGroup) -> VGroup:
        """Right of the loss column, the training loss as a curve read downwards: one point a
        checkpoint at its row's height, further right for a larger loss (the smallest and largest
        shown loss at the column's edges), a line from each point to the next. Sets
        ``curve_pieces[k]``: (the line into point k or ``None``, point k or ``None`` where no loss
        was recorded)."""
        learning, look = self.learning, self.look
        shown = [loss for loss in learning.losses if loss is not None]
        left = columns.get_right()[0] + CURVE_GAP
        self.curve_left, self.curve_width = left, self.width_for_ends()
        low, high = (min(shown), max(shown)) if shown else (0.0, 1.0)
        span = high - low or 1.0
        points: list = []
        for k, loss in enumerate(learning.losses):
            y = grid.cells[k, grid.shown_columns()[0]].get_y()
            points.append(None if loss is None else [left + self.curve_width * (loss - low) / span, y, 0])
        self.curve_pieces = []
        drawn = VGroup()
        last = None
        for point in points:
            if point is None:
                self.curve_pieces.append((None, None))
                continue
            dot = Dot(point, radius=0.06, color=look.highlight)
            segment = Line(last, point, color=look.highlight, stroke_width=3) if last is not None else None
            self.curve_pieces.append((segment, dot))
            drawn.add(*([segment] if segment is not None else []), dot)
            last = point
        return drawn

    def axis_ends(self) -> tuple | None:
        """The smallest and the largest loss recorded, as the axis writes them under its ends (not
        placed); ``None`` when no loss was recorded."""
        recorded = [(loss, k) for k, loss in enumerate(self.learning.losses) if loss is not None]
        if not recorded:
            return None
        return tuple(
            number(loss, HEADER_SIZE, self.look.muted, source=("learning", "losses", k))
            for loss, k in (min(recorded), max(recorded))
        )

    def width_for_ends(self) -> float:
        """The curve's width: :data:`CURVE_WIDTH`, or wider so that the axis's end numbers, centred
        under its ends, stand :data:`AXIS_END_GAP` apart."""
        if self.loss_ends is None:
            return CURVE_WIDTH
        first, last = self.loss_ends
        return max(CURVE_WIDTH, (first.width + last.width) / 2 + AXIS_END_GAP)

    def axis_of_curve(self, grid: NumberGrid) -> VGroup:
        """The loss curve's axes: "step ↓" over it, on the headers' line (the steps run down the
        rows), and under it a line as wide as the curve, its arrow towards the larger loss, the
        smallest and the largest loss shown under its ends. Empty when no loss was recorded."""
        learning, look = self.learning, self.look
        if self.loss_ends is None:
            return VGroup()
        left, right = self.curve_left, self.curve_left + self.curve_width
        header_y = grid.column_headers[grid.shown_columns()[0]].get_y()
        bottom = grid.cells[len(learning.steps) - 1, grid.shown_columns()[0]].get_bottom()[1] - 0.1
        line = Arrow(
            [left, bottom, 0],
            [right, bottom, 0],
            buff=0,
            color=look.muted,
            stroke_width=2,
            max_tip_length_to_length_ratio=0.15,
        )
        first, last = self.loss_ends
        first.move_to([left, bottom - 0.08, 0], aligned_edge=UP)
        last.move_to([right, bottom - 0.08, 0], aligned_edge=UP)
        steps = text("step \u2193", HEADER_SIZE, look.muted).move_to([(left + right) / 2, header_y, 0])
        return VGroup(line, first, last, steps)

    def lesson_note(self):
        """Where the numbers come from: the lesson sentence during training — this record's
        sentence or, said so, another one."""
        learning, look = self.learning, self.look
        if self.record.sentence.strip() == learning.sentence.strip():
            shown = f"this sentence is a training lesson: head {learning.head}'s weights from “{self.word(learning.query)}”, kept at each checkpoint"
            return shortened(shown, 12.5, HEADER_SIZE, look.muted)
        return VGroup(
            text("not this record's sentence: during training, on the lesson sentence", HEADER_SIZE, look.muted),
            shortened(f"“{learning.sentence}”", 12.5, HEADER_SIZE, look.text),
        ).arrange(DOWN, aligned_edge=LEFT, buff=0.1)

    def result_line(self) -> VGroup:
        """ "“it” → “chicken”: 0.14 at step 0, 0.98 at step 4000" — the first and last checkpoints' weight."""
        learning, look = self.learning, self.look
        first, last = 0, len(learning.steps) - 1
        parts = [
            text(f"“{self.word(learning.query)}” → “{self.word(learning.key)}”:", WORK_SIZE, look.text),
            number(learning.weights[first], WORK_SIZE, look.text, self.decimals, source=("learning", "weights", first)),
            text(f"at step {learning.steps[first]}, then", WORK_SIZE, look.muted),
            number(learning.weights[last], WORK_SIZE, look.text, self.decimals, source=("learning", "weights", last)),
            text(f"at step {learning.steps[last]}", WORK_SIZE, look.muted),
        ]
        return VGroup(*parts).arrange(RIGHT, buff=0.18)

    # -- captions, read from the numbers --------------------------------------------------------
    def largest(self, k: int) -> int:
        row = self.learning.rows[k]
        return max(range(len(row)), key=lambda j: row[j])

    def first_caption(self) -> str:
        learning, seen = self.learning, self.keys_seen
        row = learning.rows[0][:seen]
        even = max(row) - min(row) < 1 / seen  # every share within one even share of another
        when = ", before training" if learning.steps[0] == 0 else ""
        how = "almost evenly" if even else "unevenly"
        return f"step {learning.steps[0]}{when}: “{self.word(learning.query)}” shares its weight {how} over the {seen} words it may see"

    def checkpoint_caption(self, k: int) -> str:
        learning = self.learning
        before, now = learning.losses[k - 1], learning.losses[k]
        loss = ""
        if before is not None and now is not None:
            loss = "the loss falls, " if now < before else "the loss rises, " if now > before else ""
        elif now is not None:  # the loss column's first number: say what it is
            loss = "the loss says how wrong its next-word guesses are (cross-entropy); "
        top = self.largest(k)
        weight = learning.rows[k][top]
        share = "most of the weight" if weight > 0.5 else "the largest weight"
        return f"step {learning.steps[k]}: {loss}{share} on “{self.word(top)}”"

    def last_caption(self) -> str:
        """Whether the head formed, by the checkpoints' rule (:attr:`Learning.formed`): "head 0
        formed: …" only then, else "head 1 did not form: its weight on “chicken” went from 0.08 to
        0.05 by step 500"."""
        learning = self.learning
        first, last = learning.weights[0], learning.weights[-1]
        if not learning.formed:
            return (
                f"head {learning.head} did not form: its weight on “{self.word(learning.key)}” went from "
                f"{format_number(first, self.decimals)} to {format_number(last, self.decimals)} by step {learning.steps[-1]}"
            )
        change = "rose" if last > first else "fell" if last < first else "stayed"
        held = (
            "most of the row" if last > 0.5 else "the largest share" if self.largest(-1) == learning.key else "a share"
        )
        return f"head {learning.head} formed: its weight on “{self.word(learning.key)}” {change} to {held} by step {learning.steps[-1]}"


__all__ = ["Learning", "NAME", "ORDER", "DESCRIPTION", "CHAPTER", "CAPTION", "NEEDS"]
