"""The record's fields are declared once and everything follows the declaration; the new
fields (LayerNorm statistics, softmax steps) and record methods match independent references."""

import json
import math

import pytest
import torch
from conftest import LONG_SENTENCE as LONG
from support import with_outlier
from support_fields import label
from torch.nn import functional as F

from blockviz import BlockConfig, BlockvizError
from blockviz.architecture import supported_architectures
from blockviz.block_record import record
from blockviz.record_fields import (
    DECLARATION,
    FIELD_NAMES,
    FIELDS,
    NORM_PARAMETER_SCALE,
    OPTIONAL_FIELDS,
    PARAMETER_SCALE,
    SCALE_FAMILIES,
    axis_labels,
    fields_for,
)


def fields_golden() -> str:
    """tests/golden/fields.json: blockviz's own block's fields as the docs, the record's docstring
    and the tables show them, then every supported architecture's fields in order, with their
    shapes in words and the explorer's step that shows each; architectures with the same fields
    are listed together."""
    own = [
        {
            "name": spec.name,
            "shape": spec.shape_text,
            "what": spec.what,
            "scale": spec.scale,
            "neg_inf": spec.neg_inf,
            "explorer_step": spec.explorer_step,
        }
        for spec in FIELDS
    ]
    groups: dict[tuple[str, ...], list[str]] = {}
    for arch in supported_architectures():
        lines = tuple(
            f"{spec.name} {spec.shape_text}{' if recorded' if spec.name in OPTIONAL_FIELDS else ''}, step {spec.explorer_step}"
            for spec in fields_for(arch, optional=OPTIONAL_FIELDS)
        )
        groups.setdefault(lines, []).append(label(arch))
    about = (
        "Generated from blockviz/record_fields.py by tests/test_record_fields.py: pytest --update-golden rewrites it."
    )
    every = [{"architectures": archs, "fields": list(lines)} for lines, archs in groups.items()]
    return json.dumps({"about": about, "own block": own, "architectures": every}, indent=1, ensure_ascii=False) + "\n"


def test_every_architectures_fields_are_the_golden_files(golden):
    golden("fields.json", fields_golden())


def test_every_declared_field_is_recorded_with_its_declared_shape(chicken_record):
    rec = chicken_record
    assert list(rec.activations()) == list(FIELD_NAMES)
    for spec in FIELDS:
        assert tuple(rec.tensors[spec.name].shape) == spec.sizes(rec.n, rec.config), spec.name


