"""Records you can trust (issue 25): a record cannot be changed after its check, a saved record
loads back exactly and is checked for what it claims, and reading a JSON record holds neither
the document as Python lists nor more than a few times the file."""

import dataclasses
import json
import math
import tracemalloc

import pytest
import torch

from blockviz import BlockConfig, BlockRecord, BlockvizError
from blockviz.block_record import record
from blockviz.read_only import ReadOnlyTensors
from blockviz.tensorfile import read_tensors

ARCHITECTURES = {
    "toy": BlockConfig(),
    "learned, bidirectional, float64": BlockConfig(causal=False, positional="learned", dtype="float64", seed=7),
    "rotary, RMSNorm, gated, grouped-query, no bias": BlockConfig(
        d_model=8,
        n_heads=4,
        d_ff=12,
        positional="rotary",
        norm="rmsnorm",
        ffn="gated",
        n_kv_heads=2,
        bias=False,
        activation="silu",
    ),
    "post-norm, tanh GELU": BlockConfig(
        d_model=6, n_heads=3, d_ff=10, norm_placement="post", activation="gelu_tanh", seed=3
    ),
}
SENTENCE = "The chicken didn't cross the road because it was too tired."


def same(first: torch.Tensor, second: torch.Tensor) -> bool:
    return first.dtype == second.dtype and torch.equal(first, second)


# A record stays as checked --------------------------------------------------------------------


