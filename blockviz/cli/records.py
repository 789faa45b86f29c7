"""The record a command works on: built from its options (:func:`~blockviz.cli.options.build_record`),
or, in the ``blockviz`` program, read back from :mod:`blockviz.record_cache` when the same
options made it before (a record is reused across runs only by the program: a command run
inside another one, e.g. by ``CliRunner``, always builds it)."""

from __future__ import annotations

from blockviz.cli.options import build_record


class _Reuse:
    records = False


def reuse_records() -> None:
    """From now on, records are kept and reused across runs (the program calls this)."""
    _Reuse.records = True


def command_record(record_inputs: dict, arrays: bool = False):
    """The record ``record_inputs`` (the command's record options) ask for; errors as
    :func:`~blockviz.cli.options.build_record`. With ``arrays``, a kept record comes back as
    numpy arrays, without torch (:class:`~blockviz.record_arrays.ArrayRecord`; for a caller that
    only reads the record)."""
    if not _Reuse.records:
        return build_record(**record_inputs)
    from blockviz.record_cache import cached_record

    return cached_record(record_inputs, lambda: build_record(**record_inputs), arrays)


def record_to_keep(record_inputs: dict) -> bool:
    """Whether :func:`command_record` would make the record ``record_inputs`` ask for now and
    keep it, so that it reads it back next time (records reused, this one keyable and not kept)."""
    if not _Reuse.records:
        return False
    from blockviz.record_cache import cached_header, record_key

    return record_key(record_inputs) is not None and cached_header(record_inputs) is None


def command_record_header(record_inputs: dict):
    """What the record ``record_inputs`` ask for says of itself (its tokens, config and source:
    :class:`~blockviz.record_format.RecordHeader`), read without torch from the record the
    program kept; ``None`` when it kept none (then :func:`command_record`)."""
    if not _Reuse.records:
        return None
    from blockviz.record_cache import cached_header

    return cached_header(record_inputs)
