"""Install a corpus file made by ``bundle.export_corpus``: checked first, installed atomically.

``inspect_bundle`` reads only the manifest and refuses, before anything is copied: a file that is
not a corpus bundle, a truncated or damaged one (its zip directory is gone), a newer format, an
index layout newer than this install reads, and an embedding model this install does not have
(with the command that installs it). ``import_corpus`` then checks the name (an existing corpus
is never replaced: ``CorpusExists`` says which free name to use) and the free disk space, and
unpacks each member, streamed and hashed, into a hidden folder beside the corpora
(``<corpora>/.import-<name>-*``). Only when every member matched its SHA-256 and the passage
count matched the manifest is that folder renamed to ``<corpora>/<name>``: a failure, a cancel
or a kill -9 at any point leaves no corpus behind, and the next import removes the leftovers
(folders whose import lock no process holds any more).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..config import AppPaths, Settings
from ..corpus.lock import LOCK_NAME, CorpusLock, is_locked
from ..errors import CorpusError, ModelError, is_disk_full
from ..events import CancelToken, EventCallback, Progress, check, emit
from ..index.bm25.ready import make_ready
from ..units import timestamp
from .bundle_export import (
    IMPORT_STAGE,
    MANIFEST_NAME,
    ByteProgress,
    Manifest,
    damaged_error,
    copy_hashing,
    need_free_space,
    safe_member_path,
)

IMPORT_PREFIX = ".import-"
STARTING_IMPORT_S = 60.0  # a work folder without its lock file yet is this young at most


class CorpusExists(CorpusError):
    """The bundle's corpus name is taken here; ``suggestion`` is a free name to import it as."""

    def __init__(self, name: str, suggestion: str, file: Path):
        super().__init__(f"A corpus named '{name}' exists already; importing never replaces one.",
                         hint=f"Import it under another name: searchain corpus import {file} "
                              f"--as {suggestion} (or remove the existing one first).")
        self.name = name
        self.suggestion = suggestion


@dataclass(frozen=True)
class ImportReport:
    corpus: str
    file: Path
    passages: int
    bytes: int
    seconds: float
    manifest: Manifest
    notes: list[str]  # things to know, e.g. the index was built with a model not configured here


def open_bundle(file: str | Path) -> zipfile.ZipFile:
    """The bundle as an open zip; a missing, truncated or foreign file is a ``CorpusError``."""
    file = Path(file).expanduser()
    if not file.is_file():
        raise CorpusError(f"Corpus file {file} does not exist.", hint="Check the path.")
    try:
        return zipfile.ZipFile(file, "r", allowZip64=True)
    except zipfile.BadZipFile as exc:
        raise damaged_error(file, f"it is not a complete corpus file ({exc}); a copy cut short loses "
                             "the directory at its end") from exc
    except OSError as exc:
        raise CorpusError(f"Cannot read {file}: {exc}") from exc


def read_manifest(zf: zipfile.ZipFile, file: Path) -> Manifest:
    try:
        raw = zf.read(MANIFEST_NAME)
    except KeyError:
        raise CorpusError(f"{file} is not a SearChain corpus file (it has no {MANIFEST_NAME}).",
                          hint="Pick a file made by `searchain corpus export`.") from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise damaged_error(file, f"its manifest cannot be read ({exc})") from exc
    manifest = Manifest.from_json(raw, file)
    names = set(zf.namelist())
    for member in manifest.members:
        safe_member_path(member.path, file)
        if member.path not in names:
            raise damaged_error(file, f"the member {member.path} listed in its manifest is missing")
        if zf.getinfo(member.path).file_size != member.size:
            raise damaged_error(file, f"the member {member.path} is not the size its manifest records")
    if not any(m.path == "passages.db" for m in manifest.members):
        raise damaged_error(file, "it holds no passages.db")
    return manifest


