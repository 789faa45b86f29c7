"""A record of several blocks without a trained model of several blocks: the shipped toy model's
block run ``n`` times in a row (block k + 1 reads block k's output), each block's output through
the toy model's final LayerNorm and unembedding (the logit lens), as a record of N blocks holds it."""

from __future__ import annotations

import torch

from blockviz.block import Block, Prediction
from blockviz.block_record import BlockRecord
from blockviz.numerics import pinned
from blockviz.record_fields import fields_for
from blockviz.toy.recording import record_toy

SENTENCE = "the cat sat on the mat"


def toy_stack(sentence: str = SENTENCE, n_blocks: int = 2) -> BlockRecord:
    """The toy model's block ``n_blocks`` times on ``sentence``, recorded as a stack."""
    one = record_toy(sentence)
    config, params = one.config, one.params
    block = Block(config, seeded=False)
    block.load_state_dict({name: params[name] for name in block.state_dict()}, assign=True)
    prediction = Prediction(config)
    prediction.load_state_dict({name: params[name] for name in prediction.state_dict()}, assign=True)
    names = [spec.name for spec in fields_for(config)]
    stream = one.embed + one.pos_embed
    views = []
    with torch.no_grad(), pinned():  # as record_toy runs the model
        for _ in range(n_blocks):
            cache = {"embed": one.embed, "pos_embed": one.pos_embed}
            stream = block(stream, cache)
            prediction(stream, cache)
            views.append(
                BlockRecord(
                    sentence=sentence,
                    tokens=one.tokens,
                    config=config,
                    tensors={name: cache[name] for name in names},
                    params=params,
                    source=one.source,
                )
            )
    return BlockRecord.stacked(views)
