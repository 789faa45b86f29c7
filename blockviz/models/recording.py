"""Recording one layer of a trained model, or several in one pass, and every layer's attention weights.

The layer's real input (the model's hidden state before it, captured by a forward hook on the
layer, with Llama's rotary cos/sin) goes through :class:`blockviz.block.Block` holding the
layer's own weights, so every step is recorded under blockviz's names; the model's own outputs
— the layer's output and its attention weights, from hooks on the same forward pass — are then
compared with the record's, and a disagreement is an error, never a silently different record.
The forward pass stops after the recorded layer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from blockviz.block import Block
from blockviz.block_record import BlockRecord
from blockviz.errors import BlockvizError
from blockviz.models.families import copied
from blockviz.models.loading import LoadedModel, finite_weights, load_model
from blockviz.models.resolve import resolve_model
from blockviz.models.tokens import model_tokens
from blockviz.read_only import ReadOnlyTensors
from blockviz.record_fields import fields_for
from blockviz.source import Source

TOLERANCE = {"float32": 1e-4, "float64": 1e-6}
"""Largest difference, relative to the tensor's largest magnitude (at least 1), allowed between
the record and the model's own output before :func:`record_layer` refuses the record. It catches a variant blockviz
does not compute (differences of order 0.1), not rounding; float64 allows 1e-6 because Llama's RMSNorm in
``transformers`` normalises in float32 whatever the dtype."""


class NoAttentionWeights(BlockvizError):
    """A model that returns no attention weights (not loaded with eager attention): bad input
    to the commands that rank heads, exit 2."""


class UnknownLensRow(BlockvizError):
    """A logit-lens row (``lens_rows``, the CLI's ``--token``) that is no token of the sentence:
    bad input on that option, exit 2."""


class _Stop(Exception):
    """Raised by the hook after the recorded layer: the rest of the model is not run."""


@dataclass(frozen=True)
class LayerCapture:
    """What the model itself computed at one layer on one sentence (batch dimension removed):
    ``resid_pre`` ``(n, d_model)`` its input, ``output`` ``(n, d_model)`` its output,
    ``weights`` ``(n_heads, n, n)`` its attention weights, ``rotary`` (cos, sin) ``(n, d_head)``
    for Llama, else ``None``; ``previous`` ``(n, d_model)`` the output of layer − 1 (a forward
    hook on that layer), ``None`` at layer 0."""

    resid_pre: torch.Tensor
    output: torch.Tensor
    weights: torch.Tensor
    rotary: tuple[torch.Tensor, torch.Tensor] | None
    previous: torch.Tensor | None = None


def capture_layer(loaded: LoadedModel, ids: list[int], layer: int) -> LayerCapture:
    """Run the model on token ``ids`` up to and including ``layer`` and return what that layer
    received and produced (forward hooks on the layer and its self-attention): :func:`capture_layers`
    of that one layer.

    Raises :class:`BlockvizError` for a layer out of range, or a model that returns no attention weights.
    """
    return capture_layers(loaded, ids, range(layer, layer + 1))[0]


def record_layer(
    sentence: str, model: str | Path = "minilm", layer: int = 0, *, trust_pickle: bool = False, dtype: str = "float32"
) -> BlockRecord:
    """Record every intermediate tensor of layer ``layer`` (0-based) of a trained model on
    ``sentence``: a :class:`~blockviz.block_record.BlockRecord` of the model's architecture
    (``rec.architecture``, ``rec.fields``), its tokens the model's own, readable
    (:mod:`blockviz.models.tokens`), ``resid_pre`` the layer's real input (``hidden_states[layer]``),
    ``prev_output`` (layer > 0) layer − 1's own output, ``mask`` a real −∞ causal mask
    (decoders) or all 0 (encoders), ``params`` the layer's
    weights in blockviz's names, ``source`` the model, layer and dtype, ``special`` which tokens
    the tokenizer marks special (its ``special_tokens_mask``: ``[CLS]``, ``[SEP]`` …).

    Shapes as every record: ``(n, d_model)`` rows, ``(n_heads, n, n)`` attention, no batch.

    Raises
    ------
    BlockvizError
        As :func:`~blockviz.models.loading.load_model` (unknown model, unsupported family,
        pickles, a missing package), for a layer out of range, an empty sentence or one longer
        than the model's positions, and if the record disagrees with the model's own output
        (a variant of the family blockviz does not compute).

    ``model`` ``toy`` (or a folder ``blockviz train`` wrote) is blockviz's trained toy block,
    one layer (0), float32: :func:`blockviz.toy.recording.record_toy`.
    """
    if resolve_model(model).toy:
        return record_toy_layer(sentence, model, layer, dtype)
    loaded = load_model(model, trust_pickle=trust_pickle, dtype=dtype)
    loaded.check_layer(layer)
    config = loaded.family.config(loaded.model.config, loaded.dtype)
    tokens = model_tokens(loaded.tokenizer, sentence, config.max_tokens, repr(loaded.location.name))
    capture = capture_layer(loaded, tokens.ids, layer)
    params = copied(loaded.family.params(loaded.family.layers(loaded.model)[layer], config))
    ids = torch.tensor(tokens.ids)
    cache: dict[str, torch.Tensor] = {"embed": loaded.family.token_table(loaded.model)[ids].detach().clone()}
    if loaded.family.position_table is not None:
        table = loaded.family.position_table(loaded.model).detach()
        cache["pos_embed"] = table[: len(ids)].clone()
        params["W_pos"] = table[: config.max_tokens].clone()
    block = Block(config, seeded=False)
    block.load_state_dict(
        {name: params[name] for name in block.state_dict()}, assign=True
    )  # the record's own tensors, not copies
    with torch.no_grad():
        output = block(capture.resid_pre.detach().clone(), cache, capture.rotary)
    _agree(output, capture.output, "the layer's output", loaded, layer)
    _agree(cache["weights"], capture.weights, "the attention weights", loaded, layer)
    source = Source(
        "model",
        model=str(model),
        family=loaded.family.name,
        layer=layer,
        n_layers=loaded.n_layers,
        dtype=loaded.dtype,
        note=loaded.note,
    )
    if capture.previous is not None:
        cache["prev_output"] = capture.previous.to(capture.resid_pre.dtype)
    names = [
        spec.name
        for spec in fields_for(config, model=True, optional=("prev_output",) if capture.previous is not None else ())
    ]
    return BlockRecord(
        sentence=sentence,
        tokens=tokens.tokens,
        config=config,
        tensors={name: cache[name] for name in names},
        params=params,
        source=source,
        special=tuple(tokens.special),
    )


def capture_layers(
    loaded: LoadedModel, ids: list[int], layers: range, on_layer: Callable[[int, LayerCapture], None] | None = None
) -> list[LayerCapture]:
    """Run the model on token ``ids`` once, up to and including the last of ``layers``, and
    return what each of ``layers`` received and produced (forward hooks on each layer and its
    self-attention; the first's
    ``previous`` is layer − 1's output when it has one, the others' the layer before's output).
    ``on_layer(layer, capture)``, if given, is called as soon as each layer has run, inside the
    model's forward pass (its weights still in the processor's cache); what it raises stops the pass.

    Raises :class:`BlockvizError` for a layer out of range, or a model that returns no attention weights.
    """
    for layer in (layers[0], layers[-1]):
        loaded.check_layer(layer)
    modules = loaded.family.layers(loaded.model)
    seen: dict[int, dict[str, object]] = {layer: {} for layer in layers}
    captures: list[LayerCapture] = []
    handles = []

    def watch(layer: int) -> None:
        def before(_module, args, kwargs):
            seen[layer]["input"] = args[0] if args else kwargs["hidden_states"]
            seen[layer]["rotary"] = kwargs.get("position_embeddings")

        def after_attention(_module, _args, output):
            seen[layer]["weights"] = output[1]

        def after(_module, _args, output):
            seen[layer]["output"] = (output[0] if isinstance(output, tuple) else output).detach().clone()
            captures.append(_captured(loaded, layer, seen[layer], captures[-1].output if captures else None))
            if on_layer is not None:
                on_layer(layer, captures[-1])
            if layer == layers[-1]:
                raise _Stop

        handles.append(modules[layer].register_forward_pre_hook(before, with_kwargs=True))
        handles.append(loaded.family.attention(modules[layer]).register_forward_hook(after_attention))
        handles.append(modules[layer].register_forward_hook(after))

    def after_previous(_module, _args, output):
        seen[layers[0]]["previous"] = (output[0] if isinstance(output, tuple) else output).detach().clone()

    for layer in layers:
        watch(layer)
    if layers[0] > 0:
        handles.append(modules[layers[0] - 1].register_forward_hook(after_previous))
    try:
        with torch.no_grad():
            loaded.model(input_ids=torch.tensor([ids]), use_cache=False, output_attentions=True)
    except _Stop:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return captures


def _captured(loaded: LoadedModel, layer: int, found: dict, previous: torch.Tensor | None) -> LayerCapture:
    """The :class:`LayerCapture` of what the hooks saw at ``layer``; ``previous`` the output of
    the layer before when it was captured too (else layer − 1's, if a hook saw it)."""
    if found.get("weights") is None:
        raise BlockvizError(
            f"{loaded.location.name!r} returned no attention weights at layer {layer}: load it with attn_implementation='eager'"
        )
    rotary = found.get("rotary")
    if previous is None and "previous" in found:
        previous = found["previous"][0]
    return LayerCapture(
        found["input"][0],
        found["output"][0],
        found["weights"][0],
        (rotary[0][0], rotary[1][0]) if rotary is not None else None,
        previous,
    )


def record_layers(
    sentence: str,
    model: str | Path = "minilm",
    layers="all",
    *,
    trust_pickle: bool = False,
    dtype: str = "float32",
    lens_rows: Sequence[int | str] | None = None,
    check_every_layer: bool = False,
) -> BlockRecord:
    """Record every layer of ``layers`` (``"all"``, a range ``"A-B"`` or a ``range``:
    :mod:`blockviz.layer_choice`) of a trained model on ``sentence``: a record of several blocks
    (:mod:`blockviz.block_record`), one view per layer, as :func:`record_layer` records each —
    but for the residual stream, which is one sequence: the first layer reads the model's own
    hidden state, each next one blockviz's output of the one before (so block k + 1's
    ``resid_pre`` is block k's ``resid_post`` exactly). Only the first view has ``prev_output``
    (layer − 1's output, when it has one): the others' is the previous view's ``resid_post``.
    The views' parameters are the loaded model's own tensors (views, not copies:
    :meth:`~blockviz.read_only.ReadOnlyTensors.sharing`).

    The model itself runs only up to the first chosen layer, whose output and attention weights
    are checked against blockviz's (:data:`TOLERANCE`): that check shows blockviz computes this
    family and variant; the other layers are blockviz's :class:`~blockviz.block.Block` with each
    layer's own weights, chained (Llama's rotary cos/sin are the first layer's: the model passes
    every layer the same). ``check_every_layer``: the model runs up to the last chosen layer and
    every layer is checked as the first is (the time of one more forward pass: for a model whose
    layers might not all be one variant).

    A decoder's record holds its logit lens (:class:`~blockviz.logit_lens.LogitLens`) for the
    tokens ``lens_rows`` (0-based positions, or words as ``--token`` names them:
    :func:`blockviz.selection.select_token`; default: the focus token a command chooses when
    none is named, :func:`blockviz.selection.default_token`): each row costs a product with the
    whole unembedding per block, the largest part of the record's time when every row is asked for.

    Raises
    ------
    BlockvizError
        As :func:`record_layer` (the first layer, or with ``check_every_layer`` any layer,
        differing from the model's own output); for a layer choice the model lacks; for
        blockviz's toy model (``toy`` or a folder ``blockviz train`` wrote), whose record holds
        every block already; :class:`UnknownLensRow` for a lens row that is not a token position.
    """
    from blockviz.layer_choice import chosen_layers

    if resolve_model(model).toy:
        raise BlockvizError(
            f"--layer {layers} goes with a trained model's layers: the toy model's record holds every block already (--block K shows one)"
        )
    loaded = load_model(model, trust_pickle=trust_pickle, dtype=dtype)
    chosen = layers if isinstance(layers, range) else chosen_layers(layers, loaded.n_layers, loaded.location.name)
    config = loaded.family.config(loaded.model.config, loaded.dtype)
    tokens = model_tokens(loaded.tokenizer, sentence, config.max_tokens, repr(loaded.location.name))
    rows = _lens_rows(lens_rows, tokens)  # before the forward pass: a row that is no token costs no layer
    recorder = _LayerRecorder(loaded, config, str(model), sentence, tokens)
    checked = chosen if check_every_layer else chosen[:1]
    captures = capture_layers(loaded, tokens.ids, checked, recorder.checked)
    for layer in chosen[len(checked) :]:
        recorder.chained(layer, captures[0].rotary)
    return BlockRecord.stacked(recorder.views, _lens(loaded, recorder.views, rows))


class _LayerRecorder:
    """The views of :func:`record_layers`, one layer at a time, each reading the one before's output."""

    def __init__(self, loaded: LoadedModel, config, model: str, sentence: str, tokens) -> None:
        self.loaded, self.config, self.model, self.sentence, self.tokens = loaded, config, model, sentence, tokens
        ids = torch.tensor(tokens.ids)
        self.shared: dict[str, torch.Tensor] = {"embed": loaded.family.token_table(loaded.model)[ids].detach().clone()}
        self.shared_params: dict[str, torch.Tensor] = {}
        if loaded.family.position_table is not None:
            table = loaded.family.position_table(loaded.model).detach()
            self.shared["pos_embed"] = table[: len(ids)].clone()
            self.shared_params["W_pos"] = table[: config.max_tokens]
        self.modules = loaded.family.layers(loaded.model)
        self.finite = finite_weights(loaded)
        self.block = Block(config, seeded=False)  # each layer's parameters assigned in turn
        self.views: list[BlockRecord] = []

    def checked(self, layer: int, capture: LayerCapture) -> None:
        """Record ``layer`` right after the model ran it (its weights still in the processor's
        cache) and check its output and attention weights against the model's own ``capture``."""
        stream = self._stream() if self.views else capture.resid_pre.detach().clone()
        previous = capture.previous if not self.views else None
        cache = self._record(layer, stream, capture.rotary, previous)
        _agree(cache[self.config.architecture.block_output], capture.output, "the layer's output", self.loaded, layer)
        _agree(cache["weights"], capture.weights, "the attention weights", self.loaded, layer)

    def chained(self, layer: int, rotary: tuple[torch.Tensor, torch.Tensor] | None) -> None:
        """Record ``layer`` on the previous view's output, without the model."""
        self._record(layer, self._stream(), rotary, None)

    def _stream(self) -> torch.Tensor:
        """The last view's output tensor itself: the next block's ``resid_pre``."""
        return self.views[-1].tensors.stored()[self.config.architecture.block_output]

    def _record(self, layer: int, stream: torch.Tensor, rotary, previous: torch.Tensor | None) -> dict:
        """Append ``layer``'s view, blockviz's Block with the layer's weights on ``stream``
        ``(n, d_model)``, ``previous`` its ``prev_output`` when given; return the Block's cache."""
        config = self.config
        params = {**self.loaded.family.params(self.modules[layer], config), **self.shared_params}
        cache = dict(self.shared)
        self.block.load_state_dict({name: params[name] for name in self.block.state_dict()}, assign=True)
        with torch.no_grad():
            self.block(stream, cache, rotary)
        optional = ()
        if previous is not None:
            cache["prev_output"] = previous.to(stream.dtype)
            optional = ("prev_output",)
        names = [spec.name for spec in fields_for(config, model=True, optional=optional)]
        source = Source(
            "model",
            model=self.model,
            family=self.loaded.family.name,
            layer=layer,
            n_layers=self.loaded.n_layers,
            dtype=self.loaded.dtype,
            note=self.loaded.note,
        )
        self.views.append(
            BlockRecord(
                sentence=self.sentence,
                tokens=self.tokens.tokens,
                config=config,
                tensors=ReadOnlyTensors.adopting({name: cache[name] for name in names}),
                params=ReadOnlyTensors.sharing(params, finite=self.finite),  # the model's own tensors: never copied
                source=source,
                special=tuple(self.tokens.special),
            )
        )
        return cache


def _lens_rows(rows: Sequence[int | str] | None, tokens) -> tuple[int, ...]:
    """The token positions the logit lens is computed for: those ``rows`` name, or the default focus token's.

    Raises :class:`UnknownLensRow` for a row that is no token (as ``--token`` says it).
    """
    from blockviz.selection import default_token, select_token

    words = list(tokens.tokens)
    if rows is None:
        return (default_token(words, tokens.special),)
    try:
        chosen = tuple(sorted({select_token(words, row, tokens.special) for row in rows}))
    except BlockvizError as error:
        raise UnknownLensRow(str(error)) from None
    if not chosen:
        raise BlockvizError("lens_rows names no token: give at least one (a position from 0, or a word)")
    return chosen


def _lens(loaded: LoadedModel, views: list[BlockRecord], rows: tuple[int, ...]):
    """The logit lens of a decoder's recorded layers at token positions ``rows``
    (:func:`blockviz.logit_lens.of_model`): each block's output rows through the model's own
    final norm and unembedding; ``None`` for an encoder, or a model whose unembedding blockviz
    does not find."""
    from blockviz.logit_lens import of_model

    unembedding = _unembedding(loaded)
    if unembedding is None:
        return None
    final_norm = loaded.family.final_norm(loaded.model)
    outputs = [view.tensors.stored()[view.architecture.block_output][list(rows)] for view in views]
    return of_model(
        outputs, final_norm, unembedding, lambda index: _readable(loaded.tokenizer.decode([index])), rows=rows
    )


def _unembedding(loaded: LoadedModel) -> torch.Tensor | None:
    """The model's unembedding W_U ``(d_model, n_vocab)``: the token embedding table's transpose
    when the config ties them (GPT-2, SmolLM2), else ``lm_head.weight`` from the folder's
    safetensors files (the base model ``transformers`` loads has no lm_head); ``None`` for an
    encoder or when there is none."""
    if loaded.family.final_norm is None:
        return None
    if getattr(loaded.model.config, "tie_word_embeddings", False):
        return loaded.family.token_table(loaded.model).detach().T
    folder = loaded.location.folder
    if folder is None:
        return None
    from safetensors import safe_open

    for path in sorted(Path(folder).glob("*.safetensors")):
        with safe_open(str(path), framework="pt") as handle:
            if "lm_head.weight" in handle.keys():
                return handle.get_tensor("lm_head.weight").to(loaded.model.dtype).T
    return None


_SHOWN_WHITESPACE = {" ": "␣", "\n": "⏎", "\r": "⏎", "\t": "⇥"}


def _readable(text: str) -> str:
    """A decoded token as the record's tokens show one: its text without the space before it,
    or, for white space only, ␣ ⏎ ⇥ (:mod:`blockviz.models.tokens`)."""
    return text.strip() or "".join(_SHOWN_WHITESPACE.get(char, char) for char in text) or "∅"


def _agree(ours: torch.Tensor, theirs: torch.Tensor, what: str, loaded: LoadedModel, layer: int) -> None:
    difference = float((ours - theirs.to(ours.dtype)).abs().max())
    scale = max(1.0, float(theirs.abs().max()))
    if not difference <= TOLERANCE[loaded.dtype] * scale:
        raise BlockvizError(
            f"blockviz's recomputation of layer {layer} of {loaded.location.name!r} differs from the model's own {what} by {difference:.3g}: "
            f"this {loaded.family.title} variant is not one blockviz computes"
        )


@dataclass(frozen=True)
class ModelAttentions:
    """Every layer's attention weights on one sentence: ``weights`` ``(n_layers, n_heads, n, n)``
    (rows = queries, columns = keys), ``tokens`` readable (length n), ``model`` as given,
    ``family``, ``special`` which tokens are the tokenizer's special ones (length n); ``words``
    the word of each token (:class:`~blockviz.models.tokens.ModelTokens`; ``None``: each token a
    word of its own, as blockviz's own tokens are); ``causal`` whether a causal mask hides later
    keys (a decoder), ``None`` when not known; ``kv_heads`` the number of key/value heads (fewer
    than the query heads under grouped-query attention; ``None`` when not known); ``inputs`` what
    the attention reads at each position — the tokenizer's ids, or a record's block input
    ``resid_pre`` ``(n, d_model)`` — so that two sentences whose tokens differ only where the
    model reads the same (the toy's vocabulary ignores case) are known to be the same input
    (``None``: not known, the tokens are compared)."""

    tokens: list[str]
    weights: torch.Tensor
    model: str
    family: str
    special: list[bool]
    words: list[int | None] | None = None
    causal: bool | None = None
    kv_heads: int | None = None
    inputs: torch.Tensor | list[int] | None = None


def block_attentions(rec, every_block: bool = True) -> ModelAttentions:
    """A record's blocks as attentions of one layer each: ``weights`` ``(blocks, n_heads, n, n)``
    (each block's ``weights`` ``(n_heads, n, n)``, block 0 first; one block, or ``every_block``
    false: ``(1, n_heads, n, n)``, the record's own ``weights``), its tokens, ``model`` what its
    source says (``"seeded random weights"``…), ``family`` ``"blockviz"``, its ``special``
    flags, ``inputs`` block 0's ``resid_pre``."""
    views = rec.blocks if every_block else (rec,)
    return ModelAttentions(
        list(rec.tokens),
        torch.stack([view.weights.detach().float() for view in views]),
        rec.source.describe(),
        "blockviz",
        list(rec.special),
        causal=rec.config.causal,
        kv_heads=rec.config.kv_heads,
        inputs=views[0].tensors.get("resid_pre"),
    )


def model_attentions(sentence: str, model: str | Path = "minilm", *, trust_pickle: bool = False) -> ModelAttentions:
    """The attention weights of every layer and head on ``sentence`` (the model's own
    ``output_attentions``), for ranking heads: ``weights[layer, head, i, j]`` is query i's weight on key j.

    Raises :class:`BlockvizError` as :func:`record_layer`.
    """
    if resolve_model(model).toy:
        return block_attentions(record_toy_layer(sentence, model, 0, "float32"))
    loaded = load_model(model, trust_pickle=trust_pickle)
    config = loaded.family.config(loaded.model.config, loaded.dtype)
    tokens = model_tokens(loaded.tokenizer, sentence, config.max_tokens, repr(loaded.location.name))
    with torch.no_grad():
        outputs = loaded.model(input_ids=torch.tensor([tokens.ids]), use_cache=False, output_attentions=True)
    if not outputs.attentions or outputs.attentions[0] is None:
        raise NoAttentionWeights(
            f"{loaded.location.name!r} returned no attention weights: load it with attn_implementation='eager'"
        )
    weights = torch.stack([attention[0] for attention in outputs.attentions]).float()
    return ModelAttentions(
        tokens.tokens,
        weights,
        str(model),
        loaded.family.name,
        tokens.special,
        tokens.words,
        config.causal,
        config.kv_heads,
        list(tokens.ids),
    )


def record_toy_layer(sentence: str, model: str | Path, layer: int | None, dtype: str, params=None) -> BlockRecord:
    """The toy model's record (:func:`blockviz.toy.recording.record_toy`, with ``params`` if
    given), asked for as a trained model's layer is: ``layer`` None or 0, ``dtype`` float32.

    Raises
    ------
    BlockvizError
        For another layer or dtype (one line naming what the toy model is), or as
        :func:`~blockviz.toy.recording.record_toy`.
    """
    from blockviz.toy.recording import record_toy

    if layer not in (None, 0):
        raise BlockvizError(f"layer {layer!r} is out of range: {model} is one block, layer 0")
    if dtype != "float32":
        raise BlockvizError(f"{model} is trained in float32: record it without --dtype {dtype}")
    return record_toy(sentence, model, params=params)
