"""Resume stamps: what each job's outputs were made from, so a rerun does only what changed.

A job's stamp is a small JSON file under ``<output>/.course/stamps/`` (:attr:`CourseJob.stamp`),
written atomically after its outputs, holding the job's ``key`` (:mod:`blockviz.course.jobs`),
its options, the record's inputs and ``record_hash`` (of its tensors and tokens), the blockviz
version and code hash, the outputs (relative to the output folder) and the seconds it took. A job
is up to date when its stamp holds its key and every output it lists exists. An interrupted or
failed job writes no stamp, so the next run does it again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from blockviz.course.jobs import CourseJob
from blockviz.files import atomic_path, writable_folder


def read_stamp(job: CourseJob) -> dict | None:
    """The stamp of ``job``'s last successful run, or ``None`` (none, unreadable, or not a stamp)."""
    try:
        stamp = json.loads(job.stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return stamp if isinstance(stamp, dict) else None


def is_fresh(job: CourseJob) -> bool:
    """True if ``job``'s outputs exist as blockviz wrote them (:mod:`blockviz.ownership`) and were
    made from the same inputs (its key)."""
    from blockviz.ownership import first_foreign

    stamp = read_stamp(job)
    if stamp is None or stamp.get("key") != job.key or not isinstance(stamp.get("outputs"), list):
        return False
    outputs = [job.root / output for output in stamp["outputs"]]
    return bool(outputs) and all(path.exists() and first_foreign(path) is None for path in outputs)


def stamped_skip(job: CourseJob) -> str | None:
    """Why ``job`` was left out last time (a scene its record cannot show), if its inputs are
    unchanged since; else ``None``."""
    stamp = read_stamp(job)
    if stamp is None or stamp.get("key") != job.key or not isinstance(stamp.get("skipped"), str):
        return None
    return stamp["skipped"]


def stamped_outputs(job: CourseJob) -> list[Path]:
    """The outputs ``job``'s stamp lists (absolute), if it is up to date; else none."""
    if not is_fresh(job):
        return []
    return [job.root / output for output in read_stamp(job)["outputs"]]


def write_stamp(
    job: CourseJob, outputs: list[Path], record_hash: str, seconds: float, skipped: str | None = None
) -> None:
    """Stamp ``job`` as done, with its ``outputs`` (paths under the course's output folder), or
    as left out for the reason ``skipped`` (no outputs)."""
    from blockviz import __version__
    from blockviz.render.plan import code_version

    stamp = {
        "key": job.key,
        "job": job.id,
        "kind": job.kind,
        "options": job.options(),
        "record": {"inputs": job.record_inputs(), "hash": record_hash},
        "blockviz": __version__,
        "code": code_version(),
        "outputs": [path.relative_to(job.root).as_posix() for path in outputs],
        "seconds": round(seconds, 3),
    }
    if skipped is not None:
        stamp["skipped"] = skipped
    writable_folder(job.stamp.parent)
    with atomic_path(job.stamp) as partial:
        partial.write_text(json.dumps(stamp, indent=1, default=str), encoding="utf-8")


def record_hash(rec) -> str:
    """A hash of ``rec``'s numbers: its tokens and every tensor's name, dtype, shape and bytes."""
    import torch

    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps(list(rec.tokens)).encode())
    for name in sorted(rec.tensors):
        tensor = rec.tensors[name].detach().contiguous().cpu()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
