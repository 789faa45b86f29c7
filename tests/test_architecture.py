"""The architecture is one value and the record's fields one declaration: for every architecture
blockviz computes, what the block computes is exactly what :func:`fields_for` declares, in the
order it computes it, each of its declared shape."""

from __future__ import annotations

import pytest
from support_fields import config_of, label

from blockviz import BlockConfig, BlockvizError
from blockviz.architecture import Architecture, supported_architectures
from blockviz.block import Block
from blockviz.block_record import record
from blockviz.record_fields import BY_NAME, DECLARATION, FIELDS, OPTIONAL_FIELDS, fields_for

SENTENCE = "the cat sat on the mat"
SEEDED = [arch for arch in supported_architectures() if not arch.model_layer and not arch.unembedding]


@pytest.fixture
def computed(monkeypatch):
    """Every cache a :class:`Block` fills while the test runs: all it computed, in order."""
    caches: list[dict] = []

    class Recording(Block):
        def forward(self, resid_pre, cache=None, rotary=None):
            cache = {} if cache is None else cache
            caches.append(cache)
            return super().forward(resid_pre, cache, rotary)

    monkeypatch.setattr("blockviz.block_record.Block", Recording)
    monkeypatch.setattr("blockviz.models.recording.Block", Recording)
    return caches


@pytest.mark.parametrize("arch", SEEDED, ids=label)
def test_a_seeded_record_holds_exactly_the_declared_fields_in_the_order_computed(arch, computed):
    config = config_of(arch)
    assert config.architecture == arch
    rec = record(SENTENCE, config)
    (cache,) = computed
    declared = [spec.name for spec in fields_for(config)]
    assert list(cache) == declared  # nothing computed and not declared, nothing declared and not computed
    assert list(rec.tensors) == declared and [spec.name for spec in rec.fields] == declared
    assert rec.architecture == arch and rec.fields == fields_for(arch)
    for spec in rec.fields:
        assert tuple(rec.tensors[spec.name].shape) == spec.sizes(rec.n, config), spec.name


def test_the_sizes_of_a_grouped_rotary_field_by_hand():
    config = BlockConfig(d_model=12, n_heads=3, n_kv_heads=1, d_ff=5, positional="rotary")
    sizes = {spec.name: spec.sizes(4, config) for spec in fields_for(config)}
    assert (
        sizes["key"],
        sizes["rope_cos"],
        sizes["masked_scores"],
        sizes["row_max"],
        sizes["ffn_post"],
        sizes["ln1_var"],
    ) == ((3, 4, 4), (4, 4), (3, 4, 4), (3, 4), (4, 5), (4,))


@pytest.fixture(scope="module")
def model_layers(tmp_path_factory):
    """family → its tiny random model's folder (GPT-2, BERT, Llama)."""
    pytest.importorskip("transformers")
    from models_support import BUILDERS

    root = tmp_path_factory.mktemp("models")
    return {family: build(root / family) for family, build in BUILDERS.items()}


@pytest.mark.parametrize("family", ["gpt2", "bert", "llama"])
@pytest.mark.parametrize("layer", [0, 1])
def test_a_models_layer_holds_exactly_the_declared_fields(model_layers, computed, family, layer):
    from blockviz.models import record_layer

    rec = record_layer(SENTENCE, model=str(model_layers[family]), layer=layer)
    assert rec.architecture.model_layer and rec.architecture.embedding == "table"
    declared = [spec.name for spec in fields_for(rec.config, model=True, optional=("prev_output",) if layer else ())]
    assert [spec.name for spec in rec.fields] == declared and list(rec.tensors) == declared
    assert ("prev_output" in declared) == (layer > 0)
    cache = computed[
        -1
    ]  # the recomputation of the layer; the previous layer's output, as the model gave it, is added after it
    assert set(cache) == set(declared)
    assert [name for name in cache if name != "prev_output"] == [name for name in declared if name != "prev_output"]
    for spec in rec.fields:
        assert tuple(rec.tensors[spec.name].shape) == spec.sizes(rec.n, rec.config), spec.name


