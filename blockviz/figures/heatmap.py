"""Drawing a matrix as coloured cells, annotating the cells, and the blocked (−∞) cell style.

As in matplotlib's gallery "Creating annotated heatmaps": drawing and annotating are two
functions; both take the ``Axes`` and return the artists they drew. Row 0 is at the top.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh
from matplotlib.colors import Colormap, Normalize
from matplotlib.patches import Polygon, Rectangle
from matplotlib.text import Text

from blockviz.scale_limits import ZERO_LIMIT
from blockviz.style import (
    BLOCKED_WEIGHT_LABEL,
    NEG_INF_LABEL,
    SIGNED_CMAP,
    WEIGHTS_CMAP,
    WEIGHTS_SCALE_NAME,
    Theme,
    format_number,
    text_color_on,
    weights_norm,
)

WEIGHT_TICKS = (0.0, 0.05, 0.2, 0.5, 1.0)
"""Where the weights' colour bar is labelled (on its √ scale the small weights get room)."""


@dataclass(frozen=True)
class ColourScale:
    """A colour map, the range it spans, and the quantity it belongs to (its colour bar's label)."""

    cmap: Colormap
    norm: Normalize
    label: str = ""
    tick_values: tuple[float, ...] = ()
    clipped: bool = False
    """Some values lie beyond the scale (an outlier, :mod:`blockviz.scale_limits`): drawn in its
    end colours, and its colour bar has matplotlib's ``extend="both"`` arrows (:func:`draw_extend_arrows`)."""

    def rgba(self, values: np.ndarray) -> np.ndarray:
        """RGBA of each value, shape ``values.shape + (4,)``."""
        return self.cmap(self.norm(values))

    @property
    def ticks(self) -> tuple[float, ...]:
        """Where its colour bar is labelled: both ends and 0 (for weights, as :func:`weights_scale` says)."""
        if self.tick_values:
            return self.tick_values
        low, high = self.norm.vmin, self.norm.vmax
        return (low, 0.0, high) if low < 0 < high else (low, high)

    @property
    def all_zero(self) -> bool:
        """True for the scale of a quantity that is 0 everywhere (its half-width is the 1e-9
        floor of :meth:`BlockRecord.scale_limit`): a colour bar would tell nothing."""
        return self.norm.vmax <= ZERO_LIMIT


def signed_scale(limit: float, label: str = "", clipped: bool = False) -> ColourScale:
    """The diverging map on ``[-limit, limit]``, white at 0 (``clipped``: values lie beyond it)."""
    return ColourScale(colormaps[SIGNED_CMAP], Normalize(-limit, limit), label, clipped=clipped)


CLIPPED_NOTE = " (clipped)"
"""Added to the label of a clipped scale's colour bar."""


def draw_extend_arrows(ax: Axes, scale: ColourScale) -> list[Polygon]:
    """The triangles a matplotlib colour bar draws with ``extend="both"``, at both ends of a
    horizontal colour bar drawn on ``ax`` (the bar spans ``ax``'s axes coordinates 0–1), in the
    map's end colours: values beyond the scale are drawn in those colours. Each is as long as
    the bar is high."""
    figure = ax.figure
    box = ax.get_position()
    length = (box.height * figure.get_figheight()) / max(
        box.width * figure.get_figwidth(), 1e-9
    )  # the bar's height, in axes widths
    ends = ((0.0, -length, scale.cmap(0.0)), (1.0, 1.0 + length, scale.cmap(1.0)))
    arrows = []
    for base, tip, colour in ends:
        arrow = Polygon(
            [(base, 0.0), (tip, 0.5), (base, 1.0)],
            closed=True,
            transform=ax.transAxes,
            facecolor=colour,
            edgecolor="none",
            clip_on=False,
            label="extend",
        )
        ax.add_patch(arrow)
        arrows.append(arrow)
    return arrows


def record_scale(rec, name: str, label: str | None = None) -> ColourScale:
    """The one colour scale of quantity ``name`` (a record field or a parameter, e.g.
    ``"attn.W_O"``) in ``rec``: :meth:`BlockRecord.scale_limit`, the call the scenes make too,
    so a value has the same colour in every panel, figure and video. Labelled ``label``, by
    default the quantity's colour-scale family's ``label`` in
    :data:`blockviz.record_fields.SCALE_FAMILIES` (a parameter: its own name),
    with :data:`CLIPPED_NOTE` when an outlier clips the scale."""
    family = scale_family(name)
    limit = rec.scale_of(name)
    label = family_label(family) if label is None else label
    return signed_scale(limit.limit, label + CLIPPED_NOTE if limit.clipped else label, limit.clipped)


def shown_scale(name: str, values, label: str | None = None, rec=None) -> ColourScale:
    """The colour scale of quantity ``name`` chosen from the ``values`` a figure draws (any shape;
    −∞ and NaN left out): :func:`blockviz.scale_limits.shown_limit`, the rule the scenes' grids
    follow (the largest |value|, robust to one outlier, rounded up to a value a bar reads at a
    glance; a value ``rec``'s scale of the family clips is clipped here too). Labelled as
    :func:`record_scale` labels it."""
    from blockviz.scale_limits import shown_limit

    family = rec.scale_of(name) if rec is not None else None
    scale = shown_limit(np.asarray(values, dtype=float).ravel().tolist(), family)
    label = family_label(scale_family(name)) if label is None else label
    return signed_scale(scale.limit, label + CLIPPED_NOTE if scale.clipped else label, scale.clipped)


