"""Two sentences' attention from one query, as ``blockviz compare`` and a course's contrast pairs
report it: the names of the aligned keys and of the query and the JSON of ``compare --json``
(the figure of how far each head's attention moves is drawn by
:func:`blockviz.figures.heads_grids.moved_grid`).
"""

from __future__ import annotations


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
