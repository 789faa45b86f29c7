"""Tiny random models of each supported family, built from a config and saved as Hugging Face
folders (safetensors, a fast tokenizer), for the tests of :mod:`blockviz.models`."""

from __future__ import annotations

from pathlib import Path

import torch

SENTENCE = "the cat sat on the mat because it was tired."
CORPUS = [SENTENCE, "the dog sat.", "it was the cat that sat on the mat.", "a tired cat is a cat."]
BERT_VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "because",
    "it",
    "was",
    "tir",
    "##ed",
    ".",
    "dog",
    "a",
    "is",
]
"""A hand-written WordPiece vocabulary: "tired" splits into "tir" + "##ed"."""


def _scale_weights(model: torch.nn.Module, seed: int) -> None:
    """Parameters N(0, 0.5²) (norm weights 1 + N(0, 0.1²)): large enough that attention is far from uniform."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
            if "norm" in name.lower() and name.endswith("weight"):
                parameter.copy_(1 + 0.1 * noise)
            else:
                parameter.copy_(0.5 * noise)


def _byte_level_tokenizer(folder: Path, bos: bool = False):
    """A byte-level BPE tokenizer (as GPT-2's and Llama's) trained on :data:`CORPUS`, saved to ``folder``."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator(CORPUS, vocab_size=300, min_frequency=1, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=trained._tokenizer,
        eos_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    tokenizer.save_pretrained(folder)
    return tokenizer


def gpt2_folder(folder: Path) -> Path:
    """GPT-2, n_embd 8, 2 heads, 2 layers."""
    from transformers import GPT2Config, GPT2Model

    tokenizer = _byte_level_tokenizer(folder)
    config = GPT2Config(
        n_embd=8, n_head=2, n_layer=2, n_positions=32, vocab_size=len(tokenizer), bos_token_id=0, eos_token_id=0
    )
    model = GPT2Model(config)
    _scale_weights(model, 1)
    model.save_pretrained(folder)
    return folder


def bert_folder(folder: Path) -> Path:
    """BERT, hidden 8, 2 heads, 2 layers, the hand-written :data:`BERT_VOCAB`."""
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(BERT_VOCAB) + "\n", encoding="utf-8")
    BertTokenizer(vocab=str(folder / "vocab.txt")).save_pretrained(folder)  # transformers 5: the fast (tokenizers) one
    config = BertConfig(
        hidden_size=8,
        num_attention_heads=2,
        intermediate_size=16,
        num_hidden_layers=2,
        max_position_embeddings=32,
        vocab_size=len(BERT_VOCAB),
    )
    model = BertModel(config, add_pooling_layer=False)
    _scale_weights(model, 2)
    model.save_pretrained(folder)
    return folder


def llama_folder(folder: Path) -> Path:
    """Llama, hidden 16, 4 heads sharing 2 key/value heads, 2 layers."""
    from transformers import LlamaConfig, LlamaModel

    tokenizer = _byte_level_tokenizer(folder)
    config = LlamaConfig(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=24,
        num_hidden_layers=2,
        max_position_embeddings=64,
        vocab_size=len(tokenizer),
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
        rope_parameters={"rope_type": "default", "rope_theta": 500.0},
    )
    model = LlamaModel(config)
    _scale_weights(model, 3)
    model.save_pretrained(folder)
    return folder


BUILDERS = {"gpt2": gpt2_folder, "bert": bert_folder, "llama": llama_folder}


def tiny_model_records(root: Path, layers: tuple[int, ...]) -> dict:
    """family → (its tiny model's folder under ``root``, {layer: its record of :data:`SENTENCE`})."""
    from blockviz.models import record_layer

    made = {}
    for family, builder in BUILDERS.items():
        folder = builder(root / family)
        made[family] = (folder, {layer: record_layer(SENTENCE, model=str(folder), layer=layer) for layer in layers})
    return made


def packaged_model_installed(name: str) -> bool:
    """Whether the packaged model ``name`` (``minilm``, ``smollm2``) is installed (``make setup``
    installs both); tests of it skip with a reason otherwise."""
    from blockviz.errors import BlockvizError
    from blockviz.models import resolve_model

    try:
        resolve_model(name)
    except BlockvizError:
        return False
    return True