def test_a_model_layer_with_a_previous_layer_declares_its_output_before_its_input():
    gpt2 = BlockConfig(d_model=8, n_heads=2, positional="learned")
    names = [spec.name for spec in fields_for(gpt2, model=True, optional=("prev_output",))]
    assert names[:5] == ["embed", "pos_embed", "prev_output", "resid_pre", "ln1_mean"]
    assert [spec.name for spec in fields_for(gpt2, model=True)] == [name for name in names if name != "prev_output"]
    assert fields_for(gpt2, optional=("prev_output",)) == fields_for(gpt2)  # a seeded block has no previous layer
    described = {spec.name: spec.what for spec in fields_for(gpt2, model=True, optional=("prev_output",))}
    assert described["embed"] == "the model's token embeddings (rows of its embedding table)"
    assert described["pos_embed"] == "the model's position embeddings (rows of its position table)"
    assert described["resid_pre"] == "the layer's real input: the model's hidden state before this layer"
    assert described["prev_output"].startswith("the output of the model's layer before this one")
    llama = BlockConfig(
        d_model=8, n_heads=4, n_kv_heads=2, positional="rotary", norm="rmsnorm", ffn="gated", bias=False
    )
    assert [spec.name for spec in fields_for(llama, model=True, optional=("prev_output",))][:3] == [
        "embed",
        "prev_output",
        "resid_pre",
    ]


def test_the_descriptions_follow_the_architecture():
    llama = {
        spec.name: spec.what
        for spec in fields_for(
            BlockConfig(
                d_model=8, n_heads=4, n_kv_heads=2, positional="rotary", norm="rmsnorm", ffn="gated", bias=False
            )
        )
    }
    assert llama["key"] == "ln1 @ W_K[g], g = this head's key/value head" and llama["query"] == "ln1 @ W_Q[h]"
    assert (
        llama["ln1"] == "γ ⊙ ln1_norm: RMSNorm before attention"
        and llama["ln2_mean_sq"] == "mean of the squared resid_mid row (RMSNorm 2)"
    )
    assert llama["resid_pre"] == "embed: the block's input (residual stream)" and llama["attn_out"] == "concat @ W_O"
    assert (llama["ffn_gate"], llama["ffn_up"], llama["ffn_post"]) == (
        "ln2 @ W_gate",
        "ln2 @ W_up: the values the gate scales",
        "ffn_gate_act ⊙ ffn_up",
    )
    bert = {spec.name: spec.what for spec in fields_for(BlockConfig(d_model=8, norm_placement="post", causal=False))}
    assert (
        bert["query"] == "resid_pre @ W_Q[h] + b_Q[h]"
        and bert["ffn_pre"] == "resid_mid_norm @ W_in + b_in: each row widened"
    )
    assert (
        bert["ln1_mean"] == "mean of each resid_mid row (LayerNorm 1)"
        and bert["ln2_centred"] == "resid_post − mean: each row centred on 0 (LayerNorm 2)"
    )
    assert bert["resid_post"] == "resid_mid_norm + ffn_out"
    assert bert["resid_post_norm"] == "γ ⊙ ln2_norm + β: LayerNorm 2 of resid_post (post-norm), the block's output"


