"""A figure to start from (docs/writing-a-figure.md): one head's attention weights, and the focus
query's row written out as a sum that makes 1.

Copy it to ``blockviz/figures/weight_rows.py`` (without ``SPEC``) and put ``SPEC`` in
:data:`blockviz.figures.registry.FIGURES`, in its data-flow place; ``tests/test_figures_template.py``
draws it as the registered figures are drawn.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from blockviz.figures.heatmap import weights_scale
from blockviz.figures.layout import Flow, build_figure
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, heading, note, rows_of, source_line, titled, work_line
from blockviz.figures.registry import FigureSpec
from blockviz.figures.request import FigureRequest
from blockviz.style import format_number

# --8<-- [start:spec]
SPEC = FigureSpec(
    "weight-rows",
    "Weight rows",
    "one head's softmax weights; the query's row (--token) adds up to 1",
    "weight_rows:weight_rows",
    fields=("weights", "mask"),
)
# --8<-- [end:spec]


# --8<-- [start:draw]
def weight_rows(request: FigureRequest) -> Figure:
    """Figure: head ``h``'s weights ``(n, n)`` (rows = queries, columns = keys; ``h`` is
    ``--head``, else 0) on the fixed 0–1 scale, blocked cells grey, and the row of the query
    (``--token``) written out as the sum of its weights, which makes 1 (softmax)."""
    rec, page, decimals = request.record, request.page, request.decimals
    head, query = request.mixing_head, request.query
    weights = as_array(rec.tensors["weights"])[head]
    blocked = as_array(rec.tensors["mask"]) == float("-inf")
    lines = heading(page, titled("weight-rows", f"head {head}, every row adds up to 1"), r"$\sum_j w_{ij} = 1$")
    tokens = rows_of(rec)
    spec = MatrixSpec(
        weights, tokens, tokens, title=f"weights, head {head}", xlabel="key", blocked=blocked, blocked_filled=False
    )
    lines.append(Flow([matrix_piece(spec, weights_scale(), request.theme, page, "weights", decimals)], rows=rec.n))
    terms = [format_number(float(weight), decimals + 1) for weight in weights[query]]
    total = format_number(float(weights[query].sum()), decimals + 1)
    lines.append(work_line(page, "row_sum", [" + ".join(terms), f"= {total}"]))
    lines.append(colorbar_line([weights_scale()], page))
    lines.append(note(page, f"the row of query {tokens[query]}; {source_line(rec)}"))
    return build_figure(lines, page)[0]


# --8<-- [end:draw]
