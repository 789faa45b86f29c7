"""Rotary positions on screen: one token's query (or key) before and after rotation, pair by pair.

With rotary positions (Su et al. 2021, RoFormer, Eq. 34) no position is added to the input;
instead each query and key is turned by its position. In the half-split layout of Llama
(``transformers``' ``rotate_half``, :func:`blockviz.block.rotate`) feature i pairs with feature
i + d_head/2, and the pair turns by the angle p · ω_i (position p, the pair's frequency ω_i):

    q′_i         = q_i cos − q_{i+d/2} sin
    q′_{i+d/2}   = q_i sin + q_{i+d/2} cos

:class:`RotationPanel` draws one vector (rows: before, cos, sin, after) with its columns in
pairs; :func:`pair_dial` the pair as an arrow on a dial, before and after; :func:`worked_pair`
the two lines above with the record's numbers. Every number comes from the record
(``query``/``key``, ``rope_cos``/``rope_sin``, ``query_rot``/``key_rot``).
"""

from __future__ import annotations

import math

from manim import DOWN, LEFT, RIGHT, UP, Arc, Arrow, Circle, Dot, VGroup

from blockviz.scenes.block_helpers import shown_value
from blockviz.scenes.grids import NumberGrid
from blockviz.scenes.look import CELL_WIDTH, HEADER_SIZE, WORK_SIZE, Look
from blockviz.scenes.text import formula, number, text
from blockviz.scenes.wide import largest_entries

PAIR_SLOTS = 3
"""Feature pairs drawn of a wide head: the first, the largest of the shown vector, the last."""
MINUS, TIMES = "\u2212", "\u00d7"
PRIME = "\u2032"


def pairs_shown(values, count: int = PAIR_SLOTS) -> list[int]:
    """The pairs i (feature i with i + d_head/2) to draw of the ``(d_head,)`` vector ``values``:
    the first, the last and those whose 2-D arrow (values[i], values[i + d_head/2]) is longest,
    ``count`` in all, in order (every pair when there are no more)."""
    half = len(values) // 2
    lengths = [math.hypot(float(values[i]), float(values[i + half])) for i in range(half)]
    if half <= count:
        return list(range(half))
    inner = largest_entries(lengths[:-1], count - 1, first=1)
    return sorted(set(inner) | {half - 1})


def pair_columns(pairs: list[int], d_head: int) -> list[int | None]:
    """Grid column slots for ``pairs``: each pair's two features side by side (i, i + d_head/2),
    ⋯ wherever pairs are left out (at the end too)."""
    half = d_head // 2
    slots: list[int | None] = []
    previous = -1
    for i in pairs:
        if i > previous + 1:
            slots.append(None)
        slots += [i, i + half]
        previous = i
    if previous < half - 1:
        slots.append(None)
    return slots


