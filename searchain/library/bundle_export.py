"""Shareable corpora: one file holding a corpus's passages, its indexes and a checked manifest.

One machine (say, one with a GPU) builds a large corpus once; every other workstation imports
the file instead of embedding millions of passages again. A bundle is an uncompressed zip
(ZIP64, so members may be tens of GB; vectors and SQLite pages hardly compress, and storing keeps
export and import at disk speed)::

    passages.db                 the passage store
    index/...                   whatever the index folder holds (graph, shards, second model, ...)
    manifest.json               written last: what the members are, with their sizes and SHA-256

Which files travel is decided by ``corpus_members``: every regular file of the corpus folder
except hidden ones (lock files, temp files of an atomic write in progress) and SQLite's
transient ``-wal``/``-shm``/``-journal`` files. Nothing here names an index file, so a new index
layout is packed and installed without changing this module.

``Manifest`` (``manifest.json``)::

    {"format": "searchain-corpus", "format_version": 1, "corpus": "wiki", "created": "...",
     "app_version": "0.1.0", "passages": 21000000, "index_format": 1, "doc_format": "...",
     "indexes": [{"folder": "index", "embedder": "sentence-transformers/all-MiniLM-L6-v2",
                  "dim": 384, "count": 21000000, "state": "built"}, ...],
     "members": [{"path": "passages.db", "size": 123, "sha256": "..."}, ...]}

Import (``bundle_import``) reads the manifest first (the zip's central directory makes that
cheap however large the file), refuses a newer format or a missing embedder before copying a
byte, and installs atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from .. import units
from ..config import AppPaths, Settings
from ..errors import CorpusError, is_disk_full
from ..events import CancelToken, EventCallback, Progress, check, emit
from ..index.bm25.ready import make_ready

BUNDLE_FORMAT = "searchain-corpus"
BUNDLE_VERSION = 1  # bump when a reader of version 1 could not install the new layout
MANIFEST_NAME = "manifest.json"
SUFFIX = ".searchain-corpus"
CHUNK = 4 * 1024 * 1024  # bytes per read: progress and cancel are checked this often
DISK_MARGIN = 64 * 1024 * 1024  # kept free beyond the bytes a bundle needs
_TRANSIENT = ("-wal", "-shm", "-journal")
EXPORT_STAGE, IMPORT_STAGE = "export", "import"
STALE_PARTIAL_S = 600  # a partial export file untouched this long belongs to a killed export


@dataclass(frozen=True)
class Member:
    """One file of the corpus folder: its '/'-separated path relative to it, size and SHA-256."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class IndexRecord:
    """One embedder's index found in the corpus folder (from its ``meta.json``, else from the
    shards' ``owner.json`` of a build that has not finished: ``state`` "partial")."""

    folder: str  # relative to the corpus folder: "index", "index/second"
    embedder: str
    dim: int | None = None
    count: int | None = None
    state: str = "built"  # built | partial


