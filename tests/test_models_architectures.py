"""blockviz's own block in the architectures of trained models (post-norm, RMSNorm, rotary, gated
FFN, shared key/value heads), seeded, against independent references: PyTorch's post-norm
``TransformerEncoderLayer`` and ``transformers``' Llama layer and rotary embedding."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from blockviz import BlockConfig, BlockRecord
from blockviz.block import rotary_angles
from blockviz.block_record import record
from blockviz.errors import BlockvizError

SENTENCE = "The chicken didn't cross the road because it was too tired."
LLAMA_LIKE = dict(
    d_model=16,
    n_heads=4,
    n_kv_heads=2,
    d_ff=24,
    activation="silu",
    positional="rotary",
    norm="rmsnorm",
    ffn="gated",
    bias=False,
    rope_theta=500.0,
    dtype="float64",
)


def _heads_to_columns(weight: torch.Tensor) -> torch.Tensor:
    """``(heads, d_model, d_head)`` → ``(d_model, heads·d_head)``."""
    return weight.permute(1, 0, 2).reshape(weight.shape[1], -1)


def test_post_norm_equals_pytorchs_post_norm_encoder_layer():
    config = BlockConfig(d_model=8, n_heads=2, d_ff=16, causal=False, norm_placement="post", dtype="float64")
    rec = record(SENTENCE, config=config)
    layer = (
        nn.TransformerEncoderLayer(
            8,
            2,
            dim_feedforward=16,
            dropout=0.0,
            activation="gelu",
            layer_norm_eps=config.ln_eps,
            batch_first=True,
            norm_first=False,
        )
        .double()
        .eval()
    )
    params = rec.params
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(
            torch.cat([_heads_to_columns(params[f"attn.W_{kind}"]).T for kind in "QKV"])
        )
        layer.self_attn.in_proj_bias.copy_(torch.cat([params[f"attn.b_{kind}"].flatten() for kind in "QKV"]))
        layer.self_attn.out_proj.weight.copy_(params["attn.W_O"].T)
        layer.self_attn.out_proj.bias.copy_(params["attn.b_O"])
        for ours, theirs in (("ln1", layer.norm1), ("ln2", layer.norm2)):
            theirs.weight.copy_(params[f"{ours}.weight"])
            theirs.bias.copy_(params[f"{ours}.bias"])
        layer.linear1.weight.copy_(params["ffn.W_in"].T)
        layer.linear1.bias.copy_(params["ffn.b_in"])
        layer.linear2.weight.copy_(params["ffn.W_out"].T)
        layer.linear2.bias.copy_(params["ffn.b_out"])
        expected = layer(rec.resid_pre[None])[0]
    torch.testing.assert_close(rec.resid_post_norm, expected, rtol=0, atol=1e-12)
    assert "ln1" not in rec.tensors and "resid_mid_norm" in rec.tensors


def test_rotary_angles_equal_transformers_rotary_embedding():
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = transformers.LlamaConfig(
        hidden_size=64, num_attention_heads=4, rope_parameters={"rope_type": "default", "rope_theta": 500.0}
    )
    x = torch.zeros(1, 7, 64)
    cos, sin = LlamaRotaryEmbedding(config)(x, torch.arange(7)[None])
    ours_cos, ours_sin = rotary_angles(7, 16, 500.0, torch.float64)
    torch.testing.assert_close(ours_cos, cos[0].double(), rtol=0, atol=1e-6)  # transformers computes them in float32
    torch.testing.assert_close(ours_sin, sin[0].double(), rtol=0, atol=1e-6)


def test_a_llama_like_block_equals_transformers_llama_layer():
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    config = BlockConfig(**LLAMA_LIKE)
    rec = record(SENTENCE, config=config)
    hf = transformers.LlamaConfig(
        hidden_size=16,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=24,
        rms_norm_eps=config.ln_eps,
        rope_parameters={"rope_type": "default", "rope_theta": 500.0},
        attn_implementation="eager",
    )
    layer = LlamaDecoderLayer(hf, 0).double().eval()
    params = rec.params
    with torch.no_grad():
        layer.input_layernorm.weight.copy_(params["ln1.weight"])
        layer.post_attention_layernorm.weight.copy_(params["ln2.weight"])
        for kind, module in (
            ("Q", layer.self_attn.q_proj),
            ("K", layer.self_attn.k_proj),
            ("V", layer.self_attn.v_proj),
        ):
            module.weight.copy_(_heads_to_columns(params[f"attn.W_{kind}"]).T)
        layer.self_attn.o_proj.weight.copy_(params["attn.W_O"].T)
        layer.mlp.gate_proj.weight.copy_(params["ffn.W_gate"].T)
        layer.mlp.up_proj.weight.copy_(params["ffn.W_up"].T)
        layer.mlp.down_proj.weight.copy_(params["ffn.W_out"].T)
        n = rec.n
        x = rec.resid_pre[None]
        position_embeddings = tuple(
            part.double() for part in LlamaRotaryEmbedding(hf)(x.float(), torch.arange(n)[None])
        )
        mask = rec.mask[None, None]
        expected = layer(x, attention_mask=mask, position_embeddings=position_embeddings)
        expected = expected[0] if isinstance(expected, tuple) else expected
    torch.testing.assert_close(rec.resid_post, expected[0], rtol=0, atol=1e-5)  # RMSNorm in float32 inside transformers


def test_other_architectures_save_load_and_check(tmp_path):
    rec = record(SENTENCE, config=BlockConfig(**LLAMA_LIKE))
    assert list(rec.tensors) == [spec.name for spec in rec.fields]
    for suffix in (".safetensors", ".json"):
        path = tmp_path / f"rec{suffix}"
        rec.save(path)
        loaded = BlockRecord.load(path)
        assert loaded.config == rec.config and loaded.architecture == rec.architecture, path
        assert all(torch.equal(loaded.tensors[name], tensor) for name, tensor in rec.tensors.items())
    edited = dict(rec.tensors)
    edited.pop("query_rot")
    with pytest.raises(BlockvizError, match="lacks field 'query_rot'"):
        BlockRecord(rec.sentence, rec.tokens, rec.config, edited, rec.params)
    assert "pos_embed" not in rec.tensors and torch.equal(rec.resid_pre, rec.embed)
    assert set(rec.params) >= {"ffn.W_gate", "ffn.W_up", "ffn.W_out"} and not any(
        name.startswith(("attn.b_", "ffn.b_")) or name.endswith(".bias") for name in rec.params
    )
    assert rec.params["attn.W_K"].shape == (2, 16, 4) and torch.equal(rec.key[0], rec.key[1])
    torch.testing.assert_close(rec.scores, rec.query_rot @ rec.key_rot.transpose(-1, -2))
    torch.testing.assert_close(rec.qk_products(1, 3).sum(-1), rec.scores[1, 3])
    torch.testing.assert_close(
        rec.input_products("key", 1, 3).sum(0), rec.key[1, 3]
    )  # no bias; key/value head 0 of query head 1
    torch.testing.assert_close(rec.input_products("query", 1, 3).sum(0), rec.query[1, 3])


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(n_heads=4, d_model=8, n_kv_heads=3), "n_kv_heads must divide n_heads 4"),
        (dict(norm_placement="post", norm="rmsnorm"), "a post-norm block uses LayerNorm"),
        (dict(d_model=6, n_heads=2, positional="rotary"), "d_head 3 must be even"),
        (dict(ffn="glu"), "ffn must be one of plain, gated"),
        (dict(norm="batchnorm"), "norm must be one of layernorm, rmsnorm"),
    ],
)
def test_impossible_architectures_are_refused(fields, message):
    with pytest.raises(BlockvizError, match=message):
        BlockConfig(**fields)
