"""Walking a folder of documents without being stopped by it: symlinks followed but never round
a loop, unreadable folders and special files reported, each file read exactly once.

``walk(root)`` returns the files in path order and the problems met on the way; hidden entries
(a name starting with ".") are not looked at, as before. ``read(entry, limit)`` returns the
file's bytes or raises ``Unreadable`` (too large, no permission, gone).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ....units import size
from .model import Unreadable


@dataclass(frozen=True)
class FileEntry:
    path: Path  # as reached from the root (a symlink's own path, not its target)
    relative: str  # POSIX path under the root
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class WalkProblem:
    path: Path
    reason: str


def walk(root: Path) -> tuple[list[FileEntry], list[WalkProblem]]:
    """Every regular file under ``root`` (following symlinks) and the entries that could not be
    walked: symlink loops, broken links, folders that cannot be listed, pipes and devices."""
    files: list[FileEntry] = []
    problems: list[WalkProblem] = []
    root_stat = os.stat(root)
    stack = [(Path(root), "", frozenset({(root_stat.st_dev, root_stat.st_ino)}))]
    while stack:
        folder, prefix, ancestors = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name, reverse=True)
        except OSError as exc:
            problems.append(WalkProblem(folder, f"cannot list this folder: {_why(exc)}"))
            continue
        for entry in entries:  # reversed, so that popping the stack visits folders in name order
            if entry.name.startswith("."):
                continue
            path, relative = Path(entry.path), f"{prefix}{entry.name}"
            try:
                info = os.stat(entry.path)  # follows symlinks
            except OSError as exc:
                problems.append(WalkProblem(path, _link_problem(path, exc)))
                continue
            if stat.S_ISDIR(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if key in ancestors:
                    problems.append(WalkProblem(path, "symlink loop: it leads back to a folder "
                                                      "above it; not followed"))
                else:
                    stack.append((path, f"{relative}/", ancestors | {key}))
            elif stat.S_ISREG(info.st_mode):
                files.append(FileEntry(path, relative, info.st_size, info.st_mtime_ns))
            else:
                problems.append(WalkProblem(path, "not a regular file (a pipe, socket or device); "
                                                  "not read"))
    files.sort(key=lambda f: f.relative)
    problems.sort(key=lambda p: str(p.path))
    return files, problems


def read(entry: FileEntry, limit_bytes: int | None) -> bytes:
    """The whole file; ``Unreadable`` when it is over ``limit_bytes`` or cannot be read."""
    if limit_bytes and entry.size > limit_bytes:
        raise Unreadable(f"too large: {size(entry.size)}, over the {size(limit_bytes)} limit; "
                         "raise the corpus.max_file_mb setting to read it")
    try:
        with open(entry.path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise Unreadable(f"cannot read: {_why(exc)}") from exc


def _why(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied; check the file's permissions"
    return exc.strerror or str(exc)


def _link_problem(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop: the link leads back to itself; not followed"
    if path.is_symlink() and isinstance(exc, FileNotFoundError):
        return f"broken link: its target {os.readlink(path)} is missing"
    return f"cannot read: {_why(exc)}"
