"""Scene — the norm on one row: LayerNorm (its mean, the row less the mean, the variance, ÷ √(var + ε), × γ, + β)
or RMSNorm (the mean of its squares, ÷ √(mean(x²) + ε), × γ), as the record's block has it."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import adds_up_as_written, parameter_grid, shown_value
from blockviz.scenes.choreography import carry, gather, lagged, recolour, second_half
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import Highlight, HighlightJump, NumberGrid
from blockviz.scenes.layout import column_width
from blockviz.scenes.light_timing import after_the_carry, aside_while_carried
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, WORK_SIZE
from blockviz.scenes.text import formula, number, text
from blockviz.scenes.wide import edges_and_largest, hidden_note, slots_of

NAME = "layer-norm"
ORDER = 30
DESCRIPTION = "one row through LayerNorm: mean, centre, variance, ÷ √(var + ε), × γ, + β (RMSNorm: mean of x², ÷ √(mean + ε), × γ)"
CHAPTER = "LayerNorm"
CAPTION = (
    "LayerNorm takes one token's row, subtracts its mean, divides by the square root of its variance (plus a tiny ε), "
    "then scales by γ and shifts by β: each row on its own, {norm_where}."
)
RMSNORM_CHAPTER = "RMSNorm"
RMSNORM_CAPTION = (
    "RMSNorm takes one token's row and divides it by its root mean square, √(mean(x²) + ε), with no mean subtracted, "
    "then scales by γ, with no shift: each row on its own, {norm_where}."
)

FEATURE_SLOTS = 8
"""Columns drawn of a d_model-wide row; a wider row draws :data:`WIDE_ENTRIES` of them, ⋯ between."""
WIDE_ENTRIES = 5
"""Entries drawn of a row wider than :data:`FEATURE_SLOTS`: the first, the last and the largest."""
FORMULA_SIZE = 32
ROUNDED_NOTE = "each number is rounded on its own: a last digit may be 1 off"
ROW_GAP = 0.24


def norm_io(rec) -> dict[str, str]:
    """LayerNorm 1's input and output fields, and what the captions say of them: pre-norm, the
    block's input ``resid_pre`` into ``ln1`` (attention's input); post-norm (BERT), attention's
    sum ``resid_mid`` into ``resid_mid_norm`` (the FFN's input)."""
    if rec.architecture.post_norm:
        return {
            "x": "resid_mid",
            "out": "resid_mid_norm",
            "enters": "after attention's sum (post-norm)",
            "feeds": "the input to the FFN",
            "second": "LayerNorm 2 does the same to h + FFN(h): its output is the layer's output, y",
        }
    return {
        "x": "resid_pre",
        "out": "ln1",
        "enters": "as it enters the block",
        "feeds": "the input to attention",
        "second": "LayerNorm 2 does the same to each row of h (after attention), before the FFN",
    }


class LayerNormRow(RecordScene):
    """Norm 1 on the focus token's row x ``(d_model,)``, every number the record's; norm 2 does the
    same to ``resid_mid`` (post-norm: :func:`norm_io`'s rows). The steps follow the record's norm:

    * LayerNorm (Ba et al. 2016): μ = mean(x) (``ln1_mean``), x − μ (``ln1_centred``),
      σ² = mean((x − μ)²) (``ln1_var``), (x − μ) / √(σ² + ε) (``ln1_norm``), then × γ + β
      (``ln1.weight``, ``ln1.bias``) = ``ln1``;
    * RMSNorm (Zhang & Sennrich 2019, Eq. 4): mean(x²) (``ln1_mean_sq``), x / √(mean(x²) + ε)
      (``ln1_norm``), then × γ (``ln1.weight``) = ``ln1``: no mean subtracted, no β.

    A row wider than :data:`FEATURE_SLOTS` shows its first, its last and its largest entries
    (of x), ⋯ between, and says how many are hidden.
    """

    def construct(self) -> None:
        f = self.focus
        rms = not self.record.architecture.has_centring
        title = self.show_title(f"{'RMSNorm' if rms else 'LayerNorm'}, one row: “{self.token_name(f)}”")
        rows, names, side = self.build(title)
        frames = [VGroup(row.cell_group, row.header_group, row.ellipsis_group) for row in rows[1:]]
        self.add(rows[0], names[0])
        io = norm_io(self.record)
        marks = [
            side[name][0] for name in ("mean", "variance") if name in side
        ]  # the statistics' slots; their numbers arrive later
        self.step(
            FadeIn(VGroup(*frames, *names[1:], *side["note"], *marks)),
            caption=f"the row of “{self.token_name(f)}” {io['enters']}: the width, {self.record.config.d_model} numbers",
        )
        for row, frame in zip(rows[1:], frames):
            self.remove(frame)
            self.add(row.cell_group, row.header_group, row.ellipsis_group)
        light = Highlight(self.look, rows[0].cell_group)
        if rms:
            self.rms_steps(rows, side, light, io)
        else:
            self.layer_norm_steps(rows, side, light, io)

    def layer_norm_steps(self, rows, side, light, io) -> None:
        x, centred, norm, gamma, beta, out = rows
        self.step(
            FadeIn(light, rate_func=after_the_carry),
            gather(self, self.labels(x), side["mean"][1]),
            caption="its mean, μ",
        )
        self.step(
            self.around(light, centred),
            carry(self, self.labels(x), self.labels(centred)),
            *recolour(self, centred, centred.fills),
            caption="subtract μ from every entry: the row centred on 0",
        )
        self.step(
            HighlightJump(light, side["variance"], rate_func=aside_while_carried),  # onto what is found
            gather(self, self.labels(centred), side["variance"][1]),
            caption="its variance σ²: the mean of the squared centred entries",
        )
        self.step(
            self.around(light, norm),
            carry(self, self.labels(centred), self.labels(norm)),
            *recolour(self, norm, norm.fills),
            FadeIn(side["epsilon"]),
            caption="divide by √(σ² + ε), ε a tiny number so nothing divides by 0: mean 0, variance 1",
        )
        self.step(
            light.over(VGroup(gamma.cell_group, beta.cell_group)),
            *self.parameters_arrive(gamma, beta),
            caption="then a learned scale γ and shift β, one per feature",
        )
        self.step(
            self.around(light, out),
            carry(self, self.labels(norm), self.labels(out)),
            *recolour(self, out, out.fills),
            caption=f"× γ + β, entry by entry: LayerNorm's output, {io['feeds']}",
            run_time=self.step_time * 2.5,  # the numbers fly past γ and β: slower, fewer pixels per frame
        )
        self.step(FadeOut(light), caption=io["second"])  # the worked row done

    def rms_steps(self, rows, side, light, io) -> None:
        x, norm, gamma, out = rows
        self.step(
            FadeIn(light, rate_func=after_the_carry),
            gather(self, self.labels(x), side["mean_sq"]),
            caption="the mean of its squares, mean(x²): no mean is subtracted",
        )
        self.step(
            self.around(light, norm),
            carry(self, self.labels(x), self.labels(norm)),
            *recolour(self, norm, norm.fills),
            FadeIn(side["epsilon"]),
            caption="divide every entry by √(mean(x²) + ε), the row's root mean square: its mean square becomes 1",
        )
        self.step(
            light.over(gamma.cell_group),
            *self.parameters_arrive(gamma),
            caption="then a learned scale γ, one per feature (RMSNorm has no shift β)",
        )
        self.step(
            self.around(light, out),
            carry(self, self.labels(norm), self.labels(out)),
            *recolour(self, out, out.fills),
            caption=f"× γ, entry by entry: RMSNorm's output, {io['feeds']}",
            run_time=self.step_time * 2,  # the numbers fly past γ: slower, fewer pixels per frame
        )
        self.step(FadeOut(light), caption=io["second"].replace("LayerNorm", "RMSNorm"))

    @staticmethod
    def around(light: Highlight, row: NumberGrid) -> HighlightJump:
        """``light`` taken to ``row`` in a play that carries numbers: out of the way while they travel."""
        return HighlightJump(light, row.cell_group, rate_func=aside_while_carried)

    def parameters_arrive(self, *rows: NumberGrid) -> list:
        """Animations colouring the cells of the parameter ``rows`` (γ, β), then writing their numbers on them."""
        return [  # cell after cell (a cascade), each coloured then numbered
            animation
            for row in rows
            for animation in lagged(
                [
                    recolour(self, row, {(0, j): row.fills[0, j]}) + [FadeIn(row.labels[0, j], rate_func=second_half)]
                    for j in row.shown_columns()
                ]
            )
        ]

    @staticmethod
    def labels(row: NumberGrid) -> list:
        return [row.labels[0, j] for j in row.shown_columns()]

    def build(self, title):
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        rms = not rec.architecture.has_centring
        io = norm_io(rec)
        features = axis_labels("d_model", rec.tokens, d)
        shown = (
            edges_and_largest([rec.tensors[io["x"]][f].tolist()], WIDE_ENTRIES) if d > FEATURE_SLOTS else list(range(d))
        )
        width = column_width(min(d, FEATURE_SLOTS), width=6.4, most=1.5)
        common = dict(
            column_slots=slots_of(shown, d), cell_width=width, cell_height=CELL_HEIGHT * (1.5 if rms else 1.25)
        )

        def row(field: str, headers: bool = False) -> NumberGrid:
            grid = NumberGrid(
                rec.tensors[field][f][None, :],
                None,
                features if headers else None,
                look,
                source=lambda _, j: (field, f, j),
                **common,
            )
            return grid if headers else self.blank(grid)

        def parameter(name: str) -> NumberGrid:
            return self.blank(
                parameter_grid(
                    rec,
                    name,
                    look,
                    values=rec.params[name][None, :],
                    index=lambda _, j: (j,),
                    row_names=None,
                    column_names=None,
                    **common,
                )
            )

        if rms:
            rows = [row(io["x"], headers=True), row("ln1_norm"), parameter("ln1.weight"), row(io["out"])]
            marks = [
                r"$x$",
                r"$x\,/\sqrt{\mathrm{mean}(x^2) + \epsilon}$",
                r"$\gamma$",
                r"$\gamma \cdot {\rm norm}$",
            ]
            parameters = (2,)
        else:
            rows = [
                row(io["x"], headers=True),
                row("ln1_centred"),
                row("ln1_norm"),
                parameter("ln1.weight"),
                parameter("ln1.bias"),
                row(io["out"]),
            ]
            marks = [
                r"$x$",
                r"$x - \mu$",
                r"$(x - \mu)\,/\sqrt{\sigma^2 + \epsilon}$",
                r"$\gamma$",
                r"$\beta$",
                r"$\gamma \cdot {\rm norm} + \beta$",
            ]
            parameters = (3, 4)
        x = rows[0]
        VGroup(*rows).arrange(DOWN, buff=ROW_GAP, aligned_edge=LEFT)
        for grid in rows[1:]:  # cells in one column, whatever the headers
            grid.shift(RIGHT * (x.cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        # The division on one line, a little smaller: as a fraction its σ² is a script of a script (9 px).
        names = [
            formula(mark, look.muted if k in parameters else look.text, FORMULA_SIZE * (0.8 if "/" in mark else 1))
            for k, mark in enumerate(marks)
        ]
        for name, grid in zip(names, rows):
            name.next_to(grid.cell_group, LEFT, buff=0.35)
        names = [VGroup(name) for name in names]  # typeset only: no code names on screen (issue 24)
        if rms:
            stats = {
                "mean_sq": (self.statistic(r"$\mathrm{mean}(x^2) =$", "ln1_mean_sq"), rows[0]),
                "epsilon": (self.epsilon(), rows[1]),
            }
        else:
            stats = {
                "mean": (self.statistic(r"$\mu =$", "ln1_mean"), rows[0]),
                "variance": (self.statistic(r"$\sigma^2 =$", "ln1_var"), rows[1]),
                "epsilon": (self.epsilon(), rows[2]),
            }
        side = {name: group for name, (group, _) in stats.items()}
        if rms:  # the statistics under the rows (a wide row leaves no room beside them)
            VGroup(*side.values()).arrange(RIGHT, buff=0.9).next_to(rows[-1].cell_group, DOWN, buff=0.45).align_to(
                rows[-1].cell_group, LEFT
            )
        else:
            side_x = max(VGroup(grid.cell_group, grid.ellipsis_group).get_right()[0] for grid in rows) + 0.6
            for group, grid in stats.values():
                group.move_to(grid.cell_group).set_x(side_x + group.width / 2)
        note = hidden_note(len(shown), d, "features")
        side["note"] = (
            [
                text(
                    f"⋯: {note} (shown: the first, the last, and the {len(shown) - 2} largest of the rest of x)",
                    HEADER_SIZE,
                    look.muted,
                )
            ]
            if note
            else []
        )
        if not rms and not self.centred_as_shown(io["x"], shown):
            side["note"].append(text(ROUNDED_NOTE, HEADER_SIZE, look.muted))
        below = VGroup(*(group for group, _ in stats.values())) if rms else rows[-1].cell_group
        for label in side["note"]:
            label.next_to(below, DOWN, buff=0.3 if label is side["note"][0] else 0.12).align_to(names[-1], LEFT)
            below = label
        self.place(
            VGroup(*rows, *names, *side["note"], *(group for group, _ in stats.values())),
            title,
            bottom_space=1.4 if rms else 0.9,
            grow=1.4,
        )
        return rows, names, side

    def centred_as_shown(self, field: str, columns: list[int]) -> bool:
        """Whether every drawn entry of x − μ is, as shown, the shown x less the shown μ (else a
        note says that each number is rounded on its own)."""
        rec, f = self.record, self.focus
        mean = rec.ln1_mean[f].item()  # written as "μ = 0.50": its shown value is subtracted
        return all(
            adds_up_as_written([rec.tensors[field][f, j].item(), -shown_value(mean, 2)], rec.ln1_centred[f, j].item())
            for j in columns
        )

    def statistic(self, mark: str, field: str) -> VGroup:
        """``mark`` (mathtext ending in "=") and the record's ``field[f]``, its number on the line of the "="."""
        look, f = self.look, self.focus
        group = VGroup(
            formula(mark, look.text, FORMULA_SIZE),
            number(self.record.tensors[field][f].item(), WORK_SIZE + 4, look.text, source=(field, f)),
        )
        group.arrange(RIGHT, buff=0.15)
        equals = [member for member in group[0].family_members_with_points()][
            -1
        ]  # not on μ's descender, nor up with σ²'s exponent
        group[1].shift(UP * (equals.get_y() - group[1].get_y()))
        return group

    def epsilon(self) -> VGroup:
        return VGroup(formula(_epsilon(self.record.config.ln_eps), self.look.muted, FORMULA_SIZE))

    def blank(self, grid: NumberGrid) -> NumberGrid:
        """``grid`` with empty cells, its labels made (in the colours its cells will get) but not shown."""
        grid.fills = {key: grid.cells[key].get_fill_color().to_hex() for key in grid.cells}
        for cell in grid.cells.values():
            cell.set_fill(self.look.background, opacity=1)
        grid.label_group.remove(*grid.labels.values())
        for key in list(grid.labels):
            grid.labels[key] = grid.number_at(*key, fill=grid.fills[key])
            grid.label_group.add(grid.labels[key])  # moved and scaled with the grid; drawn when they arrive
        return grid


def _epsilon(eps: float) -> str:
    """ε as mathtext: ``1e-05`` → ``ε = 10^{-5}``, ``3e-06`` → ``ε = 3 × 10^{-6}``."""
    mantissa, exponent = f"{eps:.0e}".split("e")
    power = f"10^{{{int(exponent)}}}"
    return f"$\\epsilon = {power}$" if mantissa == "1" else f"$\\epsilon = {mantissa} \\times {power}$"
