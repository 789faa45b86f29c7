"""The explorer page as text: what `blockviz explore` writes, its data block, its limits, its errors.

The page itself (its numbers, checks, keys and links) is tested in Chromium: test_explorer_browser.py.
"""

import base64
import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from support_fields import config_of, label, source_of

from blockviz.architecture import supported_architectures
from blockviz.block_record import record
from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.explorer import STEP_NAMES, Explorer, explore, steps_for
from blockviz.explorer.payload import payload, script_json
from blockviz.files import sentence_slug
from blockviz.ownership import MANIFEST
from blockviz.record_fields import OPTIONAL_FIELDS, fields_for

NASTY = ["</script><img src=x onerror=alert(1)>", "<!--", "a&amp;b\"'", "\u2028\u2029", "\udcff"]


def data_block(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="record-data">(.*?)</script>', page, re.DOTALL)
    return json.loads(match.group(1))


def test_the_data_block_holds_every_token_as_text_that_cannot_end_it(cat_record):
    rec = replace(cat_record, tokens=NASTY[:3])
    text = script_json(payload(rec, 0, 0, "input", "light"))
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert text.isascii()
    back = json.loads(text)
    assert back["tokens"] == NASTY[:3]


def test_undrawable_characters_become_code_points_as_in_the_other_outputs(cat_record):
    rec = replace(cat_record, tokens=["\udcff", "a\x01", "ok"])
    page = Explorer(rec).html()
    assert data_block(page)["tokens"] == ["U+DCFF", "aU+0001", "ok"]
    page.encode("utf-8")  # no lone surrogate reaches the file


def test_numbers_are_short_float32_text_that_reads_back_exactly(chicken_record):
    data = payload(chicken_record, 0, 0, "input", "light")
    for name in ("resid_pre", "weights", "masked_scores"):
        stored = data["tensors"][name]
        values = np.array([-np.inf if v is None else v for v in stored["data"]], dtype=np.float64).astype(np.float32)
        expected = chicken_record.tensors[name].numpy().reshape(-1)
        assert np.array_equal(values, expected)
        assert list(stored["shape"]) == list(chicken_record.tensors[name].shape)
    longest = max(len(repr(v)) for v in data["tensors"]["ffn_post"]["data"])
    assert longest <= 15  # "-1.2345678e-05": never the float64 expansion of a float32


def test_the_page_gets_the_records_one_scale_per_family_and_each_themes_role_colours(chicken_record):
    from blockviz.record_fields import FIELDS, NORM_PARAMETER_SCALE, PARAMETER_SCALE
    from blockviz.style import DARK, LIGHT

    data = payload(chicken_record, 0, 0, "input", "light")
    families = data["families"]
    assert set(families) == {spec.scale for spec in FIELDS} | {PARAMETER_SCALE, NORM_PARAMETER_SCALE}
    for spec in FIELDS:  # the limit the figures and scenes use, by the field's family
        assert data["fields"][spec.name]["scale"] == spec.scale
        assert families[spec.scale] == chicken_record.scale_limit(spec.name)
    assert families[PARAMETER_SCALE] == chicken_record.scale_limit("attn.W_O") == pytest.approx(1.5726481676)
    # the norms' γ and β on their own scale (the seeded γ = 1, β = 0), not the weight matrices' ±1.57
    assert families[NORM_PARAMETER_SCALE] == chicken_record.scale_limit("ln1.weight") == 1.0
    assert data["param_families"] == {
        name: NORM_PARAMETER_SCALE if name.startswith(("ln1.", "ln2.")) else PARAMETER_SCALE
        for name in chicken_record.params
    }
    themes = data["style"]["themes"]
    assert themes["light"]["roles"] == LIGHT.roles and themes["dark"]["roles"] == DARK.roles
    assert themes["light"]["roles"]["query"] == "#0874b5" != themes["dark"]["roles"]["query"]


def test_every_field_of_every_architecture_has_a_place_in_one_of_its_steps():
    """Each field's declaration names the explorer's step that shows it (``explorer_step``): that
    step must be one of the steps the explorer has for the architecture. A step that does not draw
    the field itself shows it as recorded (explorer.js, ``recordedTable``: test_explorer_browser.py)."""
    for arch in supported_architectures():
        steps = [step.name for step in steps_for(config_of(arch), source_of(arch))]
        for spec in fields_for(arch, optional=OPTIONAL_FIELDS):
            assert spec.explorer_step in steps, (
                f"{spec.name} of {label(arch)}: its explorer_step {spec.explorer_step!r} is not one of this "
                f"architecture's steps {steps}: name one of them in its Declaration (blockviz/record_fields.py)"
            )


def test_the_page_gets_each_fields_step(cat_record):
    fields = payload(cat_record, 0, 0, "input", "light")["fields"]
    assert list(fields) == [spec.name for spec in cat_record.fields]
    assert {name: entry["step"] for name, entry in fields.items()} == {
        spec.name: spec.explorer_step for spec in cat_record.fields
    }
    assert (fields["row_max"]["step"], fields["ffn_post"]["step"], fields["mask"]["shape"]) == (
        "softmax",
        "activation",
        ["n", "n"],
    )


def test_sizes_stay_small():
    assert (
        len(Explorer(record("The chicken didn't cross the road because it was too tired.")).html().encode()) <= 200_000
    )  # 158 kB with the overview: its script, the scroll cues and the plain tables of fields a step does not draw;
    # 194 kB with forward.js (the arithmetic the steps share with the toy model's forward pass, 13 kB) and the workbench's code
    long_sentence = " ".join(f"w{k}" for k in range(64))
    assert len(Explorer(record(long_sentence)).html().encode()) <= 1_000_000


def test_the_policy_forbids_the_network_and_allows_only_the_pages_own_script_and_style(cat_record):
    page = Explorer(cat_record).html()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page).group(1)
    assert "default-src 'none'" in policy and "connect-src" not in policy  # default-src covers it
    script = re.search(r"<script>(.*?)</script>\s*</body>", page, re.DOTALL).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    for forbidden in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert forbidden not in script


