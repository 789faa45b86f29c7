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


BLOCK_COUNTS = {1: "one block", 2: "two blocks", 3: "three blocks", 4: "four blocks"}


def parameter_counts(trained: Trained) -> dict[str, int]:
    """How many numbers each part holds: the block (``blocks`` for a stack), the token and
    position embeddings, the final LayerNorm and unembedding, and the total."""
    params = trained.model.parameters_by_name()
    embeddings = params["W_E"].numel() + params["W_pos"].numel()
    unembedding = sum(params[name].numel() for name in ("ln_f.weight", "ln_f.bias", "W_U"))
    total = sum(tensor.numel() for tensor in params.values())
    return {
        "block" if trained.model.n_blocks == 1 else "blocks": total - embeddings - unembedding,
        "embeddings": embeddings,
        "unembedding": unembedding,
        "total": total,
    }


def blocks_text(n_blocks: int) -> str:
    """``"one block"``, ``"two blocks"``, … ``"5 blocks"``."""
    return BLOCK_COUNTS.get(n_blocks, f"{n_blocks} blocks")


def about(trained: Trained) -> str:
    """The one-line description the record's source and the title card carry."""
    what = "copy sequences" if trained.options.task == "copy" else "generated sentences"
    return (
        f"trained: {blocks_text(trained.model.n_blocks)}, {parameter_counts(trained)['total']:,} parameters, "
        f"on {trained.corpus_size:,} {what}, loss {trained.loss:.2f}"
    )


def training_settings(trained: Trained) -> dict:
    """How the model was trained (the card's ``training``)."""
    options = trained.options
    return {
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
    }


def config_entries(trained: Trained) -> dict:
    """The model's config as the card keeps it."""
    return {
        key: value
        for key, value in trained.model.config.to_dict().items()
        if key
        in ("d_model", "n_heads", "d_ff", "activation", "positional", "ln_eps", "seed", "max_tokens", "vocab_size")
    }


def copy_card(trained: Trained, size_note: str | None) -> dict:
    """The model card of a model trained on the copy task: what it is, its blocks, config and
    sizes, how it was trained, the sequences' recipe, the final loss, the copy measures at the
    end (:mod:`blockviz.toy.induction`: the best previous-token head of block 1, the best
    induction head of the last block, the accuracy, every head's scores) and at each checkpoint."""
    from blockviz.toy.induction import COPY_LESSON, GOALS, MEASURE_COUNT, measured_recipe

    options = trained.options
    final = trained.measures[options.steps]
    last = trained.model.n_blocks - 1
    previous_head, previous = final.best("previous_token", 0)
    induction_head, induction = final.best("induction", last)
    card = {
        "format": FORMAT,
        "about": about(trained),
        "task": "copy",
        "blocks": trained.model.n_blocks,
        "config": config_entries(trained),
        "parameters": parameter_counts(trained),
        "training": training_settings(trained),
        "corpus": {
            **options.copy.to_dict(),
            "words": "the toy's vocabulary but <unk>",
            "loss": "on the repeat's predictable tokens",
        },
        "final_loss": round(trained.loss, 4),
        "copy": {
            "previous_token": {"block": 0, "head": previous_head, "score": round(previous, 4)},
            "induction": {"block": last, "head": induction_head, "score": round(induction, 4)},
            "accuracy": round(final.accuracy, 4),
            "goals": {name: {"goal": GOALS[name], "met": met} for name, met in final.goals.items()},
            "per_head": final.to_dict(),
            "sequences": measured_recipe(options.copy).to_dict(),
            "what": f"{MEASURE_COUNT} held-out copy sequences, a phrase of 3–5 words repeated: a head's mean weight on the previous token; a head's mean weight "
            "from each repeated word to the word after its first occurrence; the share of those words whose top prediction "
            "is the word that comes next",
        },
        "curve": [
            {"step": step, "loss": _rounded(trained.checkpoints[step][0]), **measures.to_dict()}
            for step, measures in sorted(trained.measures.items())
        ],
        "lessons": {"sentences": {"copy": COPY_LESSON}},
        "checkpoints": sorted(trained.checkpoints),
        "files": {
            WEIGHTS: "parameters by their record names (block K's as blocks.K.…)",
            VOCABULARY: "words in id order",
            CARD: "this card",
            CHECKPOINTS: "the copy lesson's attention weights, block by block, at each checkpoint",
            TIMING: "seconds the training took (differs every run)",
        },
    }
    if size_note:
        card["sizes"] = size_note
    return card


def _rounded(loss: float) -> float | None:
    return None if loss != loss else round(loss, 4)


def model_card(trained: Trained, lessons: LessonFigures, referent_accuracy: float, size_note: str | None) -> dict:
    """The model card: what it is, its config and sizes, how it was trained, on what corpus, the
    final loss, the held-out accuracies and the lesson figures."""
    options = trained.options
    held = held_out_pairs(options.corpus)
    card = {
        "format": FORMAT,
        "about": about(trained),
        "config": config_entries(trained),
        "parameters": parameter_counts(trained),
        "training": training_settings(trained),
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
        "losses": [_rounded(loss) for _, (loss, _) in sorted(trained.checkpoints.items())],
        "lessons": LESSON_SENTENCES if trained.options.task == "lessons" else _copy_lessons(trained),
    }
    return {
        WEIGHTS: save(weights, metadata={"blockviz": json.dumps({"format": FORMAT}, sort_keys=True)}),
        VOCABULARY: _json_bytes(list(trained.vocabulary.words)),
        CARD: _json_bytes(card),
        CHECKPOINTS: save(
            checkpoint_tensors, metadata={"blockviz": json.dumps(checkpoint_meta, sort_keys=True, ensure_ascii=False)}
        ),
    }


def _copy_lessons(trained: Trained) -> dict[str, str]:
    """The checkpoints' lessons of a copy model: the copy lesson, once per block."""
    from blockviz.toy.induction import COPY_LESSON

    return {f"copy_block{index}": COPY_LESSON for index in range(trained.model.n_blocks)}


def timing_bytes(wall_seconds: float, cpu_seconds: float) -> bytes:
    """The timing file's bytes: wall-clock and CPU seconds of the training."""
    return _json_bytes({"wall_seconds": round(wall_seconds, 2), "cpu_seconds": round(cpu_seconds, 2)})
