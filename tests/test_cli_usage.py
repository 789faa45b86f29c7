"""A usage mistake (a missing or unknown option, a bad choice, no sentence, a token or head that
is not there, sizes that do not fit) is one line, exit 2, nothing written."""

import pytest
from click.testing import CliRunner

from blockviz.cli import main

MISTAKES = {
    "missing option": (["heads", "the cat sat"], "Missing option '--from'", "blockviz heads --help"),
    "unknown figure": (
        ["figures", "the cat sat", "--figure", "nope"],
        "unknown figure 'nope'",
        "blockviz figures --help",
    ),
    "a figure's name mistyped": (
        ["figures", "the cat sat", "--figure", "logit-lenz"],
        "unknown figure 'logit-lenz': did you mean 'logit-lens'?",
        "blockviz figures --help",
    ),
    "unknown option": (["figures", "the cat sat", "--bogus"], "no such option '--bogus'", "blockviz figures --help"),
    "no sentence": (["render"], "give a sentence", "blockviz render --help"),
    "a model without its layer": (
        ["record", "the cat sat", "--model", "minilm"],
        "needs --layer",
        "blockviz record --help",
    ),
    "an unknown model, named before any --layer is asked for": (
        ["figures", "the cat sat", "--model", "minilmm"],
        "unknown model 'minilmm'",
        "blockviz figures --help",
    ),
    "unknown command": (["bogus"], "No such command 'bogus'", "blockviz --help"),
    "unknown scene": (["render", "the cat sat", "--scene", "nope"], "unknown scene 'nope'", "blockviz render --list"),
    "an empty sentence": (["render", "   "], "the sentence is empty", "blockviz render --help"),
    "a sentence of no word the toy model knows (record)": (
        ["record", "zzz qqq"],
        "Invalid value for SENTENCE: no word of the sentence is in the toy model's vocabulary ('zzz', 'qqq')",
        "blockviz record --help",
    ),
    "a sentence of no word the toy model knows (render)": (
        ["render", "zzz qqq"],
        "Invalid value for SENTENCE: no word of the sentence is in the toy model's vocabulary",
        "blockviz render --help",
    ),
    "sizes that do not fit": (
        ["record", "the cat sat", "--d-model", "5"],
        "not divisible by n_heads 2",
        "blockviz record --help",
    ),
    "a token not in the sentence (render)": (
        ["render", "the cat sat", "--token", "dog"],
        "--token: token 'dog' is not in the sentence",
        "blockviz render --help",
    ),
    "a token not in the sentence (figures)": (
        ["figures", "the cat sat", "--token", "dog"],
        "--token: token 'dog'",
        "blockviz figures --help",
    ),
    "a position outside the sentence (explore)": (
        ["explore", "the cat sat", "--token", "7"],
        "--token: token position 7 is outside",
        "blockviz explore --help",
    ),
    "a head out of range (render)": (
        ["render", "the cat sat", "--head", "2"],
        "--head: head 2 does not exist",
        "blockviz render --help",
    ),
    "a head out of range (figures)": (
        ["figures", "the cat sat", "--head", "2"],
        "--head: head 2 does not exist",
        "blockviz figures --help",
    ),
    "a head out of range (explore)": (
        ["explore", "the cat sat", "--head", "2"],
        "--head: head 2 does not exist",
        "blockviz explore --help",
    ),
    "a head out of range (record)": (
        ["record", "the cat sat", "--head", "2"],
        "--head: head 2 does not exist",
        "blockviz record --help",
    ),
    "a pace out of range": (["render", "the cat sat", "--pace", "10"], "--pace", "blockviz render --help"),
    "an empty contrast sentence (heads)": (
        ["heads", "the cat sat", "--from", "cat", "--to", "the", "--contrast", ""],
        "Invalid value for '--contrast': the sentence is empty",
        "blockviz heads --help",
    ),
    "an empty second sentence (compare)": (
        ["compare", "the cat sat", "", "--from", "cat"],
        "Invalid value for 'S2': the sentence is empty",
        "blockviz compare --help",
    ),
    "a contrast sentence too long (explore)": (
        ["explore", "the cat sat", "--contrast", "the " * 30],
        "Invalid value for --contrast: the sentence has 30 tokens",
        "blockviz explore --help",
    ),
    "a layer without a model, the default toy model's (heads)": (
        ["heads", "the cat sat", "--from", "cat", "--layer", "5"],
        "Error: --layer 5 goes with --model NAME|PATH, a trained model's layers (the default toy model is one block)",
        "blockviz heads --help",
    ),
    "a layer of the seeded block": (
        ["record", "the cat sat", "--model", "seeded", "--layer", "5"],
        "Error: --layer 5 goes with a trained model's layers, not --model seeded: drop it",
        "blockviz record --help",
    ),
    "a token not in the sentence, for a model's layers' logit lens (figures)": (
        ["figures", "the cat sat", "--model", "minilm", "--layer", "all", "--token", "dog"],
        "--token: token 'dog' is not in the sentence",
        "blockviz figures --help",
    ),
    "a token not in the sentence, for a model's layers' logit lens (record)": (
        ["record", "the cat sat", "--model", "minilm", "--layer", "all", "--token", "dog"],
        "--token: token 'dog' is not in the sentence",
        "blockviz record --help",
    ),
    "a 5,000-character token, quoted shortened": (
        ["render", "the cat sat", "--token", "z" * 5000],
        f"--token: token '{'z' * 59}\u2026' is not in the sentence",
        "blockviz render --help",
    ),
}


@pytest.mark.parametrize("args, says, points_to", MISTAKES.values(), ids=MISTAKES.keys())
def test_a_usage_mistake_is_one_line_naming_the_help(args, says, points_to, tmp_path):
    writes = args[0] in ("figures", "render", "explore")
    result = CliRunner().invoke(main, [*args, "-o", str(tmp_path)] if writes else args, prog_name="blockviz")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert says in lines[0] and lines[0].endswith(f"(see {points_to})")
    assert not list(tmp_path.iterdir())
