"""The record a command works on: built from its options (:func:`~blockviz.cli.options.build_record`),
or, in the ``blockviz`` program, read back from :mod:`blockviz.record_cache` when the same
options made it before (a record is reused across runs only by the program: a command run
inside another one, e.g. by ``CliRunner``, always builds it)."""

from __future__ import annotations

from blockviz.cli.options import build_record


class _Reuse:
    records = False
    made_now: set = set()  # keys of records this process makes (or has made beside it): their maker warns
    warned: set = set()  # keys of kept records whose unknown words this process has told


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
    from blockviz.record_cache import cached_record, record_key

    built = []

    def build():
        built.append(True)
        return build_record(**record_inputs)

    rec = cached_record(record_inputs, build, arrays)
    if not built:
        _tell_unknown_words(record_key(record_inputs), rec.tokens, rec.source.vocabulary)
    return rec


def record_to_keep(record_inputs: dict) -> bool:
    """Whether :func:`command_record` would make the record ``record_inputs`` ask for now and
    keep it, so that it reads it back next time (records reused, this one keyable and not kept)."""
    if not _Reuse.records:
        return False
    from blockviz.record_cache import cached_header, record_key

    key = record_key(record_inputs)
    to_keep = key is not None and cached_header(record_inputs) is None
    if to_keep:
        _Reuse.made_now.add(key)
    return to_keep


def command_record_header(record_inputs: dict):
    """What the record ``record_inputs`` ask for says of itself (its tokens, config and source:
    :class:`~blockviz.record_format.RecordHeader`), read without torch from the record the
    program kept; ``None`` when it kept none (then :func:`command_record`)."""
    if not _Reuse.records:
        return None
    from blockviz.record_cache import cached_header, record_key

    header = cached_header(record_inputs)
    if header is not None:
        _tell_unknown_words(record_key(record_inputs), header.tokens, header.source.vocabulary)
    return header


def _tell_unknown_words(key: str | None, tokens, vocabulary) -> None:
    """The warning a toy model's record prints when it is made — the words it read as its unknown
    token — printed for a kept record too, once a process (not for one made now: its maker told)."""
    if key in _Reuse.made_now or key in _Reuse.warned:
        return
    _Reuse.warned.add(key)
    from blockviz.tokens import unknown_tokens

    unknown = list(
        dict.fromkeys(token for token, flag in zip(tokens, unknown_tokens(list(tokens), vocabulary)) if flag)
    )
    if unknown:
        import click

        from blockviz.toy.vocabulary import unknown_words_message

        click.echo(f"warning: {unknown_words_message(unknown, vocabulary[0])}", err=True)
