"""The figure registry: one entry per figure says its title, its drawing function and what it
reads of the record; the entries are true (each figure reads exactly what its entry says, on
every architecture), and listing them imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

import pytest

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.figures import FIGURE_NAMES, FIGURES, FigureRequest, architecture, draw_figure, figure_spec
from blockviz.figures.registry import skip_reason
from blockviz.record_fields import BY_NAME
from blockviz.record_needs import missing
from blockviz.toy.recording import record_toy

ARCHITECTURES = {
    "seeded": lambda: record("the cat sat on the mat"),
    "post-norm": lambda: record(
        "the cat sat on the mat", BlockConfig(d_model=8, n_heads=2, d_ff=16, norm_placement="post", causal=False)
    ),
    "llama-like": lambda: record(
        "the cat sat on the mat",
        BlockConfig(
            d_model=16,
            n_heads=4,
            d_ff=32,
            norm="rmsnorm",
            ffn="gated",
            positional="rotary",
            n_kv_heads=2,
            bias=False,
            activation="silu",
        ),
    ),
    "toy": lambda: record_toy("the cat sat on the mat"),
    "copy": lambda: record_toy("lamp cake river tall lamp cake river", "copy"),
}
TRAINED_ONLY = ("prediction", "training")
"""Figures of a trained toy model's record only (its unembedding, its model folder's checkpoints)."""


@pytest.fixture(scope="module", params=list(ARCHITECTURES))
def any_record(request):
    return ARCHITECTURES[request.param]()


class Reads(Mapping):
    """``tensors`` or ``params`` of a record, noting every name read by value (``name in`` is not a read)."""

    def __init__(self, inner: Mapping):
        self.inner, self.read = inner, set()

    def __getitem__(self, name):
        self.read.add(name)
        return self.inner[name]

    def __iter__(self):
        return iter(self.inner)

    def __len__(self):
        return len(self.inner)

    def __contains__(self, name):
        return name in self.inner


def reads_while_drawing(rec, name: str) -> set[str]:
    """The fields and parameters figure ``name`` reads of ``rec`` while drawing (not for its colour
    scales, which are the record's, nor for the other mask's record of causal-vs-bidirectional)."""
    request = FigureRequest(rec)
    for field in rec.tensors:
        rec.scale_of(field)
    rec.scale_of("parameters")
    rec.scale_of("norm_parameters")
    if name == "causal-vs-bidirectional":
        request.other_mask_record
    watched = {id(view): view for view in (rec, *rec.blocks)}.values()  # a stack's figures read its blocks too
    reads = [(view, Reads(view.tensors), Reads(view.params)) for view in watched]
    for view, tensors, params in reads:
        object.__setattr__(view, "tensors", tensors)
        object.__setattr__(view, "params", params)
    try:
        draw_figure(name, request)
    finally:
        for view, tensors, params in reads:
            object.__setattr__(view, "tensors", tensors.inner)
            object.__setattr__(view, "params", params.inner)
    return set().union(*(tensors.read | params.read for _, tensors, params in reads))


def test_every_entry_names_real_fields_and_a_drawing_function():
    for spec in FIGURES:
        assert callable(spec.draw), spec.name
        assert all(field in BY_NAME for field in spec.fields), spec.name
        assert all("." in parameter for parameter in spec.parameters), spec.name
        assert spec.architecture_fields is None or callable(getattr(architecture, spec.architecture_fields)), spec.name
        assert spec.title and spec.description and not spec.title.endswith(":"), spec.name
    assert [spec.name for spec in FIGURES] == list(FIGURE_NAMES) and len(set(FIGURE_NAMES)) == len(FIGURE_NAMES)


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_a_figure_reads_what_its_entry_says(any_record, name):
    """What the registry says a figure reads is read, and nothing else but its optional fields:
    a record lacking a field the figure needs is skipped (:func:`skip_reason`), never drawn half."""
    spec = figure_spec(name)
    fields, parameters = spec.reads(any_record)
    if (name in TRAINED_ONLY and any_record.source.kind != "trained") or missing(spec.applies, any_record):
        assert skip_reason(name, any_record)
        return
    assert skip_reason(name, any_record) is None
    read = reads_while_drawing(any_record, name)
    assert set(fields) | set(parameters) <= read
    assert read <= set(fields) | set(parameters) | set(spec.optional)


def test_a_heading_starts_with_the_figures_title():
    rec = ARCHITECTURES["seeded"]()
    request = FigureRequest(rec, width=None)
    for spec in FIGURES:
        if (
            spec.name in ("layer-norm",) + TRAINED_ONLY or missing(spec.applies, rec)
        ):  # "LayerNorm: token …": the norm's own name (RMSNorm); the toy model's are checked in test_figures_prediction
            continue
        (heading,) = [
            text.get_text() for text in draw_figure(spec.name, request).texts if text.get_label() == "heading"
        ]
        assert heading.startswith(spec.title + ": "), (spec.name, heading)


def test_architecture_fields_follow_the_block():
    post, llama = ARCHITECTURES["post-norm"](), ARCHITECTURES["llama-like"]()
    assert figure_spec("ffn").reads(post) == (("resid_mid_norm", "ffn_pre", "ffn_post", "ffn_out"), ())
    assert figure_spec("ffn").reads(llama)[0] == ("ln2", "ffn_gate", "ffn_gate_act", "ffn_up", "ffn_post", "ffn_out")
    assert figure_spec("layer-norm").reads(llama) == (
        ("resid_pre", "ln1_mean_sq", "ln1_norm", "ln1", "resid_mid", "ln2_mean_sq", "ln2_norm", "ln2"),
        ("ln1.weight", "ln2.weight"),
    )
    assert figure_spec("residual-stream").reads(post)[0][-2:] == ("resid_mid_norm", "resid_post_norm")


def test_a_missing_parameter_or_field_is_named():
    rec = ARCHITECTURES["seeded"]()
    without_gamma = {name: value for name, value in rec.params.items() if name != "ln2.weight"}
    lacking = type(
        "Lacking",
        (),
        {
            "config": rec.config,
            "architecture": rec.architecture,
            "source": rec.source,
            "params": without_gamma,
            "tensors": rec.tensors,
        },
    )()
    assert skip_reason("layer-norm", lacking) == "the record has no parameter ln2.weight"
    assert skip_reason("qkv", lacking) is None


def test_listing_the_figures_imports_nothing_heavy():
    code = (
        "import sys; from blockviz.figures import FIGURES, figure_spec; [spec.title for spec in FIGURES]; figure_spec('ffn'); "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('torch', 'numpy', 'matplotlib') or name.startswith('blockviz.figures.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["['blockviz.figures.registry']"]
