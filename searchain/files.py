"""Reading whole files safely: streamed hashes of files that may be gigabytes (index codes,
models), with progress and cancellation for the ones a user waits on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .events import CancelToken, EventCallback, Progress, check, emit

CHUNK = 8 * 1024 * 1024  # bytes per read: progress and cancel are checked this often


def file_sha256(path: Path, *, on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                stage: str = "verify") -> str:
    """Hex SHA-256 of ``path``, read in 8 MB chunks. With ``on_event``, a ``Progress(stage, ...)``
    after each chunk; with ``cancel``, ``Cancelled`` between chunks."""
    return file_digest(path, "sha256", on_event=on_event, cancel=cancel, stage=stage)


def file_digest(path: Path, algorithm: str, *, on_event: EventCallback | None = None,
                cancel: CancelToken | None = None, stage: str = "verify") -> str:
    """Hex digest of ``path`` by ``algorithm`` (``hashlib``'s name: sha256, sha1, md5), as
    ``file_sha256`` reads it."""
    digest = hashlib.new(algorithm)
    total, done = Path(path).stat().st_size, 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            done += len(chunk)
            emit(on_event, Progress(stage, done, total, Path(path).name))
            check(cancel)
    return digest.hexdigest()


def free_bytes(folder: Path) -> int | None:
    """Free bytes on the disk that holds ``folder`` (or would: a folder not made yet is measured
    at its nearest existing parent); None where the system cannot say."""
    import shutil

    probe = Path(folder)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return None
