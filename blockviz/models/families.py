"""The supported model families, each mapped by name from the config's ``model_type``: how its
config becomes a :class:`~blockviz.block_config.BlockConfig`, where its layers and embeddings are, and
how one layer's weights become blockviz's parameters (``x @ W``, heads split out).

GPT-2 (Radford et al. 2019; ``transformers`` ``GPT2Model``): pre-norm LayerNorm, learned
positions, fused ``c_attn`` Conv1D (``x @ W``: columns = Q | K | V), GELU (tanh form, ``gelu_new``).
BERT (Devlin et al. 2019; ``BertModel``): post-norm LayerNorm, learned positions (+ token types and
an embedding LayerNorm before layer 0), exact GELU, ``nn.Linear`` (``x @ Wᵀ``). Llama (Touvron
et al. 2023; ``LlamaModel``): pre-norm RMSNorm, rotary positions, grouped-query attention, gated
SiLU FFN, no biases.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from blockviz.block_config import SIZE_LIMITS, BlockConfig
from blockviz.errors import BlockvizError

ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
}
"""``transformers``' activation names → blockviz's (:data:`blockviz.block_config.ACTIVATIONS`)."""


@dataclass(frozen=True)
class Family:
    """One supported family: ``name`` (``gpt2|bert|llama``), the words used in messages
    (``title``), and functions of the ``transformers`` config / base model."""

    name: str
    title: str
    config: Callable  # (hf_config, dtype, max_tokens) -> BlockConfig
    layers: Callable  # (model) -> list of layer modules
    attention: Callable  # (layer module) -> its self-attention module (returns (output, weights))
    params: Callable  # (layer module, BlockConfig) -> blockviz's parameters, views of the model's (see copied)
    token_table: Callable  # (model) -> (vocab, d_model) embedding table
    position_table: Callable | None  # (model) -> (positions, d_model), None for rotary
    n_positions: Callable  # (hf_config) -> int
    final_norm: Callable | None = (
        None  # (model) -> the norm before the unembedding; None: an encoder, no next-token prediction
    )


def _heads(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """``(d_model, heads·d_head)`` in ``x @ W`` form → ``(heads, d_model, d_head)``."""
    d_model = weight.shape[0]
    return weight.reshape(d_model, heads, -1).permute(1, 0, 2)


def _bias_heads(bias: torch.Tensor, heads: int) -> torch.Tensor:
    return bias.reshape(heads, -1)


def _views(params: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``params`` detached from autograd: views of the model's own tensors, nothing copied."""
    return {name: tensor.detach() for name, tensor in params.items()}