@dataclass(frozen=True)
class Manifest:
    corpus: str
    passages: int
    members: list[Member]
    indexes: list[IndexRecord] = field(default_factory=list)
    index_format: int = 1
    doc_format: str = ""
    created: str = ""
    app_version: str = ""
    format: str = BUNDLE_FORMAT
    format_version: int = BUNDLE_VERSION

    @property
    def total_bytes(self) -> int:
        return sum(m.size for m in self.members)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str | bytes, source: Path) -> "Manifest":
        """Parse and check ``manifest.json``; a newer format or a malformed one is refused."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nesting thousands deep
            raise damaged_error(source, f"its manifest is not JSON ({type(exc).__name__})") from exc
        if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
            raise CorpusError(f"{source} is not a SearChain corpus file (no corpus manifest).",
                              hint="Pick a file made by `searchain corpus export` (or the app's "
                                   "corpus manager).")
        version = data.get("format_version")
        if not isinstance(version, int) or version > BUNDLE_VERSION:
            raise CorpusError(f"{source} was made by a newer SearChain (corpus file format "
                              f"{version}; this install reads up to {BUNDLE_VERSION}).",
                              hint="Update SearChain Desktop on this machine, then import it again.")
        try:
            members = [Member(str(m["path"]), int(m["size"]), str(m["sha256"])) for m in data["members"]]
            indexes = [_index_record(r) for r in data.get("indexes", [])]
            return cls(corpus=str(data["corpus"]), passages=int(data["passages"]), members=members,
                       indexes=indexes, index_format=int(data.get("index_format", 1)),
                       doc_format=str(data.get("doc_format", "")), created=str(data.get("created", "")),
                       app_version=str(data.get("app_version", "")), format_version=version)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:  # Overflow: int(1e999)
            raise damaged_error(source, f"its manifest is incomplete ({exc!r})") from exc


def _index_record(data: object) -> IndexRecord:
    """An ``indexes`` entry, its types checked: the embedder's name reaches model look-ups,
    which expect text (a number there once raised ``AttributeError`` instead of this error)."""
    if not isinstance(data, dict):
        raise TypeError(f"an index record is {type(data).__name__}, not an object")
    record = IndexRecord(**data)
    if not (isinstance(record.folder, str) and isinstance(record.embedder, str)
            and isinstance(record.state, str)
            and all(v is None or (isinstance(v, int) and not isinstance(v, bool))
                    for v in (record.dim, record.count))):
        raise TypeError(f"an index record has a value of the wrong type: {data!r:.200}")
    return record


@dataclass(frozen=True)
class ExportReport:
    corpus: str
    file: Path
    passages: int
    members: int
    bytes: int
    seconds: float
    indexes: list[IndexRecord]
    index_state: str  # the index's state when exported (ready, stale, partial, missing, ...)


# -- what travels -------------------------------------------------------------------------------

def corpus_members(folder: Path) -> list[Path]:
    """The files a bundle of the corpus in ``folder`` carries, sorted (``passages.db`` first)."""
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or path.name.endswith(_TRANSIENT):
            continue
        if path.is_file() and not path.is_symlink():
            files.append(path)
    return sorted(files, key=lambda p: (p.name != "passages.db", p.relative_to(folder).as_posix()))


def index_records(folder: Path) -> list[IndexRecord]:
    """Every embedder index under ``folder/index`` (the first model's, the second's, ...)."""
    records = []
    root = folder / "index"
    if not root.is_dir():
        return records
    for meta in sorted([root / "meta.json", *root.rglob("*/meta.json")]):
        data = _read_json(meta)
        if data.get("embedder"):
            records.append(IndexRecord(meta.parent.relative_to(folder).as_posix(), str(data["embedder"]),
                                       _int_or_none(data.get("dim")), _int_or_none(data.get("count"))))
    built = {r.folder for r in records}
    for owner in sorted(root.rglob("shards/owner.json")):
        where = owner.parent.parent.relative_to(folder).as_posix()
        data = _read_json(owner)
        if where not in built and data.get("embedder"):
            records.append(IndexRecord(where, str(data["embedder"]), state="partial"))
    return records


# -- export -------------------------------------------------------------------------------------

def export_corpus(paths: AppPaths, settings: Settings, name: str, out: str | Path, *,
                  on_event: EventCallback | None = None, cancel: CancelToken | None = None,
                  overwrite: bool = False) -> ExportReport:
    """Write corpus ``name`` (passages and every index file) to the bundle file ``out``.

    The corpus's write lock is held throughout, so no ingest changes it meanwhile; the file is
    written beside ``out`` under a hidden name and renamed at the end, so a failed or cancelled
    export leaves nothing that looks finished. Refuses (before writing) when ``out`` exists
    (unless ``overwrite``) or its disk lacks the space.
    """
    from .. import __version__
    from ..index.layout import DOC_FORMAT, FORMAT_VERSION
    from ..corpus.lock import CorpusLock
    from ..corpus.manager import CorpusManager

    started = time.perf_counter()
    manager = CorpusManager(paths, settings)
    folder = manager.corpus_dir(name)
    if not manager.exists(name):
        manager.open_store(name)  # raises the manager's "no corpus named ..." with the known names
    out = Path(out).expanduser().resolve()
    if out.is_dir():
        out = out / f"{name}{SUFFIX}"
    if out.exists() and not overwrite:
        raise CorpusError(f"{out} exists already.", hint="Pick another file name, or delete that file.")
    if not out.parent.is_dir():
        raise CorpusError(f"Folder {out.parent} does not exist.", hint="Create it, or pick another place.")
    index_state = _index_state(paths, settings, name)
    with CorpusLock(folder).acquire(name):
        with manager.open_store(name) as store:  # a keyword index a large ingest left unbuilt
            # is built first: the one searches use (tantivy at its size, or FTS5; bm25.ready)
            make_ready(store, settings.retrieval.bm25_title_weight, on_event=on_event, cancel=cancel,
                       locked=True)
        passages = _settle_passage_store(folder / "passages.db", name)
        files = corpus_members(folder)
        total = sum(f.stat().st_size for f in files)
        need_free_space(out.parent, total, f"the export of corpus '{name}'")
        _remove_stale_partials(out)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a corpus file is meant to be shared
        try:
            manifest = Manifest(corpus=name, passages=passages, members=[],
                                indexes=index_records(folder), index_format=FORMAT_VERSION,
                                doc_format=DOC_FORMAT, created=units.timestamp(), app_version=__version__)
            manifest = _write_bundle(tmp, folder, files, manifest, on_event, cancel)
            _fsync(tmp)
            os.replace(tmp, out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if is_disk_full(exc):
                raise CorpusError(f"Disk full while writing {out}; nothing was kept.",
                                  hint="Free some disk space or export to another disk.") from exc
            raise CorpusError(f"Cannot write {out}: {exc}") from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return ExportReport(corpus=name, file=out, passages=passages, members=len(manifest.members),
                        bytes=out.stat().st_size, seconds=time.perf_counter() - started,
                        indexes=manifest.indexes, index_state=index_state)


def _write_bundle(tmp: Path, folder: Path, files: list[Path], manifest: Manifest,
                  on_event: EventCallback | None, cancel: CancelToken | None) -> Manifest:
    """Stream ``files`` into the zip ``tmp``, then the manifest (with their sizes and hashes)."""
    members = []
    total = sum(f.stat().st_size for f in files)
    progress = ByteProgress(EXPORT_STAGE, total, on_event, cancel)
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for path in files:
            rel = path.relative_to(folder).as_posix()
            info = zipfile.ZipInfo(rel, date_time=time.localtime(path.stat().st_mtime)[:6])
            info.compress_type = zipfile.ZIP_STORED
            progress.start_member(rel)
            with open(path, "rb") as src, zf.open(info, "w", force_zip64=True) as dst:
                size, digest = copy_hashing(src, dst, progress)
            members.append(Member(rel, size, digest))
        manifest = replace(manifest, members=members)
        zf.writestr(MANIFEST_NAME, manifest.to_json())
    return manifest


def _remove_stale_partials(out: Path) -> None:
    """Remove what killed exports to ``out`` left (their hidden partial files stopped growing)."""
    for stale in out.parent.glob(f".{out.name}.*.partial"):
        try:
            if time.time() - stale.stat().st_mtime > STALE_PARTIAL_S:
                stale.unlink()
        except OSError:
            pass


def _settle_passage_store(db: Path, name: str) -> int:
    """Fold the WAL into ``passages.db`` (so the file alone is the whole store) and count it."""
    try:
        conn = sqlite3.connect(str(db))
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            busy, log_frames, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            count = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise CorpusError(f"Cannot read the passages of corpus '{name}': {exc}",
                          hint=f"Check it with: searchain corpus info {name}") from exc
    if busy or (log_frames > 0 and done < log_frames):
        raise CorpusError(f"The passages of corpus '{name}' are being read or written by another "
                          "program, so they cannot be copied consistently now.",
                          hint="Close the app (or wait for the other command), then export again.")
    return int(count)


def _index_state(paths: AppPaths, settings: Settings, name: str) -> str:
    from ..errors import SearchainError
    from ..index.status import listing_status

    try:
        return listing_status(paths, settings, name).state
    except SearchainError:
        return "unknown"


# -- streaming with hashes and progress ---------------------------------------------------------

class ByteProgress:
    """Progress in bytes across the members of a bundle, with a cancel check per chunk."""

    def __init__(self, stage: str, total: int, on_event: EventCallback | None,
                 cancel: CancelToken | None):
        self.stage, self.total, self.on_event, self.cancel = stage, total, on_event, cancel
        self.done = 0
        self.member = ""
        self.started_at = time.monotonic()
        emit(on_event, Progress(stage, 0, total, self._message(), started_at=self.started_at))

    def start_member(self, member: str) -> None:
        self.member = member

    def advance(self, n: int) -> None:
        self.done += n
        emit(self.on_event, Progress(self.stage, self.done, self.total, self._message(),
                                     started_at=self.started_at))
        check(self.cancel)

    def _message(self) -> str:
        verb = "exporting" if self.stage == EXPORT_STAGE else "importing"
        return f"{verb} {self.member}".strip() + f" ({units.size(self.done)} of {units.size(self.total)})"


def copy_hashing(src: BinaryIO, dst: BinaryIO, progress: ByteProgress | None = None,
                 chunk: int = CHUNK) -> tuple[int, str]:
    """Copy ``src`` to ``dst`` a chunk at a time (never a whole member in memory); returns the
    number of bytes and their SHA-256. Checks for cancel after each chunk."""
    digest = hashlib.sha256()
    size = 0
    while True:
        block = src.read(chunk)
        if not block:
            return size, digest.hexdigest()
        dst.write(block)
        digest.update(block)
        size += len(block)
        if progress is not None:
            progress.advance(len(block))


def need_free_space(folder: Path, needed: int, what: str) -> None:
    """Refuse, before writing anything, when ``folder``'s disk cannot hold ``needed`` bytes."""
    free = shutil.disk_usage(folder).free
    if needed + DISK_MARGIN > free:
        raise CorpusError(f"Not enough disk space for {what}: it needs {units.size(needed)}, and "
                          f"{folder} has {units.size(free)} free.",
                          hint="Free some disk space (or use another disk), then try again.")


def damaged_error(source: Path, why: str) -> CorpusError:
    return CorpusError(f"{source} is damaged or incomplete: {why}.",
                       hint="Copy or download the file again (compare its size with the original), "
                            "or export it again on the machine it came from.")


def safe_member_path(rel: str, source: Path) -> PurePosixPath:
    """A member path that stays inside the corpus folder (no absolute paths, no '..')."""
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\\" in rel or \
            any(part.startswith(".") for part in path.parts):
        raise damaged_error(source, f"its manifest names an unsafe member path {rel!r}")
    return path


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) else None


def _fsync(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())

