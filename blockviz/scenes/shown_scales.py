"""The colour scales of one scene's grids: each chosen from what its grid shows, shared where it can be.

A signed grid's scale is chosen from its drawn cells (:func:`blockviz.scale_limits.shown_limit`):
their largest |value| (robust to one outlier) rounded up to a value a bar reads at a glance. A scene
keeps one :class:`ScalePool` (:func:`scene_scales` starts it): a new grid of a colour-scale family
takes a scale the scene already gave that family when its own largest value reaches at least
:data:`SHARED_SATURATION` of it and none beyond (x and h on one bar), else a scale of its own
(attn(x), far smaller, gets its own bar rather than being pale on x's). A value its family's
record scale marks as an outlier (:func:`family_scale`) is clipped in every grid that shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from blockviz.record_fields import BY_NAME, parameter_scale
from blockviz.scale_limits import ScaleLimit, ShownLimit, shown_limit

SHARED_SATURATION = 0.6
"""The least share of a shared scale a grid's largest shown |value| must reach to take it."""


class ScalePool:
    """The signed scales one scene has given, by colour-scale family, in the order given;
    ``record`` (a function returning it, called when a grid first needs it) is the scene's record,
    whose family scales say which values are outliers (:func:`family_scale`)."""

    def __init__(self, record: Callable[[], object] | None = None) -> None:
        self.limits: dict[str, list[float]] = {}
        self.quantities: dict[str, float] = {}
        self.record = record

    def limit_for(self, family: str | None, scale: ShownLimit, quantity: str | None = None) -> float:
        """The half-width a grid of ``family`` whose own scale is ``scale`` is coloured on: the
        scale already given to the same ``quantity`` (a field, a parameter; one number, one
        colour) or else the smallest scale already given to ``family``, that holds ``scale.end``
        and that ``scale.end`` fills to :data:`SHARED_SATURATION`; else ``scale.limit`` (then given to ``family``)."""
        given = self.quantities.get(quantity)
        if given is not None and SHARED_SATURATION * given <= scale.end <= given:
            return given
        limit = self._family_limit(family, scale)
        if quantity is not None:
            self.quantities.setdefault(quantity, limit)
        return limit

    def _family_limit(self, family: str | None, scale: ShownLimit) -> float:
        if family is None:
            return scale.limit
        given = self.limits.setdefault(family, [])
        if scale.end == 0 and given:  # zeros are white on any scale: no bar of their own
            return given[0]
        fitting = [limit for limit in given if SHARED_SATURATION * limit <= scale.end <= limit]
        if fitting:
            return min(fitting)
        given.append(scale.limit)
        return scale.limit


_POOL: ContextVar[ScalePool | None] = ContextVar("blockviz_scale_pool", default=None)


def scene_scales(record: Callable[[], object] | None = None) -> ScalePool:
    """Start the scale pool of the scene being built (a scene calls it in ``setup``, ``record``
    returning the scene's record); grids built from now on share its scales."""
    pool = ScalePool(record)
    _POOL.set(pool)
    return pool


def family_scale(source, record=None) -> ScaleLimit | None:
    """The record scale (:meth:`~blockviz.record_reading.RecordReading.scale_of`) of the quantity a
    label source names, in ``record`` or else the record of the scene being built; ``None`` when
    there is no record, or the source names no field or parameter of it (a counterpart's
    ``("decoder", …)`` included: its scale is another record's)."""
    if record is None:
        pool = _POOL.get()
        record = pool.record() if pool is not None and pool.record is not None else None
    if record is None or not source or source[0] in ("decoder", "encoder"):
        return None
    name = source[1] if source[0] == "params" and len(source) > 1 else source[0]
    try:
        return record.scale_of(name)
    except KeyError:
        return None


def shared_limit(source, scale: ShownLimit) -> float:
    """The half-width of a new grid whose labels' sources are like ``source`` and whose own scale
    is ``scale``, in the scene being built (:meth:`ScalePool.limit_for`; outside a scene, ``scale.limit``)."""
    pool = _POOL.get()
    if pool is None:
        return scale.limit
    return pool.limit_for(source_family(source), scale, source_quantity(source))


def one_scale(source, values) -> tuple[float, bool]:
    """The one colour scale of several grids that show one quantity (the same row drawn twice),
    chosen from ``values``, their shown cells' numbers together, as one grid's would be
    (:func:`~blockviz.scale_limits.shown_limit`, then :func:`shared_limit`; the labels' sources
    like ``source``): ``(limit, clipped)``, to pass as each grid's ``color_limit`` so that one
    number has one colour."""
    scale = shown_limit(values, family_scale(source))
    limit = shared_limit(source, scale)
    return limit, scale.largest > limit


def source_quantity(source) -> str | None:
    """The quantity a label source names, one head's apart: ``("scores", 1, 2, 0)`` → ``"scores 1"``.

    >>> source_quantity(("params", "attn.W_O", 3, 4)), source_quantity(("head_outputs", 1, 2, 0))
    ('attn.W_O', 'head_outputs 1')
    """
    family = source_family(source)
    if family is None:
        return None
    if source[0] == "params":
        return source[1]
    name = source[1] if source[0] in ("decoder", "encoder") else source[0]
    spec = BY_NAME[name]
    return f"{name} {source[1 if source[0] == name else 2]}" if spec.shape[0] == "n_heads" else name


def source_family(source) -> str | None:
    """The colour-scale family of the quantity a label source names (``("resid_pre", 2, 0)`` →
    ``"residual"``, ``("params", "attn.W_O", 0, 1)`` → ``"parameters"``), ``None`` when it names none.

    >>> source_family(("resid_pre", 2, 0)), source_family(("params", "ln1.weight", 3)), source_family(("x",))
    ('residual', 'norm_parameters', None)
    """
    if not source:
        return None
    name = source[0]
    if name in ("decoder", "encoder") and len(source) > 1:
        name = source[1]
    if name == "params" and len(source) > 1:
        return parameter_scale(source[1])
    spec = BY_NAME.get(name)
    return spec.scale if spec is not None else None


__all__ = [
    "ScalePool",
    "scene_scales",
    "shared_limit",
    "one_scale",
    "family_scale",
    "source_family",
    "SHARED_SATURATION",
]
