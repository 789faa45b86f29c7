"""Where a later block's keys come from (blockviz.key_sources): on the copy model's record, the
parts of block 1's scores from the embeddings and from each head of block 0, with the rest
recomputed independently from what else is in key j's row (block 0's b_O and FFN output,
LayerNorm's β, the key bias), add up to the recorded scores; the previous-token head's part is
what makes the induction key match; a saved record with an edited split fails to load."""

from __future__ import annotations

import functools
import json

import pytest
import torch

from blockviz.block_record import BlockRecord
from blockviz.errors import BlockvizError
from blockviz.toy.recording import record_toy

SENTENCE = "cat river lamp dog cat river"
CAT_2, RIVER_1 = 4, 1


@functools.cache
def copy_record():
    return record_toy(SENTENCE, "copy")


def independent_rest(rec) -> torch.Tensor:
    """``(n_heads, n, n)``: the scores' part from the rest of key j's row, computed without
    blockviz.key_sources: block 0's b_O and FFN output through ln1 (the record's variance), then
    β and the key bias, each key times each query."""
    before, view = rec.block(0), rec.block(1)
    rest = before.params["attn.b_O"] + before.ffn_out  # (n, d_model)
    normed = (
        view.params["ln1.weight"]
        * (rest - rest.mean(-1, keepdim=True))
        / torch.sqrt(view.ln1_var[:, None] + view.config.ln_eps)
    )
    shifted = normed + view.params["ln1.bias"]
    keys = torch.einsum("nd,hdc->hnc", shifted, view.params["attn.W_K"]) + view.params["attn.b_K"][:, None, :]
    return torch.einsum("hic,hjc->hij", view.query, keys)


def test_the_parts_and_an_independent_rest_add_up_to_the_scores():
    view = copy_record().block(1)
    total = view.scores_from_embed + view.scores_from_heads.sum(1) + independent_rest(copy_record())
    torch.testing.assert_close(total, view.scores, rtol=0, atol=1e-4)


def test_only_later_blocks_hold_the_split_and_its_shape_is_per_head_of_the_block_before():
    rec = copy_record()
    assert "scores_from_heads" not in rec.block(0).tensors
    n_heads, n = rec.config.n_heads, rec.n
    assert tuple(rec.block(1).scores_from_heads.shape) == (n_heads, n_heads, n, n)
    assert tuple(rec.block(1).scores_from_embed.shape) == (n_heads, n, n)


def test_the_induction_keys_match_through_block_0s_previous_token_head():
    """The second "cat" meets "river" (after the first "cat"): in the head that attends there,
    block 0's head 0 — the one that looks one word back — gives the largest part of the score."""
    view = copy_record().block(1)
    h = int(view.weights[:, CAT_2, RIVER_1].argmax())
    parts = view.scores_from_heads[h, :, CAT_2, RIVER_1]
    assert int(parts.argmax()) == 0
    assert parts[0] > view.scores_from_embed[h, CAT_2, RIVER_1]
    assert parts[0] > 0.5 * view.scores[h, CAT_2, RIVER_1]


def test_a_saved_record_with_an_edited_split_fails_to_load(tmp_path):
    path = tmp_path / "r.json"
    copy_record().save(path)
    assert torch.equal(BlockRecord.load(path).block(1).scores_from_heads, copy_record().block(1).scores_from_heads)
    data = json.loads(path.read_text())
    data["blocks"][1]["scores_from_heads"][0][0][CAT_2][RIVER_1] += 1.0
    path.write_text(json.dumps(data))
    with pytest.raises(BlockvizError, match="scores_from_heads"):
        BlockRecord.load(path)