class RotationPanel(VGroup):
    """One vector of head ``head`` at token ``i`` before and after rotation, ``(4, d_head)`` drawn
    as four rows sharing their columns: ``before`` (``query``/``key``), cos and sin of the
    position's angles (``rope_cos``/``rope_sin`` row i), ``after`` (``query_rot``/``key_rot``, drawn
    empty: fill it). Columns in pairs (:func:`pair_columns`), each pair headed "pair i" over its
    column names (without ``headers``, for a panel under another of the same columns: none).

    ``.before``, ``.angles``, ``.after`` are the three :class:`NumberGrid` s; ``.pair_headers[i]``.
    """

    def __init__(
        self,
        rec,
        role: str,
        head: int,
        i: int,
        pairs: list[int],
        look: Look,
        color: str,
        cell_width: float = CELL_WIDTH,
        headers: bool = True,
    ) -> None:
        super().__init__()
        d_head = rec.config.d_head
        self.role, self.head, self.i, self.half = role, head, i, d_head // 2
        columns = pair_columns(pairs, d_head)
        names = [f"d{j}" for j in range(d_head)]
        letter = role[0]
        common = dict(look=look, column_slots=columns, row_slots=[0])
        self.before = NumberGrid(
            rec.tensors[role][head, i][None, :],
            [letter],
            names if headers else None,
            source=lambda _, j: (role, head, i, j),
            cell_width=cell_width,
            column_header_color=color,
            row_header_color=color,
            **common,
        )
        angles = [rec.rope_cos[i], rec.rope_sin[i]]
        self.angles = NumberGrid(
            [row.tolist() for row in angles],
            ["cos", "sin"],
            None,
            look=look,
            column_slots=columns,
            row_slots=[0, 1],
            source=lambda r, j: ("rope_cos" if r == 0 else "rope_sin", i, j),
            cell_width=self.before.cell_width,
        )
        self.after = NumberGrid(
            rec.tensors[f"{role}_rot"][head, i][None, :],
            [letter + PRIME],
            None,
            source=lambda _, j: (f"{role}_rot", head, i, j),
            row_header_color=color,
            show_numbers=False,
            filled=False,
            cell_width=self.before.cell_width,
            **common,
        )
        stack = VGroup(self.before, self.angles, self.after).arrange(DOWN, buff=0.14)
        for grid in (self.angles, self.after):  # the columns line up under the first grid's
            grid.shift(RIGHT * (self.before.cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        self.pair_headers = {}
        for pair in pairs if headers else ():
            cells = VGroup(self.before.column_headers[pair], self.before.column_headers[pair + self.half])
            header = text(f"pair {pair}", HEADER_SIZE, look.muted).next_to(cells, UP, buff=0.08)
            self.pair_headers[pair] = header
        self.add(stack, *self.pair_headers.values())

    def pair_cells(self, pair: int) -> VGroup:
        """The pair's two columns through all four rows (what a highlight frames)."""
        columns = (pair, pair + self.half)
        return VGroup(
            *(
                grid.cells[r, j]
                for grid, rows in ((self.before, [0]), (self.angles, [0, 1]), (self.after, [0]))
                for r in rows
                for j in columns
            )
        )


def pair_dial(
    before: tuple[float, float], after: tuple[float, float], look: Look, color: str, radius: float = 1.0
) -> VGroup:
    """The pair as a 2-D arrow on a dial: ``before`` = (x_i, x_{i+d/2}) faint, ``after`` the
    rotated pair bold, and the arc of the turn between them (geometry only: no number drawn).
    ``.before_arrow``, ``.after_arrow``, ``.arc``."""
    scale = radius / max(math.hypot(*before), math.hypot(*after), 1e-9)
    ring = Circle(radius=radius, color=look.grid, stroke_width=2)
    centre = Dot(radius=0.03, color=look.muted)

    def arrow(pair, opacity, width):
        tip = RIGHT * pair[0] * scale + UP * pair[1] * scale
        return Arrow(
            0 * RIGHT,
            tip,
            buff=0,
            color=color,
            stroke_width=width,
            stroke_opacity=opacity,
            fill_opacity=opacity,
            max_tip_length_to_length_ratio=0.2,
        )

    start, end = math.atan2(before[1], before[0]), math.atan2(after[1], after[0])
    turn = (end - start + math.pi) % (2 * math.pi) - math.pi  # the shorter way round
    dial = VGroup(ring, centre)
    dial.before_arrow = arrow(before, 0.45, 4)
    dial.after_arrow = arrow(after, 1.0, 6)
    dial.arc = Arc(
        radius=radius * 0.45,
        start_angle=start,
        angle=turn if abs(turn) > 1e-3 else 1e-3,
        color=look.highlight,
        stroke_width=3,
    )
    dial.first = VGroup(ring, centre, dial.before_arrow)  # what shows before the turn
    dial.add(dial.before_arrow, dial.after_arrow, dial.arc)  # all of it moves with the layout
    return dial


def _term(value: float, source: tuple, decimals: int, color: str):
    """A number of a worked line, in parentheses when negative (so "× (−0.41)" reads right)."""
    label = number(value, WORK_SIZE, color, decimals, source=source)
    if not label.shown.startswith(MINUS):
        return [label]
    return [text("(", WORK_SIZE, color), label, text(")", WORK_SIZE, color)]


def worked_decimals(
    panel_values: tuple[float, float, float, float], results: tuple[float, float], most: int = 4
) -> int:
    """Decimals for the factors of a worked pair so that, rounded as shown, both lines give their
    shown result (2 decimals) within one unit of its last digit; ``panel_values`` = (x_i,
    x_{i+d/2}, cos, sin), ``results`` = (x′_i, x′_{i+d/2})."""
    a, b, c, s = panel_values
    for decimals in range(2, most + 1):
        r = lambda v: shown_value(v, decimals)  # noqa: E731
        lines = (r(a) * r(c) - r(b) * r(s), r(a) * r(s) + r(b) * r(c))
        if all(abs(line - shown_value(result, 2)) <= 0.01 + 1e-9 for line, result in zip(lines, results)):
            return decimals
    return most


def worked_pair(rec, role: str, head: int, i: int, pair: int, look: Look, color: str) -> VGroup:
    """The two lines turning pair ``pair`` of ``role``'s vector at token ``i``, with the record's
    numbers: x′_i = x_i cos − x_{i+d/2} sin and x′_{i+d/2} = x_i sin + x_{i+d/2} cos (RoFormer
    Eq. 34, half-split). ``.results`` are the two results (``role``_rot), ``.factors`` every factor
    label in order (x_i, cos, x_{i+d/2}, sin, x_i, sin, x_{i+d/2}, cos), ``.symbolic`` the formulas."""
    half = rec.config.d_head // 2
    j, k = pair, pair + half
    vector, rotated = rec.tensors[role][head, i], rec.tensors[f"{role}_rot"][head, i]
    cos, sin = float(rec.rope_cos[i, j]), float(rec.rope_sin[i, j])
    x, y = float(vector[j]), float(vector[k])
    decimals = worked_decimals((x, y, cos, sin), (float(rotated[j]), float(rotated[k])))
    letter = role[0]
    symbolic = [
        formula(f"${letter}'_{{{j}}} = {letter}_{{{j}}}\\,\\cos - {letter}_{{{k}}}\\,\\sin$", color, 30),
        formula(f"${letter}'_{{{k}}} = {letter}_{{{j}}}\\,\\sin + {letter}_{{{k}}}\\,\\cos$", color, 30),
    ]
    x_source, y_source = (role, head, i, j), (role, head, i, k)
    cos_source, sin_source = ("rope_cos", i, j), ("rope_sin", i, j)
    plan = [
        (
            (x, x_source),
            (cos, cos_source),
            MINUS,
            (y, y_source),
            (sin, sin_source),
            (float(rotated[j]), (f"{role}_rot", head, i, j)),
        ),
        (
            (x, x_source),
            (sin, sin_source),
            "+",
            (y, y_source),
            (cos, cos_source),
            (float(rotated[k]), (f"{role}_rot", head, i, k)),
        ),
    ]
    lines, factors, results = [], [], []
    for (first, second, sign, third, fourth, result), shown in zip(plan, symbolic):
        parts = [text("=", WORK_SIZE, look.text)]
        for factor, joiner in ((first, TIMES), (second, sign), (third, TIMES), (fourth, "=")):
            pieces = _term(*factor, decimals, look.text)
            factors.append(next(piece for piece in pieces if hasattr(piece, "source")))
            parts += pieces + [text(joiner, WORK_SIZE, look.text)]
        total = number(result[0], WORK_SIZE, color, 2, source=result[1])
        results.append(total)
        numbers = VGroup(*parts, total).arrange(RIGHT, buff=0.1)
        lines.append(VGroup(shown, numbers).arrange(DOWN, aligned_edge=LEFT, buff=0.12))
    work = VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=0.3)
    work.results, work.factors, work.symbolic, work.decimals = results, factors, symbolic, decimals
    return work


def angle_note(position: int, pair: int, look: Look) -> VGroup:
    """ "turned by the angle p · ω_i" for token position ``position`` and pair ``pair`` (integers only)."""
    return formula(f"$\\mathrm{{angle}} = {position}\\cdot\\omega_{{{pair}}}$", look.highlight, 30)


__all__ = ["RotationPanel", "pair_columns", "pair_dial", "pairs_shown", "worked_pair", "worked_decimals", "angle_note"]
