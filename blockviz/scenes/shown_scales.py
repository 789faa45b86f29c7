"""The colour scales of one scene's grids: one scale per quantity at any moment, chosen from what is shown.

A signed grid's scale is chosen from its drawn cells (:func:`blockviz.scale_limits.shown_limit`):
their largest |value| (robust to one outlier) rounded up to a value a bar reads at a glance. A scene
keeps one :class:`ScalePool` (:func:`scene_scales` starts it): a new grid of a colour-scale family
takes a scale the scene already gave that family when its own largest value reaches at least
:data:`SHARED_SATURATION` of it and none beyond (x and h on one bar), else a scale of its own.
A value its family's record scale marks as an outlier (:func:`family_scale`) is clipped in every
grid that shows it.

Within one frame a family has one scale and one bar (the rows a residual addition adds are read
on one scale; a number shown twice is one colour). So a scene is built twice: a first, dry build
notes every scale a grid asks for (:meth:`ScalePool.limit_for`) and which grids are on screen
together during each play (:meth:`ScalePool.observe`); the grids of one family ever on screen
together are one group, coloured on the scale chosen from all their shown cells
(:meth:`ScalePool.plan`), which the real build then gives them. The dry build runs when the
real build's first grid asks for a scale: a scene whose grids ask for none is built once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar, copy_context
from dataclasses import dataclass

from blockviz.record_fields import BY_NAME, parameter_scale
from blockviz.scale_limits import ScaleLimit, ShownLimit, shown_limit

SHARED_SATURATION = 0.6
"""The least share of a shared scale a grid's largest shown |value| must reach to take it."""

DERIVED_TERMS = {"projection_products": "attn_out", "weighted_values": "head_outputs", "qk_products": "scores"}
"""Terms a scene shows that are no record field but a record method's products, each → the field
that is their sum (``attn_out = Σ_i concat_i · W_O[i] + b_O``, ``head_outputs = Σ_j w_j · value_j``,
``scores = Σ_c q_c · k_c``): rows that are added and their sum are read on one scale, so the terms
are of their sum's colour-scale family."""


@dataclass(frozen=True)
class ScaleRequest:
    """One grid's ask for a scale: its colour-scale ``family``, the ``values`` of its drawn,
    unblocked cells and the record scale of their family (``family_scale``, outliers' judge)."""

    family: str | None
    values: tuple[float, ...]
    family_scale: ScaleLimit | float | None

    @property
    def key(self) -> tuple:
        """What a plan knows the request by in another build of the scene: its family and values."""
        return (self.family, self.values)


