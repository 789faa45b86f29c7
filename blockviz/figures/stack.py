"""Figures of a stack of blocks, read from the whole record (:attr:`FigureRequest.whole
<blockviz.figures.request.FigureRequest.whole>`, every block whichever one ``--block`` shows):
every head's weights of every block, the composition of an earlier block's heads with a later
one's, each head's induction and previous-token scores, and the prediction after each block
(the logit lens)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from blockviz.composition import KINDS, folds_norm, random_composition, record_composition
from blockviz.errors import BlockvizError
from blockviz.figures.heatmap import ColourScale, weights_scale
from blockviz.figures.labels import token_label, token_named
from blockviz.figures.layout import Flow, TextLine, build_figure
from blockviz.figures.panels import MatrixSpec, matrix_piece
from blockviz.figures.parts import as_array, colorbar_line, heading, legend_lines, note, rows_of, source_line, titled
from blockviz.figures.request import FigureRequest
from blockviz.logit_lens import missing_lens
from blockviz.prediction import OTHERS, lens_rows
from blockviz.record_fields import OWN_BAR_NAMES
from blockviz.style import WEIGHTS_CMAP, WEIGHTS_SCALE_NAME, format_number

BLOCKED_TEXT = "blocked by the mask (weight 0)"


def stack_weights(request: FigureRequest) -> Figure:
    """Figure: the softmax ``weights`` ``(n, n)`` of every head (columns) of every block (rows of
    the page, block 0 first), each read from its block's record, on the weights' fixed 0–1 scale;
    blocked cells grey."""
    whole, page = request.whole, request.page
    views = whole.blocks
    lines = heading(
        page,
        titled("stack-weights", f"{len(views)} blocks \u00d7 {whole.config.n_heads} heads, block 0 at the top"),
    )
    labels = rows_of(whole)
    blocked = np.isneginf(as_array(whole.mask))
    for index, view in enumerate(views):
        weights = as_array(view.weights)
        pieces = [
            matrix_piece(
                MatrixSpec(
                    weights[head],
                    labels,
                    labels,
                    title=f"head {head}",
                    xlabel="key",
                    ylabel="query",
                    blocked=blocked if blocked.any() else None,
                    blocked_filled=False,
                    square_cells=True,
                ),
                weights_scale(),
                request.theme,
                page,
                f"weights[{index}][{head}]",
                request.decimals,
            )
            for head in range(whole.config.n_heads)
        ]
        lines.append(TextLine([f"block {index}"], page.title, key=f"block{index}", options={"fontweight": "bold"}))
        lines.append(Flow(pieces, rows=whole.n, share="stack", largest_cell=0.3 if page.width is not None else None))
    lines.append(colorbar_line([weights_scale()], page))
    if blocked.any():
        lines += legend_lines(page, request.theme, BLOCKED_TEXT, filled=False)
    lines.append(note(page, f"rows = queries, columns = keys, each row adds up to 1; {source_line(whole)}"))
    return build_figure(lines, page)[0]


def composition_scale() -> ColourScale:
    """Composition scores on the fixed range 0–1 (they lie in it), the weights' colour map."""
    return ColourScale(colormaps[WEIGHTS_CMAP], Normalize(0.0, 1.0), "composition score", (0.0, 0.5, 1.0))


def reader_block(request: FigureRequest) -> int:
    """The block whose heads read in the composition figure: the shown block (``--block``, default
    the last), or block 1 when block 0 is shown (it reads no earlier block)."""
    views = request.whole.blocks
    shown = next((index for index, view in enumerate(views) if view is request.record), len(views) - 1)
    return max(shown, 1)


def composition(request: FigureRequest) -> Figure:
    """Figure: the Q-, K- and V-composition scores ``‖W_OV¹ W_QK²‖_F / (‖W_OV¹‖_F ‖W_QK²‖_F)`` and
    kin (:mod:`blockviz.composition`, Elhage et al. 2021) of every head of the block before
    (rows) with every head of the reading block (columns; :func:`reader_block`), from the
    record's parameters; beside each, the same scores for random weights of the same shapes
    (seeded): what heads that do not compose score. The title names the pair whose score stands
    furthest above the same pair's score with the random weights (cell by cell, not a mean)."""
    whole, page, decimals = request.whole, request.page, request.decimals
    reader = reader_block(request)
    trained, baseline = record_composition(whole, reader), random_composition(whole, reader)
    writer = reader - 1
    best_kind, best = max(
        (
            (kind, (h1, h2))
            for kind in KINDS
            for h1 in range(whole.config.n_heads)
            for h2 in range(whole.config.n_heads)
        ),
        key=lambda item: (
            trained.scores[item[0]][item[1][0]][item[1][1]] - baseline.scores[item[0]][item[1][0]][item[1][1]]
        ),
    )
    h1, h2 = best
    lines = heading(
        page,
        titled(
            "composition",
            f"block {writer} head {h1} \u2192 block {reader} head {h2}: {best_kind}-composition "
            f"{format_number(trained.scores[best_kind][h1][h2], decimals)}, the furthest above the same pair's "
            f"score with random weights ({format_number(baseline.scores[best_kind][h1][h2], decimals)})",
        ),
        (
            r"$\mathrm{score} = \|AB\|_F \,/\, (\|A\|_F\, \|B\|_F)$",
            r"$Q:\ AB = W_{OV}^{1} W_{QK}^{2}$",
            r"$K:\ AB = W_{QK}^{2} W_{OV}^{1\top}$",
            r"$V:\ AB = W_{OV}^{1} W_{OV}^{2}$",
            r"$W_{OV} = W_V W_O$",
        ),
    )
    heads = range(whole.config.n_heads)
    rows, columns = [f"block {writer} head {head}" for head in heads], [str(head) for head in heads]
    for kind in KINDS:
        pieces = [
            matrix_piece(
                MatrixSpec(
                    np.array(scores.scores[kind]),
                    rows,
                    columns,
                    title=f"{kind}-composition, {what}",
                    xlabel=f"block {reader}'s head (reads)",
                    token_rows=False,
                ),
                composition_scale(),
                request.theme,
                page,
                f"composition[{kind}][{what}]",
                decimals,
            )
            for scores, what in ((trained, "trained"), (baseline, "random"))
        ]
        lines.append(Flow(pieces, rows=len(rows), share="composition"))
    lines.append(colorbar_line([composition_scale()], page))
    lines.append(
        note(
            page,
            f"rows: block {writer}'s heads, what each writes (its value weights times its output weights); columns: "
            f"block {reader}'s heads, reading it through the query (Q), key (K) or value (V); {_folded(whole)}, biases "
            f"left out; random: standard normal query, key, value and output weights of the same shapes, seed 0; "
            f"{source_line(whole)}",
        )
    )
    return build_figure(lines, page)[0]