def test_layer_norm_statistics_match_torch(chicken_record):
    rec = chicken_record
    for name, source in (("ln1", rec.resid_pre), ("ln2", rec.resid_mid)):
        torch.testing.assert_close(rec.tensors[f"{name}_mean"], source.mean(-1))
        torch.testing.assert_close(rec.tensors[f"{name}_var"], source.var(-1, unbiased=False))
        torch.testing.assert_close(rec.tensors[f"{name}_centred"], source - source.mean(-1, keepdim=True))
        reference = F.layer_norm(
            source, (rec.config.d_model,), rec.params[f"{name}.weight"], rec.params[f"{name}.bias"], rec.config.ln_eps
        )
        torch.testing.assert_close(rec.tensors[name], reference, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(
            rec.tensors[f"{name}_norm"],
            F.layer_norm(source, (rec.config.d_model,), eps=rec.config.ln_eps),
            atol=1e-6,
            rtol=1e-5,
        )


def test_softmax_steps_match_torch_softmax(chicken_record):
    rec = chicken_record
    torch.testing.assert_close(rec.weights, torch.softmax(rec.masked_scores, dim=-1), atol=1e-7, rtol=1e-6)
    assert torch.equal(rec.row_max, rec.masked_scores.max(-1).values)
    torch.testing.assert_close(rec.exp_sums, rec.exp_scores.sum(-1))
    assert bool((rec.exp_scores <= 1).all()) and bool(
        (rec.exp_scores.amax(-1) == 1).all()
    )  # the max's exp is exactly 1
    assert bool((rec.exp_scores[:, torch.isneginf(rec.mask)] == 0).all())


def test_worked_numbers_by_hand():
    # scores (0, ln 3): max ln 3, exps (1/3, 1), sum 4/3, weights (1/4, 3/4)
    from blockviz.worked_example import worked_example

    example = worked_example()
    assert example.exp_scores.tolist() == pytest.approx([1 / 3, 1.0])
    assert example.exp_sum.item() == pytest.approx(4 / 3)
    assert example.weights.tolist() == pytest.approx([0.25, 0.75])
    assert example.weighted_values.flatten().tolist() == pytest.approx([0.5, 0.0, 0.0, 3.0])
    assert example.mixture.tolist() == pytest.approx([0.5, 3.0])


def test_qk_products_add_up_to_the_scores(chicken_record):
    rec = chicken_record
    products = rec.qk_products(1, 7)
    assert products.shape == (rec.n, rec.config.d_head)
    assert products[3].tolist() == pytest.approx((rec.query[1, 7] * rec.key[1, 3]).tolist())
    torch.testing.assert_close(products.sum(-1), rec.scores[1, 7])


def test_weighted_values_add_up_to_the_head_output(chicken_record):
    rec = chicken_record
    terms = rec.weighted_values(0, 12)
    torch.testing.assert_close(terms.sum(0), rec.head_outputs[0, 12])
    assert terms[2].tolist() == pytest.approx((rec.weights[0, 12, 2] * rec.value[0, 2]).tolist())


@pytest.mark.parametrize("role", ["query", "key", "value"])
def test_input_products_add_up_to_the_query_key_and_value(chicken_record, role):
    rec = chicken_record
    terms = rec.input_products(role, 1, 8)
    letter = role[0].upper()
    assert terms.shape == (rec.config.d_model, rec.config.d_head)
    assert terms[2, 1].item() == pytest.approx(rec.ln1[8, 2].item() * rec.params[f"attn.W_{letter}"][1, 2, 1].item())
    reference = torch.nn.functional.linear(
        rec.ln1[8], rec.params[f"attn.W_{letter}"][1].T, rec.params[f"attn.b_{letter}"][1]
    )
    torch.testing.assert_close(terms.sum(0) + rec.params[f"attn.b_{letter}"][1], reference)
    torch.testing.assert_close(terms.sum(0) + rec.params[f"attn.b_{letter}"][1], getattr(rec, role)[1, 8])


def test_projection_products_add_up_to_the_attention_output(chicken_record):
    rec = chicken_record
    terms = rec.projection_products(5)
    assert terms[1, 2].item() == pytest.approx(rec.concat[5, 1].item() * rec.params["attn.W_O"][1, 2].item())
    torch.testing.assert_close(terms.sum(0) + rec.params["attn.b_O"], rec.attn_out[5])


def test_counterpart_is_the_same_block_with_the_other_mask(cat_record):
    encoder = cat_record.counterpart(causal=False)
    assert cat_record.counterpart(causal=True) is cat_record
    assert not bool(encoder.mask.any()) and encoder.tokens == cat_record.tokens
    assert all(torch.equal(encoder.params[name], tensor) for name, tensor in cat_record.params.items())
    assert torch.equal(encoder.query, cat_record.query)  # the mask changes attention only from the scores on
    assert torch.equal(encoder.counterpart(causal=True).weights, cat_record.weights)


def test_scale_limit_is_shared_by_a_family(chicken_record):
    rec = chicken_record
    residual_family = (
        "embed",
        "pos_embed",
        "resid_pre",
        "ln1_mean",
        "ln1_centred",
        "ln2_centred",
        "ln1_norm",
        "ln1",
        "head_outputs",
        "concat",
        "attn_out",
        "resid_mid",
        "ln2_mean",
        "ln2_norm",
        "ln2",
        "ffn_out",
        "resid_post",
    )
    residual = max(float(rec.tensors[name].abs().max()) for name in residual_family)
    assert rec.scale_limit("attn_out") == rec.scale_limit("embed") == rec.scale_limit("ln2") == pytest.approx(residual)
    scores = max(float(rec.scores.abs().max()), float(rec.scaled_scores.abs().max()))
    assert rec.scale_limit("masked_scores") == rec.scale_limit("scores") == pytest.approx(scores)  # −∞ ignored
    assert (
        rec.scale_limit("query")
        == rec.scale_limit("value")
        == pytest.approx(max(float(rec.tensors[n].abs().max()) for n in ("query", "key", "value")))
    )
    norms = ("ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias")
    parameters = max(float(tensor.abs().max()) for name, tensor in rec.params.items() if name not in norms)
    assert rec.scale_limit("attn.W_O") == rec.scale_limit("ffn.b_in") == pytest.approx(parameters) == 1.5726481676
    gammas_and_betas = max(float(rec.params[name].abs().max()) for name in norms)  # the seeded γ = 1, β = 0
    assert rec.scale_limit("ln1.weight") == rec.scale_limit("ln2.bias") == rec.scale_limit("norm_parameters") == 1.0
    assert gammas_and_betas == 1.0
    with pytest.raises(KeyError):
        rec.scale_limit("no_such_thing")


def test_every_colour_scale_family_is_named_once_for_both_colour_bars():
    """One table names the families (issue 33): every declared family and the parameters' two
    are in it, and nothing else is; each has a name for a scene's bar and one for a figure's."""
    families = {spec.scale for spec in DECLARATION} | {PARAMETER_SCALE, NORM_PARAMETER_SCALE}
    assert set(SCALE_FAMILIES) == families
    assert all(names.bar and names.label for names in SCALE_FAMILIES.values())


def test_axis_labels():
    assert axis_labels("n", ["a", "b"], 2) == ["a", "b"]
    assert axis_labels("d_head", [], 2) == ["d0", "d1"]
    assert axis_labels("d_ff", [], 3) == ["f0", "f1", "f2"]


def test_a_record_built_from_inconsistent_tensors_is_refused(cat_record):
    from blockviz import BlockRecord

    tensors = dict(cat_record.tensors, weights=cat_record.weights[:, :2])
    with pytest.raises(BlockvizError, match="field 'weights' has shape"):
        BlockRecord(cat_record.sentence, cat_record.tokens, cat_record.config, tensors, cat_record.params)
    with pytest.raises(BlockvizError, match="lacks field 'exp_sums'"):
        BlockRecord(
            cat_record.sentence,
            cat_record.tokens,
            cat_record.config,
            {k: v for k, v in cat_record.tensors.items() if k != "exp_sums"},
            cat_record.params,
        )
    with pytest.raises(BlockvizError, match="mask"):
        BlockRecord(
            cat_record.sentence, cat_record.tokens, BlockConfig(causal=False), cat_record.tensors, cat_record.params
        )


def test_overflowing_parameters_are_refused_naming_the_tensor(cat_record):
    params = dict(cat_record.params, **{"ffn.W_out": cat_record.params["ffn.W_out"] * 3e38})
    with pytest.raises(BlockvizError, match="ffn_out"):
        record("the cat sat", params=params)


def test_saved_records_carry_their_format_version(tmp_path, cat_record):
    import json

    cat_record.save(tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["format"] == "blockviz-record/2"
    assert math.isinf(json.loads((tmp_path / "r.json").read_text())["tensors"]["mask"][0][1] or -math.inf)


def percentile_by_hand(values: list[float], percent: float) -> float:
    """The linear-interpolation percentile (numpy's default, Hyndman & Fan type 7) of ``values``, by hand."""
    ordered = sorted(values)
    rank = percent / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    return ordered[low] + (rank - low) * (ordered[min(low + 1, len(ordered) - 1)] - ordered[low])


def test_an_outlier_clips_the_scale_of_its_family_at_the_99th_percentile(chicken_record):
    rec = with_outlier(chicken_record)
    family = [spec.name for spec in rec.fields if spec.scale == "residual"]
    values = [abs(v) for name in family for v in rec.tensors[name].flatten().tolist()]
    expected = percentile_by_hand(values, 99)
    assert 22543.0 > 4 * expected
    scale = rec.scale_of("attn_out")
    assert scale.clipped and scale.largest == 22543.0 and scale.limit == pytest.approx(expected, rel=1e-6)
    assert rec.scale_limit("resid_pre") == rec.scale_limit("ffn_out") == scale.limit  # still one scale for the family
    assert not rec.scale_of("query").clipped and rec.scale_limit("query") == chicken_record.scale_limit(
        "query"
    )  # other families as before


def test_the_seeded_blocks_scales_are_their_largest_values_unclipped(cat_record, chicken_record):
    for rec in (
        cat_record,
        chicken_record,
        record(LONG, BlockConfig(d_model=32, n_heads=4, d_ff=128, activation="relu")),
    ):
        for spec in rec.fields:
            family = [rec.tensors[s.name] for s in rec.fields if s.scale == spec.scale]
            largest = max(
                [float(t[torch.isfinite(t)].abs().max()) for t in family if bool(torch.isfinite(t).any())] + [1e-9]
            )
            assert rec.scale_limit(spec.name) == largest and not rec.scale_of(spec.name).clipped, spec.name
        assert (
            rec.scale_limit("attn.W_Q")
            == max(float(t.abs().max()) for name, t in rec.params.items() if not name.startswith("ln"))
            and not rec.scale_of("attn.W_Q").clipped
        )
        assert rec.scale_of("ln2.weight").limit == 1.0 and not rec.scale_of("ln2.weight").clipped


def test_a_bounded_family_is_never_clipped():
    rec = record(" ".join(f"w{i}" for i in range(60)))  # causal, 60 tokens: most weights near 0, the largest 1
    assert rec.scale_of("weights").limit == 1.0 and not rec.scale_of("weights").clipped
    assert rec.scale_of("exp_scores").limit == 1.0
