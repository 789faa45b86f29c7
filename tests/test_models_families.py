"""One layer of a tiny random GPT-2, BERT and Llama, recorded through ``--model PATH``: every
recorded tensor equals what the model's own modules computed (forward hooks, hidden states,
attentions), and a hand recompute of the block from the layer's weights agrees."""

from __future__ import annotations

import math

import pytest
import torch
from click.testing import CliRunner
from torch.nn import functional as F

pytest.importorskip("transformers")

from models_support import BUILDERS, SENTENCE  # noqa: E402

from blockviz import BlockRecord, BlockvizError  # noqa: E402
from blockviz.architecture import Architecture  # noqa: E402
from blockviz.cli import main  # noqa: E402
from blockviz.models import record_layer  # noqa: E402
from blockviz.record_fields import DECLARATION  # noqa: E402

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
FAMILIES = tuple(BUILDERS)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {family: build(root / family) for family, build in BUILDERS.items()}


def _close(ours: torch.Tensor, theirs: torch.Tensor, dtype: str, what: str) -> None:
    theirs = theirs.detach().to(ours.dtype)
    assert ours.shape == theirs.shape, f"{what}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    finite = torch.isfinite(theirs)
    assert torch.equal(torch.isfinite(ours), finite), f"{what}: −∞ in other places"
    difference = float((ours[finite] - theirs[finite]).abs().max()) if bool(finite.any()) else 0.0
    assert difference <= TOLERANCE[dtype], f"{what}: differs by {difference:.3g}"


def _model(folder, dtype: str):
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        str(folder), local_files_only=True, attn_implementation="eager", dtype=torch.float32
    )
    return model.to(torch.float64 if dtype == "float64" else torch.float32).eval()


def _ids(folder, sentence: str) -> list[int]:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)(sentence)["input_ids"]


def _heads(tensor: torch.Tensor, heads: int) -> torch.Tensor:
    """``(n, heads·d_head)`` → ``(heads, n, d_head)``."""
    n = tensor.shape[0]
    return tensor.reshape(n, heads, -1).transpose(0, 1)


