"""Training the toy model: next-token cross-entropy on the generated corpus, deterministic.

Pinned numerics (:func:`blockviz.numerics.pinned`: one thread, deterministic algorithms, oneDNN
off) and every random draw seeded: the same options give the same weights, bit for bit, on one
machine, and on every x86-64 CPU with AVX2 in a process whose torch is pinned too
(:func:`blockviz.numerics.is_pinned`, as in the ``blockviz`` program). AdamW (Loshchilov &
Hutter 2019) with a linear warm-up and a cosine decay of the learning rate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
from torch.nn import functional as F

from blockviz.errors import BlockvizError
from blockviz.numerics import is_pinned, pinned
from blockviz.toy.copying import CopySequence, copy_sequence
from blockviz.toy.corpus import LESSON_SENTENCES, training_sentences, vocabulary_words
from blockviz.toy.model import ToyModel
from blockviz.toy.options import TASKS, TrainOptions
from blockviz.toy.vocabulary import Vocabulary

if TYPE_CHECKING:
    from blockviz.toy.induction import CopyMeasures


@dataclass
class Trained:
    """A finished run: the ``model``, its ``vocabulary``, the ``corpus`` sentences, the
    final ``loss`` (mean of the last 100 steps), the ``checkpoints``: step → (loss, the
    attention weights of each lesson sentence, ``(n_heads, n, n)``), whether torch was
    ``pinned`` (:func:`blockviz.numerics.is_pinned`: the same bytes on every x86-64 CPU with AVX2),
    and for the copy task the ``measures`` at each checkpoint step (``corpus_size``: the
    sequences seen)."""

    model: ToyModel
    vocabulary: Vocabulary
    options: TrainOptions
    corpus_size: int
    loss: float
    checkpoints: dict[int, tuple[float, dict[str, torch.Tensor]]]
    pinned: bool
    measures: dict[int, CopyMeasures] = field(default_factory=dict)


def padded(encoded: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """The corpus as one tensor ``(sentences, longest)`` of ids padded with 0, and each sentence's length."""
    longest = max(len(ids) for ids in encoded)
    table = torch.tensor([ids + [0] * (longest - len(ids)) for ids in encoded])
    return table, torch.tensor([len(ids) for ids in encoded])


