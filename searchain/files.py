"""Whole files, safely: streamed hashes of files that may be gigabytes (index codes, models),
with progress and cancellation for the ones a user waits on, and writes that a crash never
leaves half done (a temp file beside the target, fsync, rename)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

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


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder, fsync, then rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda tmp: tmp.write_bytes(data))


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Let ``write(tmp)`` fill a temp file beside ``path``, fsync it, then rename it over ``path``.

    A crash at any point leaves either the old file or the new one, never half of one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
