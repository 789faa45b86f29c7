"""The route through the record's block as a diagram, with this sentence's shapes: pre-norm
x → norm → attention → add → norm → FFN → add (as in GPT-2; Xiong et al. 2020, "On Layer
Normalization in the Transformer Architecture"), or post-norm x → attention → add → norm →
FFN → add → norm (Vaswani et al. 2017); the boxes are :func:`blockviz.figures.architecture.flow_boxes`.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.cbook import is_math_text
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch

from blockviz.figures import architecture
from blockviz.figures.labels import LINE_SPACING, POINTS_PER_INCH, text_size_in
from blockviz.figures.layout import Slot, build_figure
from blockviz.figures.page import MIN_PT
from blockviz.figures.parts import heading, note, titled
from blockviz.figures.request import FigureRequest
from blockviz.style import Theme

BOX_PT = 9.0
RESIDUAL_Y = 0.55
BRANCH_Y = 2.0
BOX_PAD_IN = 0.14
ADD_RADIUS = 0.14


def block_flow(request: FigureRequest) -> Figure:
    """The record's block as a diagram (:func:`~blockviz.figures.architecture.flow_boxes`): the
    residual stream x → ⊕ → ⊕ → the block's output, each sublayer (norm, attention, FFN)
    beside it, each box and ⊕ labelled with its shape for this sentence. At natural size the
    stream runs left to right; on a page it runs top to bottom, the sublayers beside it."""
    rec, page, theme = request.record, request.page, request.theme
    n, c = rec.n, rec.config
    boxes, outputs = architecture.flow_boxes(rec, theme)
    lines = heading(page, titled("block-flow", architecture.describe(rec)), architecture.residual_formula(rec))
    if page.width is None:
        sizes = {name: box_size(text, BOX_PT) for name, text, _, _ in boxes}
        width = _flow_width(boxes, sizes)
        lines.append(
            [Slot(width, BRANCH_Y + 0.75, lambda ax: _draw_flow(ax, boxes, sizes, outputs, request.theme), key="flow")]
        )
    else:
        lines.append([_vertical_slot(boxes, outputs, page, request.theme)])
    lines.append(
        note(
            page,
            f"shapes as rows × columns for this sentence: {n} tokens, the width {c.d_model}, the hidden layer's width {c.d_ff}; every step keeps one row per token",
        )
    )
    return build_figure(lines, page)[0]


def box_size(text: str, size_pt: float) -> tuple[float, float]:
    """Width and height in inches of a box's ``text`` at ``size_pt``, as it is drawn: each line
    on its own, a line with ``$…$`` (a typeset name, :mod:`blockviz.symbols`) as mathtext."""
    sizes = [text_size_in(line, size_pt, math=is_math_text(line)) for line in text.split("\n")]
    spacing = LINE_SPACING * size_pt / POINTS_PER_INCH * (len(sizes) - 1)
    return max(width for width, _ in sizes), spacing + sizes[-1][1]


def _vertical_slot(boxes, outputs, page, theme: Theme) -> Slot:
    """The diagram top to bottom: the residual stream down the left, each sublayer's boxes to
    its right, their output joining the stream at ⊕; type as large as fits the page (≥ 6 pt)."""
    size = max(MIN_PT, page.note + 0.5)
    room = page.content_width - 0.1
    while True:
        sizes = {name: box_size(text, size) for name, text, _, _ in boxes}
        output_width = max(box_size(text, max(MIN_PT, size - 0.5))[0] for text in outputs.values())
        stream_width = max(sizes[name][0] for name, _, _, kind in boxes if kind == "stream") + 2 * BOX_PAD_IN
        branch_width = max(sizes[name][0] for name, _, _, kind in boxes if kind == "branch") + 2 * BOX_PAD_IN
        width = max(stream_width, 2 * ADD_RADIUS + output_width + 0.3) + 0.35 + branch_width
        if width <= room or size <= MIN_PT:
            break
        size = max(MIN_PT, size - 0.5)
    gap = 0.22
    heights = {
        name: (sizes[name][1] + 2 * BOX_PAD_IN if kind != "add" else 2 * ADD_RADIUS) for name, _, _, kind in boxes
    }
    height = sum(heights.values()) + gap * (len(boxes) - 1) + 0.1
    stream_x = max(stream_width, 2 * ADD_RADIUS) / 2 + 0.02
    branch_x = width - branch_width - 0.02

    def draw(ax: Axes):
        ax.set_label("flow")
        ax.set_axis_off()
        ax.set_xlim(0, width)
        ax.set_ylim(0, height)
        drawn = {}
        y = height - 0.05
        previous = None  # where the stream left off: (x, y)
        branch_previous = None
        for name, text, colour, kind in boxes:
            box_height = heights[name]
            centre_y = y - box_height / 2
            if kind == "stream":
                box_width = sizes[name][0] + 2 * BOX_PAD_IN
                _box(ax, stream_x - box_width / 2, centre_y, box_width, box_height, colour, theme)
                drawn[name] = ax.text(
                    stream_x,
                    centre_y,
                    text,
                    ha="center",
                    va="center",
                    fontsize=size,
                    color=theme.text,
                    parse_math=True,
                    linespacing=1.35,
                )
                if previous is not None:
                    _arrow(ax, previous, (stream_x, y), theme.residual)
                previous = (stream_x, y - box_height)
            elif kind == "branch":
                box_width = sizes[name][0] + 2 * BOX_PAD_IN
                box_x = branch_x + (branch_width - box_width) / 2
                _box(ax, box_x, centre_y, box_width, box_height, colour, theme)
                drawn[name] = ax.text(
                    box_x + box_width / 2,
                    centre_y,
                    text,
                    ha="center",
                    va="center",
                    fontsize=size,
                    color=theme.text,
                    parse_math=True,
                    linespacing=1.35,
                )
                if branch_previous is None:  # leave the stream: a dot on it, an arrow right into the box
                    ax.add_patch(Circle((stream_x, centre_y), 0.035, color=theme.residual))
                    _arrow(ax, (stream_x, centre_y), (box_x, centre_y), theme.residual)
                else:
                    _arrow(ax, branch_previous, (box_x + box_width / 2, y), colour)
                branch_previous = (box_x + box_width / 2, y - box_height)
            else:
                centre = (stream_x, centre_y)
                ax.add_patch(Circle(centre, ADD_RADIUS, facecolor=theme.background, edgecolor=colour, linewidth=1.2))
                ax.text(*centre, "+", ha="center", va="center", fontsize=size + 2, color=theme.text)
                ax.text(
                    stream_x + ADD_RADIUS + 0.08,
                    centre_y - 0.04,
                    text,
                    ha="left",
                    va="top",
                    fontsize=max(MIN_PT, size - 0.5),
                    color=theme.muted_text,
                    parse_math=True,
                )
                _arrow(ax, previous, (stream_x, centre_y + ADD_RADIUS), theme.residual)
                bx, by = branch_previous
                ax.plot([bx, bx], [by, centre_y], color=colour, linewidth=1.2, solid_capstyle="butt")
                _arrow(ax, (bx, centre_y), (stream_x + ADD_RADIUS, centre_y), colour)
                ax.text(
                    stream_x + ADD_RADIUS + 0.08,
                    centre_y + 0.04,
                    outputs[name],
                    ha="left",
                    va="bottom",
                    fontsize=max(MIN_PT, size - 0.5),
                    color=theme.muted_text,
                    parse_math=True,
                    linespacing=1.25,
                )
                drawn[name] = centre
                previous = (stream_x, centre_y - ADD_RADIUS)
                branch_previous = None
            y -= box_height + gap
        return drawn

    return Slot(width, height, draw, key="flow")


def _box(ax: Axes, x: float, centre_y: float, width: float, height: float, colour: str, theme: Theme) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x, centre_y - height / 2),
            width,
            height,
            boxstyle="round,pad=0,rounding_size=0.06",
            facecolor=theme.background,
            edgecolor=colour,
            linewidth=1.2,
        )
    )


def _draw_flow(ax: Axes, boxes, sizes, outputs, theme: Theme) -> dict:
    ax.set_label("flow")
    ax.set_axis_off()
    width, height = ax.figure.get_size_inches() * ax.get_position().size
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    drawn = {}
    x = 0.05
    branch_start = None
    previous_branch = None
    stream_previous = None
    for name, text, colour, kind in boxes:
        if kind == "add":
            centre = (x + 0.3, RESIDUAL_Y)
            ax.add_patch(Circle(centre, ADD_RADIUS, facecolor=theme.background, edgecolor=colour, linewidth=1.4))
            ax.text(*centre, "+", ha="center", va="center", fontsize=12, color=theme.text)
            ax.text(
                centre[0],
                RESIDUAL_Y - 0.3,
                text,
                ha="center",
                va="top",
                fontsize=BOX_PT - 1,
                color=theme.muted_text,
                parse_math=True,
            )
            _arrow(ax, (previous_branch[0], previous_branch[1]), (centre[0], BRANCH_Y), colour, head=False)
            _arrow(ax, (centre[0], BRANCH_Y), (centre[0], RESIDUAL_Y + ADD_RADIUS), colour)
            ax.text(
                centre[0] - 0.08,
                (BRANCH_Y + RESIDUAL_Y) / 2 + 0.1,
                outputs[name],
                ha="right",
                va="center",
                fontsize=BOX_PT - 1.5,
                color=theme.muted_text,
                parse_math=True,
                linespacing=1.3,
            )
            _arrow(ax, stream_previous, (centre[0] - ADD_RADIUS, RESIDUAL_Y), theme.residual)
            stream_previous = (centre[0] + ADD_RADIUS, RESIDUAL_Y)
            drawn[name] = centre
            x = centre[0] + 0.45
            branch_start = None
            continue
        box_width, box_height = sizes[name][0] + 2 * BOX_PAD_IN, sizes[name][1] + 2 * BOX_PAD_IN
        y = RESIDUAL_Y if kind == "stream" else BRANCH_Y
        if kind == "branch" and branch_start is None:
            branch_start = (x, RESIDUAL_Y)
            ax.add_patch(Circle(branch_start, 0.04, color=theme.residual))
            _arrow(ax, branch_start, (x, y), theme.residual, head=False)
            _arrow(ax, (x, y), (x + 0.3, y), theme.residual)
            x += 0.3
        elif kind == "branch":
            _arrow(ax, previous_branch, (x, y), colour)
        if kind == "stream" and stream_previous is not None:
            _arrow(ax, stream_previous, (x, y), theme.residual)
        ax.add_patch(
            FancyBboxPatch(
                (x, y - box_height / 2),
                box_width,
                box_height,
                boxstyle="round,pad=0,rounding_size=0.08",
                facecolor=theme.background,
                edgecolor=colour,
                linewidth=1.4,
            )
        )
        drawn[name] = ax.text(
            x + box_width / 2,
            y,
            text,
            ha="center",
            va="center",
            fontsize=BOX_PT,
            color=theme.text,
            parse_math=True,
            linespacing=1.35,
        )
        if kind == "stream":
            stream_previous = (x + box_width, y)
            x += box_width + _stream_gap(name, name == boxes[-1][0])
        else:
            previous_branch = (x + box_width, y)
            x += box_width + 0.35
    return drawn


def _flow_width(boxes, sizes) -> float:
    """Width in inches of the diagram, following the same steps as :func:`_draw_flow`."""
    x = 0.05
    in_branch = False
    for name, _, _, kind in boxes:
        box_width = sizes[name][0] + 2 * BOX_PAD_IN
        if kind == "add":
            x += 0.3 + 0.45
            in_branch = False
        elif kind == "stream":
            x += box_width + _stream_gap(name, name == boxes[-1][0])
        else:
            x += (0.0 if in_branch else 0.3) + box_width + 0.35
            in_branch = True
    return x + 0.05


def _stream_gap(name: str, last: bool) -> float:
    """Inches after a box on the stream: room for the first branch after the input, an arrow
    between two boxes on the stream (a post-norm block's norms), none after the output."""
    return 0.9 if name == "resid_pre" else (0.0 if last else 0.35)


def _arrow(ax: Axes, start, end, colour: str, head: bool = True) -> None:
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops=dict(
            arrowstyle="-|>" if head else "-", color=colour, linewidth=1.3, shrinkA=0, shrinkB=0, mutation_scale=10
        ),
    )
