"""The layer × head grids of ``blockviz heads`` and ``blockviz compare``, made from their analyses
(:class:`~blockviz.heads.HeadRanking`, :class:`~blockviz.heads.HeadComparison`): each cell one
head, a title, and notes saying what a cell is, whose heads they are and what else was printed
(:class:`~blockviz.figures.heads_figure.HeadsGrid`, drawn by
:func:`~blockviz.figures.heads_figure.write_heads_figure`).

``note``: a line about the weights beside the model's description (a GGUF model's quantisation,
the toy model's training), or ``None``.
"""

from __future__ import annotations

from blockviz.tokens import display_token

FRAMED = {
    "weight": "the largest",
    "above-baseline": "the furthest above its baseline",
    "contrast": "the largest change in the contrast sentence",
}
"""What the framed head of a ranking is, for each way of ranking (:data:`blockviz.models.evidence.RANKINGS`)."""


def heads_grid(ranking, note: str | None = None):
    """The grid of a :class:`~blockviz.heads.HeadRanking`: each head's weight from the query to
    the key, the first-ranked head framed; without a key, each head's largest key and its weight."""
    return _ranking_grid(ranking, note) if ranking.key is not None else _keys_grid(ranking, note)


def comparison_grid(comparison, note: str | None = None):
    """The grid of a :class:`~blockviz.heads.HeadComparison` (how far each head's attention
    moves, :func:`moved_grid`) and the panel of the most moved head's rows to go under it
    (:func:`rows_panel`)."""
    seeing = comparison.seeing
    notes = grid_notes(comparison.what, note, "", [seeing] if seeing else [])[1:]
    grid = moved_grid(
        comparison.shifts,
        comparison.labels,
        comparison.query_name,
        comparison.layers,
        comparison.n_heads,
        comparison.kv_heads,
        model_of(comparison.what),
        notes,
        seeing,
    )
    panel = rows_panel(
        comparison.shifts[0],
        comparison.labels,
        comparison.query_name,
        comparison.layers,
        comparison.unseen,
        comparison.pairs,
    )
    return grid, panel


def grid_notes(what: str, note: str | None, first: str, extra=()) -> tuple[str, ...]:
    """A grid's notes: ``first`` (what a cell is), ``what`` (whose heads), ``note`` and each line
    of ``extra``, each a sentence (capitalised, a full stop)."""
    notes = [first, what + "."]
    if note:
        notes.append(note[0].upper() + note[1:] + ".")
    notes += [line[0].upper() + line[1:] + "." for line in extra]
    return tuple(notes)


def model_of(what: str) -> str:
    """`` of minilm`` for a model's title (``what`` starts with its name), nothing for the seeded block.

    >>> model_of("minilm (bert): 6 layers × 12 heads"), model_of("the seeded block (seeded random weights): …")
    (' of minilm', '')
    """
    return "" if what.startswith("the seeded block") else f" of {what.split(' (')[0]}"


def _head_label(ranking) -> str:
    return "query head" if ranking.kv_heads < ranking.n_heads else "head"


def _ranking_grid(ranking, note):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid
    from blockviz.models.evidence import word_weights
    from blockviz.style import format_number

    words, query, key, layers = ranking.words, ranking.query, ranking.key, ranking.layers
    best = ranking.rows[0]
    values = np.asarray(word_weights(ranking.weights, words)[:, :, query, words.of(key)], dtype=float)
    decimals = HeadsGrid(values, "", best=(best.layer, best.head)).decimals  # the grid's one format, the note's too
    q, k = display_token(ranking.attentions.tokens[query]), display_token(words.names[words.of(key)])
    first = (
        f"Each cell: the head's weight from query \u201c{q}\u201d (position {query}) on key \u201c{k}\u201d (position {key}). "
        f"Framed: {FRAMED[ranking.by]}, layer {layers[best.layer]} head {best.head} ({format_number(float(values[best.layer, best.head]), decimals)})."
    )
    return HeadsGrid(
        values,
        f"Attention from \u201c{q}\u201d to \u201c{k}\u201d in every head{model_of(ranking.what)}",
        best=(best.layer, best.head),
        notes=grid_notes(ranking.what, note, first, ranking.notes),
        head_label=_head_label(ranking),
        layers=tuple(layers),
    )


