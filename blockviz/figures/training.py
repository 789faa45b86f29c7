"""Learning, as a picture: a trained toy model's loss and its best head's "it" → subject weight
at each training checkpoint, read from the model folder the record names (``rec.source.path``:
``checkpoints.safetensors``, :func:`blockviz.toy.folder.read_checkpoints`), not from the record."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from blockviz.figures.layout import Slot, build_figure
from blockviz.figures.parts import heading, note, titled
from blockviz.figures.request import FigureRequest
from blockviz.style import format_number
from blockviz.toy.learning import KEY, QUERY, learning_of


def training(request: FigureRequest) -> Figure:
    """Figure: the loss (next-token cross-entropy, as training recorded it) and the best head's
    "it" → "chicken" weight in the lesson sentence, at each checkpoint, labelled with its step,
    the title saying whether the head formed (:attr:`~blockviz.toy.learning.Learning.formed`);
    from the checkpoints of the model folder the record came from. Checkpoints stand evenly
    spaced (their steps are not)."""
    rec, page = request.record, request.page
    learning = learning_of(rec.source.path)
    last = format_number(learning.weights[-1])
    lines = heading(
        page,
        titled(
            "training",
            f"head {learning.head} {'formed' if learning.formed else 'did not form'}: "
            f"its weight {QUERY!r} \u2192 {KEY!r} went from "
            f"{format_number(learning.weights[0])} at step {learning.steps[0]} to {last} at step {learning.steps[-1]}",
        ),
    )
    width = (page.content_width if page.width is not None else 6.5) - 2 * page.gap
    side_by_side = width / 2 - PANEL_LEFT - PANEL_RIGHT >= NARROWEST_PANEL
    panel_width = (width / 2 if side_by_side else width) - PANEL_LEFT - PANEL_RIGHT
    height = min(2.2, panel_width * 0.8)
    theme = request.theme
    losses = [(index, loss) for index, loss in enumerate(learning.losses) if loss is not None]
    panels = [
        _panel(
            panel_width,
            height,
            page,
            theme,
            "training_loss",
            losses,
            "loss (cross-entropy)",
            theme.residual,
            learning.steps,
            None,
        ),
        _panel(
            panel_width,
            height,
            page,
            theme,
            "training_weight",
            list(enumerate(learning.weights)),
            f"head {learning.head}: weight {QUERY!r} \u2192 {KEY!r}",
            theme.output,
            learning.steps,
            (0.0, 1.0),
        ),
    ]
    lines += [panels] if side_by_side else [[panel] for panel in panels]
    unrecorded = [str(step) for step, loss in zip(learning.steps, learning.losses) if loss is None]
    lines.append(
        note(
            page,
            f"checkpoints of {learning.sentence!r} (positions {learning.query} \u2192 {learning.key}), evenly spaced; "
            f"head {learning.head} has the largest weight at the last step"
            + (f"; no loss recorded at step {', '.join(unrecorded)}" if unrecorded else "")
            + f"; {rec.source.note or 'trained'}",
        )
    )
    return build_figure(lines, page)[0]


NARROWEST_PANEL = 2.3
"""Inches: panels narrower than this side by side go one under the other (a narrow page)."""
TICK_ROOM_PT = 9.0
"""Points under a panel's axis before its step labels end (tick length, padding, a little air)."""
PANEL_LEFT, PANEL_RIGHT, PANEL_BOTTOM, PANEL_TOP = 0.45, 0.1, 0.5, 0.3
"""Inches around a panel for its tick labels, axis label and title."""


def _panel(
    width: float,
    height: float,
    page,
    theme,
    key: str,
    points: list[tuple[int, float]],
    title: str,
    colour: str,
    steps: list[int],
    limits,
) -> Slot:
    """A line of ``points`` ``(checkpoint index, value)``, each marked and written with 2 decimals,
    the x axis labelled with the checkpoints' steps."""

    def draw(ax: Axes):
        xs, ys = [x for x, _ in points], [y for _, y in points]
        ax.plot(xs, ys, color=colour, marker="o", markersize=3.5, linewidth=1.4, label=key)
        for index, (x, y) in enumerate(points):
            below = _under_its_neighbours(ys, index)  # written on the side away from the line
            ax.annotate(
                format_number(y),
                (x, y),
                textcoords="offset points",
                xytext=(0, -5 if below else 4),
                ha="center",
                va="top" if below else "bottom",
                fontsize=page.bar_tick,
                color=theme.text,
                label=f"{key}:value",
            )
        ax.set_xticks(range(len(steps)), [str(step) for step in steps], fontsize=page.bar_tick)
        ax.tick_params(axis="y", labelsize=page.bar_tick)
        ax.set_xlim(-0.5, len(steps) - 0.5)
        low, high = limits if limits is not None else (min(ys), max(ys))
        room = high - low or 1.0
        ax.set_ylim(low - 0.2 * room, high + 0.2 * room)
        if limits is not None:
            ax.set_yticks(np.linspace(low, high, 6))
        ax.set_label(key)
        label_steps_panel(ax, page, key, title, colour)
        return ax

    return Slot(width, height, draw, key=key, left=PANEL_LEFT, right=PANEL_RIGHT, top=PANEL_TOP, bottom=PANEL_BOTTOM)


def label_steps_panel(ax: Axes, page, key: str, title: str, colour: str) -> None:
    """Label a panel whose x axis is the training step: "training step" under its ticks and
    ``title`` over it in ``colour``, both placed as texts (labelled ``{key}:xlabel`` and
    ``{key}:title``), not by the Axis at draw time, so that where they stand is known before
    drawing; the top and right spines hidden."""
    ax.annotate(
        "training step",
        (0.5, 0.0),
        xycoords="axes fraction",
        textcoords="offset points",
        xytext=(0, -(TICK_ROOM_PT + page.bar_tick)),
        ha="center",
        va="top",
        fontsize=page.axis,
        label=f"{key}:xlabel",
    )
    ax.annotate(
        title,
        (0.5, 1.0),
        xycoords="axes fraction",
        textcoords="offset points",
        xytext=(0, 6),
        ha="center",
        va="bottom",
        fontsize=page.title,
        color=colour,
        label=f"{key}:title",
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _under_its_neighbours(values: list[float], index: int) -> bool:
    """Whether ``values[index]`` lies below the mean of its neighbours (its label then goes under it)."""
    neighbours = [values[j] for j in (index - 1, index + 1) if 0 <= j < len(values)]
    return bool(neighbours) and values[index] < sum(neighbours) / len(neighbours)