def inspect_bundle(paths: AppPaths, settings: Settings, file: str | Path) -> Manifest:
    """The bundle's manifest, once it is known to be installable here (see the module docstring).
    Cheap however large the file: only the zip directory and the manifest are read."""
    from ..index.layout import DOC_FORMAT, FORMAT_VERSION

    file = Path(file).expanduser().resolve()
    with open_bundle(file) as zf:
        manifest = read_manifest(zf, file)
    if manifest.index_format > FORMAT_VERSION:
        raise CorpusError(f"The index in {file} has layout version {manifest.index_format}; this "
                          f"install reads up to {FORMAT_VERSION}.",
                          hint="Update SearChain Desktop on this machine, then import it again.")
    for record in manifest.indexes:
        problem = missing_embedder(record.embedder, settings, paths.models_dir)
        if problem:
            raise CorpusError(f"{file} holds an index made with the embedding model "
                              f"'{record.embedder}', which this install does not have.", hint=problem)
    if manifest.doc_format and manifest.doc_format != DOC_FORMAT and manifest.indexes:
        raise CorpusError(f"The index in {file} embedded passages as '{manifest.doc_format}', "
                          f"this install as '{DOC_FORMAT}'.",
                          hint="Update SearChain Desktop on both machines to the same version.")
    return manifest


def missing_embedder(model_id: str, settings: Settings, models_dir: Path | None) -> str | None:
    """None when this install can load the embedding model ``model_id``; otherwise how to get it.
    Cheap: a packaged model is looked for, not unpacked."""
    from ..index.embed.embedder import model_id_for, resolve_model_path
    from ..index.embed.packaged import find_parts, is_assembled, packaged_spec
    from ..index.embed.second import second_embedder_name

    r = settings.retrieval
    configured = [n for n in (r.embedder, second_embedder_name(r, models_dir)) if n]
    candidates = [n for n in configured if model_id_for(n) == model_id] + [model_id]
    hint = None
    for name in candidates:
        spec = packaged_spec(name)
        if spec is not None and ((models_dir is not None and is_assembled(spec, models_dir))
                                 or find_parts(spec) is not None):
            return None
        if name.startswith("local:"):
            hint = (f"It was a model folder on the exporting machine ({name}). Copy that folder "
                    "here, set retrieval.embedder (or retrieval.second_embedder) to it, and import "
                    "again.")
            continue
        try:
            resolve_model_path(name, models_dir=models_dir)
            return None
        except ModelError as exc:
            hint = hint or exc.hint
    return hint or f"Install the embedding model '{model_id}', then import again."


def import_corpus(paths: AppPaths, settings: Settings, file: str | Path, *, as_name: str | None = None,
                  on_event: EventCallback | None = None, cancel: CancelToken | None = None) -> ImportReport:
    """Install the corpus in bundle ``file`` as ``as_name`` (default: its own name).

    Raises ``CorpusExists`` when that name is taken, ``CorpusError`` for everything
    ``inspect_bundle`` refuses, for too little disk space, and for a member whose bytes do not
    match the manifest; ``Cancelled`` when ``cancel`` fires. None of these leaves anything behind.
    """
    from ..corpus.manager import CorpusManager
    from ..corpus.store import DB_NAME, PassageStore

    started = time.perf_counter()
    file = Path(file).expanduser().resolve()
    manifest = inspect_bundle(paths, settings, file)
    manager = CorpusManager(paths, settings)
    name = as_name or manifest.corpus
    target = manager.corpus_dir(name)  # checks the name
    if target.exists():
        raise CorpusExists(name, free_name(manager, name), file)
    root = paths.corpora_dir
    root.mkdir(parents=True, exist_ok=True)
    clean_stale_imports(root)
    need_free_space(root, manifest.total_bytes, f"corpus '{name}'")
    work = Path(tempfile.mkdtemp(prefix=f"{IMPORT_PREFIX}{name}-", dir=root))
    lock = CorpusLock(work)
    try:
        lock.acquire(name)  # marks the folder as in use: clean_stale_imports leaves it alone
        with open_bundle(file) as zf:
            _unpack(zf, file, manifest, work, on_event, cancel)
        emit(on_event, Progress(IMPORT_STAGE, manifest.total_bytes, manifest.total_bytes,
                                "checking the passages"))
        with PassageStore.open(work / DB_NAME, corpus=name) as store:
            count = store.count()
            if count != manifest.passages:
                raise damaged_error(file, f"its passage store holds {count:,} passages, the manifest "
                                     f"says {manifest.passages:,}")
            # a keyword index left unbuilt: the one searches use is built (bm25.ready)
            make_ready(store, settings.retrieval.bm25_title_weight, on_event=on_event,
                       cancel=cancel, locked=True)
            store.meta_set("name", name)
            store.meta_set("imported", {"file": str(file), "as": name, "exported_as": manifest.corpus,
                                        "exported_at": manifest.created, "at": timestamp()})
            store.checkpoint_and_detach_wal()
        check(cancel)
        if target.exists():  # made meanwhile by another process: still never replaced
            raise CorpusExists(name, free_name(manager, name), file)
        os.rename(work, target)  # atomic: the corpus appears whole, or not at all
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        if is_disk_full(exc):
            raise CorpusError(f"Disk full while importing {file}; nothing was installed.",
                              hint="Free some disk space, then import again.") from exc
        raise CorpusError(f"Cannot install corpus '{name}': {exc}") from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        lock.release()
    return ImportReport(corpus=name, file=file, passages=manifest.passages,
                        bytes=manifest.total_bytes, seconds=time.perf_counter() - started,
                        manifest=manifest, notes=_notes(manifest, settings, name))