class ScalePool:
    """The signed scales one scene has given, by colour-scale family, in the order given;
    ``record`` (a function returning it, called when a grid first needs it) is the scene's record,
    whose family scales say which values are outliers (:func:`family_scale`). ``planned`` (from a
    first build's :meth:`plan`): the scale of each request, by its family and values, or a
    function making it (the scene's dry build), called when :attr:`planned` is first read (the
    first grid's ask): a scene whose grids ask for no scale never builds dry."""

    def __init__(
        self,
        record: Callable[[], object] | None = None,
        planned: dict[tuple, float] | Callable[[], dict[tuple, float]] | None = None,
    ) -> None:
        self.limits: dict[str, list[float]] = {}
        self.quantities: dict[str, float] = {}
        self.record = record
        self._planned = planned
        self.requests: list[ScaleRequest] = []
        self.together: list[set[int]] = []

    @property
    def planned(self) -> dict[tuple, float] | None:
        """The scale of each request, by its family and values (``None`` without a plan); a plan
        given as a function is made now, the first time it is read, in a copy of this context (the
        dry build's own pool is never the one grids built from now on ask)."""
        if callable(self._planned):
            self._planned = copy_context().run(self._planned)
        return self._planned

    def request(self, family: str | None, values: Iterable[float], family_scale: ScaleLimit | float | None) -> int:
        """Note a grid's ask (:class:`ScaleRequest`); returns its number, which the grid keeps
        (``scale_request``) so that :meth:`observe` knows it on screen."""
        self.requests.append(ScaleRequest(family, tuple(values), family_scale))
        return len(self.requests) - 1

    def planned_limit(self, number: int) -> float | None:
        """The scale the plan gives request ``number`` (``None`` without a plan, or not in it)."""
        return None if self.planned is None else self.planned.get(self.requests[number].key)

    def observe(self, grids: Iterable) -> None:
        """Note that ``grids`` are on screen together (during one play)."""
        self.together.append({grid.scale_request for grid in grids if getattr(grid, "scale_request", None) is not None})

    def plan(self) -> dict[tuple, float]:
        """The scale of each request, by its family and values: requests of one family on screen
        together (:meth:`observe`, linked through any chain of such frames), or of one family and
        the same values (a number shown twice is one colour), form a group, coloured on the scale
        chosen from all its values (:func:`~blockviz.scale_limits.shown_limit`); groups share
        scales across time as single grids do (:meth:`limit_for`)."""
        groups = disjoint_set(range(len(self.requests)))
        same: dict[tuple, list[int]] = {}
        for number, ask in enumerate(self.requests):
            same.setdefault(ask.key, []).append(number)
        for numbers in [*self.together, *same.values()]:
            first: dict[str, int] = {}
            for number in sorted(numbers):
                family = self.requests[number].family
                if family is not None:
                    groups.merge(first.setdefault(family, number), number)
        pool = ScalePool()
        limits: dict[int, float] = {}
        for members in sorted(groups.subsets(), key=min):  # in the order of their first requests
            asks = [self.requests[number] for number in sorted(members)]
            values = [value for ask in asks for value in ask.values]
            limits.update(
                dict.fromkeys(members, pool.limit_for(asks[0].family, shown_limit(values, asks[0].family_scale)))
            )
        return {ask.key: limits[number] for number, ask in enumerate(self.requests)}

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


def disjoint_set(members: Iterable[int]):
    """SciPy's ``DisjointSet`` of ``members`` (each its own subset), read from the module that
    defines it: ``scipy.cluster.hierarchy``, which publishes it, also imports ``scipy.spatial``
    (0.2 CPU s), which a still's Manim leaves out (:mod:`blockviz.render.manim_import`)."""
    try:
        from scipy._lib._disjoint_set import DisjointSet  # scipy comes with Manim
    except ImportError:  # another SciPy's layout
        from scipy.cluster.hierarchy import DisjointSet
    return DisjointSet(members)


def scene_scales(
    record: Callable[[], object] | None = None,
    planned: dict[tuple, float] | Callable[[], dict[tuple, float]] | None = None,
) -> ScalePool:
    """Start the scale pool of the scene being built (a scene calls it in ``setup``, ``record``
    returning the scene's record, ``planned`` the scales a first build planned,
    :meth:`ScalePool.plan`, or the function that plans them when a grid first asks);
    grids built from now on share its scales."""
    pool = ScalePool(record, planned)
    _POOL.set(pool)
    return pool


def current_pool() -> ScalePool | None:
    """The scale pool of the scene being built, ``None`` outside a scene."""
    return _POOL.get()


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
    name = source[1] if source[0] == "params" and len(source) > 1 else DERIVED_TERMS.get(source[0], source[0])
    try:
        return record.scale_of(name)
    except KeyError:
        return None


def shared_limit(
    source, values: list[float], outliers: ScaleLimit | None, scale: ShownLimit
) -> tuple[float, int | None]:
    """The half-width of a new grid whose labels' sources are like ``source``, that shows
    ``values`` (``outliers``: their family's record scale, :func:`family_scale`) and whose own
    scale is ``scale``, in the scene being built, and the number of its
    request (:meth:`ScalePool.request`): the plan's scale if the scene has one, else
    :meth:`ScalePool.limit_for`'s. Outside a scene, ``(scale.limit, None)``."""
    pool = _POOL.get()
    if pool is None:
        return scale.limit, None
    family = source_family(source)
    number = pool.request(family, values, outliers)
    limit = pool.limit_for(family, scale, source_quantity(source))
    planned = pool.planned_limit(number)
    return (limit if planned is None else planned), number


