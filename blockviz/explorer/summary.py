"""The explorer's header line: the sentence, its tokens and the block's sizes, readable before
(or without) any script. A workbench page writes its opening again for each sentence typed
(:func:`summary_opening`, the same words in ``explorer.js``), the rest (:func:`summary_details`)
stays the model's."""

from __future__ import annotations

from blockviz.tokens import display_token


def summary_line(rec) -> str:
    """One line on the record, readable before (or without) any script: sentence, tokens, sizes;
    for trained weights (a model's layer, blockviz's trained toy model) what they are instead of the seed.

    >>> from blockviz import record
    >>> summary_line(record("the cat sat", "seeded"))[-33:]
    'FFN width 8, GELU, causal, seed 0'
    """
    return summary_opening(rec.sentence, rec.n) + summary_details(rec)


def summary_opening(sentence: str, n: int) -> str:
    """The header's words on the sentence: ``blockviz explorer — “the cat sat”: 3 tokens, ``."""
    return f"blockviz explorer — “{display_token(sentence)}”: {n} token{'s' if n != 1 else ''}, "


def summary_details(rec) -> str:
    """The header's words on the block, the same for every sentence: its sizes, its architecture
    where it is not blockviz's own, and what its weights are (trained) or its seed."""
    c, a = rec.config, rec.architecture
    heads = f"{c.n_heads} head{'s' if c.n_heads != 1 else ''}"
    if a.grouped:
        heads += f" sharing {a.n_kv_heads} key/value heads"
    line = f"width {c.d_model}, {heads}, FFN width {c.d_ff}, {c.activation_name}, {'causal' if a.causal else 'bidirectional'}"
    if not a.is_toy:
        parts = [
            f"{a.norm_placement}-norm {a.norm_name}",
            "rotary positions" if a.rotary else "positions added",
            "gated FFN" if a.gated else "plain FFN",
        ] + ([] if a.bias else ["no biases"])
        line += ", " + ", ".join(parts)
    if rec.source.is_trained:
        return f"{line} — {rec.source.describe()}"
    return f"{line}, seed {c.seed}"