def copied(params: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Contiguous copies of a family's parameter views (:attr:`Family.params`) that share no
    memory with the model, each made with one copy: a rearranged (non-contiguous) view is copied
    by ``contiguous``, anything else cloned."""
    return {name: tensor.clone() if tensor.is_contiguous() else tensor.contiguous() for name, tensor in params.items()}


def _activation(hf_config, key: str, family: str) -> str:
    name = getattr(hf_config, key, None)
    if name not in ACTIVATIONS:
        raise BlockvizError(
            f"this {family} model uses activation {name!r}, which blockviz does not compute: supported are {', '.join(sorted(ACTIVATIONS))}"
        )
    return ACTIVATIONS[name]


def _sizes(d_model: int, n_heads: int, d_ff: int, family: str) -> None:
    for name, value in (("d_model", d_model), ("n_heads", n_heads), ("d_ff", d_ff)):
        if value > SIZE_LIMITS[name]:
            raise BlockvizError(
                f"this {family} model's {name} is {value}, more than blockviz's limit {SIZE_LIMITS[name]}: choose a smaller model"
            )


def _max_tokens(n_positions: int) -> int:
    return max(1, min(int(n_positions), SIZE_LIMITS["max_tokens"]))


# GPT-2 ---------------------------------------------------------------------------------------


def _gpt2_config(hf, dtype: str, max_tokens: int | None = None) -> BlockConfig:
    if (
        getattr(hf, "scale_attn_by_inverse_layer_idx", False)
        or getattr(hf, "reorder_and_upcast_attn", False)
        or not getattr(hf, "scale_attn_weights", True)
    ):
        raise BlockvizError(
            "this GPT-2 model scales attention differently (scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn or no scaling): blockviz records the standard q·k/√d_head"
        )
    d_ff = hf.n_inner or 4 * hf.n_embd
    _sizes(hf.n_embd, hf.n_head, d_ff, "GPT-2")
    return BlockConfig(
        d_model=hf.n_embd,
        n_heads=hf.n_head,
        d_ff=d_ff,
        activation=_activation(hf, "activation_function", "GPT-2"),
        causal=True,
        positional="learned",
        ln_eps=float(hf.layer_norm_epsilon),
        dtype=dtype,
        max_tokens=max_tokens or _max_tokens(hf.n_positions),
    )


def _gpt2_params(layer, config: BlockConfig) -> dict[str, torch.Tensor]:
    d, h = config.d_model, config.n_heads
    weight, bias = layer.attn.c_attn.weight, layer.attn.c_attn.bias  # Conv1D: x @ W + b, columns Q | K | V
    params = {"ln1.weight": layer.ln_1.weight, "ln1.bias": layer.ln_1.bias}
    for index, kind in enumerate("QKV"):
        params[f"attn.W_{kind}"] = _heads(weight[:, index * d : (index + 1) * d], h)
        params[f"attn.b_{kind}"] = _bias_heads(bias[index * d : (index + 1) * d], h)
    params.update(
        {
            "attn.W_O": layer.attn.c_proj.weight,
            "attn.b_O": layer.attn.c_proj.bias,
            "ln2.weight": layer.ln_2.weight,
            "ln2.bias": layer.ln_2.bias,
            "ffn.W_in": layer.mlp.c_fc.weight,
            "ffn.b_in": layer.mlp.c_fc.bias,
            "ffn.W_out": layer.mlp.c_proj.weight,
            "ffn.b_out": layer.mlp.c_proj.bias,
        }
    )
    return _views(params)


GPT2 = Family(
    "gpt2",
    "GPT-2",
    _gpt2_config,
    lambda model: list(model.h),
    lambda layer: layer.attn,
    _gpt2_params,
    lambda model: model.wte.weight,
    lambda model: model.wpe.weight,
    lambda hf: hf.n_positions,
    lambda model: model.ln_f,
)


# BERT ----------------------------------------------------------------------------------------


def _bert_config(hf, dtype: str, max_tokens: int | None = None) -> BlockConfig:
    if getattr(hf, "position_embedding_type", "absolute") not in (None, "absolute"):
        raise BlockvizError(
            f"this BERT model uses {hf.position_embedding_type!r} positions: blockviz records BERT with absolute (learned) positions"
        )
    _sizes(hf.hidden_size, hf.num_attention_heads, hf.intermediate_size, "BERT")
    return BlockConfig(
        d_model=hf.hidden_size,
        n_heads=hf.num_attention_heads,
        d_ff=hf.intermediate_size,
        activation=_activation(hf, "hidden_act", "BERT"),
        causal=bool(getattr(hf, "is_decoder", False)),
        positional="learned",
        ln_eps=float(hf.layer_norm_eps),
        dtype=dtype,
        max_tokens=max_tokens or _max_tokens(hf.max_position_embeddings),
        norm_placement="post",
    )


def _linear(module) -> torch.Tensor:
    return module.weight.T  # nn.Linear holds (out, in): x @ Wᵀ


def _bert_params(layer, config: BlockConfig) -> dict[str, torch.Tensor]:
    h = config.n_heads
    attention = layer.attention.self
    params = {}
    for kind, module in (("Q", attention.query), ("K", attention.key), ("V", attention.value)):
        params[f"attn.W_{kind}"] = _heads(_linear(module), h)
        params[f"attn.b_{kind}"] = _bias_heads(module.bias, h)
    output = layer.attention.output
    params.update(
        {
            "attn.W_O": _linear(output.dense),
            "attn.b_O": output.dense.bias,
            "ln1.weight": output.LayerNorm.weight,
            "ln1.bias": output.LayerNorm.bias,
            "ffn.W_in": _linear(layer.intermediate.dense),
            "ffn.b_in": layer.intermediate.dense.bias,
            "ffn.W_out": _linear(layer.output.dense),
            "ffn.b_out": layer.output.dense.bias,
            "ln2.weight": layer.output.LayerNorm.weight,
            "ln2.bias": layer.output.LayerNorm.bias,
        }
    )
    return _views(params)


BERT = Family(
    "bert",
    "BERT",
    _bert_config,
    lambda model: list(model.encoder.layer),
    lambda layer: layer.attention.self,
    _bert_params,
    lambda model: model.embeddings.word_embeddings.weight,
    lambda model: model.embeddings.position_embeddings.weight,
    lambda hf: hf.max_position_embeddings,
)


# Llama ---------------------------------------------------------------------------------------


def _llama_config(hf, dtype: str, max_tokens: int | None = None) -> BlockConfig:
    head_dim = getattr(hf, "head_dim", None) or hf.hidden_size // hf.num_attention_heads
    if head_dim * hf.num_attention_heads != hf.hidden_size:
        raise BlockvizError(
            f"this Llama model's heads ({hf.num_attention_heads} × {head_dim}) do not add up to d_model {hf.hidden_size}: blockviz needs d_model = heads × d_head"
        )
    attention_bias, mlp_bias = bool(getattr(hf, "attention_bias", False)), bool(getattr(hf, "mlp_bias", False))
    if attention_bias != mlp_bias:
        raise BlockvizError(
            "this Llama model has biases in attention or in the FFN but not both: blockviz records both with biases or neither"
        )
    _sizes(hf.hidden_size, hf.num_attention_heads, hf.intermediate_size, "Llama")
    rope = getattr(hf, "rope_parameters", None) or {}
    theta = float(rope.get("rope_theta", getattr(hf, "rope_theta", 10000.0)))
    return BlockConfig(
        d_model=hf.hidden_size,
        n_heads=hf.num_attention_heads,
        d_ff=hf.intermediate_size,
        activation=_activation(hf, "hidden_act", "Llama"),
        causal=True,
        positional="rotary",
        ln_eps=float(hf.rms_norm_eps),
        dtype=dtype,
        max_tokens=max_tokens or _max_tokens(hf.max_position_embeddings),
        norm="rmsnorm",
        ffn="gated",
        n_kv_heads=hf.num_key_value_heads if hf.num_key_value_heads != hf.num_attention_heads else None,
        bias=attention_bias,
        rope_theta=theta,
    )


def _llama_params(layer, config: BlockConfig) -> dict[str, torch.Tensor]:
    attention, mlp, bias = layer.self_attn, layer.mlp, config.architecture.bias
    params = {"ln1.weight": layer.input_layernorm.weight}
    for kind, module, heads in (
        ("Q", attention.q_proj, config.n_heads),
        ("K", attention.k_proj, config.kv_heads),
        ("V", attention.v_proj, config.kv_heads),
    ):
        params[f"attn.W_{kind}"] = _heads(_linear(module), heads)
        if bias:
            params[f"attn.b_{kind}"] = _bias_heads(module.bias, heads)
    params["attn.W_O"] = _linear(attention.o_proj)
    if bias:
        params["attn.b_O"] = attention.o_proj.bias
    params.update(
        {
            "ln2.weight": layer.post_attention_layernorm.weight,
            "ffn.W_gate": _linear(mlp.gate_proj),
            "ffn.W_up": _linear(mlp.up_proj),
            "ffn.W_out": _linear(mlp.down_proj),
        }
    )
    if bias:
        params.update({"ffn.b_gate": mlp.gate_proj.bias, "ffn.b_up": mlp.up_proj.bias, "ffn.b_out": mlp.down_proj.bias})
    return _views(params)


LLAMA = Family(
    "llama",
    "Llama",
    _llama_config,
    lambda model: list(model.layers),
    lambda layer: layer.self_attn,
    _llama_params,
    lambda model: model.embed_tokens.weight,
    None,
    lambda hf: hf.max_position_embeddings,
    lambda model: model.norm,
)


FAMILIES = {"gpt2": GPT2, "bert": BERT, "llama": LLAMA}
"""The supported families by ``model_type`` (the config's own name; never guessed)."""


def family_of(model_type) -> Family:
    """The family of a config's ``model_type``.

    Raises :class:`BlockvizError` naming the supported families for any other.
    """
    if model_type not in FAMILIES:
        supported = ", ".join(f"{family.title} ({name})" for name, family in FAMILIES.items())
        raise BlockvizError(f"model type {model_type!r} is not supported: blockviz records {supported} models")
    return FAMILIES[model_type]
