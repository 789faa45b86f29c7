"""The qkv scene on blockviz's own rotary block at its default widths: d_head = 2, a head of a
single pair (feature 0 with feature 1), so once that pair is worked no other is left to fill."""

from __future__ import annotations

from support import build, record_value
from support_motion import build_in_motion

from blockviz import BlockConfig
from blockviz.block_record import record
from blockviz.scenes.query_key_value import QueryKeyValue
from blockviz.style import format_number


def test_a_head_of_one_pair_is_turned_and_keeps_its_bars_in_motion():
    rec = record("the cat sat on the mat", BlockConfig(positional="rotary"))
    assert rec.config.d_head == 2
    scene, inspector = build(QueryKeyValue, rec)
    assert inspector.problems == []
    rotated = sorted(
        (label.source[0], label.source[-1])
        for label in inspector.numbers.values()
        if label.source[0] in ("query_rot", "key_rot")
    )
    assert sorted(set(rotated)) == [("key_rot", 0), ("key_rot", 1), ("query_rot", 0), ("query_rot", 1)]
    for label in inspector.numbers.values():
        assert label.shown == format_number(record_value(rec, label.source), label.decimals), label.source
    _, in_motion = build_in_motion(QueryKeyValue, rec)
    assert in_motion.problems == []
