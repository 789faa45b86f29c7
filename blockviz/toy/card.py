"""The files of a trained toy model: weights, vocabulary, model card and checkpoints, as bytes.

Everything here is a function of the training run (no clock, no path), so retraining with the
same options writes the same bytes — on every x86-64 CPU with AVX2 when torch is pinned
(:mod:`blockviz.numerics`); the seconds training took go to a file of their own
(:data:`~blockviz.toy.folder.TIMING`).
"""

from __future__ import annotations

import json

from blockviz.source import CHECKPOINTS
from blockviz.toy import CARD
from blockviz.toy.corpus import LESSON_SENTENCES, held_out_pairs
from blockviz.toy.folder import FORMAT, TIMING, VOCABULARY, WEIGHTS
from blockviz.toy.lessons import LessonFigures
from blockviz.toy.training import Trained

OPTIMISER = "AdamW (Loshchilov & Hutter 2019), linear warm-up, cosine decay to a tenth; next-token cross-entropy"
DETERMINISTIC = "seeded, one thread, deterministic algorithms, oneDNN off"
"""How every run is made repeatable (:func:`blockviz.numerics.pinned`)."""
SAME_BYTES = {
    True: "ATen's plain kernels and MKL's compatible branch (blockviz.numerics): the same options give the same bytes on every x86-64 CPU with AVX2 or AVX-512",
    False: "torch not pinned (blockviz.numerics): the same options give the same bytes on one machine",
}
"""Where the same options give the same bytes, by whether the run's torch was pinned."""


def parameter_counts(trained: Trained) -> dict[str, int]:
    """How many numbers each part holds: the block, the token and position embeddings, the
    final LayerNorm and unembedding, and the total."""
    params = trained.model.parameters_by_name()
    embeddings = params["W_E"].numel() + params["W_pos"].numel()
    unembedding = sum(params[name].numel() for name in ("ln_f.weight", "ln_f.bias", "W_U"))
    total = sum(tensor.numel() for tensor in params.values())
    return {
        "block": total - embeddings - unembedding,
        "embeddings": embeddings,
        "unembedding": unembedding,
        "total": total,
    }


def about(trained: Trained) -> str:
    """The one-line description the record's source and the title card carry."""
    return (
        f"trained: one block, {parameter_counts(trained)['total']:,} parameters, "
        f"on {trained.corpus_size:,} generated sentences, loss {trained.loss:.2f}"
    )


def model_card(trained: Trained, lessons: LessonFigures, referent_accuracy: float, size_note: str | None) -> dict:
    """The model card: what it is, its config and sizes, how it was trained, on what corpus, the
    final loss, the held-out accuracies and the lesson figures."""
    options = trained.options
    config = trained.model.config
    held = held_out_pairs(options.corpus)
    card = {
        "format": FORMAT,
        "about": about(trained),
        "config": {
            key: value
            for key, value in config.to_dict().items()
            if key
            in ("d_model", "n_heads", "d_ff", "activation", "positional", "ln_eps", "seed", "max_tokens", "vocab_size")
        },
        "parameters": parameter_counts(trained),
        "training": {
            "steps": options.steps,
            "seed": options.seed,
            "batch": options.batch,
            "learning_rate": options.learning_rate,
            "weight_decay": options.weight_decay,
            "warmup": options.warmup,
            "attention_init": options.attention_init,
            "position_init": options.position_init,
            "checkpoints": [step for step in options.checkpoints if step <= options.steps],
            "optimiser": OPTIMISER,
            "deterministic": f"{DETERMINISTIC}; {SAME_BYTES[trained.pinned]}",
        },
        "corpus": {
            **options.corpus.to_dict(),
            "held_out_pairs": {name: sorted(map(list, pairs)) for name, pairs in held.items()},
        },
        "final_loss": round(trained.loss, 4),
        "held_out_accuracy": {
            "it_to_subject": lessons.held_out,
            "referent_predicted": round(referent_accuracy, 4),
            "what": "50 generated sentences whose noun pairs were held out of training: the share on which the 'it' head puts the most "
            "weight (≥ 0.5) on the subject, and the share on which '. the ADJECTIVE' is followed by the right noun (top prediction)",
        },
        "lessons": {**lessons.to_dict(), "sentences": LESSON_SENTENCES},
        "checkpoints": sorted(trained.checkpoints),
        "files": {
            WEIGHTS: "parameters by their record names",
            VOCABULARY: "words in id order",
            CARD: "this card",
            CHECKPOINTS: "lesson sentences' attention weights at each checkpoint",
            TIMING: "seconds the training took (differs every run)",
        },
    }
    if size_note:
        card["sizes"] = size_note
    return card


def _json_bytes(data) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def model_files(trained: Trained, card: dict) -> dict[str, bytes]:
    """Every reproducible file of the model folder, by name, as bytes."""
    from safetensors.torch import save

    weights = {
        name: tensor.detach().contiguous().float() for name, tensor in trained.model.parameters_by_name().items()
    }
    checkpoint_tensors = {
        f"step{step}.{lesson}": weights_.contiguous().float()
        for step, (_, by_lesson) in sorted(trained.checkpoints.items())
        for lesson, weights_ in by_lesson.items()
    }
    checkpoint_meta = {
        "steps": sorted(trained.checkpoints),
        "losses": [None if loss != loss else round(loss, 4) for _, (loss, _) in sorted(trained.checkpoints.items())],
        "lessons": LESSON_SENTENCES,
    }
    return {
        WEIGHTS: save(weights, metadata={"blockviz": json.dumps({"format": FORMAT}, sort_keys=True)}),
        VOCABULARY: _json_bytes(list(trained.vocabulary.words)),
        CARD: _json_bytes(card),
        CHECKPOINTS: save(
            checkpoint_tensors, metadata={"blockviz": json.dumps(checkpoint_meta, sort_keys=True, ensure_ascii=False)}
        ),
    }


def timing_bytes(wall_seconds: float, cpu_seconds: float) -> bytes:
    """The timing file's bytes: wall-clock and CPU seconds of the training."""
    return _json_bytes({"wall_seconds": round(wall_seconds, 2), "cpu_seconds": round(cpu_seconds, 2)})