def _model_tensors(family: str, model, ids: list[int], layer: int) -> dict[str, torch.Tensor]:
    """The record's tensors as the model's own modules computed them (hooks on one forward pass)."""
    seen: dict[str, torch.Tensor] = {}
    handles = []

    def output(name, module, pick=lambda value: value):
        handles.append(module.register_forward_hook(lambda _m, _a, value: seen.__setitem__(name, pick(value)[0])))

    def inputs(name, module):
        handles.append(
            module.register_forward_pre_hook(
                lambda _m, args, kwargs: seen.__setitem__(name, (args[0] if args else kwargs["hidden_states"])[0]),
                with_kwargs=True,
            )
        )

    config = model.config
    if family == "gpt2":
        block = model.h[layer]
        inputs("resid_pre", block)
        output("ln1", block.ln_1)
        output("qkv", block.attn.c_attn)
        output("weights", block.attn, lambda value: value[1])
        inputs("concat", block.attn.c_proj)
        output("attn_out", block.attn.c_proj)
        inputs("resid_mid", block.ln_2)
        output("ln2", block.ln_2)
        output("ffn_pre", block.mlp.c_fc)
        output("ffn_post", block.mlp.act)
        output("ffn_out", block.mlp.c_proj)
        output("resid_post", block)
    elif family == "bert":
        block = model.encoder.layer[layer]
        inputs("resid_pre", block)
        for kind, module in (
            ("query", block.attention.self.query),
            ("key", block.attention.self.key),
            ("value", block.attention.self.value),
        ):
            output(kind, module)
        output("weights", block.attention.self, lambda value: value[1])
        output("concat", block.attention.self, lambda value: value[0])
        output("attn_out", block.attention.output.dense)
        inputs("resid_mid_plus", block.attention.output.LayerNorm)
        output("resid_mid_norm", block.attention.output.LayerNorm)
        output("ffn_pre", block.intermediate.dense)
        output("ffn_post", block.intermediate.intermediate_act_fn)
        output("ffn_out", block.output.dense)
        inputs("resid_post", block.output.LayerNorm)
        output("resid_post_norm", block.output.LayerNorm)
    else:
        block = model.layers[layer]
        inputs("resid_pre", block)
        handles.append(
            block.register_forward_pre_hook(
                lambda _m, _a, kwargs: seen.__setitem__("rope", kwargs["position_embeddings"]), with_kwargs=True
            )
        )
        output("ln1", block.input_layernorm)
        output("query", block.self_attn.q_proj)
        output("key_kv", block.self_attn.k_proj)
        output("value_kv", block.self_attn.v_proj)
        output("weights", block.self_attn, lambda value: value[1])
        inputs("concat", block.self_attn.o_proj)
        output("attn_out", block.self_attn.o_proj)
        inputs("resid_mid", block.post_attention_layernorm)
        output("ln2", block.post_attention_layernorm)
        output("ffn_gate", block.mlp.gate_proj)
        output("ffn_gate_act", block.mlp.act_fn)
        output("ffn_up", block.mlp.up_proj)
        inputs("ffn_post", block.mlp.down_proj)
        output("ffn_out", block.mlp.down_proj)
        output("resid_post", block)
    try:
        with torch.no_grad():
            outputs = model(input_ids=torch.tensor([ids]), output_hidden_states=True, output_attentions=True)
    finally:
        for handle in handles:
            handle.remove()
    heads = config.num_attention_heads
    found = {
        name: value
        for name, value in seen.items()
        if name not in ("qkv", "rope", "key_kv", "value_kv", "resid_mid_plus")
    }
    if family == "gpt2":
        query, key, value = seen["qkv"].split(config.n_embd, dim=-1)
        found.update(query=_heads(query, heads), key=_heads(key, heads), value=_heads(value, heads))
        found["embed"] = model.wte.weight[ids]
        found["pos_embed"] = model.wpe.weight[: len(ids)]
    elif family == "bert":
        found.update({kind: _heads(found[kind], heads) for kind in ("query", "key", "value")})
        found["concat"] = found["concat"].reshape(len(ids), -1)
        found["resid_mid"] = seen[
            "resid_mid_plus"
        ]  # BertSelfOutput: LayerNorm(dense output + input): its input is the sum
        found["embed"] = model.embeddings.word_embeddings.weight[ids]
        found["pos_embed"] = model.embeddings.position_embeddings.weight[: len(ids)]
    else:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

        group = heads // config.num_key_value_heads
        query = _heads(found["query"], heads)
        key = repeat_kv(_heads(seen["key_kv"], config.num_key_value_heads)[None], group)[0]
        value = repeat_kv(_heads(seen["value_kv"], config.num_key_value_heads)[None], group)[0]
        cos, sin = seen["rope"]
        query_rot, key_rot = apply_rotary_pos_emb(query[None], key[None], cos, sin)
        found.update(
            query=query,
            key=key,
            value=value,
            query_rot=query_rot[0],
            key_rot=key_rot[0],
            rope_cos=cos[0],
            rope_sin=sin[0],
        )
        found["embed"] = model.embed_tokens.weight[ids]
    assert torch.equal(outputs.hidden_states[layer][0], found["resid_pre"])  # the layer's real input
    if layer > 0:
        found["prev_output"] = outputs.hidden_states[layer][0]  # the layer before's output, as the model returns it
    torch.testing.assert_close(outputs.attentions[layer][0], found["weights"], rtol=0, atol=0)
    return found


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_recorded_tensor_is_the_models_own(family, dtype, folders):
    layer = 1
    rec = record_layer(SENTENCE, model=str(folders[family]), layer=layer, dtype=dtype)
    model = _model(folders[family], dtype)
    reference = _model_tensors(family, model, _ids(folders[family], SENTENCE), layer)
    tolerance_dtype = (
        "float32" if (family == "llama" and dtype == "float64") else dtype
    )  # transformers' RMSNorm normalises in float32
    for name, tensor in reference.items():
        _close(rec.tensors[name], tensor, tolerance_dtype, f"{family} {dtype} {name}")
    # every recorded tensor the model itself holds is compared; the rest (scores … exp_sums, the norms'
    # statistics) is what the model computes inside one call, checked by the hand recompute below
    assert {
        "prev_output",
        "resid_pre",
        "query",
        "key",
        "value",
        "weights",
        "concat",
        "attn_out",
        "resid_mid",
        "ffn_post",
        "ffn_out",
        "resid_post",
    } <= set(reference)
    assert rec.source.family == family and rec.source.layer == layer and rec.source.dtype == dtype
    assert rec.weights.dtype == (torch.float64 if dtype == "float64" else torch.float32)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_hand_recompute_from_the_layers_weights_agrees(family, folders):
    """Every step by hand, from the model's own weights with torch's functional ops (not blockviz's Block)."""
    dtype = "float64"
    rec = record_layer(SENTENCE, model=str(folders[family]), layer=0, dtype=dtype)
    model = _model(folders[family], dtype)
    config = model.config
    heads = config.num_attention_heads
    x = rec.resid_pre
    n = x.shape[0]
    hand: dict[str, torch.Tensor] = {}

    def linear(module, value):
        if hasattr(module, "nf"):  # GPT-2's Conv1D: x @ W + b
            return value @ module.weight + module.bias
        return F.linear(value, module.weight, module.bias)

    def layer_norm(prefix, value, module, output):
        mean = value.mean(-1)
        var = value.var(-1, unbiased=False)
        hand.update(
            {
                f"{prefix}_mean": mean,
                f"{prefix}_centred": value - mean[:, None],
                f"{prefix}_var": var,
                f"{prefix}_norm": (value - mean[:, None]) / torch.sqrt(var[:, None] + module.eps),
            }
        )
        hand[output] = F.layer_norm(value, (value.shape[-1],), module.weight, module.bias, module.eps)
        return hand[output]

    def rms_norm(prefix, value, module):
        mean_sq = (value**2).mean(-1)
        hand.update(
            {
                f"{prefix}_mean_sq": mean_sq,
                f"{prefix}_norm": value / torch.sqrt(mean_sq[:, None] + module.variance_epsilon),
            }
        )
        hand[prefix] = module.weight * hand[f"{prefix}_norm"]
        return hand[prefix]

    def attend(query, key, value, causal):
        d_head = query.shape[-1]
        hand["scores"] = torch.einsum("hid,hjd->hij", query, key)
        hand["scaled_scores"] = hand["scores"] / math.sqrt(d_head)
        hand["mask"] = (
            torch.triu(torch.full((n, n), -math.inf, dtype=x.dtype), 1) if causal else torch.zeros(n, n, dtype=x.dtype)
        )
        hand["masked_scores"] = hand["scaled_scores"] + hand["mask"]
        hand["row_max"] = hand["masked_scores"].amax(-1)
        hand["exp_scores"] = torch.exp(hand["masked_scores"] - hand["row_max"][..., None])
        hand["exp_sums"] = hand["exp_scores"].sum(-1)
        hand["weights"] = torch.softmax(hand["masked_scores"], dim=-1)
        hand["head_outputs"] = hand["weights"] @ value
        hand["concat"] = hand["head_outputs"].transpose(0, 1).reshape(n, -1)

    with torch.no_grad():
        if family == "gpt2":
            block = model.h[0]
            ln1 = layer_norm("ln1", x, block.ln_1, "ln1")
            query, key, value = (
                _heads(part, heads) for part in linear(block.attn.c_attn, ln1).split(config.n_embd, -1)
            )
            hand.update(query=query, key=key, value=value)
            attend(query, key, value, causal=True)
            hand["attn_out"] = linear(block.attn.c_proj, hand["concat"])
            hand["resid_mid"] = x + hand["attn_out"]
            ln2 = layer_norm("ln2", hand["resid_mid"], block.ln_2, "ln2")
            hand["ffn_pre"] = linear(block.mlp.c_fc, ln2)
            hand["ffn_post"] = (
                0.5
                * hand["ffn_pre"]
                * (1 + torch.tanh(math.sqrt(2 / math.pi) * (hand["ffn_pre"] + 0.044715 * hand["ffn_pre"] ** 3)))
            )
            hand["ffn_out"] = linear(block.mlp.c_proj, hand["ffn_post"])
            hand["resid_post"] = hand["resid_mid"] + hand["ffn_out"]
        elif family == "bert":
            block = model.encoder.layer[0]
            attention = block.attention.self
            query, key, value = (
                _heads(linear(module, x), heads) for module in (attention.query, attention.key, attention.value)
            )
            hand.update(query=query, key=key, value=value)
            attend(query, key, value, causal=False)
            hand["attn_out"] = linear(block.attention.output.dense, hand["concat"])
            hand["resid_mid"] = x + hand["attn_out"]
            normed = layer_norm("ln1", hand["resid_mid"], block.attention.output.LayerNorm, "resid_mid_norm")
            hand["ffn_pre"] = linear(block.intermediate.dense, normed)
            hand["ffn_post"] = 0.5 * hand["ffn_pre"] * (1 + torch.erf(hand["ffn_pre"] / math.sqrt(2)))
            hand["ffn_out"] = linear(block.output.dense, hand["ffn_post"])
            hand["resid_post"] = normed + hand["ffn_out"]
            layer_norm("ln2", hand["resid_post"], block.output.LayerNorm, "resid_post_norm")
        else:
            block = model.layers[0]
            attention = block.self_attn
            ln1 = rms_norm("ln1", x, block.input_layernorm)
            group = heads // config.num_key_value_heads
            query = _heads(linear(attention.q_proj, ln1), heads)
            key = _heads(linear(attention.k_proj, ln1), config.num_key_value_heads).repeat_interleave(group, 0)
            value = _heads(linear(attention.v_proj, ln1), config.num_key_value_heads).repeat_interleave(group, 0)
            # RoFormer as complex numbers: the pair (x_i, x_{i + d/2}) times e^{i·p·θ_i}, θ_i = base^(−2i/d)
            half = query.shape[-1] // 2
            theta = config.rope_parameters["rope_theta"] ** (-torch.arange(half, dtype=torch.float64) * 2 / (2 * half))
            turn = torch.polar(
                torch.ones(n, half, dtype=torch.float64), torch.arange(n, dtype=torch.float64)[:, None] * theta
            )

            def rotated(tensor):
                turned = torch.complex(tensor[..., :half], tensor[..., half:]) * turn
                return torch.cat((turned.real, turned.imag), -1)

            hand.update(query=query, key=key, value=value, query_rot=rotated(query), key_rot=rotated(key))
            attend(hand["query_rot"], hand["key_rot"], value, causal=True)
            hand["attn_out"] = linear(attention.o_proj, hand["concat"])
            hand["resid_mid"] = x + hand["attn_out"]
            ln2 = rms_norm("ln2", hand["resid_mid"], block.post_attention_layernorm)
            hand["ffn_gate"] = linear(block.mlp.gate_proj, ln2)
            hand["ffn_gate_act"] = hand["ffn_gate"] * torch.sigmoid(hand["ffn_gate"])
            hand["ffn_up"] = linear(block.mlp.up_proj, ln2)
            hand["ffn_post"] = hand["ffn_gate_act"] * hand["ffn_up"]
            hand["ffn_out"] = linear(block.mlp.down_proj, hand["ffn_post"])
            hand["resid_post"] = hand["resid_mid"] + hand["ffn_out"]
    tolerance = "float32" if family == "llama" else "float64"  # transformers computes rotary angles in float32
    assert set(hand) <= set(rec.tensors)
    not_by_hand = {entry.name for entry in DECLARATION if entry.not_recomputed_by_hand}  # each declared with its reason
    assert set(rec.tensors) - set(hand) == not_by_hand & set(rec.tensors)
    for name, tensor in hand.items():
        _close(rec.tensors[name], tensor, tolerance, f"{family} {name}")


