"""``searchain doctor --check-data``: is what the user has made still whole?

Three kinds of finding, each a ``Check`` with a hint:

- **databases**: ``PRAGMA quick_check`` on every corpus's ``passages.db`` and on the
  conversations database (opened read-only, so checking never changes or locks them for long);
- **indexes**: every built index's files against the sizes and the checksum ``meta.json``
  recorded (``index.status.graph_problem``, which reads each whole file: slow on big indexes,
  which is why this is a flag and not part of every ``doctor``);
- **leftovers**: work folders and temporary files of jobs that were killed (``.import-*`` and
  ``.rebuild-*`` folders, ``*.partial`` files, ``.<name>.*.tmp`` files of atomic writes). Ones a
  running job holds (its corpus lock is taken) are not reported.

It only reads and reports: the hints say what to remove, and the user decides. A transient
failure to read (a full disk, a lock) is reported as such, never as damage.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..config import AppPaths
from ..corpus.lock import is_locked
from ..errors import SearchainError, TRANSIENT_IO_HINT, is_transient_io
from ..index.layout import IndexLayout, IndexMeta
from ..index.status import graph_problem
from .check import FAIL, OK, WARN, Check

DB_NAME = "passages.db"
LEFTOVER_DIRS = (".import-*", ".rebuild-*")
LEFTOVER_FILES = ("*.partial", ".*.tmp")
YOUNG_S = 60.0  # a temporary file this new may belong to a job that is starting


def check_data(paths: AppPaths) -> list[Check]:
    """Every database, index and leftover under ``paths``, one ``Check`` per finding."""
    checks: list[Check] = []
    corpora = paths.corpora_dir
    folders = sorted(p for p in corpora.iterdir() if p.is_dir() and not p.name.startswith(".")) \
        if corpora.is_dir() else []
    for folder in folders:
        if (folder / DB_NAME).exists():
            checks.append(database_check(folder / DB_NAME, f"corpus '{folder.name}' passages",
                                         f"searchain corpus rebuild {folder.name}"))
        checks += index_checks(folder)
    if paths.conversations_db.exists():
        checks.append(database_check(paths.conversations_db, "conversations",
                                     "searchain chats export (what still reads), then move the file aside"))
    checks += leftover_checks(paths, folders)
    if not checks:
        checks.append(Check("data", OK, "nothing to check yet: no corpora and no conversations"))
    return checks


def database_check(db: Path, what: str, repair: str) -> Check:
    """``PRAGMA quick_check`` on ``db``, read-only: ok, damaged (with how to repair) or unreadable."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if is_transient_io(exc):
            return Check("data", WARN, f"{what}: {db} cannot be read now ({exc})", TRANSIENT_IO_HINT)
        return Check("data", FAIL, f"{what}: {db} is damaged ({exc})", f"Repair: {repair}.")
    if rows == ["ok"]:
        return Check("data", OK, f"{what}: database intact ({db.name})")
    return Check("data", FAIL, f"{what}: {db} fails its integrity check: {'; '.join(rows[:3])}",
                 f"Repair: {repair}.")


def index_checks(folder: Path) -> list[Check]:
    """The index (and the second model's, if any) of one corpus folder against its meta.json."""
    checks = []
    first = IndexLayout(folder / "index")
    for layout, label in ((first, "index"), (first.second, "second index")):
        if not layout.meta_file.exists():
            continue
        what = f"corpus '{folder.name}' {label}"
        try:
            problem = graph_problem(layout, IndexMeta.read(layout.meta_file, folder.name), True)
        except SearchainError as exc:
            problem = exc.message
        except OSError as exc:
            if is_transient_io(exc):
                checks.append(Check("data", WARN, f"{what}: cannot be read now ({exc})", TRANSIENT_IO_HINT))
                continue
            problem = str(exc)
        if problem:
            checks.append(Check("data", FAIL, f"{what}: {problem}",
                                f"Repair: searchain corpus index {folder.name} (re-uses the "
                                "embedded shards; add --rebuild if that fails)."))
        else:
            checks.append(Check("data", OK, f"{what}: sizes and checksum match"))
    return checks


def leftover_checks(paths: AppPaths, corpus_folders: list[Path]) -> list[Check]:
    """Work folders and temporary files that no running job holds."""
    found: list[Path] = []
    corpora = paths.corpora_dir
    for pattern in LEFTOVER_DIRS:
        for root in ([corpora] if corpora.is_dir() else []) + corpus_folders:
            found += [p for p in root.glob(pattern) if p.is_dir() and not is_locked(p)]
    now = time.time()
    for base in {paths.data_dir, paths.config_dir, paths.cache_dir}:
        if not base.is_dir():
            continue
        for pattern in LEFTOVER_FILES:
            for p in base.rglob(pattern):
                try:
                    old = p.is_file() and now - p.stat().st_mtime > YOUNG_S
                except OSError:
                    continue
                if old and not any(is_locked(parent) for parent in p.parents if parent in corpus_folders):
                    found.append(p)
    if not found:
        return [Check("data", OK, "no leftovers of interrupted jobs")]
    return [Check("data", WARN, f"leftover of an interrupted job: {p}",
                  "No running job holds it: run that job again (it resumes or clears it), or remove it to free the space.")
            for p in sorted(found)]