def drawn_scale(rec, name: str, rows, columns, label: str | None = None) -> ColourScale:
    """The one colour scale of quantity ``name``'s family in a figure: :func:`shown_scale` of
    every cell the figure draws on it, ``rows`` (arrays whose last axis is the features) at the
    shown ``columns`` (original indices), so that one quantity has one bar per figure and the
    figure reads as the scenes' frames do (:mod:`blockviz.scenes.shown_scales`)."""
    picked = [np.asarray(values, dtype=float)[..., list(columns)].ravel() for values in rows]
    return shown_scale(name, np.concatenate(picked), label, rec)


def family_label(family: str) -> str:
    """How a figure's colour bar names colour-scale ``family``
    (:data:`blockviz.record_fields.SCALE_FAMILIES`; a family not there, e.g. a parameter's own: its name)."""
    from blockviz.record_fields import SCALE_FAMILIES

    return SCALE_FAMILIES[family].label if family in SCALE_FAMILIES else family


def scale_family(name: str) -> str:
    """The colour-scale family of a record field (``"masked_scores"`` → ``"scaled_scores"``);
    a parameter is its own family."""
    from blockviz.record_fields import BY_NAME

    return BY_NAME[name].scale if name in BY_NAME else name


def weights_scale() -> ColourScale:
    """The weights map on the fixed range 0–1, by √weight (:func:`blockviz.style.weights_norm`),
    its colour bar labelled "weight (√ scale)"."""
    return ColourScale(
        colormaps[WEIGHTS_CMAP], weights_norm(), f"{family_label('weights')} ({WEIGHTS_SCALE_NAME})", WEIGHT_TICKS
    )


def draw_heatmap(
    ax: Axes, values: np.ndarray, scale: ColourScale, theme: Theme, cell: float, blocked: np.ndarray | None = None
) -> QuadMesh:
    """Cells of ``values`` ``(rows, cols)`` coloured by ``scale``; ``blocked`` cells (and −∞) are
    left empty (for :func:`draw_blocked`), so −∞ never stretches the scale. Row 0 at the top; cells
    ``cell`` inches across (their smaller side) are parted by lines in the page colour, thinner for small cells."""
    rows, cols = values.shape
    hidden = _blocked_or_none(values, blocked)
    shown = np.where(np.isfinite(values), values, 0.0)
    if hidden is not False:
        shown = np.ma.masked_array(shown, mask=hidden)
    mesh = ax.pcolormesh(
        np.arange(cols + 1) - 0.5,
        np.arange(rows + 1) - 0.5,
        shown,
        cmap=scale.cmap,
        norm=scale.norm,
        edgecolors=theme.background,
        linewidth=0.0 if cell < 0.08 else round(min(0.5, 0.04 * cell * 72), 2),
    )
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect("auto")
    for spine in ax.spines.values():
        spine.set_visible(False)
    return mesh


def draw_blocked(ax: Axes, blocked: np.ndarray, theme: Theme) -> list[Rectangle]:
    """Paint the ``blocked`` cells (a boolean ``(rows, cols)`` array) in the one blocked style of
    :class:`blockviz.style.Theme` (the videos' too): the theme's blocked grey, one rectangle per
    run of blocked cells in a row."""
    patches = []
    for row, flags in enumerate(np.asarray(blocked, dtype=bool)):
        for start, stop in _runs(flags):
            patch = Rectangle((start - 0.5, row - 0.5), stop - start, 1.0, **blocked_patch_style(theme))
            ax.add_patch(patch)
            patches.append(patch)
    return patches


def blocked_patch_style(theme: Theme) -> dict:
    """How a blocked cell is drawn (a legend's swatch too): see :func:`draw_blocked`."""
    return dict(facecolor=theme.blocked, edgecolor=theme.background, linewidth=0.0)


def annotate_heatmap(
    ax: Axes,
    values: np.ndarray,
    scale: ColourScale,
    theme: Theme,
    size_pt: float,
    blocked: np.ndarray | None = None,
    decimals: int = 2,
    blocked_filled: bool = True,
) -> list[Text]:
    """Write every cell's value (``format_number``) on it, in black or white to suit the cell.

    Blocked cells read "−∞" (a masked score) or, with ``blocked_filled=False``, "0" (a weight).
    The texts are the figure's, placed in the Axes' data coordinates and labelled
    ``"<axes label>:cell"`` (an Axes clips each of its own texts to itself, which costs more
    than the text), written row by row: the returned ``texts[i * cols + j]`` is cell (i, j).
    """
    is_blocked = _blocked_or_none(values, blocked)
    colours = scale.rgba(np.where(np.isfinite(values), values, 0.0))
    blocked_text = text_color_on(theme.blocked)
    figure, label = ax.figure, f"{ax.get_label()}:cell"
    texts = []
    for (row, col), value in np.ndenumerate(values):
        on_blocked = is_blocked is not False and bool(is_blocked[row, col])
        shown = (
            (NEG_INF_LABEL if blocked_filled else BLOCKED_WEIGHT_LABEL)
            if on_blocked
            else format_number(float(value), decimals)
        )
        texts.append(
            figure.text(
                col,
                row,
                shown,
                transform=ax.transData,
                ha="center",
                va="center",
                fontsize=size_pt,
                label=label,
                color=blocked_text if on_blocked else text_color_on(colours[row, col]),
                parse_math=False,
            )
        )
    return texts


def _blocked_or_none(values: np.ndarray, blocked: np.ndarray | None):
    mask = np.isneginf(values)
    if blocked is not None:
        mask = mask | np.asarray(blocked, dtype=bool)
    return mask if mask.any() else False


def _runs(flags: np.ndarray):
    start = None
    for index, flag in enumerate(list(flags) + [False]):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            yield start, index
            start = None