def test_a_sentence_with_template_markers_is_not_expanded():
    rec = record("{{script}} {{data}}")
    page = Explorer(rec).html()
    assert page.count("<script>") == 1
    assert data_block(page)["sentence"] == "{{script}} {{data}}"


def test_explore_selects_like_the_other_commands(chicken_record):
    assert (
        explore(chicken_record, token="the").token == 0
        and explore(chicken_record, token="the#2").token == 5
        and explore(chicken_record, token="tired#1").token == 11
    )
    assert explore(chicken_record, token=3).token == 3
    with pytest.raises(BlockvizError, match="choose one of overview, input, ln1"):
        explore(chicken_record, step="softmaxx")
    with pytest.raises(BlockvizError, match="heads 0 to 1"):
        explore(chicken_record, head=2)
    with pytest.raises(BlockvizError, match="theme"):
        explore(chicken_record, theme="blue")


def test_the_record_gets_explore_and_a_notebook_summary(cat_record, tmp_path):
    page = cat_record.explore(token="cat", step="mask")
    assert (page.token, page.step) == (1, "mask")
    saved = page.save(tmp_path / "cat.html")
    assert saved.read_text(encoding="utf-8") == page.html()
    shown = page._repr_html_()
    assert shown.startswith('<p class="blockviz-summary">blockviz explorer — “the cat sat”: 3 tokens')
    assert '<iframe srcdoc="&lt;!DOCTYPE html&gt;' in shown and 'sandbox="allow-scripts"' in shown
    table = cat_record._repr_html_()
    assert "<table>" in table and "<code>weights</code>" in table and "(2, 3, 3)" in table


def test_step_names():
    assert STEP_NAMES[0] == "input" and STEP_NAMES[-1] == "output" and len(set(STEP_NAMES)) == len(STEP_NAMES) == 17


# ---------- the command ----------