def test_the_trained_toy_models_record_holds_exactly_the_declared_fields_in_the_order_computed():
    import torch

    from blockviz.architecture import TRAINED_TOY
    from blockviz.toy import PACKAGED
    from blockviz.toy.folder import load_toy
    from blockviz.toy.recording import record_toy

    loaded = load_toy(PACKAGED)
    assert loaded.config.architecture == TRAINED_TOY and supported_architectures(2, 1)[-1] == TRAINED_TOY
    cache: dict = {}
    with torch.no_grad():
        loaded.model(torch.tensor(loaded.vocabulary.ids(SENTENCE.split())[0]), cache)
    declared = [spec.name for spec in fields_for(TRAINED_TOY)]
    assert list(cache) == declared and declared[-3:] == ["ln_f", "logits", "probs"]
    rec = record_toy(SENTENCE)
    assert list(rec.tensors) == declared and rec.architecture == TRAINED_TOY
    for spec in rec.fields:
        assert tuple(rec.tensors[spec.name].shape) == spec.sizes(rec.n, rec.config), spec.name


def test_the_declaration_is_consistent():
    by_name: dict[str, tuple] = {}
    for entry in DECLARATION:  # a name declared twice (a norm's fields, pre- and post-norm) has one shape and one scale
        assert by_name.setdefault(entry.name, (entry.shape, entry.scale, entry.neg_inf)) == (
            entry.shape,
            entry.scale,
            entry.neg_inf,
        ), entry.name
    recorded = set()
    for arch in supported_architectures():
        names = [spec.name for spec in fields_for(arch, optional=OPTIONAL_FIELDS)]
        assert len(names) == len(set(names)), arch
        recorded.update(names)
    assert recorded == set(by_name) == set(BY_NAME)  # every declaration is recorded by some architecture
    assert FIELDS == fields_for(BlockConfig()) == fields_for(Architecture())


def test_the_architecture_is_one_value_with_named_facts():
    toy = BlockConfig().architecture
    assert toy == Architecture() and toy.is_toy and BlockConfig(causal=False, positional="learned").architecture.is_toy
    assert (toy.attention_input, toy.ffn_input, toy.block_output, toy.norm_name) == (
        "ln1",
        "ln2",
        "resid_post",
        "LayerNorm",
    )
    bert = BlockConfig(norm_placement="post").architecture
    assert (bert.post_norm, bert.attention_input, bert.ffn_input, bert.block_output, bert.is_toy) == (
        True,
        "resid_pre",
        "resid_mid_norm",
        "resid_post_norm",
        False,
    )
    llama = BlockConfig(
        d_model=8, n_heads=4, n_kv_heads=2, positional="rotary", norm="rmsnorm", ffn="gated", bias=False
    ).architecture
    assert (
        llama.has_centring,
        llama.rotary,
        llama.added_positions,
        llama.gated,
        llama.grouped,
        llama.bias,
        llama.norm_name,
    ) == (False, True, False, True, True, False, "RMSNorm")
    assert BlockConfig(n_heads=2, n_kv_heads=2).architecture.is_toy  # a key/value head per head, said explicitly
    for other in (
        dict(bias=False),
        dict(ffn="gated"),
        dict(norm="rmsnorm"),
        dict(positional="rotary"),
        dict(n_heads=2, n_kv_heads=1),
    ):
        assert not BlockConfig(**other).architecture.is_toy, other
    assert not Architecture.of(BlockConfig(), model_layer=True).is_toy


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        (dict(norm_placement="post", norm="rmsnorm"), "a post-norm block uses LayerNorm"),
        (dict(ffn="swiglu"), "ffn must be one of plain, gated"),
        (dict(positions="alibi"), "positions must be one of sinusoidal, learned, rotary"),
        (dict(model_layer=True), "a trained model's layer reads its embeddings from a table"),
        (dict(bias=1), "bias must be true or false"),
        (dict(n_heads=4, n_kv_heads=3), "n_kv_heads must divide n_heads 4"),
    ],
)
def test_an_impossible_architecture_is_refused(facts, message):
    with pytest.raises(BlockvizError, match=message):
        Architecture(**facts)


def test_a_record_says_its_architecture():
    rec = record(SENTENCE, BlockConfig(d_model=8, norm_placement="post", causal=False))
    assert rec.architecture == rec.config.architecture and rec.architecture.post_norm and not rec.architecture.causal