def _folded(whole) -> str:
    """What the composition note says of the LayerNorm before attention."""
    if folds_norm(whole.block(0)):
        return "the LayerNorm's \u03b3 before attention folded into the query, key and value weights"
    return "post-norm: attention reads the residual stream as it is"


def induction(request: FigureRequest) -> Figure:
    """Figure: each head's induction score (mean weight from each repeated word to the word after
    its first occurrence, :func:`blockviz.toy.induction.record_scores`) and previous-token score
    (mean weight on the row before), block × head, read from the record's weights."""
    from blockviz.toy.induction import record_scores

    whole, page, decimals = request.whole, request.page, request.decimals
    previous, scores, pairs = record_scores(whole)
    block, head = max(
        ((k, h) for k in range(len(scores)) for h in range(len(scores[k]))), key=lambda kh: scores[kh[0]][kh[1]]
    )
    lines = heading(
        page,
        titled(
            "induction",
            f"block {block} head {head} puts a mean weight of {format_number(scores[block][head], decimals)} "
            f"from each repeated word on the word after its first occurrence",
        ),
        r"$\mathrm{induction}_h = \mathrm{mean}_{(q,k)}\, w_{qk}$,   $\mathrm{previous}_h = \mathrm{mean}_{i \geq 1}\, w_{i,i-1}$",
    )
    columns = [str(h) for h in range(whole.config.n_heads)]
    blocks = [f"block {k}" for k in range(len(scores))]
    scale = replace(weights_scale(), label="score (mean weight, \u221a scale)")
    pieces = [
        matrix_piece(
            MatrixSpec(np.array(values), blocks, columns, title=title, xlabel="head", token_rows=False),
            scale,
            request.theme,
            page,
            key,
            decimals,
        )
        for values, title, key in (
            (scores, "induction score", "induction"),
            (previous, "previous-token score", "previous"),
        )
    ]
    lines.append(Flow(pieces, rows=len(blocks)))
    lines.append(colorbar_line([scale], page))
    shown = ", ".join(f"{token_named(whole.tokens[q])} \u2192 {token_named(whole.tokens[k])}" for q, k in pairs[:4])
    more = f" and {len(pairs) - 4} more" if len(pairs) > 4 else ""
    lines.append(
        note(
            page,
            f"induction: the mean over the {len(pairs)} repeated words (query \u2192 key: {shown}{more}); "
            f"previous-token: the mean over rows 1 \u2026 {whole.n - 1}; {source_line(whole)}",
        )
    )
    return build_figure(lines, page)[0]


def logit_lens(request: FigureRequest) -> Figure:
    """Figure: after the query token (``--token``), the next-token prediction after each block —
    its output through the model's final LayerNorm and unembedding, softmax (the logit lens,
    :func:`blockviz.prediction.lens_rows`): the top words and "+ others", one row per block, the
    last the model's own prediction; every number read from the record."""
    whole, page, decimals = request.whole, request.page, request.decimals
    row = request.query
    predictions = lens_rows(whole, row)
    if predictions is None:
        raise BlockvizError(missing_lens(whole, row))
    token = token_named(whole.tokens[row])
    final = predictions[-1]
    lines = heading(
        page,
        titled(
            "logit-lens",
            f"after {token}, block 0 predicts {predictions[0].words[0]!r} "
            f"{format_number(float(predictions[0].probabilities[0]), decimals)}; "
            f"block {len(predictions) - 1} predicts {final.words[0]!r} {format_number(float(final.probabilities[0]), decimals)}",
        ),
        (r"$p_k = \mathrm{softmax}(\mathrm{LN}_f(y_k)\, W_U)$", r"$y_k$: block $k$'s output"),
    )
    scale = replace(weights_scale(), label=f"{OWN_BAR_NAMES['probs'].label} ({WEIGHTS_SCALE_NAME})")
    for block, guess in enumerate(predictions):
        values = np.append(guess.probabilities, guess.others)[None, :]
        spec = MatrixSpec(
            values,
            [token_label(whole.tokens[row], 24)],
            [token_label(word) for word in guess.words] + [OTHERS],
            title=f"after block {block}" + (" (the model's prediction)" if block == len(predictions) - 1 else ""),
        )
        lines.append(Flow([matrix_piece(spec, scale, request.theme, page, f"lens[{block}]", decimals)], share="lens"))
    lines.append(colorbar_line([scale], page))
    lines.append(
        note(
            page,
            f"the record's next-token probabilities after token {row} ({token}), block by block; "
            f"others: every other word's summed; {source_line(whole)}",
        )
    )
    return build_figure(lines, page)[0]