def _keys_grid(ranking, note):
    import numpy as np

    from blockviz.figures.heads_figure import HeadsGrid

    per_head, words, query = ranking.keys, ranking.words, ranking.query
    n_layers, n_heads = ranking.weights.shape[:2]
    values = np.array([keys[0][1] for keys in per_head], dtype=float).reshape(n_layers, n_heads)
    names = [
        [words.names[per_head[layer * n_heads + head][0][0]] for head in range(n_heads)] for layer in range(n_layers)
    ]
    q = display_token(ranking.attentions.tokens[query])
    first = f"Each cell: the key that gets the head's largest weight from query \u201c{q}\u201d (position {query}), and that weight."
    return HeadsGrid(
        values,
        f"Where \u201c{q}\u201d looks in every head{model_of(ranking.what)}",
        keys=names,
        notes=grid_notes(ranking.what, note, first, ranking.notes),
        head_label=_head_label(ranking),
        layers=tuple(ranking.layers),
    )


def moved_grid(shifts, labels, query: str, layers, n_heads: int, kv_heads: int, title_end: str, notes, note):
    """The layer × head figure of the movement (:class:`~blockviz.figures.heads_figure.HeadsGrid`
    on its own "share moved" scale), the most moved head framed unless ``note`` (the query cannot
    see the difference) says why nothing is ranked; its first note says what a cell is and the
    framed head's largest moves, then ``notes``. ``title_end``: " of MiniLM" or "" after "every head"."""
    import numpy as np

    from blockviz.figures.compare_figure import moved_scale
    from blockviz.figures.heads_figure import HeadsGrid

    values = np.zeros((len(layers), n_heads))
    for shift in shifts:
        values[shift.layer, shift.head] = shift.moved
    best = shifts[0]
    q = display_token(query)
    first = (
        f"Each cell: how much of the head's weight from \u201c{q}\u201d moves between the sentences "
        f"(½ Σ |change| over the keys). Framed: the most, layer {layers[best.layer]} head {best.head}"
    )
    moves = [f"{display_token(labels[i])} {best.row_a[i]:.2f}→{best.row_b[i]:.2f}" for i in best.lost + best.gained]
    if moves:
        first += f" ({', '.join(moves)})"
    return HeadsGrid(
        values,
        f"How far attention from \u201c{q}\u201d moves between the two sentences, every head{title_end}",
        best=None if note else (best.layer, best.head),
        notes=(first + ".", *notes),
        head_label="query head" if kv_heads < n_heads else "head",
        layers=tuple(layers),
        scale=moved_scale(values),
    )


def rows_panel(shift, labels, query: str, layers, unseen=None, pairs=None):
    """The most moved head's two rows and their change, for under the grid
    (:class:`~blockviz.figures.compare_figure.RowsPanel`); ``unseen``: the words the causal
    mask hides from the query in both sentences (:func:`~blockviz.models.evidence.unseen_words`);
    ``pairs``: the aligned words (:func:`~blockviz.models.evidence.align_words`), ``None`` on the
    side that lacks one — its cell there is left blank."""
    import numpy as np

    from blockviz.figures.compare_figure import RowsPanel

    caption = (
        f"Layer {layers[shift.layer]} head {shift.head}: its weights from \u201c{display_token(query)}\u201d "
        "in the first sentence, in the second, and the change (second − first), one column per word "
        "(a word's pieces added; \u201ca→b\u201d: the word that differs)."
    )
    if pairs is not None and any(a is None or b is None for a, b in pairs):
        caption = caption[:-2] + "; a blank: the sentence lacks the word)."
    blocked = np.array(unseen, dtype=bool) if unseen is not None else None
    absent = np.array([[a is None for a, _ in pairs], [b is None for _, b in pairs]]) if pairs is not None else None
    return RowsPanel(list(labels), np.array(shift.row_a), np.array(shift.row_b), caption, blocked, absent)