def test_tokens_special_config_and_source_cannot_be_changed(cat_record):
    with pytest.raises(AttributeError):
        cat_record.tokens.append("dog")
    with pytest.raises(TypeError):
        cat_record.tokens[0] = "a"
    for name, value in (
        ("tokens", ("a",)),
        ("sentence", "a"),
        ("config", BlockConfig(seed=1)),
        ("special", (True,) * 3),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(cat_record, name, value)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat_record.config.d_model = 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat_record.source.kind = "model"
    assert cat_record.tokens == ("the", "cat", "sat") and cat_record.config == BlockConfig()


def test_tensors_and_params_cannot_be_set_or_deleted(cat_record):
    for mapping, name in ((cat_record.tensors, "weights"), (cat_record.params, "attn.W_Q")):
        with pytest.raises(TypeError):
            mapping[name] = torch.zeros(1)
        with pytest.raises(TypeError):
            del mapping[name]
        assert name in mapping


def test_changing_what_a_record_hands_out_leaves_it_as_checked():
    rec = record("the cat sat")
    weights, W_Q = rec.weights.clone(), rec.params["attn.W_Q"].clone()
    rec.weights[0, 2, 0] = 9.0
    rec.tensors["weights"].add_(1.0)
    rec.weights.numpy()[:] = 0.0  # numpy shares memory with the tensor it came from
    rec.activations()["weights"].zero_()
    rec.params["attn.W_Q"].mul_(100.0)
    assert same(rec.weights, weights) and same(rec.params["attn.W_Q"], W_Q)
    # value-mixing's terms still add up to the head's output (an edited weight row did not)
    torch.testing.assert_close(rec.weighted_values(0, 2).sum(0), rec.head_outputs[0, 2], rtol=0, atol=1e-6)


def test_a_record_keeps_copies_of_the_tensors_it_is_built_from(cat_record):
    tensors, params = (
        {k: v.clone() for k, v in cat_record.tensors.items()},
        {k: v.clone() for k, v in cat_record.params.items()},
    )
    rec = BlockRecord(cat_record.sentence, list(cat_record.tokens), cat_record.config, tensors, params)
    tensors["weights"].zero_()
    params["ffn.W_in"].zero_()
    tensors["weights"] = torch.zeros(1)
    assert same(rec.weights, cat_record.weights) and same(rec.params["ffn.W_in"], cat_record.params["ffn.W_in"])
    assert rec.tokens == cat_record.tokens and isinstance(rec.tokens, tuple)


def test_read_only_tensors_copy_on_every_access_and_share_no_memory():
    base = torch.arange(6.0)
    mapping = ReadOnlyTensors({"a": base, "b": base[:3]})
    first, second = mapping["a"], mapping["a"]
    assert torch.equal(first, base) and first.data_ptr() != second.data_ptr()
    stored = mapping.stored()
    assert stored["a"].data_ptr() != stored["b"].data_ptr() != base.data_ptr()
    adopted = ReadOnlyTensors.adopting({"a": base, "view": base[:3]})  # a view of another is copied
    assert (
        adopted.stored()["a"].data_ptr() == base.data_ptr() and adopted.stored()["view"].data_ptr() != base.data_ptr()
    )


def test_a_learned_positions_record_saves_as_safetensors(tmp_path):
    # pos_embed was a view of W_pos: safetensors refused to save the pair
    rec = record("the cat sat", BlockConfig(positional="learned", max_tokens=3))
    rec.save(tmp_path / "r.safetensors")
    assert same(BlockRecord.load(tmp_path / "r.safetensors").pos_embed, rec.params["W_pos"][:3])


# Saved records load back exactly ---------------------------------------------------------------


def assert_round_trip(rec, path):
    rec.save(path)
    loaded = BlockRecord.load(path)
    assert (loaded.sentence, loaded.tokens, loaded.config, loaded.source, loaded.special) == (
        rec.sentence,
        rec.tokens,
        rec.config,
        rec.source,
        rec.special,
    )
    assert list(loaded.tensors) == list(rec.tensors) and set(loaded.params) == set(rec.params)
    for name in rec.tensors:
        assert same(loaded.tensors[name], rec.tensors[name]), name
    for name in rec.params:
        assert same(loaded.params[name], rec.params[name]), name


@pytest.mark.parametrize("suffix", [".safetensors", ".json"])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_a_seeded_record_of_each_architecture_round_trips_exactly(tmp_path, architecture, suffix):
    assert_round_trip(record(SENTENCE, ARCHITECTURES[architecture]), tmp_path / f"r{suffix}")


def test_a_record_of_given_parameters_round_trips_exactly(tmp_path, cat_record):
    params = {name: tensor * 1.5 for name, tensor in cat_record.params.items()}
    assert_round_trip(record(SENTENCE, params=params), tmp_path / "given.json")


@pytest.mark.parametrize("suffix", [".safetensors", ".json"])
def test_a_model_record_of_each_family_round_trips_exactly(tmp_path_factory, suffix):
    pytest.importorskip("transformers")
    from models_support import tiny_model_records

    for family, (_, layers) in tiny_model_records(tmp_path_factory.mktemp("models"), (0, 1)).items():
        for layer, rec in layers.items():
            assert_round_trip(rec, tmp_path_factory.mktemp(f"{family}{layer}") / f"r{suffix}")


def test_the_packaged_minilm_record_round_trips_exactly(tmp_path):
    from models_support import packaged_model_installed

    if not packaged_model_installed("minilm"):
        pytest.skip("minilm is not installed (make setup installs it)")
    from blockviz.models import record_layer

    assert_round_trip(record_layer("the cat sat", model="minilm", layer=3), tmp_path / "m.safetensors")


# A loaded record is checked for what it claims -------------------------------------------------


def spoilt(tmp_path, rec, change, suffix=".safetensors"):
    tensors, header = read_tensors(_saved(tmp_path, rec))
    tensors = {name: tensor.clone() for name, tensor in tensors.items()}
    change(tensors, header)
    from blockviz.tensorfile import write_tensors

    path = tmp_path / f"spoilt{suffix}"
    write_tensors(path, tensors, header)
    return path


def _saved(tmp_path, rec):
    path = tmp_path / "good.safetensors"
    rec.save(path)
    return path


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_an_edited_activation_is_named_with_its_difference(tmp_path, architecture):
    rec = record("the cat sat", ARCHITECTURES[architecture])
    path = spoilt(tmp_path, rec, lambda tensors, header: tensors["resid_post"].__setitem__((0, 0), 1e6))
    with pytest.raises(
        BlockvizError,
        match=r"field 'resid_post' is not what the record's parameters make of its input: it differs from its recomputation by 1e\+06 at \[0, 0\]",
    ):
        BlockRecord.load(path)


def test_an_edited_value_inside_rounding_is_kept(tmp_path, cat_record):
    # One float32 step of a value is rounding, not an edit.
    path = spoilt(
        tmp_path,
        cat_record,
        lambda tensors, header: tensors["ffn_out"].__setitem__(
            (1, 1), torch.nextafter(tensors["ffn_out"][1, 1], torch.tensor(math.inf))
        ),
    )
    assert BlockRecord.load(path).ffn_out[1, 1] != cat_record.ffn_out[1, 1]


def test_the_first_differing_field_in_data_flow_order_is_named(tmp_path, cat_record):
    def change(tensors, header):
        tensors["ffn_out"][0, 0] += 1.0
        tensors["scores"][1, 2, 0] += 1.0

    with pytest.raises(BlockvizError, match=r"field 'scores' .* by 1 at \[1, 2, 0\]"):
        BlockRecord.load(spoilt(tmp_path, cat_record, change))


def test_an_edited_parameter_with_its_activations_recomputed_is_still_found(tmp_path, cat_record):
    """A consistent record of other weights that says they are the seeded ones lies about its source."""
    params = dict(cat_record.params)
    params["attn.b_V"] = params["attn.b_V"] + 0.5
    other = record("the cat sat", params=params)

    def claim_seeded(tensors, header):
        header.pop("source")

    with pytest.raises(BlockvizError, match=r"parameter 'attn.b_V' is not the seeded one of seed 0: it differs by 0.5"):
        BlockRecord.load(spoilt(tmp_path, other, claim_seeded))


def test_a_record_of_given_parameters_is_checked_by_recomputation(tmp_path, cat_record):
    rec = record("the cat sat", params=cat_record.params)
    path = spoilt(tmp_path, rec, lambda tensors, header: tensors["attn.W_V"].__setitem__((1, 0, 0), 3.0))
    with pytest.raises(BlockvizError, match="field 'value' is not what the record's parameters make of its input"):
        BlockRecord.load(path)


@pytest.mark.parametrize(
    "sentence, tokens, message",
    [
        ("the dog sat", ["the", "cat", "sat"], "token 1 is 'cat', the sentence gives 'dog'"),
        ("the cat sat", ["the", "cat", "sat", "."], "4 tokens, the sentence gives 3"),
    ],
)
def test_tokens_that_are_not_the_sentences_are_refused(tmp_path, sentence, tokens, message):
    rec = record(" ".join(tokens))

    def change(tensors, header):
        header["sentence"] = sentence

    with pytest.raises(BlockvizError, match=message):
        BlockRecord.load(spoilt(tmp_path, rec, change))


def test_a_model_records_tokens_are_pieces_of_its_sentence_in_order(tmp_path):
    pytest.importorskip("transformers")
    from models_support import SENTENCE as MODEL_SENTENCE
    from models_support import bert_folder

    from blockviz.models import record_layer

    rec = record_layer(MODEL_SENTENCE, model=str(bert_folder(tmp_path / "bert")), layer=0)
    assert rec.tokens[:3] == ("[CLS]", "the", "cat")
    swapped = spoilt(
        tmp_path,
        rec,
        lambda tensors, header: header.update(tokens=[rec.tokens[0], rec.tokens[2], rec.tokens[1], *rec.tokens[3:]]),
    )
    with pytest.raises(BlockvizError, match="token 3 'sat' is not the next piece of its sentence"):
        BlockRecord.load(swapped)
    changed = spoilt(
        tmp_path, rec, lambda tensors, header: header.update(sentence=MODEL_SENTENCE.replace("mat", "rug"))
    )
    with pytest.raises(BlockvizError, match="token 6 'mat' is not the next piece"):
        BlockRecord.load(changed)


# Reading JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, shape",
    [
        ("[]", (0,)),
        ("[[], []]", (2, 0)),
        ("2.5", ()),
        ("null", ()),
        ("[[1, 2, 3], [4, 5, 6]]", (2, 3)),
        ("[[[1], [2]], [[3], [null]]]", (2, 2, 1)),
        (" [ [ 1 ,2 ] ,\n [3,4] ] ", (2, 2)),
    ],
)
def test_json_tensors_read_as_the_standard_library_reads_them(tmp_path, text, shape):
    path = tmp_path / "t.json"
    path.write_text('{"tensors": {"x": ' + text + '}, "tokens": ["a", "[b]", "c]"], "note": {"k": [1, "x"]}}')
    tensors, header = read_tensors(path)
    expected = json.loads(text)
    assert tensors["x"].shape == shape and tensors["x"].dtype == torch.float64
    assert _nulls(tensors["x"].tolist()) == expected
    assert header == {"tokens": ["a", "[b]", "c]"], "note": {"k": [1, "x"]}}


