"""The norms' γ and β have their own colour scale, "γ, β" ("γ" for RMSNorm): around 1 and 0, on
the weight matrices' scale they sat at its end (MiniLM's parameters' scale is clipped at ±0.18,
its γ runs 0.35…1.49: the LayerNorm scene's γ row was one solid colour). Each family's limit is
checked against its own computation: the largest |value|, or the 99th percentile past an outlier."""

from __future__ import annotations

import numpy as np
import pytest
from support import named_record, play_by_play

from blockviz.record_fields import NORM_PARAMETER_SCALE, PARAMETER_SCALE, parameter_scale
from blockviz.scale_limits import nice_limit, shown_limit
from blockviz.scenes.catalog import lookup
from blockviz.scenes.colour_bar import bars_of
from blockviz.style import format_number

NORMS = ("ln1", "ln2", "ln_f")


def by_hand(tensors) -> float:
    """The colour scale's half-width, computed anew: the largest |value|, or, when that is more
    than 4× the 99th percentile (linear interpolation) of the |values|, that percentile."""
    values = np.concatenate([t.detach().double().abs().numpy().ravel() for t in tensors])
    largest, percentile = float(values.max()), float(np.percentile(values, 99.0))
    return percentile if largest > 4 * percentile else largest


def split(rec) -> tuple[list, list]:
    """The record's norms' parameters and the rest, by the names' first part."""
    norms = [tensor for name, tensor in rec.params.items() if name.split(".")[0] in NORMS]
    return norms, [tensor for name, tensor in rec.params.items() if name.split(".")[0] not in NORMS]


@pytest.fixture(scope="module")
def tiny_records(tmp_path_factory):
    pytest.importorskip("transformers")
    from models_support import tiny_model_records

    return {family: layers[1] for family, (_, layers) in tiny_model_records(tmp_path_factory.mktemp("m"), (1,)).items()}


def test_the_family_of_a_parameter_is_read_from_its_name():
    assert [parameter_scale(name) for name in ("ln1.weight", "ln2.bias", "ln_f.weight", "norm_parameters")] == [
        NORM_PARAMETER_SCALE
    ] * 4
    assert [parameter_scale(name) for name in ("attn.W_Q", "ffn.b_out", "W_pos", "W_E", "W_U", "parameters")] == [
        PARAMETER_SCALE
    ] * 6


def test_the_seeded_and_the_trained_toy_blocks_norms_have_their_own_scale():
    seeded = named_record("default")
    norms, rest = split(seeded)
    assert len(norms) == 4 and by_hand(norms) == 1.0  # γ = 1, β = 0
    assert seeded.scale_limit("ln1.weight") == seeded.scale_limit("ln2.bias") == 1.0
    assert seeded.scale_limit("attn.W_O") == seeded.scale_limit("parameters") == pytest.approx(by_hand(rest))
    assert seeded.scale_limit("parameters") == pytest.approx(1.5726481676)  # the weights' scale as before
    toy = named_record("toy")  # the trained toy model: ln_f too, and W_E, W_U among the rest
    norms, rest = split(toy)
    assert len(norms) == 6 and "ln_f.weight" in toy.params
    assert toy.scale_limit("ln1.bias") == toy.scale_limit("ln_f.weight") == pytest.approx(by_hand(norms))
    assert toy.scale_limit("ln1.weight") == pytest.approx(float(toy.params["ln_f.weight"].abs().max()))  # γ_f's 3.32
    assert toy.scale_limit("W_U") == toy.scale_limit("attn.W_Q") == pytest.approx(by_hand(rest))
    assert toy.scale_limit("W_U") != pytest.approx(toy.scale_limit("ln1.weight"))  # two scales indeed (3.42, 3.32)


@pytest.mark.parametrize("family", ["gpt2", "bert", "llama"])
def test_a_models_norms_are_on_their_own_scale_its_weights_on_theirs(tiny_records, family):
    rec = tiny_records[family]
    norms, rest = split(rec)
    assert len(norms) == (2 if family == "llama" else 4)  # RMSNorm: γ alone
    limit = rec.scale_of("ln2.weight")
    assert limit.limit == rec.scale_limit("ln1.weight") == pytest.approx(by_hand(norms))
    assert not limit.clipped and limit.limit == pytest.approx(max(float(t.abs().max()) for t in norms))
    assert rec.scale_limit("attn.W_Q") == rec.scale_limit("ffn.W_out") == pytest.approx(by_hand(rest))
    assert rec.scale_limit("attn.W_Q") != pytest.approx(limit.limit)  # two scales indeed


def test_minilms_gamma_is_no_longer_clipped_at_its_weights_scale():
    from models_support import packaged_model_installed

    if not packaged_model_installed("minilm"):
        pytest.skip("the packaged MiniLM is not installed (make setup)")
    from blockviz.models import record_layer

    rec = record_layer("The chicken didn't cross the road because it was too tired.", model="minilm", layer=3)
    norms, rest = split(rec)
    weights = rec.scale_of("attn.W_V")
    assert weights.clipped and weights.limit == pytest.approx(by_hand(rest)) and weights.limit < 0.2
    gamma = rec.scale_of("ln1.weight")
    assert not gamma.clipped and gamma.limit == pytest.approx(by_hand(norms)) == pytest.approx(1.48501, abs=1e-5)
    shares = rec.params["ln1.weight"].abs() / gamma.limit
    assert float(shares.min()) < 0.3 and float(shares.max()) == 1.0  # 0.35 … 1.49: the row's colours vary


def bars_seen(rec) -> dict[str, list[str]]:
    """The layer-norm scene's colour bars once it has played: name → its two end numbers."""
    scene, _ = play_by_play(lookup(["layer-norm"])[0].scene_class(), rec, lambda scene: None)
    return {bar.scale_shown.words: [label.shown for label in bar.numbers] for bar in bars_of(scene)}


def test_the_layer_norm_scene_shows_gamma_and_beta_on_their_own_bar():
    """γ and β, one family shown together, on one scale chosen from their shown numbers (issue 36:
    not the weights' scale; one scale per family in a frame)."""
    rec = named_record("toy")
    bars = bars_seen(rec)
    limit = shown_limit([*rec.params["ln1.weight"].tolist(), *rec.params["ln1.bias"].tolist()]).limit
    assert bars["\u03b3, \u03b2"] == [format_number(-limit), format_number(limit)]
    assert bars["\u03b3, \u03b2"] == ["\u22121.25", "1.25"]  # γ's largest, 1.108, rounded up to a step of the bar
    assert "parameters" not in bars and "\u03b3" not in bars and "\u03b2" not in bars


def test_an_rms_norms_bar_says_gamma(tiny_records):
    rec = tiny_records["llama"]
    bars = bars_seen(rec)
    end = float(bars["\u03b3"][1])
    assert bars["\u03b3"][0] == format_number(-end)
    assert (
        nice_limit(end) == end <= shown_limit(rec.params["ln1.weight"].flatten().tolist()).limit
    )  # the shown columns' scale
    assert "\u03b2" not in bars and "\u03b3, \u03b2" not in bars and "parameters" not in bars
