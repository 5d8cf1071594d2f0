"""Exclusive, non-blocking lock files per corpus, so two writers never interleave.

Two locks, because an index build may run for hours and must not keep passages out meanwhile:
- ``.write.lock``: adding, removing, rebuilding, exporting and importing passages;
- ``.build.lock``: building the index (two builds would write the same checkpoints).
A build runs beside an add: it embeds whatever is committed while it runs, and what comes after
its last read is left for the next build (``index/build/builder.py``; docs/corpus.md).

The OS releases a lock when the holding process dies (even by SIGKILL), so a lock that can
be taken means nobody is writing: a corpus still marked ``ingesting`` is then incomplete.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import CorpusError

LOCK_NAME = ".write.lock"
BUILD_LOCK_NAME = ".build.lock"
_BUSY = {LOCK_NAME: "is being changed", BUILD_LOCK_NAME: "is being indexed"}


class CorpusLock:
    def __init__(self, corpus_dir: Path, name: str = LOCK_NAME):
        self.path = Path(corpus_dir) / name
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if free; False if another process (or this one) holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(self, name: str) -> "CorpusLock":
        if not self.try_acquire():
            busy = _BUSY.get(self.path.name, "is being changed")
            raise CorpusError(f"Corpus {name!r} {busy} by another process.",
                              hint="Wait for that command (or the app) to finish, then retry.")
        return self

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "CorpusLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def is_locked(corpus_dir: Path) -> bool:
    """True while some process holds the corpus's write lock."""
    if not (Path(corpus_dir) / LOCK_NAME).exists():
        return False
    probe = CorpusLock(corpus_dir)
    if probe.try_acquire():
        probe.release()
        return False
    return True


if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