def _unpack(zf: zipfile.ZipFile, file: Path, manifest: Manifest, work: Path,
            on_event: EventCallback | None, cancel: CancelToken | None) -> None:
    """Stream each member into ``work`` and compare its SHA-256 with the manifest's."""
    progress = ByteProgress(IMPORT_STAGE, manifest.total_bytes, on_event, cancel)
    for member in manifest.members:
        target = work.joinpath(*safe_member_path(member.path, file).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        progress.start_member(member.path)
        try:
            with zf.open(member.path) as src, open(target, "wb") as dst:
                size, digest = copy_hashing(src, dst, progress)
                dst.flush()
                os.fsync(dst.fileno())
        except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as exc:
            raise damaged_error(file, f"the member {member.path} cannot be read ({exc})") from exc
        if (size, digest) != (member.size, member.sha256):
            raise damaged_error(file, f"the member {member.path} does not match its checksum")


def clean_stale_imports(root: Path) -> int:
    """Remove the work folders of imports that were killed: their lock file is there and no
    process holds it (or there is none, and the folder is older than a starting import could be)."""
    removed = 0
    for stale in root.glob(f"{IMPORT_PREFIX}*"):
        if not stale.is_dir() or is_locked(stale):
            continue
        try:
            young = time.time() - stale.stat().st_mtime < STARTING_IMPORT_S
        except OSError:
            continue
        if (stale / LOCK_NAME).exists() or not young:
            shutil.rmtree(stale, ignore_errors=True)
            removed += 1
    return removed


def free_name(manager, name: str) -> str:
    """``name-2``, ``name-3``, ...: the first that no corpus uses."""
    base = name[:60]
    for n in range(2, 1000):
        candidate = f"{base}-{n}"
        if not manager.corpus_dir(candidate).exists():
            return candidate
    return f"{base}-imported"


def _notes(manifest: Manifest, settings: Settings, name: str) -> list[str]:
    from ..index.embed.embedder import model_id_for

    notes = []
    first = next((r for r in manifest.indexes if r.folder == "index"), None)
    configured = model_id_for(settings.retrieval.embedder)
    if first is not None and first.embedder != configured:
        notes.append(f"Its index was built with {first.embedder}; your settings embed with "
                     f"{configured}. To search it with vectors, run: searchain config set "
                     f"retrieval.embedder {first.embedder}")
    if first is not None and first.state == "partial":
        notes.append("Its index was not finished when exported; `searchain corpus index "
                     f"{name}` continues it.")
    if first is None:
        notes.append(f"It has no vector index yet; `searchain corpus index {name}` builds one.")
    return notes
