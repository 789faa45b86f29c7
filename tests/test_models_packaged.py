"""The two packaged trained models answer the guide's question — what is "it"? — at the heads the
issue names: MiniLM layer 3 head 1 and SmolLM2 layer 13 head 8 put at least half of the weight
from "it" on "chicken". SmolLM2's first load dequantises its GGUF file (20–75 s) into blockviz's
cache; later loads read the cache (under 2 s)."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner
from models_support import packaged_model_installed

pytest.importorskip("transformers")

from blockviz import BlockRecord  # noqa: E402
from blockviz.cli import main  # noqa: E402
from blockviz.models import model_attentions, record_layer  # noqa: E402

CHICKEN = "The chicken didn't cross the road because it was too tired."
CASES = {"minilm": (3, 1, 6, "bert"), "smollm2": (13, 8, 30, "llama")}
"""model: (layer, head, number of layers, family)."""


@pytest.fixture(scope="session", params=list(CASES))
def packaged(request):
    """``(name, record of its layer on the chicken sentence)``, once per session (the model stays loaded)."""
    name = request.param
    if not packaged_model_installed(name):
        pytest.fail(f"the packaged model {name} is not installed: make setup installs it")
    layer = CASES[name][0]
    return name, record_layer(CHICKEN, model=name, layer=layer)


def test_it_attends_to_chicken(packaged):
    name, rec = packaged
    layer, head, n_layers, family = CASES[name]
    it, chicken = rec.tokens.index("it"), rec.tokens.index("chicken")
    assert float(rec.weights[head, it, chicken]) >= 0.5
    assert (rec.source.model, rec.source.layer, rec.source.n_layers, rec.source.family) == (
        name,
        layer,
        n_layers,
        family,
    )


def test_the_tokens_are_the_models_own_and_readable(packaged):
    name, rec = packaged
    words = (
        ["The", "chicken", "didn", "'t", "cross"]
        if name == "smollm2"
        else ["The", "chicken", "didn", "'", "t", "cross"]
    )
    start = 1 if name == "minilm" else 0
    assert rec.tokens[start : start + len(words)] == tuple(words)
    assert (rec.tokens[0], rec.tokens[-1]) == (("[CLS]", "[SEP]") if name == "minilm" else ("The", "."))
    assert not any(mark in token for token in rec.tokens for mark in ("Ġ", "##", "â"))


def test_the_architectures(packaged):
    name, rec = packaged
    arch = rec.architecture
    if name == "minilm":
        assert (arch.norm_placement, arch.norm, arch.positions, arch.ffn, arch.causal) == (
            "post",
            "layernorm",
            "learned",
            "plain",
            False,
        )
        assert (rec.config.d_model, rec.config.n_heads, rec.config.d_ff, rec.config.ln_eps) == (384, 12, 1536, 1e-12)
    else:
        assert (arch.norm_placement, arch.norm, arch.positions, arch.ffn, arch.n_kv_heads, arch.causal) == (
            "pre",
            "rmsnorm",
            "rotary",
            "gated",
            3,
            True,
        )
        assert (rec.config.d_model, rec.config.n_heads, rec.config.d_ff) == (576, 9, 1536)
        assert "4-bit Q4_1" in rec.source.note


def test_every_layers_attention_ranks_the_head_first(packaged):
    name, rec = packaged
    layer, head, n_layers, _ = CASES[name]
    attentions = model_attentions(CHICKEN, model=name)
    assert tuple(attentions.tokens) == rec.tokens and attentions.weights.shape == (
        n_layers,
        rec.config.n_heads,
        rec.n,
        rec.n,
    )
    torch.testing.assert_close(attentions.weights[layer], rec.weights, rtol=0, atol=1e-5)
    it, chicken = rec.tokens.index("it"), rec.tokens.index("chicken")
    from_it = attentions.weights[:, :, it, chicken]
    assert divmod(int(from_it.argmax()), from_it.shape[1]) == (layer, head)


def test_record_model_name_on_the_command_line(packaged, tmp_path):
    name, rec = packaged
    layer, head = CASES[name][:2]
    path = tmp_path / "layer.safetensors"
    result = CliRunner().invoke(
        main,
        [
            "record",
            CHICKEN,
            "--model",
            name,
            "--layer",
            str(layer),
            "--head",
            str(head),
            "--save",
            str(path),
            "--decimals",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{name} (") and "saved" in result.output
    weights = result.output[result.output.index("\nweights ") :]
    assert f"head {head}" in weights and f"head {head + 1}" not in weights
    it_row = next(line for line in weights.splitlines() if line.split()[:1] == ["it"])
    assert f"{float(rec.weights[head, rec.tokens.index('it'), rec.tokens.index('chicken')]):.2f}" in it_row.split()
    assert "columns hidden at ⋯" in result.output
    assert torch.equal(BlockRecord.load(path).weights, rec.weights)


def test_smollm2_loads_from_the_cache_not_from_its_gguf_file(packaged, monkeypatch):
    """The second load reads the cached safetensors folder: nothing is dequantised and
    transformers is given that folder, never the GGUF file (how long it takes, under 2 s, is
    measured by benchmarks/models.py)."""
    name, _ = packaged
    if name != "smollm2":
        pytest.skip("only SmolLM2 is cached")
    import transformers

    from blockviz.models import loading
    from blockviz.models.cache import COMPLETE, gguf_cache_folder
    from blockviz.models.resolve import resolve_model

    location = resolve_model(name)
    cached = gguf_cache_folder(location.folder / location.gguf_file)
    assert (cached / COMPLETE).is_file() and (cached / "model.safetensors").is_file()
    monkeypatch.setattr(loading, "_convert_gguf", lambda *args: pytest.fail("the cached GGUF was dequantised again"))
    calls = []
    real = transformers.AutoModel.from_pretrained.__func__

    def spy(cls, reference, *args, **kwargs):
        calls.append((reference, kwargs))
        return real(cls, reference, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", classmethod(spy))
    loaded = loading._load.__wrapped__(location, False, "float32")  # not the per-process cache: the files again
    assert [(reference, "gguf_file" in kwargs) for reference, kwargs in calls] == [(str(cached), False)]
    assert loaded.note.startswith("the weights of the 4-bit Q4_1 quantisation") and loaded.family.name == "llama"


def test_a_layer_saves_as_json_and_loads_back(packaged, tmp_path):
    name, rec = packaged
    if name != "minilm":
        pytest.skip("SmolLM2's layer is 63 MB of JSON: MiniLM's 28 MB stands for both")
    path = tmp_path / "layer.json"
    rec.save(path)
    loaded = BlockRecord.load(path)
    assert loaded.tokens == rec.tokens and loaded.source == rec.source
    torch.testing.assert_close(loaded.weights, rec.weights, rtol=0, atol=0)


def test_the_special_tokens_are_flagged_in_the_record(packaged):
    name, rec = packaged
    expected = (
        [True] + [False] * (rec.n - 2) + [True] if name == "minilm" else [False] * rec.n
    )  # [CLS] … [SEP]; SmolLM2 adds none
    assert list(rec.special) == expected
    assert rec.explore().token == rec.tokens.index("tired")