def _nulls(values):
    if isinstance(values, list):
        return [_nulls(value) for value in values]
    return None if values == -math.inf else values


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[1, 2], [3]]", "not a rectangular list of numbers"),
        ("[[1, 2], 3]", "not a rectangular list of numbers"),
        ("[[[1]], [2]]", "not a rectangular list of numbers"),
        ("[1, true]", "not a rectangular list of numbers"),
        ('[1, "2"]', "not a rectangular list of numbers"),
        ("[1, NaN]", "not valid JSON"),
        ("[" * 9 + "1" + "]" * 9, "nested too deeply"),
        ("[1, 2", "not"),
    ],
)
def test_bad_json_tensors_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "t.json"
    path.write_text('{"tensors": {"x": ' + text + "}}")
    with pytest.raises(BlockvizError, match=message):
        read_tensors(path)


def test_a_bare_object_of_tensors_and_header_keys_in_any_order(tmp_path):
    (tmp_path / "bare.json").write_text('{"a": [1, 2], "b": 3}')
    tensors, header = read_tensors(tmp_path / "bare.json")
    assert header == {} and tensors["a"].tolist() == [1.0, 2.0] and tensors["b"].item() == 3.0
    (tmp_path / "late.json").write_text(
        '{"tensors": {"a": [1]}, "format": "x", "sentence": "caf\\udce9 \\ud83d\\ude42 é"}'
    )
    assert read_tensors(tmp_path / "late.json")[1] == {"format": "x", "sentence": "caf\udce9 🙂 é"}


