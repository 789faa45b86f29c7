"""Two sentences' attention from one query, as ``blockviz compare`` and a course's contrast pairs
report it: the names of the aligned keys and of the query, the JSON of ``compare --json``, and the
layer × head grid of how far each head's attention moves (½ Σ |change| over the keys,
:func:`blockviz.models.evidence.head_shifts`) with the most moved head's rows under it.
"""

from __future__ import annotations

from blockviz.tokens import display_token


def query_name(token_a: str, token_b: str) -> str:
    """The query as both sentences have it: "it", or "tired/wide" when matched by position to another word."""
    return token_a if token_a.casefold() == token_b.casefold() else f"{token_a}/{token_b}"


def pair_label(words_a, words_b, pair) -> str:
    """An aligned key's name (``pair``: its word indices in each sentence, ``None`` where one
    lacks it): the word, "tired→wide" when it changed, "tired→∅" when only one sentence has it."""
    a, b = pair
    name_a = words_a.names[a] if a is not None else "∅"
    name_b = words_b.names[b] if b is not None else "∅"
    return name_a if name_a.casefold() == name_b.casefold() else f"{name_a}→{name_b}"


def comparison_json(tokens_a, tokens_b, query_a: int, query_b: int, labels, shifts, layers, note, model) -> dict:
    """The fields ``compare --json`` prints: the sentences' tokens, the query's positions, the
    aligned keys' ``labels``, whether the query sees the difference (``note`` ``None``) and each
    head's rows, change, movement and keys gained and lost, most moved first (``shifts``, their
    layers indexing ``layers``)."""
    return {
        "model": None if model is None else str(model),
        "sentences": [list(tokens_a), list(tokens_b)],
        "query": {"token": tokens_a[query_a], "positions": [query_a, query_b]},
        "keys": labels,
        "query_sees_difference": note is None,
        "note": note,
        "heads": [
            {
                "layer": layers[shift.layer],
                "head": shift.head,
                "moved": shift.moved,
                "first": list(shift.row_a),
                "second": list(shift.row_b),
                "change": list(shift.change),
                "gained": [labels[i] for i in shift.gained],
                "lost": [labels[i] for i in shift.lost],
            }
            for shift in shifts
        ],
    }


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


def rows_panel(shift, labels, query: str, layers, unseen=None):
    """The most moved head's two rows and their change, for under the grid
    (:class:`~blockviz.figures.compare_figure.RowsPanel`); ``unseen``: the words the causal
    mask hides from the query in both sentences (:func:`~blockviz.models.evidence.unseen_words`)."""
    import numpy as np

    from blockviz.figures.compare_figure import RowsPanel

    caption = (
        f"Layer {layers[shift.layer]} head {shift.head}: its weights from \u201c{display_token(query)}\u201d "
        "in the first sentence, in the second, and the change (second − first), one column per word "
        "(a word's pieces added; \u201ca→b\u201d: the word that differs)."
    )
    blocked = np.array(unseen, dtype=bool) if unseen is not None else None
    return RowsPanel(list(labels), np.array(shift.row_a), np.array(shift.row_b), caption, blocked)
