"""The block-flow scene's route through a post-norm block (BERT; Vaswani et al. 2017, §3.1):
``resid_mid = x + attention(x)``, ``resid_mid_norm = LayerNorm(resid_mid)``, then
``resid_post = resid_mid_norm + FFN(resid_mid_norm)`` and the layer's output
``resid_post_norm = LayerNorm(resid_post)``: attention → add → LayerNorm → FFN → add → LayerNorm.

:class:`~blockviz.scenes.block_flow.BlockFlow` draws this route for a post-norm record (its nodes,
arrows and residual paths are the pre-norm route's, in this order), with the record's numbers
for the focus token's two additions.
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Arrow, VGroup

from blockviz.scenes.block_helpers import ColumnSum, row_grid, shape_text
from blockviz.scenes.choreography import ghost_of
from blockviz.scenes.fades import FadeIn, FadeOut
from blockviz.scenes.grids import Highlight, cell_width_for
from blockviz.scenes.look import HEADER_SIZE, SUM_COLUMNS
from blockviz.scenes.symbols import symbol
from blockviz.scenes.text import text

DIM = 0.25
"""Opacity of the route before its steps are taken."""
ADDER = 2
"""The ⊕ is each half's third node: input, sub-layer, ⊕, norm."""


def norm_name(rec) -> str:
    """The block's norm as a node and a caption name it: ``LayerNorm`` or ``RMSNorm``."""
    return rec.architecture.norm_name


def construct_post_norm(scene) -> None:
    """Animate the post-norm route on ``scene`` (a :class:`~blockviz.scenes.block_flow.BlockFlow`)."""
    rec = scene.record
    n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
    norm = norm_name(rec)
    title = scene.show_title("The whole block (post-norm), with this sentence's shapes")
    (first, second), sums = build(scene, title)
    token = scene.token_name(scene.focus)
    scene.add(ghost_of(first, second, *(column_sum.frame for column_sum in sums), opacity=DIM))
    lights = {}

    def light(node):
        lights[id(node)] = Highlight(scene.look, node)
        return FadeIn(lights[id(node)])

    scene.step(
        FadeIn(first.nodes[0]),
        light(first.nodes[0]),
        caption=f"the whole route; first, the layer's input x: {shape_text(n, d)}, one row per token",
    )
    scene.step(
        FadeIn(VGroup(first.arrows[0], first.nodes[1])),
        light(first.nodes[1]),
        caption=f"post-norm: attention reads x itself, {shape_text(n, d)} → {shape_text(n, d)}",
    )
    scene.add_up(
        sums[0],
        f"add the input back (the residual stream): row “{token}”, x plus attention's output…",
        "…= x + attn(x), entry by entry",
        arriving=[FadeIn(VGroup(first.arrows[1], first.nodes[ADDER], first.bypass)), light(first.nodes[ADDER])],
    )
    scene.step(
        FadeIn(VGroup(first.arrows[2], first.nodes[3])),
        light(first.nodes[3]),
        caption=f"then the sum is normalized ({norm}): h, the FFN's input",
    )
    scene.step(
        FadeIn(VGroup(second.nodes[0], second.arrows[0], second.nodes[1])),
        light(second.nodes[1]),
        caption=f"the FFN changes each row on its own: {shape_text(n, d)} → {shape_text(n, d_ff)} → {shape_text(n, d)}",
    )
    scene.add_up(
        sums[1],
        "add again: h plus the FFN's output…",
        "…= h + FFN(h)",
        arriving=[FadeIn(VGroup(second.arrows[1], second.nodes[ADDER], second.bypass)), light(second.nodes[ADDER])],
    )
    scene.step(
        *(FadeOut(highlight) for highlight in lights.values()),
        FadeIn(VGroup(second.arrows[2], second.nodes[3])),
        light(second.nodes[3]),
        caption=f"normalized again ({norm}): the layer's output, {shape_text(n, d)} as it came in",
    )


