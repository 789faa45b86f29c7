"""One block against two on the copy task: the training loss and the copy accuracy at each
checkpoint of the record's copy model (its folder's card, :func:`blockviz.toy.copy_curves.copy_curve`)
beside the shipped run of one block trained the same way (:func:`~blockviz.toy.copy_curves.one_block_curve`)."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from blockviz.figures.layout import Slot, build_figure
from blockviz.figures.parts import heading, note, titled
from blockviz.figures.request import FigureRequest
from blockviz.figures.training import label_steps_panel
from blockviz.style import format_number
from blockviz.toy.copy_curves import CopyCurve, copy_curve, one_block_curve

NARROWEST_PANEL = 2.3
"""Inches: panels narrower than this side by side go one under the other (a narrow page)."""
PANEL_LEFT, PANEL_RIGHT, PANEL_BOTTOM, PANEL_TOP = 0.45, 0.8, 0.5, 0.3
"""Inches around a panel for its tick labels, axis label, title, and each line's name and last
value written right of its end."""


def _blocks(count: int) -> str:
    return {1: "one block", 2: "two blocks"}.get(count, f"{count} blocks")


def largest_jump(curve: CopyCurve) -> int:
    """The checkpoint index i at which the accuracy rose most since checkpoint i − 1 (at least 1)."""
    rises = [curve.accuracies[i] - curve.accuracies[i - 1] for i in range(1, len(curve.accuracies))]
    return 1 + max(range(len(rises)), key=rises.__getitem__) if rises else 0


def copy_training(request: FigureRequest) -> Figure:
    """Figure: the training loss (next-token cross-entropy on the repeat, as training recorded it
    at each checkpoint) and the copy accuracy (share of the held-out repeated words whose top
    prediction is the next word) against the training step, for the record's copy model and for
    one block trained the same way; steps at their true spacing, so a sudden drop (the phase
    change, when the induction head forms) shows as one."""
    whole, page, theme = request.whole, request.page, request.theme
    model, contrast = copy_curve(whole.source.path), one_block_curve()
    curves = [(model, theme.output), (contrast, theme.residual)]
    jump = largest_jump(model)
    lines = heading(
        page,
        titled(
            "copy-training",
            f"the accuracy of {_blocks(model.blocks)} jumps from {format_number(model.accuracies[jump - 1])} to "
            f"{format_number(model.accuracies[jump])} between steps {model.steps[jump - 1]:,} and {model.steps[jump]:,}; "
            f"{_blocks(contrast.blocks)} ends at {format_number(contrast.accuracies[-1])}",
        ),
    )
    width = (page.content_width if page.width is not None else 6.5) - 2 * page.gap
    side_by_side = width / 2 - PANEL_LEFT - PANEL_RIGHT >= NARROWEST_PANEL
    panel_width = (width / 2 if side_by_side else width) - PANEL_LEFT - PANEL_RIGHT
    height = min(2.2, panel_width * 0.8)
    panels = [
        _panel(panel_width, height, page, theme, "copy_loss", curves, "losses", "loss (cross-entropy)", None),
        _panel(
            panel_width,
            height,
            page,
            theme,
            "copy_accuracy",
            curves,
            "accuracies",
            "copy accuracy",
            (0.0, 1.0),
        ),
    ]
    lines += [panels] if side_by_side else [[panel] for panel in panels]
    lines.append(
        note(
            page,
            f"{_blocks(model.blocks)}: the record's model ({model.about}); {_blocks(contrast.blocks)}: the shipped run of "
            f"blockviz train --task copy --blocks 1 ({contrast.about}); accuracy on 200 held-out sequences, a phrase of "
            "3\u20135 words repeated; no loss is recorded at step 0",
        )
    )
    return build_figure(lines, page)[0]


def _panel(width: float, height: float, page, theme, key: str, curves, what: str, title: str, limits) -> Slot:
    """One line per curve of its ``what`` (``losses`` or ``accuracies``) against the step,
    marked at each checkpoint, its name and last value written after its end."""

    def draw(ax: Axes):
        values = []
        for curve, colour in curves:
            points = [(step, value) for step, value in zip(curve.steps, getattr(curve, what)) if value is not None]
            xs, ys = [x for x, _ in points], [y for _, y in points]
            values += ys
            ax.plot(xs, ys, color=colour, marker="o", markersize=3, linewidth=1.4, label=_label(curve))
            ax.annotate(
                f"{_label(curve)} {format_number(ys[-1])}",
                (xs[-1], ys[-1]),
                textcoords="offset points",
                xytext=(4, 0),
                color=colour,
                annotation_clip=False,
                ha="left",
                va="center",
                fontsize=page.bar_tick,
                label=f"{key}:value",
            )
        low, high = limits if limits is not None else (0.0, max(values))
        room = high - low or 1.0
        ax.set_ylim(low - 0.05 * room, high + 0.1 * room)
        last = max(curve.steps[-1] for curve, _ in curves)
        ax.set_xlim(-0.03 * last, last * 1.03)
        ax.tick_params(labelsize=page.bar_tick)
        label_steps_panel(ax, page, key, title, theme.text)
        ax.set_label(key)
        return ax

    return Slot(width, height, draw, key=key, left=PANEL_LEFT, right=PANEL_RIGHT, top=PANEL_TOP, bottom=PANEL_BOTTOM)


def _label(curve: CopyCurve) -> str:
    return _blocks(curve.blocks)