@pytest.mark.parametrize("family", FAMILIES)
def test_record_model_path_prints_saves_and_loads_without_the_model(family, folders, tmp_path, monkeypatch):
    path = tmp_path / "layer.safetensors"
    result = CliRunner().invoke(
        main, ["record", SENTENCE, "--model", str(folders[family]), "--layer", "1", "--save", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert f"({family}), layer 1 of 0–1" in result.output and "saved" in result.output
    rec = record_layer(SENTENCE, model=str(folders[family]), layer=1)
    for suffix in (".safetensors", ".json"):
        saved = tmp_path / f"again{suffix}"
        rec.save(saved)
        import blockviz.models.loading as loading

        monkeypatch.setattr(
            loading, "load_model", lambda *args, **kwargs: pytest.fail("loading a record needs no model")
        )
        loaded = BlockRecord.load(saved)
        monkeypatch.undo()
        assert loaded.tokens == rec.tokens and loaded.source == rec.source and loaded.config == rec.config
        assert loaded.architecture == rec.architecture
        for name, tensor in rec.tensors.items():
            assert torch.equal(loaded.tensors[name], tensor), name
    assert BlockRecord.load(path).tokens == rec.tokens


def test_the_architecture_is_described(folders):
    gpt2 = record_layer(SENTENCE, model=str(folders["gpt2"]), layer=0).architecture
    bert = record_layer(SENTENCE, model=str(folders["bert"]), layer=0).architecture
    llama = record_layer(SENTENCE, model=str(folders["llama"]), layer=0)
    layer = dict(embedding="table", model_layer=True)
    assert gpt2 == Architecture(
        norm="layernorm",
        norm_placement="pre",
        positions="learned",
        ffn="plain",
        n_heads=2,
        n_kv_heads=2,
        bias=True,
        causal=True,
        **layer,
    )
    assert bert == Architecture(
        norm="layernorm",
        norm_placement="post",
        positions="learned",
        ffn="plain",
        n_heads=2,
        n_kv_heads=2,
        bias=True,
        causal=False,
        **layer,
    )
    assert llama.architecture == Architecture(
        norm="rmsnorm",
        norm_placement="pre",
        positions="rotary",
        ffn="gated",
        n_heads=4,
        n_kv_heads=2,
        bias=False,
        causal=True,
        **layer,
    )
    assert not any(arch.is_toy for arch in (gpt2, bert, llama.architecture))
    assert [llama.config.kv_head_of(head) for head in range(4)] == [0, 0, 1, 1]
    assert torch.equal(llama.key[0], llama.key[1]) and not torch.equal(
        llama.key[1], llama.key[2]
    )  # heads 0, 1 share key/value head 0


def test_the_mask_is_a_real_minus_infinity(folders):
    rec = record_layer(SENTENCE, model=str(folders["gpt2"]), layer=0)
    blocked = torch.triu(torch.ones(rec.n, rec.n, dtype=torch.bool), 1)
    assert bool(torch.isneginf(rec.mask[blocked]).all()) and bool((rec.mask[~blocked] == 0).all())
    assert bool((rec.weights[:, blocked] == 0).all())
    assert bool((record_layer(SENTENCE, model=str(folders["bert"]), layer=0).mask == 0).all())


def test_tokens_are_readable(folders):
    gpt2 = record_layer(SENTENCE, model=str(folders["gpt2"]), layer=0).tokens
    bert = record_layer(SENTENCE, model=str(folders["bert"]), layer=0).tokens
    assert gpt2[:4] == ("the", "cat", "sat", "on") and not any("Ġ" in token for token in gpt2)
    assert (
        bert[0] == "[CLS]"
        and bert[-1] == "[SEP]"
        and "tir" in bert
        and "ed" in bert
        and not any("##" in token for token in bert)
    )


def test_the_counterpart_reruns_the_layer_without_the_model(folders):
    rec = record_layer(SENTENCE, model=str(folders["llama"]), layer=1)
    open_ = rec.counterpart(causal=False)
    assert bool((open_.mask == 0).all()) and open_.source == rec.source
    assert torch.equal(open_.query_rot, rec.query_rot)
    assert torch.allclose(open_.weights[:, -1], rec.weights[:, -1])  # the last query saw every key anyway


def test_special_tokens_are_the_tokenizers_and_stored_in_the_record(folders, tmp_path):
    """[CLS], [SEP] (added, or written in the sentence) are flagged from the tokenizer, not from
    their names: the [UNK] that stands for "zebra" is a word, and the default token; the flags
    survive save and load; a record saved before them gets them from the names."""
    import json

    from blockviz.record_format import write_record
    from blockviz.selection import default_token

    rec = record_layer("the cat [SEP] sat on the zebra", model=str(folders["bert"]), layer=1)
    assert rec.tokens == ("[CLS]", "the", "cat", "[SEP]", "sat", "on", "the", "[UNK]", "[SEP]")
    assert rec.special == (True, False, False, True, False, False, False, False, True)
    assert (
        default_token(rec.tokens, rec.special) == 7 and default_token(rec.tokens) == 6
    )  # the names alone would skip [UNK]
    assert (
        rec.explore().token == 7
        and rec.explore().html().count('"special":[true,false,false,true,false,false,false,false,true]') == 1
    )
    for suffix in (".safetensors", ".json"):
        rec.save(tmp_path / f"r{suffix}")
        assert BlockRecord.load(tmp_path / f"r{suffix}").special == rec.special
    old = tmp_path / "old.safetensors"  # as blockviz wrote it before the flags: no "special" in the header
    write_record(old, rec.sentence, rec.tokens, rec.config, {**rec.activations(), **rec.params}, rec.source)
    assert BlockRecord.load(old).special == (True, False, False, True, False, False, False, True, True)
    bad = json.loads((tmp_path / "r.json").read_text())
    bad["special"] = [True]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(BlockvizError, match="special-token flags must be 9 booleans"):
        BlockRecord.load(tmp_path / "bad.json")
    gpt2 = record_layer(SENTENCE, model=str(folders["gpt2"]), layer=0)
    assert gpt2.special == (False,) * gpt2.n  # GPT-2 adds none


def test_a_later_layer_holds_the_layer_befores_output_and_an_older_record_loads_without_it(folders, tmp_path):
    from blockviz.record_format import write_record

    first, later = (record_layer(SENTENCE, model=str(folders["llama"]), layer=layer) for layer in (0, 1))
    assert "prev_output" not in first.tensors and "prev_output" in [spec.name for spec in later.fields]
    assert (
        torch.equal(later.prev_output, later.resid_pre) and later.prev_output.data_ptr() != later.resid_pre.data_ptr()
    )
    assert torch.equal(later.counterpart(causal=False).prev_output, later.prev_output)
    old = tmp_path / "old.safetensors"  # as blockviz saved a layer before prev_output was recorded
    write_record(
        old,
        later.sentence,
        later.tokens,
        later.config,
        {**{k: v for k, v in later.activations().items() if k != "prev_output"}, **later.params},
        later.source,
    )
    loaded = BlockRecord.load(old)
    assert "prev_output" not in loaded.tensors and torch.equal(loaded.resid_pre, later.resid_pre)
    assert (
        loaded.scale_of("resid_pre") == later.scale_of("resid_pre") == later.scale_of("prev_output")
    )  # one scale, with it or without


def test_a_sentence_too_long_is_our_one_line_without_the_tokenizers_warning(folders, capfd, caplog):
    from transformers import AutoTokenizer

    from blockviz.models.tokens import model_tokens

    tokenizer = AutoTokenizer.from_pretrained(folders["bert"], model_max_length=8)
    capfd.readouterr()
    with pytest.raises(BlockvizError, match=r"^the sentence is 22 tokens for 'bert', more than the 8 it"):
        model_tokens(tokenizer, "the cat " * 10, 8, "'bert'")
    assert capfd.readouterr().err == "" and not [r for r in caplog.records if r.name.startswith("transformers")]