def test_a_record_with_lone_surrogates_round_trips_through_json(tmp_path):
    rec = record("caf\udce9 au lait \udcff")
    assert_round_trip(rec, tmp_path / "s.json")


def test_reading_json_holds_no_python_list_per_number(tmp_path):
    """Short numbers were the worst case: each one a Python float in a list, twice (14× the file)."""
    path = tmp_path / "short.json"
    path.write_text(
        json.dumps({"tensors": {"x": [[0.5] * 500] * 1000, "y": [[-1.0, None]] * 50_000}}, separators=(",", ":"))
    )
    size = path.stat().st_size
    tracemalloc.start()
    try:
        tensors, _ = read_tensors(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tensors["x"].shape == (1000, 500) and tensors["y"][7].tolist() == [-1.0, -math.inf]
    numbers = 1000 * 500 + 50_000 * 2
    assert (
        peak < 2 * size + 8 * numbers * 1.2
    )  # the bytes and text of the file, and 8 bytes a number (a list of floats: 32)


def test_a_saved_safetensors_record_is_the_same_bytes_from_any_process(tmp_path):
    """safetensors writes its metadata from a hash map whose order changes between processes;
    blockviz sorts the header, so the same record saved by two processes is byte-identical."""
    import subprocess
    import sys

    for name in ("a", "b"):
        code = f"from blockviz import record; record('the cat sat').save(r'{tmp_path / name}.safetensors')"
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()
