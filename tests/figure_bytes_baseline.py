"""One-off check for issue 25 (one drawing path per figure): save every figure as SVG for
several records, so that the SVGs of two trees can be compared byte for byte.

    .venv/bin/python tests/figure_bytes_baseline.py OUTDIR [--model-record PATH.safetensors]
    .venv/bin/python tests/figure_bytes_baseline.py --compare BEFORE AFTER

Writes OUTDIR/<record>/<figure>.svg (at the default page width; the toy record also at
--width 3.3 and auto). A figure a record cannot draw (:func:`skip_reason`) is written as a
``.skipped`` text file with its reason. Not a test (pytest collects only ``test_*.py``) and
not part of the suite: run it before and after a change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def records(model_record: str | None) -> dict:
    from blockviz import BlockConfig
    from blockviz.block_record import BlockRecord, record

    longer = "The chicken didn't cross the road because it was too tired."
    chosen = {
        "toy": (record("the cat sat"), {}),
        "toy-narrow": (record("the cat sat"), {"width": 3.3}),
        "toy-natural": (record("the cat sat"), {"width": None}),
        "wide8": (record(longer, BlockConfig(d_model=8, n_heads=2, d_ff=16)), {}),
        "bidirectional": (record("the cat sat on the mat", BlockConfig(causal=False)), {}),
        "post-norm": (
            record("the cat sat on the mat", BlockConfig(d_model=8, n_heads=2, d_ff=16, norm_placement="post")),
            {},
        ),
        "rmsnorm": (record("the cat sat on the mat", BlockConfig(d_model=8, n_heads=2, d_ff=16, norm="rmsnorm")), {}),
        "gated": (record("the cat sat on the mat", BlockConfig(d_model=8, n_heads=2, d_ff=16, ffn="gated")), {}),
        "rotary": (
            record("the cat sat on the mat", BlockConfig(d_model=8, n_heads=2, d_ff=16, positional="rotary")),
            {},
        ),
        "gqa": (record("the cat sat on the mat", BlockConfig(d_model=8, n_heads=4, d_ff=16, n_kv_heads=2)), {}),
        "llama-like": (
            record(
                longer,
                BlockConfig(
                    d_model=16,
                    n_heads=4,
                    d_ff=32,
                    norm="rmsnorm",
                    ffn="gated",
                    positional="rotary",
                    n_kv_heads=2,
                    bias=False,
                    activation="silu" if _has_silu() else "gelu",
                ),
            ),
            {},
        ),
    }
    if model_record:
        chosen["minilm-layer3"] = (BlockRecord.load(model_record), {})
        chosen["minilm-layer3-all-heads"] = (BlockRecord.load(model_record), {"all_heads": True, "token": "it"})
    return chosen


def _has_silu() -> bool:
    from blockviz.block_config import ACTIVATIONS

    return "silu" in ACTIVATIONS


def _skip_reason(name: str, rec) -> str | None:
    try:
        from blockviz.figures.registry import skip_reason
    except ImportError:
        from blockviz.figures.architecture import skip_reason
    return skip_reason(name, rec)


FORMATS = [fmt for fmt in os.environ.get("FIGURE_FORMATS", "svg").split(",") if fmt]
"""Formats written (``FIGURE_FORMATS=svg,png`` to look at the figures too; PNG at 100 dpi)."""


def write(folder: Path, model_record: str | None) -> None:
    import warnings

    from blockviz.figures import FIGURE_NAMES, FigureRequest, draw_figure, save_figure

    warnings.simplefilter("ignore")
    for label, (rec, options) in records(model_record).items():
        out = folder / label
        out.mkdir(parents=True, exist_ok=True)
        request = FigureRequest(rec, **options)
        for name in FIGURE_NAMES:
            reason = _skip_reason(name, rec)
            if reason:
                (out / f"{name}.skipped").write_text(reason + "\n")
                continue
            figure = draw_figure(name, request)
            for fmt in FORMATS:
                save_figure(
                    figure,
                    out / f"{name}.{fmt}",
                    fmt,
                    **({"dpi": 100} if fmt == "png" else {}),
                    title=f"blockviz {name}",
                )
        print(label, flush=True)


def compare(before: Path, after: Path) -> int:
    """Print each file that differs or exists on one side only; the number of such files."""
    names = sorted(
        {path.relative_to(before) for path in before.rglob("*") if path.suffix in (".svg", ".skipped")}
        | {path.relative_to(after) for path in after.rglob("*") if path.suffix in (".svg", ".skipped")}
    )
    differing = 0
    for name in names:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            print(f"only in {'after' if b.exists() else 'before'}: {name}")
            differing += 1
        elif a.read_bytes() != b.read_bytes():
            print(f"differs: {name}")
            differing += 1
    print(f"{len(names)} files, {differing} differ")
    return differing


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--compare"]:
        sys.exit(1 if compare(Path(arguments[1]), Path(arguments[2])) else 0)
    model = arguments[arguments.index("--model-record") + 1] if "--model-record" in arguments else None
    write(Path(arguments[0]), model)
