"""The matplotlib settings of every figure: theme colours, fonts and repeatable saves.

Settings apply through :func:`matplotlib.rc_context` while a figure is drawn and saved, so
nothing changes matplotlib's global state.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

import matplotlib

from blockviz.style import Theme

FONT_FAMILY = "DejaVu Sans"
MONO_FAMILY = "DejaVu Sans Mono"
SVG_HASH_SALT = "blockviz"
"""Fixed salt for the ids matplotlib writes into SVG files, so repeat saves are byte-identical."""


SAVE_PARAMS = {"svg.hashsalt": SVG_HASH_SALT, "svg.fonttype": "none", "pdf.fonttype": 42}
"""rcParams read when saving: fixed SVG ids, text kept as text in SVG (searchable, selectable, and fast to write) and TrueType (Type 42) fonts in PDF."""


def rc_params(theme: Theme) -> dict:
    """The rcParams of a figure in ``theme``: colours, fonts, TrueType in PDF, fixed SVG ids."""
    return {
        "figure.facecolor": theme.background,
        "savefig.facecolor": theme.background,
        "axes.facecolor": theme.background,
        "axes.edgecolor": theme.grid,
        "axes.labelcolor": theme.text,
        "axes.titlecolor": theme.text,
        "text.color": theme.text,
        "xtick.color": theme.muted_text,
        "ytick.color": theme.muted_text,
        "xtick.labelcolor": theme.text,
        "ytick.labelcolor": theme.text,
        "legend.labelcolor": theme.text,
        "hatch.color": theme.blocked_hatch,
        "hatch.linewidth": 0.8,
        "font.family": "sans-serif",
        "font.sans-serif": [FONT_FAMILY],
        "font.monospace": [MONO_FAMILY],
        "mathtext.fontset": "dejavusans",
        "axes.unicode_minus": True,
        "text.usetex": False,
        "image.interpolation": "nearest",
        **SAVE_PARAMS,
    }


@contextlib.contextmanager
def figure_context(theme: Theme) -> Iterator[None]:
    """Draw and save inside this: the theme's rcParams, and no per-glyph font warnings.

    Missing glyphs are reported once per token by :func:`blockviz.figures.glyphs.warn_missing_glyphs`
    instead of once per glyph drawn.
    """
    with matplotlib.rc_context(rc_params(theme)), quiet_glyphs():
        yield


@contextlib.contextmanager
def saving_context() -> Iterator[None]:
    """Save inside this: :data:`SAVE_PARAMS`, and no per-glyph font warnings."""
    with matplotlib.rc_context(SAVE_PARAMS), quiet_glyphs():
        yield


@contextlib.contextmanager
def quiet_glyphs() -> Iterator[None]:
    """Silence matplotlib's one-warning-per-missing-glyph (reported once per token instead)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s)Glyph \d+ .*missing from")
        yield
