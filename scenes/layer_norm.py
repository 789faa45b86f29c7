"""Scene — LayerNorm on one row: its mean, the row less the mean, the variance, ÷ √(var + ε), × γ, + β."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, VGroup

from blockviz.record_fields import axis_labels
from blockviz.scenes.base import RecordScene
from blockviz.scenes.block_helpers import parameter_grid
from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import column_width
from blockviz.scenes.look import CELL_HEIGHT, HEADER_SIZE, WORK_SIZE
from blockviz.scenes.text import formula, number, text

DESCRIPTION = "one row through LayerNorm: mean, centre, variance, ÷ √(var + ε), × γ, + β"
CHAPTER = "LayerNorm"
CAPTION = ("LayerNorm takes one token's row, subtracts its mean, divides by the square root of its variance (plus a tiny ε), "
           "then scales by γ and shifts by β: each row on its own, before attention and again before the FFN.")

FEATURE_SLOTS = 8
"""Columns drawn of the d_model-wide rows."""
FORMULA_SIZE = 32
ROW_GAP = 0.24


def norm_io(rec) -> dict[str, str]:
    """LayerNorm 1's input and output fields, and what the captions say of them: pre-norm, the
    block's input ``resid_pre`` into ``ln1`` (attention's input); post-norm (BERT), attention's
    sum ``resid_mid`` into ``resid_mid_norm`` (the FFN's input)."""
    if rec.config.norm_placement == "post":
        return {"x": "resid_mid", "out": "resid_mid_norm", "enters": "after attention's sum (post-norm)", "feeds": "the input to the FFN",
                "second": "LayerNorm 2 does the same to resid_post: its output is the layer's"}
    return {"x": "resid_pre", "out": "ln1", "enters": "as it enters the block", "feeds": "the input to attention",
            "second": "LayerNorm 2 does the same to each row of resid_mid, before the FFN"}


class LayerNormRow(RecordScene):
    """LayerNorm 1 (Ba et al. 2016) on the focus token's row x of ``resid_pre`` ``(d_model,)``:
    μ = mean(x) (``ln1_mean``), x − μ (``ln1_centred``), σ² = mean((x − μ)²) (``ln1_var``),
    (x − μ) / √(σ² + ε) (``ln1_norm``), then × γ + β (``ln1.weight``, ``ln1.bias``) = ``ln1``.
    Every number is the record's; LayerNorm 2 does the same to ``resid_mid``."""

    def construct(self) -> None:
        rec, f = self.record, self.focus
        title = self.show_title(f"LayerNorm, one row: “{self.token_name(f)}”")
        rows, names, side = self.build(title)
        x, centred, norm, gamma, beta, out = rows
        frames = [VGroup(row.cell_group, row.header_group, row.ellipsis_group) for row in rows[1:]]
        self.add(x, names[0])
        io = norm_io(rec)
        self.step(FadeIn(VGroup(*frames, *names[1:])), caption=f"the row of “{self.token_name(f)}” {io['enters']}: d_model = {rec.config.d_model} numbers")
        for row, frame in zip(rows[1:], frames):
            self.remove(frame)
            self.add(row.cell_group, row.header_group, row.ellipsis_group)
        light = Highlight(self.look, x.cell_group)
        self.step(FadeIn(light), self.gather(self.labels(x), side["mean"]), caption="its mean, μ")
        self.step(light.over(centred.cell_group), self.carry(self.labels(x), self.labels(centred)), *self.recolour(centred, centred.fills),
                  caption="subtract μ from every entry: the row centred on 0")
        self.step(self.gather(self.labels(centred), side["variance"]), caption="its variance σ²: the mean of the squared centred entries")
        self.step(light.over(norm.cell_group), self.carry(self.labels(centred), self.labels(norm)), *self.recolour(norm, norm.fills), FadeIn(side["epsilon"]),
                  caption="divide by √(σ² + ε), ε a tiny number so nothing divides by 0: mean 0, variance 1")
        self.step(light.over(VGroup(gamma.cell_group, beta.cell_group)), *(FadeIn(VGroup(*self.labels(row))) for row in (gamma, beta)),
                  *self.recolour(gamma, gamma.fills), *self.recolour(beta, beta.fills), caption="then a learned scale γ and shift β, one per feature")
        self.step(light.over(out.cell_group), self.carry(self.labels(norm), self.labels(out)), *self.recolour(out, out.fills),
                  caption=f"× γ + β, entry by entry: LayerNorm's output, {io['feeds']}")
        self.step(caption=io["second"])

    @staticmethod
    def labels(row: NumberGrid) -> list:
        return [row.labels[0, j] for j in row.shown_columns()]

    def build(self, title):
        rec, look, f = self.record, self.look, self.focus
        d = rec.config.d_model
        features = axis_labels("d_model", rec.tokens, d)
        columns = min(d, FEATURE_SLOTS)
        width = column_width(columns, width=6.4, most=1.5)
        common = dict(max_columns=FEATURE_SLOTS, cell_width=width, cell_height=CELL_HEIGHT * 1.25)

        def row(field: str, headers: bool = False) -> NumberGrid:
            return self.blank(NumberGrid(rec.tensors[field][f][None, :], None, features if headers else None, look, source=lambda _, j: (field, f, j),
                                         color_limit=self.limit(field), **common))

        def parameter(name: str) -> NumberGrid:
            return self.blank(parameter_grid(rec, name, look, values=rec.params[name][None, :], index=lambda _, j: (j,), row_names=None,
                                             column_names=None, **common))

        io = norm_io(rec)
        x = NumberGrid(rec.tensors[io["x"]][f][None, :], None, features, look, source=lambda _, j: (io["x"], f, j), color_limit=self.limit(io["x"]), **common)
        rows = [x, row("ln1_centred"), row("ln1_norm"), parameter("ln1.weight"), parameter("ln1.bias"), row(io["out"])]
        stack = VGroup(*rows).arrange(DOWN, buff=ROW_GAP, aligned_edge=LEFT)
        for grid in rows[1:]:  # cells in one column, whatever the headers
            grid.shift(RIGHT * (x.cell_group.get_left()[0] - grid.cell_group.get_left()[0]))
        marks = [r"$x$", r"$x - \mu$", r"$(x - \mu)\,/\,\sqrt{\sigma^2 + \epsilon}$", r"$\gamma$", r"$\beta$", r"$\gamma \cdot {\rm norm} + \beta$"]
        colors = [look.text, look.text, look.text, look.muted, look.muted, look.text]
        names = [formula(mark, color, FORMULA_SIZE) for mark, color in zip(marks, colors)]
        for name, grid in zip(names, rows):
            name.next_to(grid.cell_group, LEFT, buff=0.35)
        code = [text(name, HEADER_SIZE, look.muted) for name in (io["x"], "ln1_centred", "ln1_norm", "ln1.weight", "ln1.bias", io["out"])]
        for label, grid in zip(code, rows):  # the record's names, small, on the right
            label.next_to(VGroup(grid.cell_group, grid.ellipsis_group), RIGHT, buff=0.3)
        names = [VGroup(name, label) for name, label in zip(names, code)]
        mean = VGroup(formula(r"$\mu =$", look.text, FORMULA_SIZE), number(rec.ln1_mean[f].item(), WORK_SIZE + 4, look.text, source=("ln1_mean", f)))
        variance = VGroup(formula(r"$\sigma^2 =$", look.text, FORMULA_SIZE), number(rec.ln1_var[f].item(), WORK_SIZE + 4, look.text, source=("ln1_var", f)))
        epsilon = VGroup(formula(_epsilon(rec.config.ln_eps), look.muted, FORMULA_SIZE))
        side_x = max(label.get_right()[0] for label in code) + 0.6
        for group, grid in ((mean, rows[0]), (variance, rows[1]), (epsilon, rows[2])):
            group.arrange(RIGHT, buff=0.15)
            if len(group) > 1:  # the number on the line of the "=" (not on μ's descender, nor up with σ²'s exponent)
                equals = [member for member in group[0].family_members_with_points()][-1]
                group[1].shift(UP * (equals.get_y() - group[1].get_y()))
            group.move_to(grid.cell_group).set_x(side_x + group.width / 2)
        side = {"mean": mean, "variance": variance, "epsilon": epsilon}
        self.place(VGroup(*rows, *names, mean, variance, epsilon), title, grow=1.4)
        return rows, names, side

    def blank(self, grid: NumberGrid) -> NumberGrid:
        """``grid`` with empty cells, its labels made (in the colours its cells will get) but not shown."""
        grid.fills = {key: grid.cells[key].get_fill_color().to_hex() for key in grid.cells}
        for key, cell in grid.cells.items():
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