def test_explore_writes_the_page_under_the_sentence_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["explore", "The cat sat.", "--token", "cat", "--head", "1", "--step", "softmax", "--theme", "dark"]
    )
    assert result.exit_code == 0, result.output
    path = tmp_path / "renders" / sentence_slug("The cat sat.") / "explorer.html"
    assert result.output.strip() == str(path.relative_to(tmp_path))
    assert data_block(path.read_text(encoding="utf-8"))["initial"] == {
        "token": 1,
        "head": 1,
        "step": "softmax",
        "theme": "dark",
    }
    assert [p.name for p in path.parent.iterdir() if p.name != MANIFEST] == ["explorer.html"]  # no temporary file left


def test_explore_reads_a_saved_record(tmp_path, cat_record):
    cat_record.save(tmp_path / "cat.safetensors")
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["explore", "--record", str(tmp_path / "cat.safetensors"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert data_block(out.read_text(encoding="utf-8"))["tokens"] == ["the", "cat", "sat"]


@pytest.mark.parametrize("given", ["pages", "pages/", "new/", "new/deeper/"])
def test_o_a_folder_writes_explorer_html_in_it(tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pages").mkdir()
    result = CliRunner().invoke(main, ["explore", "the cat sat", "-o", given])
    assert result.exit_code == 0, result.output
    path = tmp_path / given / "explorer.html"
    assert result.output.strip() == str(Path(given) / "explorer.html")
    assert data_block(path.read_text(encoding="utf-8"))["tokens"] == ["the", "cat", "sat"]
    assert [p.name for p in path.parent.iterdir() if p.name != MANIFEST] == ["explorer.html"]


@pytest.mark.parametrize("name", ["y" * 300 + ".html", "y" * 300 + "/"])
def test_o_a_name_too_long_is_one_line(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["explore", "the cat sat", "-o", name])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (result.output, result.exception)
    assert "too long" in result.output and len(result.output.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["newdir", "page.txt"])
def test_o_neither_a_page_nor_a_folder_is_one_line_and_writes_nothing(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["explore", "the cat sat", "-o", name])
    assert result.exit_code == 2
    assert f"write {name}.html for the page, or {name}/ for a folder" in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    assert list(tmp_path.iterdir()) == []


def test_help_says_what_o_takes():
    text = " ".join(CliRunner().invoke(main, ["explore", "--help"]).output.split())
    assert "-o, --output PAGE|DIR" in text and "DIR/explorer.html" in text and "ending in /" in text


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (
            ["--step", "soft"],
            2,
            "step 'soft' does not exist: choose one of overview, input, ln1, qkv, rotary, scores, scale, mask, softmax, mix, concat, project, add1, ln2, gate, up, gate_up, widen, activation, narrow, add2, output, ln_f, logits, prediction",
        ),
        (
            ["--step", "prediction", "--model", "seeded"],
            2,
            "step 'prediction' does not exist: choose one of overview, input, ln1, qkv, scores, scale, mask, softmax, mix, concat, project, add1, ln2, widen, activation, narrow, add2, output",
        ),  # the trained toy model's last step: the seeded block has no unembedding
        (
            ["--step", "gate", "--model", "seeded"],
            2,
            "step 'gate' does not exist: choose one of overview, input, ln1, qkv, scores, scale, mask, softmax, mix, concat, project, add1, ln2, widen, activation, narrow, add2, output",
        ),  # a gated FFN's step, not this block's
        (
            ["--token", "dog"],
            2,
            "token 'dog' is not in the sentence: choose a word, word#k or a position: 0 'the', 1 'cat', 2 'sat'",
        ),
        (["--token", "the#2"], 2, "'the' occurs once, so the#2 does not exist"),
        (["--head", "2"], 2, "head 2 does not exist: the block has 2 heads, choose heads 0 to 1"),
        (["--theme", "blue"], 2, "Invalid value for '--theme'"),
        (["--d-model", "5"], 2, "d_model 5 is not divisible by n_heads 2"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, arguments, code, message):
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["explore", "the cat sat", "-o", str(out), *arguments])
    assert result.exit_code == code
    assert message in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("Error")]) == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []
