"""The one look of figures, scenes and explorer (blockviz.style): role colours readable on both
themes and apart for colour-blind readers, weights' normalisation, the blocked-cell style."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from colorspacious import cspace_convert, deltaE
from matplotlib.colors import to_rgb

from blockviz import style
from blockviz.style import DARK, LIGHT, ROLES, THEMES, role_color, text_color_on, weight_color

CVD = ("deuteranomaly", "protanomaly")


def luminance(colour) -> float:
    """WCAG 2 relative luminance."""
    channels = np.array(to_rgb(colour))
    linear = np.where(channels <= 0.03928, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ [0.2126, 0.7152, 0.0722])


def contrast(one, two) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    high, low = sorted((luminance(one), luminance(two)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def seen_with(colour, deficiency: str | None) -> np.ndarray:
    """``colour`` as sRGB, as a reader with full ``deficiency`` (Machado et al. 2009) sees it."""
    rgb = np.array(to_rgb(colour))
    if deficiency is None:
        return rgb
    return np.clip(cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}, "sRGB1"), 0, 1)


def difference(one, two, deficiency: str | None = None) -> float:
    """CAM02-UCS ΔE between two colours as seen with ``deficiency``."""
    return float(deltaE(seen_with(one, deficiency), seen_with(two, deficiency), input_space="sRGB1"))


def test_contrast_and_delta_e_helpers_agree_with_known_values():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert difference("#ff0000", "#ff0000", "deuteranomaly") == pytest.approx(0.0, abs=1e-6)
    assert (
        difference("#d62728", "#2ca02c") > 30 > difference("#d62728", "#2ca02c", "deuteranomaly")
    )  # red and green: apart, then not


@pytest.mark.parametrize("theme", THEMES.values(), ids=list(THEMES))
@pytest.mark.parametrize("role", ROLES)
def test_role_colours_are_readable_text_on_their_page(theme, role):
    assert contrast(role_color(role, theme), theme.background) >= 4.5


@pytest.mark.parametrize("theme", THEMES.values(), ids=list(THEMES))
@pytest.mark.parametrize("deficiency", [None, *CVD])
def test_every_two_roles_stay_apart_for_colour_blind_readers(theme, deficiency):
    differences = {
        (one, two): difference(role_color(one, theme), role_color(two, theme), deficiency)
        for one, two in itertools.combinations(ROLES, 2)
    }
    closest = min(differences, key=differences.get)
    assert differences[closest] >= 10, (closest, round(differences[closest], 1))


def test_the_old_names_are_the_video_colours():
    assert (
        style.QUERY_COLOR,
        style.KEY_COLOR,
        style.VALUE_COLOR,
        style.OUTPUT_COLOR,
        style.FFN_COLOR,
        style.RESIDUAL_COLOR,
    ) == tuple(DARK.roles[role] for role in ("query", "key", "value", "output", "ffn", "residual"))


@pytest.mark.parametrize("theme", THEMES.values(), ids=list(THEMES))
def test_page_text_and_blocked_cells_are_readable(theme):
    assert contrast(theme.text, theme.background) >= 7 and contrast(theme.muted_text, theme.background) >= 4.5
    assert contrast(text_color_on(theme.blocked), theme.blocked) >= 4.5
    assert style.BLOCKED_SCORE_LABEL == "\u2212\u221e" and style.BLOCKED_WEIGHT_LABEL == "0"


def test_weights_are_fixed_0_to_1_by_their_square_root():
    norm = style.weights_norm()
    assert (norm.vmin, norm.vmax, norm(0.0), norm(1.0), float(norm(0.25))) == (0.0, 1.0, 0.0, 1.0, 0.5)
    assert np.allclose(weight_color(2.0), weight_color(1.0)) and np.allclose(
        weight_color(-1.0), weight_color(0.0)
    )  # clipped to 0–1


def test_small_weights_of_long_sentences_are_told_apart():
    """At 45–64 tokens most weights are 0.02–0.2: their colours must differ visibly (a linear
    0–1 map gives ΔE ≈ 7 between 0.02 and 0.2; the √ map over 20)."""
    assert difference(weight_color(0.02), weight_color(0.2)) >= 20
    assert difference(weight_color(0.0), weight_color(0.02)) >= 4
    assert difference(weight_color(0.1), weight_color(0.2)) >= 8
    for deficiency in CVD:
        assert difference(weight_color(0.02), weight_color(0.2), deficiency) >= 15


def test_signed_colours_are_symmetric_and_white_at_zero():
    assert np.allclose(style.signed_color(0.0, 3.0)[:3], style.signed_color(-0.0, 7.0)[:3])
    assert difference(style.signed_color(1.0, 2.0), style.signed_color(-1.0, 2.0)) > 20
    assert style.signed_color(5.0, 2.0) == style.signed_color(2.0, 2.0)  # clipped at the scale's end
    assert LIGHT.name == "light" and DARK.name == "dark"


def test_an_outlier_of_its_family_is_clipped_in_scene_and_figure(chicken_record):
    """An outlier (SmolLM2's 22,543 on its first token) clips the residual stream's record scale,
    so every grid that shows it clips it: the scene's 1 × d row grid (whose few shown cells alone
    could not clip it under the 5 % rule) draws it in its scale's end colour as the figure does,
    writes the real number, and its bar says "clipped"; the row's other cells are on the grid's
    own shown scale, which their largest fills to ≥ 60 %. The figure's colour bar has
    matplotlib's extend arrows and says "clipped"."""
    from matplotlib.colors import to_hex
    from support import with_outlier

    from blockviz.figures import FigureRequest, draw_figure
    from blockviz.scenes.block_helpers import row_grid
    from blockviz.scenes.colour_bar import scales_of
    from blockviz.scenes.look import look

    rec = with_outlier(chicken_record, 22543.0)
    limit = rec.scale_limit("resid_pre")
    assert rec.scale_of("resid_pre").clipped and limit < 100
    grid = row_grid(rec, "resid_pre", 0, "resid_pre", look("dark"))
    shown = grid.color_limit
    figure = draw_figure("token-grid", FigureRequest(rec, width=None))
    (mesh,) = [ax for ax in figure.axes if ax.get_label() == "resid_pre"][0].collections[:1]
    cells = np.ma.getdata(mesh.get_array()).reshape(rec.n, -1)
    assert cells[0, 0] == 22543.0
    assert to_hex(mesh.cmap(mesh.norm(22543.0))) == to_hex(style.signed_color(limit, limit))  # the end colour
    assert grid.cells[0, 0].get_fill_color().to_hex().lower() == to_hex(style.signed_color(shown, shown))
    assert grid.is_clipped(0, 0) and grid.labels[0, 0].original_text.replace(",", "").startswith("22543")
    others = [float(rec.resid_pre[0, j]) for (_i, j) in grid.cells if j != 0]
    assert max(abs(value) for value in others) >= 0.6 * shown
    for (_i, j), cell in grid.cells.items():
        if j != 0:
            value = float(rec.resid_pre[0, j])
            assert cell.get_fill_color().to_hex().lower() == to_hex(style.signed_color(value, shown)), j
    (scene_bar,) = scales_of(rec, [grid])
    assert scene_bar.clipped and scene_bar.words.endswith("(clipped)")
    (bar,) = [ax for ax in figure.axes if ax.get_label() == "colorbar"]
    assert [text.get_text() for text in bar.texts if text.get_label() == "title"] == ["residual stream (clipped)"]
    arrows = [patch for patch in bar.patches if patch.get_label() == "extend"]
    assert len(arrows) == 2 and [to_hex(a.get_facecolor()) for a in arrows] == [
        to_hex(style.signed_color(-limit, limit)),
        to_hex(style.signed_color(limit, limit)),
    ]
    unclipped = draw_figure("token-grid", FigureRequest(chicken_record, width=None))
    (plain,) = [ax for ax in unclipped.axes if ax.get_label() == "colorbar"]
    assert not [patch for patch in plain.patches if patch.get_label() == "extend"]
