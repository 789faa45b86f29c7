"""The block against PyTorch's own attention and encoder layer, loaded with the same weights."""

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from blockviz import BlockConfig
from blockviz.block_record import record

SENTENCES = ["the cat sat", "The chicken didn't cross the road because it was too tired.", "a"]
TOLERANCE = dict(atol=1e-6, rtol=0)


def concat_heads(weight: torch.Tensor) -> torch.Tensor:
    """(n_heads, d_model, d_head) → (d_model, d_model), heads side by side."""
    return weight.permute(1, 0, 2).reshape(weight.shape[1], -1)


def load_multihead_attention(layer: nn.MultiheadAttention, params: dict) -> None:
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([concat_heads(params[f"attn.W_{p}"]).T for p in "QKV"]))
        layer.in_proj_bias.copy_(torch.cat([params[f"attn.b_{p}"].flatten() for p in "QKV"]))
        layer.out_proj.weight.copy_(params["attn.W_O"].T)
        layer.out_proj.bias.copy_(params["attn.b_O"])


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_head_outputs_equal_scaled_dot_product_attention(sentence, causal):
    rec = record(sentence, config=BlockConfig(causal=causal))
    expected = F.scaled_dot_product_attention(rec.query, rec.key, rec.value, is_causal=causal)
    torch.testing.assert_close(rec.head_outputs, expected, **TOLERANCE)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_attn_out_and_weights_equal_multihead_attention(sentence, causal):
    config = BlockConfig(causal=causal)
    rec = record(sentence, config=config)
    layer = nn.MultiheadAttention(config.d_model, config.n_heads, batch_first=True)
    load_multihead_attention(layer, rec.params)
    x = rec.ln1[None]
    out, weights = layer(x, x, x, attn_mask=rec.mask, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(rec.attn_out, out[0], **TOLERANCE)
    torch.testing.assert_close(rec.weights, weights[0], **TOLERANCE)


@pytest.mark.parametrize("activation", ["gelu", "relu"])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_resid_post_equals_pre_norm_transformer_encoder_layer(sentence, activation):
    config = BlockConfig(activation=activation)
    rec = record(sentence, config=config)
    layer = nn.TransformerEncoderLayer(
        config.d_model,
        config.n_heads,
        dim_feedforward=config.d_ff,
        dropout=0.0,
        activation=activation,
        layer_norm_eps=config.ln_eps,
        batch_first=True,
        norm_first=True,
    ).eval()
    load_multihead_attention(layer.self_attn, rec.params)
    with torch.no_grad():
        for ours, theirs in (("ln1", layer.norm1), ("ln2", layer.norm2)):
            theirs.weight.copy_(rec.params[f"{ours}.weight"])
            theirs.bias.copy_(rec.params[f"{ours}.bias"])
        layer.linear1.weight.copy_(rec.params["ffn.W_in"].T)
        layer.linear1.bias.copy_(rec.params["ffn.b_in"])
        layer.linear2.weight.copy_(rec.params["ffn.W_out"].T)
        layer.linear2.bias.copy_(rec.params["ffn.b_out"])
        expected = layer(rec.resid_pre[None], src_mask=rec.mask)[0]
    torch.testing.assert_close(rec.resid_post, expected, **TOLERANCE)


def test_layer_norm_matches_its_definition(cat_record):
    # LayerNorm (Ba et al. 2016): (x − mean) / sqrt(var + ε), biased variance, γ = 1, β = 0 here.
    x = cat_record.resid_pre.double()
    expected = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    torch.testing.assert_close(cat_record.ln1.double(), expected, atol=1e-6, rtol=0)
