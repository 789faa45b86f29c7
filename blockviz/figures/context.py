"""The matplotlib settings of every figure: theme colours, fonts and repeatable saves.

Settings apply through :func:`matplotlib.rc_context` while a figure is drawn and saved, so
nothing changes matplotlib's global state.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import warnings
from collections.abc import Iterator

import matplotlib

from blockviz.style import Theme

FONT_FAMILY = "DejaVu Sans"
MONO_FAMILY = "DejaVu Sans Mono"
FALLBACK_FAMILIES = ("Symbola",)
"""Fonts matplotlib falls back to, in order, for characters the DejaVu fonts lack (emoji and
symbols: Symbola, from fonts-symbola, which the Makefile installs), where they are installed."""
SVG_HASH_SALT = "blockviz"
"""Fixed salt for the ids matplotlib writes into SVG files, so repeat saves are byte-identical."""


SAVE_PARAMS = {"svg.hashsalt": SVG_HASH_SALT, "svg.fonttype": "none", "pdf.fonttype": 42}
"""rcParams read when saving: fixed SVG ids, text kept as text in SVG (searchable, selectable, and fast to write) and TrueType (Type 42) fonts in PDF."""


@functools.cache
def installed_fallbacks() -> tuple[str, ...]:
    """The :data:`FALLBACK_FAMILIES` matplotlib's font manager knows (an absent one would be a
    "font not found" message on every text)."""
    from matplotlib import font_manager

    known = {entry.name for entry in font_manager.fontManager.ttflist}
    return tuple(family for family in FALLBACK_FAMILIES if family in known)


def font_families(family: str = "sans-serif") -> tuple[str, ...]:
    """The fonts a text of ``family`` ("sans-serif" or "monospace") is drawn with, first choice
    first: matplotlib falls back along the list glyph by glyph (a generic family name alone
    would not fall back).

    >>> font_families("monospace")[0]
    'DejaVu Sans Mono'
    """
    return ((MONO_FAMILY if family == "monospace" else FONT_FAMILY),) + installed_fallbacks()


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
        "font.family": list(font_families("sans-serif")),  # a list, so that emoji fall back to Symbola
        "font.sans-serif": list(font_families("sans-serif")),
        "font.monospace": list(font_families("monospace")),
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
    """Silence matplotlib's one-warning-per-missing-glyph (reported once per token instead), and
    its note that a fallback font has no bold (Symbola has one weight: bold text falls back to it
    at its regular weight)."""
    logger = logging.getLogger("matplotlib.font_manager")
    logger.addFilter(_no_fallback_weight_note)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"(?s)Glyph \d+ .*missing from")
            yield
    finally:
        logger.removeFilter(_no_fallback_weight_note)


def _no_fallback_weight_note(record: logging.LogRecord) -> bool:
    message = record.getMessage()
    return not (
        message.startswith("findfont: Failed to find font weight")
        and any(family in message for family in FALLBACK_FAMILIES)
    )
