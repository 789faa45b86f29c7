"""The names and shapes of a block's parameters, without torch: what a record's ``params`` hold."""

from __future__ import annotations

from blockviz.block_config import BlockConfig


def parameter_shapes(config: BlockConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter name a record or parameters file holds, with its shape (the
    :class:`~blockviz.block.Block`'s ``state_dict``, plus ``W_pos`` for learned positions).

    The toy block's: ``ln1.weight``, ``ln1.bias`` ``(d_model,)``; ``attn.W_Q/W_K/W_V``
    ``(n_heads, d_model, d_head)``, ``attn.b_Q/b_K/b_V`` ``(n_heads, d_head)``, ``attn.W_O``
    ``(d_model, d_model)``, ``attn.b_O``; ``ln2.*``; ``ffn.W_in`` ``(d_model, d_ff)``, ``ffn.b_in``,
    ``ffn.W_out`` ``(d_ff, d_model)``, ``ffn.b_out``. Other architectures: W_K, W_V, b_K, b_V have
    ``n_kv_heads`` heads; RMSNorm has no ``.bias``; a gated FFN has ``ffn.W_gate``, ``ffn.W_up``
    (and ``b_gate``, ``b_up``) instead of ``W_in``/``b_in``; without biases no ``b_*`` at all.
    With ``vocab_size`` (a trained toy model): ``W_E`` ``(vocab_size, d_model)``, the token
    embeddings; ``ln_f.weight``, ``ln_f.bias`` ``(d_model,)``; ``W_U`` ``(d_model, vocab_size)``.
    """
    arch = config.architecture
    d, h, g, e, f = config.d_model, config.n_heads, config.kv_heads, config.d_head, config.d_ff
    heads = {"Q": h, "K": g, "V": g}
    norm = {"weight": (d,), "bias": (d,)} if arch.has_centring else {"weight": (d,)}
    shapes = {f"ln1.{name}": shape for name, shape in norm.items()}
    shapes.update({f"attn.W_{kind}": (heads[kind], d, e) for kind in "QKV"})
    if arch.bias:
        shapes.update({f"attn.b_{kind}": (heads[kind], e) for kind in "QKV"})
    shapes["attn.W_O"] = (d, d)
    if arch.bias:
        shapes["attn.b_O"] = (d,)
    shapes.update({f"ln2.{name}": shape for name, shape in norm.items()})
    for name in ("gate", "up") if arch.gated else ("in",):
        shapes[f"ffn.W_{name}"] = (d, f)
        if arch.bias:
            shapes[f"ffn.b_{name}"] = (f,)
    shapes["ffn.W_out"] = (f, d)
    if arch.bias:
        shapes["ffn.b_out"] = (d,)
    if arch.learned_positions:
        shapes["W_pos"] = (config.max_tokens, d)
    if config.architecture.unembedding:
        shapes.update(
            {"W_E": (config.vocab_size, d), "ln_f.weight": (d,), "ln_f.bias": (d,), "W_U": (d, config.vocab_size)}
        )
    return shapes