def build(scene, title):
    rec, look = scene.record, scene.look
    n, d, d_ff = rec.n, rec.config.d_model, rec.config.d_ff
    norm = (norm_name(rec), "each row", look.muted)
    first = half(
        scene,
        [
            (symbol("resid_pre", rec), shape_text(n, d), look.residual),
            ("attention", "mixes rows", look.output),
            None,
            norm,
        ],
    )
    second = half(
        scene,
        [
            (symbol("resid_mid_norm", rec), shape_text(n, d), look.residual),
            ("FFN", f"via {shape_text(n, d_ff)}", look.ffn),
            None,
            norm,
        ],
    )
    sums = build_sums(scene)
    rows = VGroup(
        *(VGroup(part, column_sum).arrange(RIGHT, buff=0.9) for part, column_sum in zip((first, second), sums))
    )
    rows.arrange(DOWN, buff=0.5, aligned_edge=LEFT)
    first.shift(RIGHT * (second.nodes[ADDER].get_x() - first.nodes[ADDER].get_x()))  # the two ⊕ one above the other
    left = max(first.get_right()[0], second.get_right()[0]) + 0.6
    for column_sum in sums:  # the sums in one column, right of both routes
        column_sum.shift(RIGHT * (left - column_sum.get_left()[0]))
    scene.place(rows, title, grow=1.3)
    return (first, second), sums


def half(scene, parts) -> VGroup:
    """Input, sub-layer, ⊕, norm in a line, arrows between them, and the residual path from the
    arrow into the sub-layer over to the ⊕."""
    look = scene.look
    nodes = [scene.adder() if part is None else scene.node(*part) for part in parts]
    row = VGroup(*nodes).arrange(RIGHT, buff=0.42)  # one node more than a pre-norm half before its sum: shorter arrows
    arrows = VGroup(
        *(
            Arrow(
                left.get_right(),
                right.get_left(),
                buff=0.04,
                color=look.muted,
                stroke_width=3,
                max_tip_length_to_length_ratio=0.18,
            )
            for left, right in zip(nodes, nodes[1:])
        )
    )
    bypass = scene.bypass(arrows[0], nodes[ADDER])
    made = VGroup(row, arrows, bypass)
    made.nodes, made.arrows, made.bypass = nodes, arrows, bypass
    return made


def build_sums(scene) -> tuple[ColumnSum, ColumnSum]:
    """The focus row's two additions: x + attn_out = resid_mid, resid_mid_norm + ffn_out = resid_post."""
    rec, look, f = scene.record, scene.look, scene.focus

    names = ("resid_pre", "attn_out", "resid_mid", "resid_mid_norm", "ffn_out", "resid_post")
    width = max(
        cell_width_for(rec.tensors[name][f][None, :]) for name in names
    )  # one width: the columns stay aligned however large a hidden entry

    def row(name: str, color: str | None = None):
        return row_grid(
            rec, name, f, symbol(name, rec), look, header_color=color, max_columns=SUM_COLUMNS, cell_width=width
        )

    sums = []
    for (left, right), result, heading in (
        (("resid_pre", "attn_out"), "resid_mid", "after attention"),
        (("resid_mid_norm", "ffn_out"), "resid_post", "after the FFN"),
    ):
        column_sum = ColumnSum(
            [row(left), row(right, look.output if right == "attn_out" else look.ffn)], row(result), look
        )
        column_sum.heading = (
            text(f"{heading}, row “{scene.token_name(f)}”", HEADER_SIZE, look.text)
            .next_to(column_sum, UP, buff=0.15)
            .align_to(column_sum, LEFT)
        )
        column_sum.add(column_sum.heading)
        column_sum.frame = VGroup(
            *(VGroup(grid.cell_group, grid.header_group) for grid in (*column_sum.terms, column_sum.result))
        )
        column_sum.register(scene)
        sums.append(column_sum)
    return sums[0], sums[1]


__all__ = ["construct_post_norm", "norm_name"]