def source_quantity(source) -> str | None:
    """The quantity a label source names, one head's apart: ``("scores", 1, 2, 0)`` → ``"scores 1"``;
    a record method's terms (:data:`DERIVED_TERMS`) by the method, one head's (and query's) apart
    when its sum is one head's.

    >>> source_quantity(("params", "attn.W_O", 3, 4)), source_quantity(("head_outputs", 1, 2, 0))
    ('attn.W_O', 'head_outputs 1')
    >>> source_quantity(("projection_products", 2, 0, 1)), source_quantity(("weighted_values", 1, 2, 0, 3))
    ('projection_products', 'weighted_values 1 2')
    >>> source_quantity(("block", 1, "resid_pre", 2, 0))
    'block 1 resid_pre'
    """
    family = source_family(source)
    if family is None:
        return None
    if in_its_block(source) != tuple(source):  # block k's quantity, not another block's
        return f"block {source[1]} {source_quantity(in_its_block(source))}"
    if source[0] == "params":
        return source[1]
    if source[0] in DERIVED_TERMS:  # (method, head, query, …) of one head's sum, else (method, query, …)
        heads = BY_NAME[DERIVED_TERMS[source[0]]].shape[0] == "n_heads"
        return f"{source[0]} {source[1]} {source[2]}" if heads else source[0]
    name = source[1] if source[0] in ("decoder", "encoder") else source[0]
    spec = BY_NAME[name]
    return f"{name} {source[1 if source[0] == name else 2]}" if spec.shape[0] == "n_heads" else name


def in_its_block(source) -> tuple:
    """A label source as its block's view names it: a record of several blocks' ``("block", k,
    field, …)`` → ``(field, …)`` (:func:`~blockviz.scenes.stack_story.in_block`); any other as it is.

    >>> in_its_block(("block", 1, "resid_pre", 2, 0)), in_its_block(("resid_pre", 2, 0))
    (('resid_pre', 2, 0), ('resid_pre', 2, 0))
    """
    return tuple(source[2:]) if source and source[0] == "block" and len(source) > 2 else tuple(source)


def source_family(source) -> str | None:
    """The colour-scale family of the quantity a label source names (``("resid_pre", 2, 0)`` →
    ``"residual"``, ``("params", "attn.W_O", 0, 1)`` → ``"parameters"``; a record method's terms:
    their sum's, :data:`DERIVED_TERMS`), ``None`` when it names none.

    >>> source_family(("resid_pre", 2, 0)), source_family(("params", "ln1.weight", 3)), source_family(("x",))
    ('residual', 'norm_parameters', None)
    >>> source_family(("projection_products", 2, 0, 1)), source_family(("concat", 2, 5))
    ('residual', 'head_outputs')
    >>> source_family(("block", 1, "resid_pre", 2, 0))  # a block's view's: its field's
    'residual'
    """
    if not source:
        return None
    source = in_its_block(source)
    name = source[0]
    if name in ("decoder", "encoder") and len(source) > 1:
        name = source[1]
    if name == "params" and len(source) > 1:
        return parameter_scale(source[1])
    name = DERIVED_TERMS.get(name, name)
    spec = BY_NAME.get(name)
    return spec.scale if spec is not None else None


__all__ = [
    "ScalePool",
    "ScaleRequest",
    "scene_scales",
    "current_pool",
    "shared_limit",
    "family_scale",
    "source_family",
    "source_quantity",
    "SHARED_SATURATION",
    "DERIVED_TERMS",
]
