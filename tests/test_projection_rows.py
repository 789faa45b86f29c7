"""W_O shows the rows that matter (issue 36): the multi-head scene's projection draws the rows of
W_O whose terms concat_i · W_O[i, :] add most to the focus row's output, never a row of zeros in
index order, and they carry at least 90 % of what the best five rows carry."""

from __future__ import annotations

import torch
from support import named_record

from blockviz.scenes.grids import MAX_SLOTS
from blockviz.scenes.multi_head import contributing_rows


def test_the_drawn_rows_carry_what_the_best_five_carry():
    rec = named_record("64 tokens, d_model 16, d_ff 64, relu")  # 16 rows of W_O, 8 slots
    for query in (0, 17, 63):
        products = rec.tensors["concat"][query][:, None] * rec.params["attn.W_O"]  # by hand, not the record's method
        weight = products.abs().sum(dim=1)
        rows = contributing_rows(rec.projection_products(query), MAX_SLOTS)
        shown = [i for i in rows if i is not None]
        assert len(rows) == MAX_SLOTS and rows[-1] is None and len(shown) == MAX_SLOTS - 1
        assert all(weight[i] > 0 for i in shown)
        best_five = weight.sort(descending=True).values[:5].sum()
        assert weight[shown].sum() >= 0.9 * best_five
        assert sorted(shown, key=lambda i: -weight[i]) == shown  # the largest first


def test_a_row_of_zeros_is_never_drawn_when_rows_are_left_out():
    products = torch.zeros(10, 3)
    products[7, 0], products[2, 1] = -2.0, 0.5
    assert contributing_rows(products, 4) == [7, 2, None]
