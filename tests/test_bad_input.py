"""Bad input is a one-line error with a non-zero exit, never a traceback, and nothing is written —
the same in `record`, `figures`, `render` and `explore` (issue "Foundation", Bad input; issue 13:
every command that reads files)."""

import json
import math

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import save_file
from support import write_bad_files

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.cli import main

COMMANDS = {
    "record": ["record"],
    "figures": ["figures", "--figure", "weights", "--format", "svg"],
    "render": ["render", "--scene", "mask", "--format", "png", "--resolution", "160x90"],
    "explore": ["explore"],
}


def run(command: str, *args, out=None):
    extra = (
        []
        if out is None or command == "record"
        else ["-o", str(out / "explorer.html" if command == "explore" else out)]
    )
    return CliRunner().invoke(main, [*COMMANDS[command], *map(str, args), *extra])


def assert_one_line_error(result, out=None, message=None):
    output = result.output
    assert result.exit_code in (1, 2), output
    assert "Traceback" not in output and (result.exception is None or isinstance(result.exception, SystemExit)), (
        output,
        result.exception,
    )
    errors = [line for line in output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, output
    if message is not None:
        assert message in errors[0], output
    if out is not None:
        assert not out.exists() or not [path for path in out.rglob("*") if path.is_file()], "a file was written"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A valid record as JSON (a dict) and its tensors, to spoil in many ways."""
    rec = record("the cat sat")
    folder = tmp_path_factory.mktemp("saved")
    rec.save(folder / "r.json")
    return json.loads((folder / "r.json").read_text()), rec


def spoil(document: dict, change) -> dict:
    spoiled = json.loads(json.dumps(document))
    change(spoiled)
    return spoiled


JSON_RECORDS = {
    "tokens do not match the tensors": (lambda d: d.update(tokens=["the", "cat"]), "field"),
    "a field missing": (lambda d: d["tensors"].pop("weights"), "weights"),
    "an extra field": (lambda d: d["tensors"].update(foo=[1.0]), "foo"),
    "config is a list": (lambda d: d.update(config=[4, 2]), "config"),
    "config lacks a field": (lambda d: d["config"].pop("d_model"), "d_model"),
    "config holds a string size": (lambda d: d["config"].update(d_model="4"), "d_model"),
    "tokens are numbers": (lambda d: d.update(tokens=[1, 2, 3]), "tokens"),
    "a tensor is a string": (lambda d: d["tensors"].update(weights="abc"), "weights"),
    "a ragged tensor": (lambda d: d["tensors"].update(embed=[[1.0], [1.0, 2.0]]), "embed"),
    "a future format": (lambda d: d.update(format="blockviz-record/9"), "newer blockviz"),
    "an older format": (lambda d: d.update(format="blockviz-record/1"), "older blockviz"),
    "not a record": (lambda d: d.pop("format"), "not a blockviz record"),
    "mask does not match the config": (lambda d: d["config"].update(causal=False), "mask"),
    "a parameter missing": (lambda d: d["tensors"].pop("attn.W_O"), "attn.W_O"),
    "a weight edited by hand": (lambda d: d["tensors"]["weights"][0][2].__setitem__(0, 0.9), "sums to"),
    "a blocked weight edited by hand": (lambda d: d["tensors"]["weights"][0][0].__setitem__(1, 0.5), "exactly 0"),
    # What the record claims (issue 25, "Records you can trust"): checked once, when it is loaded.
    "a token changed": (lambda d: d["tokens"].__setitem__(1, "dog"), "token 1 is 'dog', the sentence gives 'cat'"),
    "the sentence changed": (lambda d: d.update(sentence="the dog sat"), "not what its sentence splits into"),
    "an activation edited to 1e6": (lambda d: d["tensors"]["resid_post"][0].__setitem__(0, 1e6), "field 'resid_post'"),
    "a parameter edited": (lambda d: d["tensors"]["attn.W_Q"][0][0].__setitem__(0, 2.5), "parameter 'attn.W_Q'"),
}


@pytest.mark.parametrize("command", ["figures", "render", "explore"])
@pytest.mark.parametrize("kind", JSON_RECORDS)
def test_a_spoilt_json_record_is_a_one_line_error(tmp_path, saved, command, kind):
    change, message = JSON_RECORDS[kind]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spoil(saved[0], change)))
    out = tmp_path / "out"
    assert_one_line_error(run(command, "--record", path, out=out), out, message)


def safetensors_record(path, rec, **changes):
    tensors = {**rec.activations(), **rec.params, **changes}
    header = {
        "format": "blockviz-record/2",
        "sentence": rec.sentence,
        "tokens": rec.tokens,
        "config": rec.config.to_dict(),
    }
    save_file(
        {k: v.contiguous() for k, v in tensors.items()},
        str(path),
        metadata={k: json.dumps(v) for k, v in header.items()},
    )
    return path


SAFETENSORS_RECORDS = {
    "an int tensor": (lambda rec: {"weights": torch.zeros(2, 3, 3, dtype=torch.int64)}, "dtype"),
    "a float8 tensor": (lambda rec: {"weights": rec.weights.to(torch.float8_e4m3fn)}, "dtype"),
    "a float64 tensor in a float32 record": (lambda rec: {"ln1": rec.ln1.double()}, "dtype"),
    "NaN where finite is required": (lambda rec: {"ffn_out": torch.full_like(rec.ffn_out, math.nan)}, "ffn_out"),
    "+inf in the residual stream": (
        lambda rec: {"resid_post": torch.full_like(rec.resid_post, math.inf)},
        "resid_post",
    ),
    "NaN in one unblocked cell of the masked scores (−∞ allowed there)": (
        lambda rec: {"masked_scores": cell(rec.masked_scores, (0, 1, 0), math.nan)},
        "field 'masked_scores' holds NaN or +∞",
    ),
    "+inf in one cell of the masked scores": (
        lambda rec: {"masked_scores": cell(rec.masked_scores, (1, 2, 1), math.inf)},
        "field 'masked_scores' holds NaN or +∞",
    ),
}


def cell(tensor: torch.Tensor, where: tuple[int, ...], value: float) -> torch.Tensor:
    """``tensor`` with one entry set to ``value``."""
    changed = tensor.clone()
    changed[where] = value
    return changed


@pytest.mark.parametrize("command", ["figures", "render", "explore"])
@pytest.mark.parametrize("kind", SAFETENSORS_RECORDS)
def test_a_spoilt_safetensors_record_is_a_one_line_error(tmp_path, saved, command, kind):
    change, message = SAFETENSORS_RECORDS[kind]
    path = safetensors_record(tmp_path / "bad.safetensors", saved[1], **change(saved[1]))
    out = tmp_path / "out"
    assert_one_line_error(run(command, "--record", path, out=out), out, message)


@pytest.mark.parametrize(
    "command, option",
    [
        ("record", "--params"),
        ("figures", "--record"),
        ("figures", "--params"),
        ("render", "--record"),
        ("render", "--params"),
        ("explore", "--record"),
        ("explore", "--params"),
    ],
)
def test_files_that_are_not_records_are_one_line_errors(tmp_path, saved, command, option):
    out = tmp_path / "out"
    for _kind, (path, message) in write_bad_files(tmp_path, saved[1]).items():
        args = ["--record", path] if option == "--record" else ["the cat sat", "--params", path]
        assert_one_line_error(run(command, *args, out=out), out, message)


PARAMETER_FILES = {
    "a parameter missing": (lambda p: p.pop("attn.W_O"), "attn.W_O"),
    "a wrong shape": (lambda p: p.update({"ffn.b_in": torch.zeros(3)}), "shape"),
    "float16": (lambda p: p.update({"attn.W_Q": p["attn.W_Q"].half()}), "dtype"),
    "int": (lambda p: p.update({"attn.W_Q": p["attn.W_Q"].long()}), "dtype"),
    "bool": (lambda p: p.update({"ln1.bias": p["ln1.bias"].bool()}), "dtype"),
    "NaN": (lambda p: p.update({"ln1.weight": torch.full_like(p["ln1.weight"], math.nan)}), "NaN"),
    "weights that overflow": (lambda p: p.update({"ffn.W_out": p["ffn.W_out"] * 3e38}), "ffn_out"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", PARAMETER_FILES)
def test_bad_parameters_are_one_line_errors(tmp_path, saved, command, kind):
    change, message = PARAMETER_FILES[kind]
    params = dict(saved[1].params)
    change(params)
    path = tmp_path / "params.safetensors"
    save_file({k: v.contiguous() for k, v in params.items()}, str(path))
    out = tmp_path / "out"
    assert_one_line_error(run(command, "the cat sat", "--params", path, out=out), out, message)


BOUNDS = {
    "d_model too large to hold": (["--d-model", "1000000"], "4096"),
    "seed above 2^63 − 1": (["--seed", str(2**63)], "seed"),
    "negative seed": (["--seed", "-1"], "seed"),
    "token out of range": (["--token", "9"], "position 9"),
    "word#0": (["--token", "cat#0"], "count from 1"),
    "word#9 for a word that occurs twice": (["--token", "the#9"], "occurs 2 times"),
    "unknown word": (["--token", "bird"], "not in the sentence"),
    "head out of range": (["--head", "7"], "head 7"),
}


@pytest.mark.parametrize("command", ["figures", "render", "explore"])
@pytest.mark.parametrize("kind", BOUNDS)
def test_out_of_bounds_choices_are_one_line_errors(tmp_path, command, kind):
    args, message = BOUNDS[kind]
    out = tmp_path / "out"
    if command == "figures" and "--token" in args:
        args = args + ["--figure", "value-mixing"]
    assert_one_line_error(run(command, "the cat saw the dog", *args, out=out), out, message)


@pytest.mark.parametrize("resolution", ["16x16", "158x90", "161x91", "99998x99998", "wide"])
def test_illegible_or_huge_resolutions_are_refused(tmp_path, resolution):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["render", "the cat sat", "--scene", "mask", "--format", "png", "--resolution", resolution, "-o", str(out)],
    )
    assert_one_line_error(result, out)


def test_record_refuses_sizes_before_allocating():
    result = CliRunner().invoke(main, ["record", "a", "--d-model", "1000000", "--heads", "1"])
    assert_one_line_error(result, message="4096")


@pytest.mark.parametrize("sentence", ["caf\udce9 au lait", "a\x00b", "tab\tand\x01ctrl\x1b", "\udcff"])
def test_sentences_with_surrogates_and_control_characters_record(sentence):
    result = CliRunner().invoke(main, ["record", sentence, "--model", "seeded"])  # any words: the seeded block
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "U+" in result.output  # the undrawable character is shown as its code point


def test_precomposed_and_combining_accents_embed_alike():
    precomposed, combining = record("naïve"), record("nai\u0308ve")
    assert torch.equal(precomposed.embed, combining.embed)
    assert precomposed.tokens != combining.tokens  # the text itself is kept exactly


def test_record_refuses_a_config_beyond_the_limits():
    with pytest.raises(ValueError, match="from 1 to 4096"):
        BlockConfig(d_model=8192)


CLAIMS = {
    "a token changed": (lambda d: d["tokens"].__setitem__(1, "dog"), "token 1 is 'dog', the sentence gives 'cat'"),
    "the sentence changed": (lambda d: d.update(sentence="the cat sat down"), "3 tokens, the sentence gives 4"),
    "an activation edited to 1e6": (
        lambda d: d["tensors"]["resid_post"][0].__setitem__(0, 1e6),
        "field 'resid_post' is not what the record's parameters make of its input: "
        "it differs from its recomputation by 1e+06 at [0, 0]",
    ),
    "a parameter edited (seeded)": (
        lambda d: d["tensors"]["ffn.b_out"].__setitem__(2, 0.25),
        "parameter 'ffn.b_out' is not the seeded one of seed 0: it differs by 0.25 at [2]",
    ),
    "a parameter and its source edited": (
        lambda d: (d.update(source={"kind": "given"}), d["tensors"]["ffn.b_out"].__setitem__(2, 0.25)),
        "field 'ffn_out'",
    ),
}


@pytest.mark.parametrize("kind", CLAIMS)
def test_a_record_that_is_not_what_it_claims_is_refused_before_any_figure(tmp_path, saved, kind):
    """`figures --record` refuses a record whose tokens, activations or parameters are not what
    it claims with exit 1 and one line naming the field, before any file is written."""
    change, message = CLAIMS[kind]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spoil(saved[0], change)))
    out = tmp_path / "out"
    result = run("figures", "--record", path, out=out)
    assert result.exit_code == 1, result.output
    assert_one_line_error(result, out, message)
    assert not out.exists()


def test_a_model_record_that_is_not_what_it_claims_is_refused(tmp_path, model_record):
    """A trained model's saved layer: an edited parameter is found by recomputing the block on
    the saved parameters and input, a token that is not a piece of the sentence by its text."""
    model_record.save(tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    spoilt = {
        "parameter": (lambda d: d["tensors"]["ffn.W_out"][0].__setitem__(0, 9.0), "field 'ffn_out'"),
        "token": (lambda d: d["tokens"].__setitem__(2, "dog"), "token 2 'dog' is not the next piece of its sentence"),
        "input": (
            lambda d: d["tensors"]["resid_pre"][1].__setitem__(0, 1e6),
            "field 'prev_output'",
        ),  # layer 0's output is layer 1's input
    }
    for kind, (change, message) in spoilt.items():
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(spoil(document, change)))
        out = tmp_path / "out"
        result = run("figures", "--record", path, out=out)
        assert result.exit_code == 1, result.output
        assert_one_line_error(result, out, message)


@pytest.fixture(scope="module")
def model_record(tmp_path_factory):
    """Layer 1 of a tiny GPT-2 (pre-norm LayerNorm, learned positions) on its sentence."""
    pytest.importorskip("transformers")
    from models_support import SENTENCE, gpt2_folder

    from blockviz.models import record_layer

    folder = gpt2_folder(tmp_path_factory.mktemp("gpt2"))
    return record_layer(SENTENCE, model=str(folder), layer=1)
