"""How well a model copies, measured from its attention weights and logits (Olsson et al. 2022,
"In-context learning and induction heads", §2–3).

- **Previous-token score** of a head: its mean weight from each row to the row before,
  ``mean over i ≥ 1 of weights[i, i − 1]`` — 1.0 for a head that looks only at the previous token.
- **Induction score** of a head: its mean weight from each repeated word to the word after that
  word's first occurrence, ``mean over (q, k) of weights[q, k]`` for the (query, key) pairs of
  :attr:`blockviz.toy.copying.CopySequence.predicted` — 1.0 for a head that looks only there.
- **Copy accuracy**: the share of those queries whose largest logit is the word that comes next
  (the word at ``k``).

A copying model has a previous-token head in block 1 and an induction head in block 2: block 1
writes each word's predecessor into its row, and block 2's query for a word meets the key of the
row whose predecessor is that word (K-composition). :func:`copy_measures` measures a model on
:data:`MEASURE_COUNT` held-out sequences (their own seed, not the training's).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from blockviz.toy.copying import CopyRecipe, CopySequence, copy_sequences
from blockviz.toy.vocabulary import Vocabulary

COPY_LESSON = "cat road because lamp cake river tall dog sat mat wide lamp cake river"
"""The copy model's lesson sequence: "lamp cake river" repeated after a gap (its checkpoints
follow this sequence's attention)."""
MEASURE_COUNT = 200
MEASURE_SEED = 1
"""The measures' sequences: :data:`MEASURE_COUNT` of them, drawn with this seed (training draws with another)."""
MEASURED_PHRASES = (3, 5)
"""The phrase lengths the measures repeat (whatever lengths the model was trained on)."""
GOALS = {"previous_token": 0.5, "induction": 0.5, "accuracy": 0.7}
"""What a copying model reaches: a block-1 head with previous-token score ≥ 0.5, a block-2 head
with induction score ≥ 0.5, copy accuracy ≥ 0.7."""


def previous_token_scores(weights: torch.Tensor) -> torch.Tensor:
    """Each head's mean weight on the previous token.

    ``weights`` ``(…, n_heads, n, n)`` (rows = queries, each adding up to 1; n ≥ 2) →
    ``(…, n_heads)``: the mean of ``weights[…, h, i, i − 1]`` over rows i = 1 … n − 1.
    """
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def induction_scores(weights: torch.Tensor, pairs: list[tuple[int, int]]) -> torch.Tensor:
    """Each head's mean weight from each repeated word to the word after its first occurrence.

    ``weights`` ``(n_heads, n, n)``; ``pairs`` the (query, key) positions
    (:attr:`~blockviz.toy.copying.CopySequence.predicted`) → ``(n_heads,)``.
    """
    queries, keys = zip(*pairs, strict=True)
    return weights[:, list(queries), list(keys)].mean(dim=-1)


def copy_hits(logits: torch.Tensor, ids: torch.Tensor, pairs: list[tuple[int, int]]) -> torch.Tensor:
    """Whether each query's largest logit is the word at its key, the word that comes next.

    ``logits`` ``(n, n_vocab)``, ``ids`` ``(n,)`` → ``(len(pairs),)`` booleans.
    """
    queries, keys = zip(*pairs, strict=True)
    return logits[list(queries)].argmax(dim=-1) == ids[list(keys)]


@dataclass(frozen=True)
class CopyMeasures:
    """A model's copy measures: ``previous_token[k][h]`` and ``induction[k][h]`` for head h of
    block k (means over the sequences), ``accuracy`` (share of all predicted queries)."""

    previous_token: list[list[float]]
    induction: list[list[float]]
    accuracy: float

    def best(self, kind: str, block: int) -> tuple[int, float]:
        """The head of ``block`` with the largest ``kind`` score (``"previous_token"`` or
        ``"induction"``), and that score."""
        scores = getattr(self, kind)[block]
        head = max(range(len(scores)), key=scores.__getitem__)
        return head, scores[head]

    @property
    def goals(self) -> dict[str, bool]:
        """Which of :data:`GOALS` the model meets: the previous-token head in the first block,
        the induction head in the last (a one-block model's only block is both)."""
        return {
            "previous_token": self.best("previous_token", 0)[1] >= GOALS["previous_token"],
            "induction": self.best("induction", len(self.induction) - 1)[1] >= GOALS["induction"],
            "accuracy": self.accuracy >= GOALS["accuracy"],
        }

    def to_dict(self) -> dict:
        """JSON-ready, rounded to 4 places."""
        return {
            "previous_token": [[round(score, 4) for score in block] for block in self.previous_token],
            "induction": [[round(score, 4) for score in block] for block in self.induction],
            "accuracy": round(self.accuracy, 4),
        }


def measure_sequences(model, vocabulary: Vocabulary, sequences: list[CopySequence]) -> CopyMeasures:
    """The :class:`CopyMeasures` of ``model`` (a :class:`~blockviz.toy.model.ToyModel`) on
    ``sequences``, run as one batch without gradients."""
    ids = torch.tensor([vocabulary.encode(" ".join(sequence.words)) for sequence in sequences])
    caches = [{} for _ in range(model.n_blocks)]
    with torch.no_grad():
        logits = model(ids, block_caches=caches)
    previous, induction = [], []
    for cache in caches:
        weights = cache["weights"]  # (batch, n_heads, n, n)
        previous.append(previous_token_scores(weights).mean(dim=0).tolist())
        per_sequence = [induction_scores(weights[index], seq.predicted) for index, seq in enumerate(sequences)]
        induction.append(torch.stack(per_sequence).mean(dim=0).tolist())
    hits = torch.cat([copy_hits(logits[index], ids[index], seq.predicted) for index, seq in enumerate(sequences)])
    return CopyMeasures(previous, induction, float(hits.float().mean()))


def measured_recipe(recipe: CopyRecipe) -> CopyRecipe:
    """The recipe of the measures' sequences: ``recipe`` (its length, gap and seed) with a phrase
    of :data:`MEASURED_PHRASES` words."""
    shortest, longest = MEASURED_PHRASES
    return replace(recipe, shortest=shortest, longest=longest)


def copy_measures(model, vocabulary: Vocabulary, recipe: CopyRecipe) -> CopyMeasures:
    """``model``'s measures on the :data:`MEASURE_COUNT` held-out sequences of
    :func:`measured_recipe` ``(recipe)``: phrases of 3–5 words, at ``recipe``'s length."""
    sequences = copy_sequences(vocabulary.words[1:], measured_recipe(recipe), MEASURE_COUNT, MEASURE_SEED)
    return measure_sequences(model, vocabulary, sequences)


def copy_lesson_weights(model, vocabulary: Vocabulary) -> dict[str, torch.Tensor]:
    """The attention weights ``(n_heads, n, n)`` of every block on :data:`COPY_LESSON`, by
    ``copy_block<K>``."""
    caches = [{} for _ in range(model.n_blocks)]
    with torch.no_grad():
        model(torch.tensor(vocabulary.encode(COPY_LESSON)), block_caches=caches)
    return {f"copy_block{index}": cache["weights"] for index, cache in enumerate(caches)}