def batches(
    table: torch.Tensor, lengths: torch.Tensor, options: TrainOptions
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Seeded batches forever, each corpus sentence once per pass: ``(ids, lengths)``, ids
    ``(batch, longest in the batch)``."""
    generator = torch.Generator().manual_seed(options.seed)
    order = torch.empty(0, dtype=torch.long)
    while True:
        if len(order) < options.batch:
            order = torch.cat((order, torch.randperm(len(table), generator=generator)))
        chosen, order = order[: options.batch], order[options.batch :]
        chosen_lengths = lengths[chosen]
        yield table[chosen, : int(chosen_lengths.max())], chosen_lengths


def learning_rate(step: int, options: TrainOptions) -> float:
    """Linear warm-up over ``options.warmup`` steps, then cosine decay to a tenth."""
    if step < options.warmup:
        return options.learning_rate * (step + 1) / options.warmup
    progress = (step - options.warmup) / max(1, options.steps - options.warmup)
    return options.learning_rate * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def run_model(model: ToyModel, vocabulary: Vocabulary, sentence: str) -> tuple[list[str], dict[str, torch.Tensor]]:
    """The tokens of ``sentence`` (blockviz's tokenizer) and every tensor the model records on
    it (``weights`` ``(n_heads, n, n)``, ``probs`` ``(n, n_vocab)``, …)."""
    from blockviz.tokens import tokenize

    tokens = tokenize(sentence, model.config.max_tokens)
    cache: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        model(torch.tensor(vocabulary.ids(tokens)[0]), cache)
    return tokens, cache


def lesson_weights(model: ToyModel, vocabulary: Vocabulary) -> dict[str, torch.Tensor]:
    """The attention weights ``(n_heads, n, n)`` of every lesson sentence, by its name."""
    return {name: run_model(model, vocabulary, text)[1]["weights"] for name, text in LESSON_SENTENCES.items()}


def starting_weights(model: ToyModel, options: TrainOptions) -> None:
    """Scale the seeded W_pos to ``options.position_init`` (small positions: a query is mostly its
    word, so a pattern learned at one position holds at others) and start W_Q, W_K and W_V as one
    draw of std ``options.attention_init`` (None keeps the block's own): with W_Q = W_K a query
    first matches its own word's key and similar words', so attention starts on words, not places."""
    with torch.no_grad():
        model.W_pos.mul_(options.position_init)
        if options.attention_init is not None:
            generator = torch.Generator().manual_seed(options.seed + 3)
            for block in model.stack:
                start = torch.empty_like(block.attn.W_Q).normal_(0.0, options.attention_init, generator=generator)
                for kind in "QKV":
                    getattr(block.attn, f"W_{kind}").copy_(start)


def check_options(options: TrainOptions) -> None:
    """Raise :class:`BlockvizError` for steps < 1, an unknown task, or blocks < 1 (the lessons
    task: exactly one block, the shipped toy's)."""
    if isinstance(options.steps, bool) or not isinstance(options.steps, int) or options.steps < 1:
        raise BlockvizError(f"steps must be a whole number ≥ 1, got {options.steps!r}")
    if options.task not in TASKS:
        raise BlockvizError(f"unknown task {options.task!r}: choose one of {', '.join(TASKS)}")
    if isinstance(options.blocks, bool) or not isinstance(options.blocks, int) or options.blocks < 1:
        raise BlockvizError(f"a model has 1 block or more, got {options.blocks!r}: choose --blocks 1 or more")
    if options.task == "lessons" and options.blocks != 1:
        raise BlockvizError("the lessons task trains one block: use --task copy for a stack of blocks")


def train(options: TrainOptions, on_step: Callable[[int, float], None] | None = None) -> Trained:
    """Train the toy model with ``options``; ``on_step(step, loss)`` after each step (1-based).

    ``options.task`` ``"copy"`` trains on the copy task instead (:func:`train_copy`).

    Raises
    ------
    BlockvizError
        For sizes that do not divide (d_model by n_heads) or are out of range, steps < 1, or a
        task or number of blocks the toy does not have.
    """
    check_options(options)
    if options.task == "copy":
        return train_copy(options, on_step)
    vocabulary = Vocabulary(vocabulary_words())
    corpus = training_sentences(options.corpus)
    encoded = [vocabulary.encode(sentence) for sentence in corpus]
    config = options.config(max(len(ids) for ids in encoded), vocabulary.size)
    with pinned():
        torch.manual_seed(options.seed)
        model = ToyModel(config)
        starting_weights(model, options)
        optimiser = torch.optim.AdamW(
            model.parameters(), lr=options.learning_rate, weight_decay=options.weight_decay, foreach=True
        )
        checkpoints = {}
        losses: list[float] = []
        stream = batches(*padded(encoded), options)
        for step in range(options.steps):
            if step in options.checkpoints:
                checkpoints[step] = (losses[-1] if losses else math.nan, lesson_weights(model, vocabulary))
            for group in optimiser.param_groups:
                group["lr"] = learning_rate(step, options)
            ids, lengths = next(stream)
            logits = model(ids[:, :-1])
            targets = ids[:, 1:].masked_fill(torch.arange(ids.shape[1] - 1)[None] >= (lengths - 1)[:, None], -100)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
            losses.append(_descend(optimiser, loss))
            if on_step is not None:
                on_step(step + 1, losses[-1])
        final = sum(losses[-100:]) / len(losses[-100:])
        checkpoints[options.steps] = (final, lesson_weights(model, vocabulary))
    return Trained(model, vocabulary, options, len(corpus), final, checkpoints, is_pinned())


def copy_batch(
    sequences: list[CopySequence], vocabulary: Vocabulary
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of copy sequences as ``ids`` ``(batch, length)`` and the rows the loss is on:
    ``(sequence, query)`` index pairs, each ``(pairs,)`` (every :attr:`CopySequence.predicted` query)."""
    ids = torch.tensor([vocabulary.encode(" ".join(sequence.words)) for sequence in sequences])
    pairs = [(index, query) for index, sequence in enumerate(sequences) for query, _ in sequence.predicted]
    rows = torch.tensor(pairs)
    return ids, rows[:, 0], rows[:, 1]


def train_copy(options: TrainOptions, on_step: Callable[[int, float], None] | None = None) -> Trained:
    """Train ``options.blocks`` blocks on the copy task (:mod:`blockviz.toy.copying`): each step
    a batch of fresh seeded sequences, cross-entropy on the repeat's predictable tokens only.
    The checkpoints hold, per step, the copy lesson's attention weights of each block
    (``copy_block<K>``, ``(n_heads, n, n)``) and the copy measures (:func:`copy_measures`)."""
    from blockviz.toy.induction import copy_lesson_weights, copy_measures

    vocabulary = Vocabulary(vocabulary_words())
    words = vocabulary.words[1:]
    config = options.config(options.copy.length, vocabulary.size)
    chooser = random.Random(f"copy training {options.copy.seed} {options.seed}")
    with pinned():
        torch.manual_seed(options.seed)
        model = ToyModel(config, n_blocks=options.blocks)
        starting_weights(model, options)
        optimiser = torch.optim.AdamW(
            model.parameters(), lr=options.learning_rate, weight_decay=options.weight_decay, foreach=True
        )
        checkpoints, measures = {}, {}
        losses: list[float] = []
        for step in range(options.steps):
            if step in options.checkpoints:
                checkpoints[step] = (losses[-1] if losses else math.nan, copy_lesson_weights(model, vocabulary))
                measures[step] = copy_measures(model, vocabulary, options.copy)
            for group in optimiser.param_groups:
                group["lr"] = learning_rate(step, options)
            sequences = [copy_sequence(chooser, words, options.copy) for _ in range(options.batch)]
            ids, batch_rows, query_rows = copy_batch(sequences, vocabulary)
            logits = model(ids)
            loss = F.cross_entropy(logits[batch_rows, query_rows], ids[batch_rows, query_rows + 1])
            losses.append(_descend(optimiser, loss))
            if on_step is not None:
                on_step(step + 1, losses[-1])
        final = sum(losses[-100:]) / len(losses[-100:])
        checkpoints[options.steps] = (final, copy_lesson_weights(model, vocabulary))
        measures[options.steps] = copy_measures(model, vocabulary, options.copy)
    return Trained(model, vocabulary, options, options.steps * options.batch, final, checkpoints, is_pinned(), measures)


def _descend(optimiser: torch.optim.Optimizer, loss: torch.Tensor) -> float:
    """One step of gradient descent on ``loss`` (a scalar); its value, for the loss curve."""
    optimiser.zero_grad(set_to_none=True)
    loss.backward()
    optimiser.step()
    return float(loss.detach())
