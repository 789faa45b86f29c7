"""A lesson's contrast pairs, as ``blockviz compare`` shows them: one query token's attention in a
sentence and in its contrast sentence, head by head — both rows over the aligned words, their
change, and how far the attention moves (½ Σ |change|), most moved first
(:func:`blockviz.models.evidence.head_shifts`). Written as ``compare.json`` (the fields of
``compare --json``) and the layer × head figure of the movement with the most moved head's rows
under it (:mod:`blockviz.figures.heads_figure`, :mod:`blockviz.figures.compare_figure`).

The query is the lesson's ``token``, else the word the explorer opens on (the last word token of
the sentence), matched in the contrast sentence by word, else by position
(:func:`blockviz.models.evidence.match_query`). Every layer of a trained model, or the lesson's
``layer`` alone; a toy or seeded block is its one block.
"""

from __future__ import annotations

from dataclasses import dataclass

from blockviz.tokens import display_token


@dataclass(frozen=True)
class Comparison:
    """Two sentences' attention from one query: ``data`` (as ``compare --json`` prints it),
    ``grid`` (:class:`~blockviz.figures.heads_figure.HeadsGrid`) and ``panel``
    (:class:`~blockviz.figures.compare_figure.RowsPanel`)."""

    data: dict
    grid: object
    panel: object


def sentence_attentions(sentence: str, model: str, layer: int | None):
    """The attentions ``(n_layers, n_heads, n, n)`` of ``sentence`` to compare and the number of
    key/value heads: the course's record (toy or seeded block, one layer) or every layer of a
    trained model (loaded once per process)."""
    from blockviz.models.resolve import resolve_model

    if model == "seeded" or resolve_model(model).toy:
        from blockviz.course.records import course_record
        from blockviz.models.recording import block_attentions

        rec = course_record(sentence, model, layer)
        return block_attentions(rec), rec.config.kv_heads
    from blockviz.models.loading import load_model
    from blockviz.recording import attentions

    loaded = load_model(model)
    return attentions(sentence, model), loaded.family.config(loaded.model.config, loaded.dtype).kv_heads


def default_query(sentence: str, model: str, layer: int | None) -> str:
    """The word the explorer opens on (the last word token), as a query both sentences can name:
    ``word``, or ``word#k`` for its k-th occurrence."""
    from blockviz.course.records import course_record
    from blockviz.selection import select_token

    rec = course_record(sentence, model, layer)
    position = select_token(rec.tokens, None, rec.special)
    word = rec.tokens[position]
    occurrence = rec.tokens[: position + 1].count(word)
    return word if rec.tokens.count(word) == 1 else f"{word}#{occurrence}"


def compare_pair(sentence: str, contrast: str, query: str, model: str, layer: int | None) -> Comparison:
    """``sentence`` against ``contrast`` from the token ``query`` (a word, ``word#k`` or a
    0-based position), as ``blockviz compare`` computes it.

    Raises
    ------
    BlockvizError
        For a query missing from either sentence (the message says which), a layer out of
        range, or a model that gives no attention weights.
    """
    from blockviz.errors import BlockvizError
    from blockviz.figures.heads_grids import moved_grid, rows_panel
    from blockviz.models.comparison import comparison_json, pair_label, query_name
    from blockviz.models.evidence import (
        Side,
        Words,
        align_words,
        first_difference,
        head_shifts,
        infer_causal,
        match_query,
        query_sees_difference,
        unseen_words,
    )

    first, kv_heads = sentence_attentions(sentence, model, layer)
    other, _ = sentence_attentions(contrast, model, layer)
    n_layers = first.weights.shape[0]
    if layer is not None and n_layers > 1 and layer >= n_layers:
        raise BlockvizError(f"layer {layer} is out of range: {model} has layers 0 to {n_layers - 1}")
    layers = [layer] if layer is not None and n_layers > 1 else list(range(n_layers))
    words_a, words_b = Words.of_tokens(first.tokens, first.words), Words.of_tokens(other.tokens, other.words)
    query_a, query_b = match_query(
        (first.tokens, words_a, first.special), (other.tokens, words_b, other.special), query
    )
    causal = first.causal if first.causal is not None else infer_causal(first.weights)
    difference = first_difference(first.tokens, other.tokens, first.inputs, other.inputs)
    sees = query_sees_difference(query_a, query_b, difference, causal)
    pairs = align_words(words_a.names, words_b.names)
    side_a = Side(first.weights[layers], words_a, first.special, query_a, 0)
    side_b = Side(other.weights[layers], words_b, other.special, query_b, 0)
    shifts = head_shifts(side_a, side_b, pairs)
    labels = [pair_label(words_a, words_b, pair) for pair in pairs]
    note = None if sees else _blind_note(first.tokens, other.tokens, query_a, difference, model)
    data = comparison_json(first.tokens, other.tokens, query_a, query_b, labels, shifts, layers, note, model)
    name = query_name(first.tokens[query_a], other.tokens[query_b])
    n_heads = max(shift.head for shift in shifts) + 1
    notes = [f"{model}: {len(layers)} layer{'s' if len(layers) > 1 else ''} × {n_heads} heads."]
    if note:
        notes.append(note[0].upper() + note[1:] + ".")
    grid = moved_grid(shifts, labels, name, layers, n_heads, kv_heads, f" of {model}", notes, note)
    return Comparison(
        data, grid, rows_panel(shifts[0], labels, name, layers, unseen_words(side_a, side_b, pairs, causal), pairs)
    )


def write_comparison(comparison: Comparison, folder, formats: tuple[str, ...]) -> list:
    """Write ``compare.json`` and the figure ``compare.<format>`` for each of ``formats`` into
    ``folder`` (each file atomically); return their paths."""
    import json

    from blockviz.figures.heads_figure import write_heads_figure
    from blockviz.files import atomic_path, writable_folder

    folder = writable_folder(folder)
    data_path = folder / "compare.json"
    with atomic_path(data_path) as partial:
        partial.write_text(json.dumps(comparison.data, ensure_ascii=False, indent=1), encoding="utf-8")
    figures = [
        write_heads_figure(comparison.grid, folder / f"compare.{fmt}", under=comparison.panel.under) for fmt in formats
    ]
    return [data_path, *figures]


def _blind_note(tokens_a, tokens_b, query: int, difference: int | None, model: str) -> str:
    """The line ``compare`` prints when a causal query cannot see where the sentences differ."""
    from blockviz.heads import same_tokens_note

    q = display_token(tokens_a[query])
    if difference is None:
        return same_tokens_note(list(tokens_a), list(tokens_b), q, model)
    a = tokens_a[difference] if difference < len(tokens_a) else "(end)"
    b = tokens_b[difference] if difference < len(tokens_b) else "(end)"
    return (
        f"{q!r} (position {query}) cannot see {display_token(a)!r} → {display_token(b)!r} (position {difference}), "
        f"where the sentences differ: {model} is causal, so every weight from {q!r} is the same in both and nothing is ranked by the contrast"
    )
