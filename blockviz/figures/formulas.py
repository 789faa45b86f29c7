"""Formulas, typeset with matplotlib's mathtext (no LaTeX; a tuple is a formula in parts that
may wrap onto lines of their own), and numbers written out as vectors."""

from __future__ import annotations

from blockviz.style import format_number

ATTENTION = r"$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}} + M\right) V$"
"""Scaled dot-product attention (Vaswani et al. 2017, "Attention Is All You Need", Eq. 1) with
the mask M added before the softmax."""
SCORES = r"this step: $S = QK^{\top}$, then $S / \sqrt{d_k}$"
MASKED_SCORES = (r"$S / \sqrt{d_k} + M$", r"$M_{ij} = 0$ if $j \leq i$, $-\infty$ if $j > i$")
OPEN_MASK = (r"$S / \sqrt{d_k} + M$", r"$M = 0$ everywhere: nothing blocked")
WEIGHTS = (r"$W = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}} + M\right)$", "each row sums to 1 before rounding")
MIXING = r"$z_i = \sum_j w_{ij}\, v_j$"
MULTI_HEAD = r"$\mathrm{MultiHead}(X) = \mathrm{Concat}(z_1, \ldots, z_h)\, W^O + b^O$"
TOKEN_GRID = r"$x = \mathrm{embedding} + \mathrm{position}$"
LAYER_NORM = (
    r"$\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta$",
    r"$\mu = \frac{1}{d}\sum_k x_k$",
    r"$\sigma^2 = \frac{1}{d}\sum_k (x_k - \mu)^2$",
)
"""LayerNorm of one row (Ba et al. 2016), as torch.nn.LayerNorm computes it (σ² divides by d)."""

WORK_DECIMALS = 1
"""Work lines write this many more decimals than the grids, so that the sums they show add up."""
LARGEST_WORK_DECIMALS = 6


def vector_text(values, decimals: int = 2, max_items: int = 6) -> str:
    """A vector as written in the figures: ``(0.50, 3.00)``; past ``max_items`` entries the
    middle ones are elided, ``(0.10, 0.20, 0.30, …, 0.90)``, keeping the first ones and the last
    ones (3 and 2 of 6)."""
    numbers = [format_number(float(value), decimals) for value in values]
    return "(" + ", ".join(elide(numbers, max_items)) + ")"


def elide(items: list, max_items: int) -> list:
    """``items`` with the middle ones replaced by "…" past ``max_items`` (at least 2 kept)."""
    if len(items) <= max_items:
        return list(items)
    head = max(1, max_items // 2)
    tail = max(1, max_items - 1 - head)
    return list(items[:head]) + ["\u2026"] + list(items[-tail:])


def shown(value: float, decimals: int) -> float:
    """``value`` as it reads when written with ``decimals`` decimals."""
    return float(format_number(float(value), decimals).replace("\u2212", "-"))


def product_decimals(weight: float, vector, product, decimals: int) -> int:
    """Decimals for the factors of ``weight · vector = product`` (the product written with
    ``decimals``) so that the written factors multiply to the written product within one unit
    of its last decimal: ``decimals``, or more where rounding needs it."""
    target = [shown(value, decimals) for value in product]
    for factor_decimals in range(decimals, LARGEST_WORK_DECIMALS + 1):
        w = shown(weight, factor_decimals)
        if all(abs(w * shown(v, factor_decimals) - p) <= 10**-decimals * 1.0001 for v, p in zip(vector, target)):
            return factor_decimals
    return LARGEST_WORK_DECIMALS


def mixture_terms(weights, vectors, decimals: int = 2) -> list[str]:
    """The terms ``w·(v)`` of a weighted sum of vectors: ``["0.25·(2.00, 0.00)", …]``."""
    return [
        f"{format_number(float(weight), decimals)}\u00b7{vector_text(vector, decimals)}"
        for weight, vector in zip(weights, vectors)
    ]


def product_terms(weights, vectors, products, decimals: int = 2) -> list[str]:
    """Each term with its product, every number as given (``products`` are read, not computed):
    ``["0.25·(2.00, 0.00) = (0.50, 0.00)", …]``."""
    return [
        f"{term} = {vector_text(product, decimals)}"
        for term, product in zip(mixture_terms(weights, vectors, decimals), products)
    ]


def mixture_equation(weights, vectors, total, decimals: int = 2, products=None) -> str:
    """``w₁·(v₁) + w₂·(v₂) + … = (total)`` on one line, every number as given; with
    ``products`` (the rows wⱼ·vⱼ) also ``= (p₁) + (p₂) + …`` before the total.

    ``mixture_equation([.25, .75], [(2, 0), (0, 4)], (.5, 3))`` →
    ``"0.25·(2.00, 0.00) + 0.75·(0.00, 4.00) = (0.50, 3.00)"``.
    """
    sides = [" + ".join(mixture_terms(weights, vectors, decimals))]
    if products is not None:
        sides.append(" + ".join(vector_text(product, decimals) for product in products))
    return " = ".join(sides + [vector_text(total, decimals)])
